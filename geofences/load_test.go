package geofences

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"testing/fstest"
	"time"

	"github.com/paulmach/orb"
)

const validFile = `{"type": "FeatureCollection", "features": [
{"type":"Feature","properties":{"id":"s1","kind":"sensitive","category":"school","name":"Escola","opening_hours":"Mo-Fr 07:00-12:00; PH off","source":"survey","verified_by":"Fiscal A","verified_at":"2026-10-01"},"geometry":{"type":"Point","coordinates":[-40.7292,-20.8367]}},
{"type":"Feature","properties":{"id":"z1","kind":"nbr_zone","area":"mixed_leisure"},"geometry":{"type":"Polygon","coordinates":[[[-40.74,-20.85],[-40.72,-20.85],[-40.72,-20.83],[-40.74,-20.83],[-40.74,-20.85]]]}},
{"type":"Feature","properties":{"id":"i1","kind":"itinerary","licensee":"L1","days":"Fr-Su,PH","hours":"18:00-23:00","valid_from":"2026-01-01","valid_to":"2026-12-31"},"geometry":{"type":"LineString","coordinates":[[-40.73,-20.84],[-40.72,-20.83]]}},
{"type":"Feature","properties":{"id":"b1","kind":"boarding_point","radius_m":25},"geometry":{"type":"Point","coordinates":[-40.73,-20.84]}},
{"type":"Feature","properties":{"id":"g1","kind":"garage","licensee":"L1"},"geometry":{"type":"MultiPolygon","coordinates":[[[[-40.75,-20.85],[-40.749,-20.85],[-40.749,-20.849],[-40.75,-20.85]]]]}}
]}`

func TestReadValid(t *testing.T) {
	s, err := Read(strings.NewReader(validFile), "valid.geojson")
	if err != nil {
		t.Fatal(err)
	}
	if s.Len() != 5 {
		t.Fatalf("Len = %d", s.Len())
	}
	f, _ := s.Feature("s1")
	if f.Category != CategorySchool || f.Name != "Escola" || f.Source != "survey" || !f.Verified() ||
		!f.VerifiedAt.Equal(time.Date(2026, 10, 1, 0, 0, 0, 0, time.UTC)) ||
		f.OpeningHours.String() != "Mo-Fr 07:00-12:00; PH off" || f.File != "valid.geojson" || f.Index != 0 {
		t.Errorf("s1 = %+v", f)
	}
	f, _ = s.Feature("i1")
	if f.Licensee != "L1" || f.CorridorM != 50 || f.Schedule.String() != "Fr-Su,PH 18:00-23:00" ||
		f.ValidFrom.Format(time.DateOnly) != "2026-01-01" || f.ValidTo.Format(time.DateOnly) != "2026-12-31" {
		t.Errorf("i1 = %+v", f)
	}
	if f, _ := s.Feature("b1"); f.RadiusM != 25 {
		t.Errorf("b1 radius %v", f.RadiusM)
	}
	if f, _ := s.Feature("z1"); f.Area != "mixed_leisure" || f.Properties["area"] != "mixed_leisure" {
		t.Errorf("z1 = %+v", f)
	}
}

