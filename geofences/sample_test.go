package geofences

import (
	"bytes"
	"encoding/json"
	"io/fs"
	"os"
	"slices"
	"strings"
	"testing"

	"github.com/paulmach/orb"
)

func TestSample(t *testing.T) {
	s, err := Sample()
	if err != nil {
		t.Fatal(err)
	}
	disk, err := Load("piuma")
	if err != nil {
		t.Fatal(err)
	}
	if s.Len() != disk.Len() || s.Len() < 20 {
		t.Fatalf("Sample has %d features, piuma/ %d", s.Len(), disk.Len())
	}
	// The embedded files are the files on disk.
	err = fs.WalkDir(SampleFS(), "piuma", func(name string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		a, _ := fs.ReadFile(SampleFS(), name)
		b, err := os.ReadFile(name)
		if err != nil || !bytes.Equal(a, b) {
			t.Errorf("%s: embedded copy differs from the file (%v)", name, err)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}

	centre := orb.Point{-40.73, -20.84}
	for _, f := range s.Features() {
		if f.Source != "sample" || f.Properties["note"] == nil {
			t.Errorf("%s: source %q, note %v: not marked as sample data", f.ID, f.Source, f.Properties["note"])
		}
		if d := Distance(centre, f.Bound().Center()); d > 3000 {
			t.Errorf("%s: %.0f m from the centre of Piúma", f.ID, d)
		}
	}

	// Area ids of the default profile.
	profileAreas := []string{"rural", "strict_residential", "mixed_residential", "mixed_commercial", "mixed_leisure", "industrial"}
	if got := s.Areas(); !slices.Equal(got, slices.Sorted(slices.Values(profileAreas))) {
		t.Errorf("Areas = %v, want every area of the default profile", got)
	}
	if got := s.Licensees(); !slices.Equal(got, []string{"L1", "L2"}) {
		t.Errorf("Licensees = %v", got)
	}
	categories := make(map[Category]bool)
	for _, f := range s.OfKind(KindSensitive) {
		categories[f.Category] = true
	}
	if len(categories) < 5 {
		t.Errorf("sensitive categories %v: want at least 5 of 6", categories)
	}

	for _, l := range s.Licensees() {
		if len(s.Garages(l)) != 1 || len(s.Itineraries(l)) == 0 {
			t.Errorf("%s: %d garages, %d itineraries", l, len(s.Garages(l)), len(s.Itineraries(l)))
		}
	}

	// Itineraries pass by the sensitive sites, except two kept out of
	// range on purpose.
	far := map[string]bool{"s-pronto-atendimento": true, "s-escola-estadual": true}
	var all []*Feature
	for _, l := range s.Licensees() {
		all = append(all, s.Itineraries(l)...)
	}
	for _, f := range s.OfKind(KindSensitive) {
		d := 1e9
		for _, it := range all {
			d = min(d, minDistance(f, it))
		}
		if near := d <= 200; near == far[f.ID] {
			t.Errorf("%s: %.0f m from the nearest itinerary", f.ID, d)
		}
	}

	// Boarding points lie on the beach avenue: in the leisure zone and in
	// the corridor of an itinerary of each licensee.
	for _, bp := range s.OfKind(KindBoardingPoint) {
		p := bp.Geometry.(orb.Point)
		if z, ok := s.ZoneAt(p); !ok || z.Area != "mixed_leisure" {
			t.Errorf("%s: zone %v", bp.ID, z)
		}
		for _, l := range s.Licensees() {
			if in, d := s.InCorridor(p, s.Itineraries(l)); !in {
				t.Errorf("%s: %.0f m from the routes of %s", bp.ID, d, l)
			}
		}
		if h, ok := s.BoardingPointAt(p); !ok || h.Feature != bp {
			t.Errorf("BoardingPointAt(%s) = %v", bp.ID, h)
		}
	}
	for _, g := range s.OfKind(KindGarage) {
		c := g.Bound().Center()
		if !s.InGarage(c, g.Licensee) {
			t.Errorf("%s: centre not in garage", g.ID)
		}
	}
}

// minDistance returns the distance between two features, approximated by
// the distance from each vertex of one to the other.
func minDistance(a, b *Feature) float64 {
	d := 1e9
	for _, p := range vertices(a.Geometry) {
		d = min(d, Distance(p, b.Geometry))
	}
	for _, p := range vertices(b.Geometry) {
		d = min(d, Distance(p, a.Geometry))
	}
	return d
}

func vertices(g orb.Geometry) []orb.Point {
	var ps []orb.Point
	switch g := g.(type) {
	case orb.Point:
		ps = append(ps, g)
	case orb.LineString:
		ps = append(ps, g...)
	case orb.MultiLineString:
		for _, ls := range g {
			ps = append(ps, ls...)
		}
	case orb.Polygon:
		for _, r := range g {
			ps = append(ps, r...)
		}
	case orb.MultiPolygon:
		for _, p := range g {
			for _, r := range p {
				ps = append(ps, r...)
			}
		}
	}
	return ps
}

// TestSampleScenario walks through the demonstration: a train of L1 on its
// Friday night route passes the school while evening classes are on.
func TestSampleScenario(t *testing.T) {
	s, err := Sample()
	if err != nil {
		t.Fatal(err)
	}
	school, _ := s.Feature("s-escola-centro")
	route, _ := s.Feature("it-l1-orla-noturna")
	// The point of the route nearest to the school.
	var p orb.Point
	best := 1e9
	vs := vertices(route.Geometry)
	for i := 1; i < len(vs); i++ {
		for k := range 101 {
			f := float64(k) / 100
			q := orb.Point{vs[i-1][0] + f*(vs[i][0]-vs[i-1][0]), vs[i-1][1] + f*(vs[i][1]-vs[i-1][1])}
			if d := Distance(q, school.Geometry); d < best {
				p, best = q, d
			}
		}
	}
	friday := at(t, "2026-11-27 19:30")
	if !route.ActiveAt(friday, false) {
		t.Fatal("L1's night route is not active on Friday 19:30")
	}
	if in, _ := s.InCorridor(p, []*Feature{route}); !in {
		t.Fatal("route vertex not in its own corridor")
	}
	var found bool
	for _, h := range s.SensitiveWithin(p, 200) {
		if h.Feature == school {
			found = true
			if !school.OpeningHours.Open(friday, false) {
				t.Error("school closed on Friday 19:30")
			}
		}
	}
	if !found {
		t.Error("school not within 200 m of the route")
	}
	if route.ActiveAt(at(t, "2026-11-25 19:30"), false) {
		t.Error("L1's night route active on a Wednesday")
	}
	summer, _ := s.Feature("it-l1-temporada")
	if summer.ActiveAt(friday, false) || !summer.ActiveAt(at(t, "2027-01-06 10:00"), false) {
		t.Error("summer itinerary validity wrong")
	}
	if z, ok := s.ZoneAt(school.Bound().Center()); !ok || z.Area != "strict_residential" {
		t.Errorf("school zone = %v", z)
	}
}

// The sample street base map loads, holds streets only, every one marked sample, and says in
// its own metadata that it is a sample, not a survey.
func TestSampleStreetsAreLabelledSample(t *testing.T) {
	set, err := SampleStreets()
	if err != nil {
		t.Fatal(err)
	}
	streets := set.OfKind(KindStreet)
	if len(streets) == 0 || len(streets) != set.Len() {
		t.Fatalf("%d streets of %d features", len(streets), set.Len())
	}
	for _, f := range streets {
		if f.Source != "sample" || f.Name == "" {
			t.Errorf("street %s: source %q, name %q", f.ID, f.Source, f.Name)
		}
	}
	raw, err := fs.ReadFile(sampleStreets, "basemap/piuma-sample-streets.geojson")
	if err != nil {
		t.Fatal(err)
	}
	var meta struct {
		Sample      bool
		Description string
	}
	if err := json.Unmarshal(raw, &meta); err != nil {
		t.Fatal(err)
	}
	if !meta.Sample || !strings.HasPrefix(meta.Description, "SAMPLE, NOT A SURVEY.") {
		t.Errorf("metadata %+v", meta)
	}
	// Sample streets never name a place.
	if pl := set.ReverseGeocode(streets[0].Bound().Center(), 1000, 0); pl.Street != nil {
		t.Errorf("a sample street names a place: %+v", pl.Street)
	}
}
