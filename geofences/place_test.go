package geofences

import (
	"bytes"
	"math"
	"os"
	"reflect"
	"strings"
	"testing"

	"github.com/paulmach/orb"
	"github.com/paulmach/orb/geojson"
)

// piumaExtract imports the synthetic Piúma street extract as the monitor does (ImportOSM,
// Write, then load).
func piumaExtract(t testing.TB) (*Set, Stats) {
	t.Helper()
	in, err := os.Open("testdata/piuma-osm-extract.geojson")
	if err != nil {
		t.Fatal(err)
	}
	defer in.Close()
	fc, st, err := ImportOSM(in)
	if err != nil {
		t.Fatal(err)
	}
	return writeAndRead(t, fc), st
}

// writeAndRead writes fc as the importer's command does and loads it.
func writeAndRead(t testing.TB, fc *geojson.FeatureCollection) *Set {
	t.Helper()
	var buf bytes.Buffer
	if err := Write(&buf, fc); err != nil {
		t.Fatal(err)
	}
	s, err := Read(&buf, "osm.geojson")
	if err != nil {
		t.Fatal(err)
	}
	return s
}

func TestImportOSMStreetsAndLandmarks(t *testing.T) {
	s, st := piumaExtract(t)
	want := Stats{Features: 11, Imported: 1, Streets: 4, Landmarks: 3, Unused: 3,
		ByCategory: map[Category]int{CategoryChurch: 1}}
	if !reflect.DeepEqual(st, want) {
		t.Errorf("Stats = %+v\nwant    %+v", st, want)
	}
	var streets []string
	for _, f := range s.OfKind(KindStreet) {
		streets = append(streets, f.Name+" "+f.Properties["osm_tag"].(string))
		if f.Source != "osm" || f.Verified() {
			t.Errorf("%s: source %q verified %v", f.ID, f.Source, f.Verified())
		}
	}
	wantStreets := []string{"Avenida Beira-Mar highway=secondary", "Rua Quintino Bocaiúva highway=residential",
		"Rua Sete de Setembro highway=residential", "ES-060 highway=primary"}
	if !reflect.DeepEqual(streets, wantStreets) {
		t.Errorf("streets %q\nwant    %q", streets, wantStreets)
	}
	var landmarks []string
	for _, f := range s.OfKind(KindLandmark) {
		landmarks = append(landmarks, f.Name)
	}
	if want := []string{"Praça Oceânica", "Píer dos Pescadores", "Quiosque do Pescador"}; !reflect.DeepEqual(landmarks, want) {
		t.Errorf("landmarks %q, want %q", landmarks, want)
	}
	if s.HasStreets() != true {
		t.Error("HasStreets false")
	}
	if sample, err := Sample(); err != nil || sample.HasStreets() {
		t.Errorf("sample set has streets: %v", err)
	}
}