func TestValidationErrors(t *testing.T) {
	const pt = `{"type":"Point","coordinates":[-40.73,-20.84]}`
	const poly = `{"type":"Polygon","coordinates":[[[-40.74,-20.85],[-40.72,-20.85],[-40.72,-20.83],[-40.74,-20.85]]]}`
	const line = `{"type":"LineString","coordinates":[[-40.73,-20.84],[-40.72,-20.83]]}`
	sensitive := `"kind":"sensitive","category":"church","name":"Igreja","source":"survey"`
	tests := []struct {
		name, props, geom string
		want              []string
	}{
		{"no id", `"kind":"garage","licensee":"L1"`, poly, []string{`missing property "id"`}},
		{"numeric id", `"id":7,"kind":"garage","licensee":"L1"`, poly, []string{`property "id" must be a string, not a number`}},
		{"empty id", `"id":"","kind":"garage","licensee":"L1"`, poly, []string{`property "id" is empty`}},
		{"no kind", `"id":"a"`, pt, []string{`missing property "kind"`}},
		{"unknown kind", `"id":"a","kind":"school"`, pt, []string{`unknown kind "school"`}},
		{"wrong geometry", `"id":"a","kind":"garage","licensee":"L1"`, pt, []string{"geometry Point not allowed for kind garage (want Polygon, MultiPolygon)"}},
		{"boarding polygon", `"id":"a","kind":"boarding_point"`, poly, []string{"geometry Polygon not allowed for kind boarding_point"}},
		{"itinerary point", `"id":"a","kind":"itinerary","licensee":"L1"`, pt, []string{"geometry Point not allowed"}},
		{"null geometry", `"id":"a","kind":"garage","licensee":"L1"`, `null`, []string{"missing geometry"}},
		{"longitude", `"id":"a","kind":"boarding_point"`, `{"type":"Point","coordinates":[-190,-20.84]}`, []string{"longitude -190 out of range"}},
		{"latitude", `"id":"a","kind":"boarding_point"`, `{"type":"Point","coordinates":[-40.7,-95]}`, []string{"latitude -95 out of range"}},
		{"open ring", `"id":"a","kind":"garage","licensee":"L1"`,
			`{"type":"Polygon","coordinates":[[[-40.74,-20.85],[-40.72,-20.85],[-40.72,-20.83],[-40.74,-20.83]]]}`,
			[]string{"ring 0 is not closed"}},
		{"short ring", `"id":"a","kind":"garage","licensee":"L1"`,
			`{"type":"Polygon","coordinates":[[[-40.74,-20.85],[-40.72,-20.85],[-40.74,-20.85]]]}`,
			[]string{"ring 0: 3 positions, want at least 4"}},
		{"multipolygon hole open", `"id":"a","kind":"garage","licensee":"L1"`,
			`{"type":"MultiPolygon","coordinates":[[[[-40.74,-20.85],[-40.72,-20.85],[-40.72,-20.83],[-40.74,-20.85]],[[-40.73,-20.845],[-40.725,-20.845],[-40.725,-20.84],[-40.73,-20.84]]]]}`,
			[]string{"polygon 0 ring 1 is not closed"}},
		{"short line", `"id":"a","kind":"itinerary","licensee":"L1"`, `{"type":"LineString","coordinates":[[-40.73,-20.84]]}`, []string{"line: 1 positions, want at least 2"}},
		{"sensitive missing", `"id":"a","kind":"sensitive"`, pt, []string{`missing property "category"`, `missing property "name"`, `missing property "source"`}},
		{"category", `"id":"a","kind":"sensitive","category":"park","name":"x","source":"osm"`, pt, []string{`unknown category "park"`}},
		{"opening hours", `"id":"a",` + sensitive + `,"opening_hours":"Mo-Fr 18:00+"`, pt, []string{"opening_hours: rule \"Mo-Fr 18:00+\": open-ended time"}},
		{"empty opening hours", `"id":"a",` + sensitive + `,"opening_hours":""`, pt, []string{`property "opening_hours" is empty (omit it when unknown)`}},
		{"verified half", `"id":"a",` + sensitive + `,"verified_by":"Fiscal A"`, pt, []string{"verified_by and verified_at go together"}},
		{"verified_at", `"id":"a",` + sensitive + `,"verified_by":"Fiscal A","verified_at":"ontem"`, pt, []string{`property "verified_at": "ontem" is not a date`}},
		{"zone area", `"id":"a","kind":"nbr_zone"`, poly, []string{`missing property "area"`}},
		{"itinerary", `"id":"a","kind":"itinerary","corridor_m":"50","days":"Fr-Xx","hours":"18h-23h","valid_from":"01/01/2026","valid_to":"2025-12-31"`, line,
			[]string{`missing property "licensee"`, `property "corridor_m" must be a number, not a string`, `days "Fr-Xx"`, `property "valid_from": "01/01/2026" is not a date (YYYY-MM-DD)`}},
		{"itinerary dates", `"id":"a","kind":"itinerary","licensee":"L1","valid_from":"2026-12-31","valid_to":"2026-01-01"`, line, []string{"valid_to 2026-01-01 is before valid_from 2026-12-31"}},
		{"itinerary hours", `"id":"a","kind":"itinerary","licensee":"L1","hours":"18h-23h","corridor_m":-5`, line, []string{`hours "18h-23h"`, `"corridor_m" must be a positive number of metres, not -5`}},
		{"radius", `"id":"a","kind":"boarding_point","radius_m":0`, pt, []string{`"radius_m" must be a positive number`}},
		{"garage licensee", `"id":"a","kind":"garage","licensee":3`, poly, []string{`property "licensee" must be a string, not a number`}},
	}
	for _, tt := range tests {
		doc := `{"type":"FeatureCollection","features":[{"type":"Feature","properties":{` + tt.props + `},"geometry":` + tt.geom + `}]}`
		_, err := Read(strings.NewReader(doc), "bad.geojson")
		if err == nil {
			t.Errorf("%s: no error", tt.name)
			continue
		}
		msg := err.Error()
		for _, w := range tt.want {
			if !strings.Contains(msg, w) {
				t.Errorf("%s: error %q does not contain %q", tt.name, msg, w)
			}
		}
		if !strings.HasPrefix(msg, "geofences: bad.geojson: feature 0") {
			t.Errorf("%s: error %q does not name the file and feature", tt.name, msg)
		}
		if n := strings.Count(msg, "\n") + 1; n != len(tt.want) {
			t.Errorf("%s: %d errors, want %d:\n%s", tt.name, n, len(tt.want), msg)
		}
		var fe *FeatureError
		if !errors.As(err, &fe) || fe.File != "bad.geojson" || fe.Index != 0 {
			t.Errorf("%s: not a *FeatureError for bad.geojson feature 0: %#v", tt.name, err)
		}
	}
}

