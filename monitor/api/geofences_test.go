package api_test

import (
	"encoding/json"
	"github.com/trenzinho/trenzinho/rules"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/trenzinho/trenzinho/geofences"
	"github.com/trenzinho/trenzinho/monitor/api"
	"github.com/trenzinho/trenzinho/profile"
)

func TestGeofencesAndMapConfig(t *testing.T) {
	set, err := geofences.Sample()
	if err != nil {
		t.Fatal(err)
	}
	var now time.Time
	f := newFixture(t, func(c *api.Config) {
		c.Map = api.MapConfig{Geofences: set, Profile: profile.Piuma(), TileURL: "https://tile.openstreetmap.org/{z}/{x}/{y}.png",
			Now: func() time.Time { return now }}
	})
	if code, _, _ := f.do("GET", "/api/v1/geofences", nil, session{}); code != http.StatusUnauthorized {
		t.Errorf("geofences without a session: %d", code)
	}
	_, token := f.login("maria", viewerPassword)

	type collection struct {
		Type     string
		Features []struct {
			ID         string
			Type       string
			Geometry   struct{ Type string }
			Properties map[string]any
		}
		GeneratedAt      string  `json:"generated_at"`
		TimeZone         string  `json:"time_zone"`
		SensitiveRadiusM float64 `json:"sensitive_radius_m"`
		Areas            map[string]struct {
			Name    string
			DayDB   float64 `json:"day_db"`
			NightDB float64 `json:"night_db"`
		}
	}
	get := func(at time.Time) collection {
		t.Helper()
		now = at
		code, b, h := f.do("GET", "/api/v1/geofences", nil, session{bearer: token})
		if code != http.StatusOK || h.Get("Content-Type") != "application/geo+json; charset=utf-8" {
			t.Fatalf("geofences: %d %s", code, h.Get("Content-Type"))
		}
		var c collection
		if err := json.Unmarshal(b, &c); err != nil {
			t.Fatal(err)
		}
		return c
	}
	prop := func(c collection, id, key string) any {
		for _, ft := range c.Features {
			if ft.ID == id {
				return ft.Properties[key]
			}
		}
		t.Fatalf("feature %s missing", id)
		return nil
	}

	// Sunday 29 November 2026, 11:00 in Piúma: the church (Su 06:00-12:00,17:00-21:00) is
	// open, the school (Mo-Fr) is closed.
	c := get(time.Date(2026, 11, 29, 14, 0, 0, 0, time.UTC))
	if c.Type != "FeatureCollection" || len(c.Features) != set.Len() || c.TimeZone != "America/Sao_Paulo" || c.SensitiveRadiusM != 200 {
		t.Fatalf("collection: %s, %d features (want %d), %q, radius %v", c.Type, len(c.Features), set.Len(), c.TimeZone, c.SensitiveRadiusM)
	}
	if a := c.Areas["mixed_residential"]; a.DayDB != 55 || a.NightDB != 50 || a.Name == "" {
		t.Errorf("area mixed_residential: %+v", a)
	}
	for id, want := range map[string]map[string]any{
		"s-igreja-matriz": {"open_now": true, "verified": true, "in_profile": true, "kind": "sensitive", "source": "sample"},
		"s-escola-centro": {"open_now": false, "verified": false},
	} {
		for k, v := range want {
			if got := prop(c, id, k); got != v {
				t.Errorf("%s.%s = %v, want %v", id, k, got, v)
			}
		}
	}
	for _, ft := range c.Features {
		if ft.Type != "Feature" || ft.Geometry.Type == "" || ft.Properties["id"] != ft.ID {
			t.Errorf("feature %+v", ft)
		}
		if ft.Properties["kind"] == "itinerary" {
			if _, ok := ft.Properties["active_now"].(bool); !ok {
				t.Errorf("itinerary %s without active_now", ft.ID)
			}
		}
	}
	// At noon the church closes.
	if c := get(time.Date(2026, 11, 29, 15, 0, 0, 0, time.UTC)); prop(c, "s-igreja-matriz", "open_now") != false {
		t.Error("church open at 12:00 on a Sunday")
	}
	// The set is not changed by the computed properties.
	if f, _ := set.Feature("s-igreja-matriz"); f.Properties["open_now"] != nil {
		t.Error("the route wrote into the geofence set")
	}

	code, b, _ := f.do("GET", "/api/v1/config", nil, session{bearer: token})
	var cfg map[string]any
	if err := json.Unmarshal(b, &cfg); code != http.StatusOK || err != nil {
		t.Fatalf("config: %d %v", code, err)
	}
	if cfg["tile_url"] != "https://tile.openstreetmap.org/{z}/{x}/{y}.png" || cfg["time_zone"] != "America/Sao_Paulo" ||
		cfg["municipality"] != "Piúma" || cfg["speed_limit_kmh"] != 30.0 {
		t.Errorf("config: %v", cfg)
	}
}