func TestReverseGeocode(t *testing.T) {
	s, _ := piumaExtract(t)
	const degM = 110700.0 // metres per degree of latitude near Piúma, roughly
	for _, c := range []struct {
		name                 string
		p                    orb.Point
		street, landmark     string
		streetM, landmarkM   float64 // expected distances, ±1.5 m
		noStreet, noLandmark bool
	}{
		// Between two vertices of the avenue, 250 m from each: the distance is to the
		// segment, not to the vertices.
		// No landmark within 300 m.
		{name: "on the avenue", p: orb.Point{-40.7275, -20.8418}, street: "Avenida Beira-Mar", streetM: 0, noLandmark: true},
		{name: "by the square", p: orb.Point{-40.7245, -20.8418}, street: "Avenida Beira-Mar", streetM: 0,
			landmark: "Praça Oceânica", landmarkM: math.Hypot(0.0005*degM, 0)},
		// On the footway of the promenade, 33 m south of the avenue: a footway is no street.
		{name: "on the promenade", p: orb.Point{-40.7300, -20.8421}, street: "Avenida Beira-Mar", streetM: 0.0003 * degM, noLandmark: true},
		// A church (a sensitive site of the extract) is a landmark too.
		{name: "by the church", p: orb.Point{-40.7310, -20.83955}, street: "Rua Quintino Bocaiúva", streetM: 0,
			landmark: "Igreja Matriz Nossa Senhora da Conceição", landmarkM: 0.00105 * degM},
		{name: "street named by its ref", p: orb.Point{-40.7400, -20.8312}, street: "ES-060", streetM: 0.0002 * degM, noLandmark: true},
		{name: "out of town", p: orb.Point{-40.70, -20.80}, noStreet: true, noLandmark: true},
	} {
		t.Run(c.name, func(t *testing.T) {
			pl := s.ReverseGeocode(c.p, DefaultStreetRadiusM, DefaultLandmarkRadiusM)
			if c.noStreet != (pl.Street == nil) {
				t.Fatalf("street %+v", pl.Street)
			}
			if pl.Street != nil && (pl.Street.Feature.Name != c.street || math.Abs(pl.Street.DistanceM-c.streetM) > 1.5) {
				t.Errorf("street %s at %.1f m, want %s at %.1f m", pl.Street.Feature.Name, pl.Street.DistanceM, c.street, c.streetM)
			}
			if c.noLandmark != (pl.Landmark == nil) {
				t.Fatalf("landmark %+v", pl.Landmark)
			}
			if pl.Landmark != nil && (pl.Landmark.Feature.Name != c.landmark || math.Abs(pl.Landmark.DistanceM-c.landmarkM) > 1.5) {
				t.Errorf("landmark %s at %.1f m, want %s at %.1f m", pl.Landmark.Feature.Name, pl.Landmark.DistanceM, c.landmark, c.landmarkM)
			}
		})
	}
}

// A place is named only by what a source names: never by sample data, never by a name the
// importer generated.
func TestReverseGeocodeNamesOnlyRealPlaces(t *testing.T) {
	const fc = `{"type":"FeatureCollection","features":[
{"type":"Feature","properties":{"id":"s1","kind":"sensitive","category":"school","name":"Escola de Exemplo","source":"sample"},"geometry":{"type":"Point","coordinates":[-40.7300,-20.8400]}},
{"type":"Feature","properties":{"id":"s2","kind":"sensitive","category":"hospital","name":"Hospital sem nome (OSM way/1)","source":"osm"},"geometry":{"type":"Point","coordinates":[-40.7301,-20.8400]}},
{"type":"Feature","properties":{"id":"s3","kind":"sensitive","category":"health","name":"Unidade de saúde sem nome","name_generated":true,"source":"osm"},"geometry":{"type":"Point","coordinates":[-40.7302,-20.8400]}},
{"type":"Feature","properties":{"id":"s4","kind":"sensitive","category":"school","name":"EMEF Real","source":"survey"},"geometry":{"type":"Point","coordinates":[-40.7310,-20.8400]}},
{"type":"Feature","properties":{"id":"st","kind":"street","name":"Rua de Exemplo","source":"sample"},"geometry":{"type":"LineString","coordinates":[[-40.74,-20.84],[-40.72,-20.84]]}}
]}`
	s, err := Read(strings.NewReader(fc), "t.geojson")
	if err != nil {
		t.Fatal(err)
	}
	pl := s.ReverseGeocode(orb.Point{-40.7300, -20.8400}, DefaultStreetRadiusM, DefaultLandmarkRadiusM)
	if pl.Street != nil {
		t.Errorf("sample street named: %s", pl.Street.Feature.Name)
	}
	if pl.Landmark == nil || pl.Landmark.Feature.ID != "s4" {
		t.Errorf("landmark %+v, want s4", pl.Landmark)
	}
	// A street and a landmark need a name.
	for _, bad := range []string{
		`{"type":"FeatureCollection","features":[{"type":"Feature","properties":{"id":"x","kind":"street"},"geometry":{"type":"LineString","coordinates":[[-40.74,-20.84],[-40.72,-20.84]]}}]}`,
		`{"type":"FeatureCollection","features":[{"type":"Feature","properties":{"id":"x","kind":"landmark"},"geometry":{"type":"Point","coordinates":[-40.74,-20.84]}}]}`,
		`{"type":"FeatureCollection","features":[{"type":"Feature","properties":{"id":"x","kind":"street","name":"R"},"geometry":{"type":"Point","coordinates":[-40.74,-20.84]}}]}`,
	} {
		if _, err := Read(strings.NewReader(bad), "bad.geojson"); err == nil {
			t.Errorf("accepted %s", bad)
		}
	}
}