func TestValidationReportsEveryError(t *testing.T) {
	doc := `{"type":"FeatureCollection","features":[
{"type":"Feature","properties":{"id":"a","kind":"garage"},"geometry":{"type":"Point","coordinates":[0,0]}},
{"type":"Feature","properties":{"id":"ok","kind":"boarding_point"},"geometry":{"type":"Point","coordinates":[0,0]}},
{"type":"Feature","properties":{"id":"a","kind":"boarding_point"},"geometry":{"type":"Point","coordinates":[0,0]}},
{"type":"Feature","id":"node/1","properties":{"kind":"boarding_point"},"geometry":{"type":"Point","coordinates":[0,0]}}
]}`
	_, err := Read(strings.NewReader(doc), "many.geojson")
	if err == nil {
		t.Fatal("no error")
	}
	want := []string{
		`geofences: many.geojson: feature 0 (id "a"): geometry Point not allowed for kind garage (want Polygon, MultiPolygon)`,
		`geofences: many.geojson: feature 0 (id "a"): missing property "licensee"`,
		`geofences: many.geojson: feature 2 (id "a"): duplicate id (first in many.geojson, feature 0)`,
		`geofences: many.geojson: feature 3: missing property "id" (the feature's own "id" member is not used)`,
	}
	if got := strings.Split(err.Error(), "\n"); strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Errorf("errors:\n%s\nwant:\n%s", err, strings.Join(want, "\n"))
	}
}

func TestLoadDirectory(t *testing.T) {
	dir := t.TempDir()
	write := func(name, content string) {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	write("a.geojson", `{"type":"FeatureCollection","features":[{"type":"Feature","properties":{"id":"x","kind":"boarding_point"},"geometry":{"type":"Point","coordinates":[-40.7,-20.8]}}]}`)
	write("b.json", `{"type":"FeatureCollection","features":[{"type":"Feature","properties":{"id":"y","kind":"boarding_point"},"geometry":{"type":"Point","coordinates":[-40.7,-20.8]}}]}`)
	write("notes.txt", "not loaded")
	write(".hidden.geojson", "not loaded either")
	if err := os.Mkdir(filepath.Join(dir, "sub.geojson"), 0o755); err != nil {
		t.Fatal(err)
	}
	s, err := Load(dir)
	if err != nil {
		t.Fatal(err)
	}
	if s.Len() != 2 {
		t.Fatalf("Len = %d", s.Len())
	}
	if f, _ := s.Feature("y"); f.File != filepath.Join(dir, "b.json") {
		t.Errorf("File = %q", f.File)
	}
	s, err = Load(filepath.Join(dir, "a.geojson"))
	if err != nil || s.Len() != 1 {
		t.Fatalf("Load(file) = %v, %v", s, err)
	}

	// Duplicate ids across files, and a file that is not GeoJSON.
	write("c.geojson", `{"type":"FeatureCollection","features":[{"type":"Feature","properties":{"id":"x","kind":"boarding_point"},"geometry":{"type":"Point","coordinates":[-40.7,-20.8]}}]}`)
	write("d.geojson", `{"type":"Feature"}`)
	_, err = Load(dir)
	if err == nil {
		t.Fatal("no error")
	}
	for _, w := range []string{
		"c.geojson: feature 0 (id \"x\"): duplicate id (first in " + filepath.Join(dir, "a.geojson") + ", feature 0)",
		"d.geojson: not a GeoJSON FeatureCollection",
	} {
		if !strings.Contains(err.Error(), w) {
			t.Errorf("error %q does not contain %q", err, w)
		}
	}

	if _, err := Load(filepath.Join(dir, "missing")); err == nil {
		t.Error("Load(missing): no error")
	}
	empty := t.TempDir()
	if _, err := Load(empty); err == nil || !strings.Contains(err.Error(), "no .geojson or .json files") {
		t.Errorf("Load(empty dir) = %v", err)
	}
}

func TestLoadFS(t *testing.T) {
	fsys := fstest.MapFS{
		"set/one.geojson": {Data: []byte(validFile)},
		"set/readme.md":   {Data: []byte("# not loaded")},
	}
	s, err := LoadFS(fsys, "set")
	if err != nil {
		t.Fatal(err)
	}
	if f, _ := s.Feature("g1"); f.File != "set/one.geojson" {
		t.Errorf("File = %q", f.File)
	}
	if _, err := LoadFS(fsys, "set/one.geojson"); err != nil {
		t.Error(err)
	}
	if _, err := LoadFS(fsys, "nope"); err == nil {
		t.Error("LoadFS(nope): no error")
	}
}

func TestNewSetNilCollection(t *testing.T) {
	if _, err := NewSet(File{Name: "x"}); err == nil {
		t.Error("no error for a nil collection")
	}
	s, err := NewSet()
	if err != nil || s.Len() != 0 || len(s.SensitiveWithin(orb.Point{}, 100)) != 0 {
		t.Errorf("empty set: %v, %v", s, err)
	}
	if _, ok := s.ZoneAt(orb.Point{}); ok {
		t.Error("empty set has a zone")
	}
}
