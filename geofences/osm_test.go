package geofences

import (
	"bytes"
	"os"
	"reflect"
	"strings"
	"testing"

	"github.com/paulmach/orb"
)

func TestImportOSM(t *testing.T) {
	in, err := os.Open("testdata/osm-export.geojson")
	if err != nil {
		t.Fatal(err)
	}
	defer in.Close()
	fc, st, err := ImportOSM(in)
	if err != nil {
		t.Fatal(err)
	}
	want := Stats{
		Features: 12, Imported: 8, Landmarks: 1, NoID: 1, BadGeometry: 1, Duplicates: 1,
		Unnamed: 1, UnparsedOpeningHours: 1,
		ByCategory: map[Category]int{
			CategoryChurch: 1, CategorySchool: 2, CategoryHospital: 1, CategoryHealth: 1,
			CategoryPublicOffice: 2, CategoryLibrary: 1,
		},
	}
	if !reflect.DeepEqual(st, want) {
		t.Errorf("Stats = %+v\nwant    %+v", st, want)
	}

	byID := make(map[string]map[string]any)
	var ids []string
	for _, f := range fc.Features {
		id := f.Properties["id"].(string)
		ids = append(ids, id)
		byID[id] = f.Properties
		if want := "sensitive"; id == "osm-node-1004" {
			if f.Properties["kind"] != "landmark" || f.Properties["name"] != "Restaurante da Orla" || f.Properties["osm_tag"] != "amenity=restaurant" {
				t.Errorf("restaurant: %v", f.Properties)
			}
		} else if f.Properties["source"] != "osm" || f.Properties["kind"] != want {
			t.Errorf("%s: source %v kind %v", id, f.Properties["source"], f.Properties["kind"])
		}
		if _, ok := f.Properties["verified_by"]; ok {
			t.Errorf("%s: imported as verified", id)
		}
	}
	wantIDs := []string{"osm-node-1001", "osm-way-2001", "osm-way-2002", "osm-node-1002",
		"osm-node-1003", "osm-node-1004", "osm-relation-3001", "osm-node-1005", "osm-node-1006"}
	if !reflect.DeepEqual(ids, wantIDs) {
		t.Errorf("ids = %v\nwant  %v", ids, wantIDs)
	}
	church := byID["osm-node-1001"]
	if church["category"] != "church" || church["name"] != "Igreja Matriz" ||
		church["opening_hours"] != "Mo-Su 07:00-20:00" || church["osm_id"] != "node/1001" ||
		church["osm_tag"] != "amenity=place_of_worship" {
		t.Errorf("church = %v", church)
	}
	if h := byID["osm-way-2002"]; h["name"] != "Hospital sem nome (OSM way/2002)" || h["category"] != "hospital" || h["name_generated"] != true {
		t.Errorf("unnamed hospital = %v", h)
	}
	if u := byID["osm-node-1002"]; u["category"] != "health" || u["opening_hours"] != nil ||
		!strings.Contains(u["osm_opening_hours"].(string), "||") || u["osm_tag"] != "healthcare=centre" {
		t.Errorf("health unit = %v", u)
	}
	if r := byID["osm-node-1003"]; r["name"] != "Agência da Receita" || r["category"] != "public_office" {
		t.Errorf("government office = %v", r)
	}
	if l := byID["osm-node-1005"]; l["name"] != "Biblioteca Municipal" || l["category"] != "library" {
		t.Errorf("library (nested tags) = %v", l)
	}
	for _, f := range fc.Features {
		if f.Properties["id"] == "osm-way-2002" {
			if _, ok := f.Geometry.(orb.Polygon); !ok {
				t.Errorf("closed way: %T, want orb.Polygon", f.Geometry)
			}
		}
	}

	// The result loads, and survives Write and Read.
	s, err := NewSet(File{Name: "osm", Collection: fc})
	if err != nil {
		t.Fatal(err)
	}
	s2 := writeAndRead(t, fc)
	if s.Len() != 9 || s2.Len() != 9 {
		t.Fatalf("Len = %d, %d", s.Len(), s2.Len())
	}
	for _, f := range s.Features() {
		g, _ := s2.Feature(f.ID)
		if g == nil || !reflect.DeepEqual(f.Properties, g.Properties) || !reflect.DeepEqual(f.Geometry, g.Geometry) {
			t.Errorf("%s changed through Write and Read:\n%+v\n%+v", f.ID, f, g)
		}
		if f.Verified() {
			t.Errorf("%s verified", f.ID)
		}
	}
}

func TestImportOSMErrors(t *testing.T) {
	_, _, err := ImportOSM(strings.NewReader(`{"version":0.6,"elements":{"type":"node","id":1}}`))
	if err == nil || !strings.Contains(err.Error(), "Overpass JSON") {
		t.Errorf("bad Overpass JSON: %v", err)
	}
	_, _, err = ImportOSM(strings.NewReader(`<osm/>`))
	if err == nil {
		t.Error("XML: no error")
	}
}

func TestWriteFormat(t *testing.T) {
	fc, _, err := ImportOSM(strings.NewReader(`{"type":"FeatureCollection","features":[
{"type":"Feature","id":"node/1","properties":{"amenity":"library","name":"B"},"geometry":{"type":"Point","coordinates":[-40.7,-20.8]}}]}`))
	if err != nil {
		t.Fatal(err)
	}
	var buf bytes.Buffer
	if err := Write(&buf, fc); err != nil {
		t.Fatal(err)
	}
	want := `{
"type": "FeatureCollection",
"features": [
{"type":"Feature","properties":{"id":"osm-node-1","kind":"sensitive","category":"library","name":"B","osm_id":"node/1","osm_tag":"amenity=library","source":"osm"},"geometry":{"type":"Point","coordinates":[-40.7,-20.8]}}
]
}
`
	if buf.String() != want {
		t.Errorf("Write:\n%s\nwant:\n%s", buf.String(), want)
	}
}