// An Overpass API answer (out geom) imports as its GeoJSON export does; a multipolygon relation
// of closed outer rings becomes a polygon, an element with only its centre a point.
func TestImportOverpassJSON(t *testing.T) {
	in, err := os.Open("testdata/piuma-overpass.json")
	if err != nil {
		t.Fatal(err)
	}
	defer in.Close()
	fc, st, err := ImportOSM(in)
	if err != nil {
		t.Fatal(err)
	}
	want := Stats{Features: 13, Imported: 1, Streets: 4, Landmarks: 5, Unused: 3,
		ByCategory: map[Category]int{CategoryChurch: 1}}
	if !reflect.DeepEqual(st, want) {
		t.Errorf("Stats = %+v\nwant    %+v", st, want)
	}
	s := writeAndRead(t, fc)
	geo, _ := piumaExtract(t)
	for _, f := range geo.Features() {
		g, ok := s.Feature(f.ID)
		if !ok || g.Name != f.Name || g.Kind != f.Kind || !reflect.DeepEqual(g.Geometry, f.Geometry) {
			t.Errorf("%s: %+v, want %+v", f.ID, g, f)
		}
	}
	if f, ok := s.Feature("osm-relation-940001"); !ok || f.Kind != KindLandmark || f.Geometry.GeoJSONType() != "MultiPolygon" {
		t.Errorf("multipolygon: %+v", f)
	}
	if f, ok := s.Feature("osm-way-940002"); !ok || f.Name != "Mercado do Peixe" || f.Geometry.GeoJSONType() != "Point" {
		t.Errorf("centre: %+v", f)
	}
}

// FuzzImportOSM: whatever the export holds, ImportOSM does not panic and what it writes loads.
// The corpus (testdata/fuzz/FuzzImportOSM) holds small exports of each shape, GeoJSON and
// Overpass JSON; the fixtures are checked by the tests above.
func FuzzImportOSM(f *testing.F) {
	f.Add([]byte(`{"type":"FeatureCollection","features":[{"type":"Feature","id":"node/1","properties":{"amenity":"school","name":"E","opening_hours":"Mo-Fr 07:00-12:00"},"geometry":{"type":"Point","coordinates":[-40.7,-20.8]}}]}`))
	f.Add([]byte(`{"elements":[{"type":"way","id":2,"tags":{"highway":"residential","name":"Rua B"},"geometry":[{"lat":-20.8,"lon":-40.7},{"lat":-20.81,"lon":-40.71}]},{"type":"relation","id":3,"tags":{"type":"multipolygon","leisure":"park","name":"P"},"members":[{"type":"way","role":"outer","geometry":[{"lat":-20.8,"lon":-40.7},{"lat":-20.8,"lon":-40.71},{"lat":-20.81,"lon":-40.71},{"lat":-20.8,"lon":-40.7}]}]}]}`))
	f.Fuzz(func(t *testing.T, data []byte) {
		fc, _, err := ImportOSM(bytes.NewReader(data))
		if err != nil {
			return
		}
		var buf bytes.Buffer
		if err := Write(&buf, fc); err != nil {
			t.Fatal(err)
		}
		if _, err := Read(&buf, "out.geojson"); err != nil {
			t.Fatalf("import wrote what does not load: %v", err)
		}
	})
}