func TestGeofencesEmpty(t *testing.T) {
	f := newFixture(t, nil)
	_, token := f.login("maria", viewerPassword)
	code, b, _ := f.do("GET", "/api/v1/geofences", nil, session{bearer: token})
	var c struct {
		Type     string
		Features []any
	}
	if err := json.Unmarshal(b, &c); code != http.StatusOK || err != nil || c.Type != "FeatureCollection" || c.Features == nil || len(c.Features) != 0 {
		t.Errorf("geofences without a set: %d %s", code, b)
	}
	code, b, _ = f.do("GET", "/api/v1/config", nil, session{bearer: token})
	labels, _ := json.Marshal(rules.Table)
	if code != http.StatusOK || string(b) != `{"time_zone":"America/Sao_Paulo","registry":false,"cases":false,"complaints":false,"rule_labels":`+string(labels)+"}\n" {
		t.Errorf("config without settings: %d %s", code, b)
	}
}

// Admins see what the legal profile leaves unset (Piúma: municipal holidays, the UFMP, the
// defence office) in GET /api/v1/config, for the dashboard's banner; others do not.
func TestConfigProfileWarningsForAdmins(t *testing.T) {
	f := newFixture(t, func(c *api.Config) { c.Map = api.MapConfig{Profile: profile.Piuma()} })
	_, viewer := f.login("maria", viewerPassword)
	_, admin := f.login("admin", adminPassword)
	var cfg struct {
		ProfileWarnings []string `json:"profile_warnings"`
	}
	code, body, _ := f.do("GET", "/api/v1/config", nil, session{bearer: admin})
	if code != http.StatusOK || json.Unmarshal(body, &cfg) != nil ||
		!strings.Contains(strings.Join(cfg.ProfileWarnings, "\n"), "feriados municipais não cadastrados: prazos podem estar errados") {
		t.Fatalf("admin: %d %s", code, body)
	}
	code, body, _ = f.do("GET", "/api/v1/config", nil, session{bearer: viewer})
	if code != http.StatusOK || strings.Contains(string(body), "profile_warnings") {
		t.Fatalf("viewer: %d %s", code, body)
	}
}

// The street extract (street and landmark features) names the place of an auto; the map does
// not get it.
func TestGeofencesLeaveOutTheStreetExtract(t *testing.T) {
	set, err := geofences.Read(strings.NewReader(`{"type":"FeatureCollection","features":[
{"type":"Feature","properties":{"id":"s","kind":"sensitive","category":"school","name":"EMEF","source":"survey"},"geometry":{"type":"Point","coordinates":[-40.73,-20.84]}},
{"type":"Feature","properties":{"id":"osm-way-1","kind":"street","name":"Avenida Beira-Mar","source":"osm"},"geometry":{"type":"LineString","coordinates":[[-40.74,-20.8418],[-40.72,-20.8418]]}},
{"type":"Feature","properties":{"id":"osm-node-2","kind":"landmark","name":"Praça Oceânica","source":"osm"},"geometry":{"type":"Point","coordinates":[-40.7245,-20.8413]}}]}`), "t.geojson")
	if err != nil {
		t.Fatal(err)
	}
	f := newFixture(t, func(c *api.Config) { c.Map = api.MapConfig{Geofences: set} })
	_, token := f.login("maria", viewerPassword)
	code, b, _ := f.do("GET", "/api/v1/geofences", nil, session{bearer: token})
	var c struct{ Features []struct{ ID string } }
	if err := json.Unmarshal(b, &c); code != http.StatusOK || err != nil || len(c.Features) != 1 || c.Features[0].ID != "s" {
		t.Errorf("geofences: %d %s", code, b)
	}
}
