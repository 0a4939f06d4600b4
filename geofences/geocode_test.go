package geofences

import (
	"strings"
	"testing"
	"unicode"

	"github.com/paulmach/orb"
)

const geocodeSet = `{"type":"FeatureCollection","features":[
{"type":"Feature","properties":{"id":"w1","kind":"street","name":"Avenida Beira-Mar","source":"osm"},"geometry":{"type":"LineString","coordinates":[[-40.74,-20.84],[-40.73,-20.84]]}},
{"type":"Feature","properties":{"id":"w2","kind":"street","name":"Avenida Beira-Mar","source":"osm"},"geometry":{"type":"LineString","coordinates":[[-40.73,-20.84],[-40.72,-20.841]]}},
{"type":"Feature","properties":{"id":"w3","kind":"street","name":"Rua São João","source":"osm"},"geometry":{"type":"LineString","coordinates":[[-40.73,-20.83],[-40.73,-20.82]]}},
{"type":"Feature","properties":{"id":"l1","kind":"landmark","name":"Praça Dona Carmem","source":"osm"},"geometry":{"type":"Point","coordinates":[-40.735,-20.838]}}]}`

func TestGeocode(t *testing.T) {
	s, err := Read(strings.NewReader(geocodeSet), "g.geojson")
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		q    string
		want []string
	}{
		{"Av. Beira Mar, 120", []string{"w1"}}, // words match the start of the name's words; one hit per street
		{"avenida beira mar 120", []string{"w1"}},
		{"BEIRA-MAR", []string{"w1"}},
		{"sao joao", []string{"w3"}},
		{"praca", []string{"l1"}},
		{"rua", []string{"w3"}},
		{"120", nil},
		{"", nil},
		{strings.Repeat("a", 10_000), nil},
	} {
		hits := s.Geocode(tc.q, 5)
		var got []string
		for _, h := range hits {
			got = append(got, h.Feature.ID)
			if Distance(h.Point, h.Feature.Geometry) > 0.01 {
				t.Errorf("%q: the point %v is not on %s", tc.q, h.Point, h.Feature.ID)
			}
		}
		if tc.q == "avenida beira mar 120" && (Distance(hits[0].Point, orb.Point{-40.735, -20.84}) > 1) {
			t.Errorf("the avenue's first way is placed at %v, not in its middle", hits[0].Point)
		}
		if strings.Join(got, ",") != strings.Join(tc.want, ",") {
			t.Errorf("Geocode(%.20q) = %v, want %v", tc.q, got, tc.want)
		}
	}
}

// FuzzGeocode: the query is typed by anyone. Whatever it holds, Geocode returns at most limit
// hits, each a named feature whose folded name has a word starting with every word of the
// folded query that is not all digits, and a point on or in the feature.
func FuzzGeocode(f *testing.F) {
	for _, q := range []string{"Av. Beira Mar, 120", "sao joao", "PRAÇA", "", "120", "rua rua rua", "\xff\xfe", "a\u0301"} {
		f.Add(q)
	}
	s, err := Read(strings.NewReader(geocodeSet), "g.geojson")
	if err != nil {
		f.Fatal(err)
	}
	f.Fuzz(func(t *testing.T, q string) {
		hits := s.Geocode(q, 3)
		if len(hits) > 3 {
			t.Fatalf("%d hits", len(hits))
		}
		if len(q) > MaxGeocodeQuery {
			q = q[:MaxGeocodeQuery]
		}
		for _, h := range hits {
			name := " " + Fold(h.Feature.Name)
			for _, w := range strings.Fields(Fold(q)) {
				if strings.TrimFunc(w, unicode.IsDigit) == "" { // a house number, in any script
					continue
				}
				if !strings.Contains(name, " "+w) {
					t.Fatalf("%q matched %q without the word %q", q, h.Feature.Name, w)
				}
			}
			if Distance(h.Point, h.Feature.Geometry) > 0.01 {
				t.Fatalf("%q: %v is not on %s", q, h.Point, h.Feature.ID)
			}
		}
	})
}
