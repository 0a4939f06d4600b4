package api_test

import (
	"encoding/json"
	"net/http"
	"strings"
	"testing"

	"github.com/trenzinho/trenzinho/geofences"
	"github.com/trenzinho/trenzinho/monitor/api"
)

// GET /api/v1/basemap serves the street extract to signed-in users only, with its ODbL
// attribution and whether it is a sample, an ETag a revalidation answers 304 to, and GET
// /api/v1/config says it is there; a base map over its size cap is not served at all.
func TestBasemap(t *testing.T) {
	streets, err := geofences.SampleStreets()
	if err != nil {
		t.Fatal(err)
	}
	f := newFixture(t, func(c *api.Config) { c.Map = api.MapConfig{Streets: streets} })
	if code, _, _ := f.do("GET", "/api/v1/basemap", nil, session{}); code != http.StatusUnauthorized {
		t.Errorf("without a session: %d", code)
	}
	_, tok := f.login("maria", viewerPassword)
	code, body, h := f.do("GET", "/api/v1/basemap", nil, session{bearer: tok})
	var fc struct {
		Type        string
		Attribution string
		Sample      bool
		Features    []struct {
			Properties map[string]any
			Geometry   struct{ Type string }
		}
	}
	if code != http.StatusOK || json.Unmarshal(body, &fc) != nil {
		t.Fatalf("basemap: %d %s", code, body)
	}
	if fc.Type != "FeatureCollection" || fc.Attribution != "© OpenStreetMap contributors (ODbL)" || !fc.Sample ||
		len(fc.Features) != len(streets.OfKind(geofences.KindStreet)) || h.Get("Content-Type") != "application/geo+json" {
		t.Errorf("basemap %s (%s)", body, h.Get("Content-Type"))
	}
	for _, ft := range fc.Features {
		if ft.Properties["name"] == "" || !strings.Contains(ft.Geometry.Type, "LineString") {
			t.Errorf("street %+v", ft)
		}
	}
	etag := h.Get("ETag")
	if etag == "" {
		t.Fatal("no ETag")
	}
	if code, body, _ := f.do("GET", "/api/v1/basemap", nil, session{bearer: tok}, "If-None-Match", etag); code != http.StatusNotModified || len(body) != 0 {
		t.Errorf("revalidation: %d %q", code, body)
	}
	var cfg struct {
		Basemap *struct {
			Streets int
			Sample  bool
		}
	}
	if _, b, _ := f.do("GET", "/api/v1/config", nil, session{bearer: tok}); json.Unmarshal(b, &cfg) != nil || cfg.Basemap == nil ||
		cfg.Basemap.Streets != len(fc.Features) || !cfg.Basemap.Sample {
		t.Errorf("config basemap %+v", cfg.Basemap)
	}

	// Over the cap: not served, and the config does not offer it.
	capped := newFixture(t, func(c *api.Config) { c.Map = api.MapConfig{Streets: streets, BasemapMaxBytes: len(body) - 1} })
	_, tok = capped.login("maria", viewerPassword)
	if code, _, _ := capped.do("GET", "/api/v1/basemap", nil, session{bearer: tok}); code != http.StatusNotFound {
		t.Errorf("over the cap: %d", code)
	}
	if _, b, _ := capped.do("GET", "/api/v1/config", nil, session{bearer: tok}); strings.Contains(string(b), "basemap") {
		t.Errorf("config offers a capped base map: %s", b)
	}
	// Without streets: none.
	plain := newFixture(t, nil)
	_, tok = plain.login("maria", viewerPassword)
	if code, _, _ := plain.do("GET", "/api/v1/basemap", nil, session{bearer: tok}); code != http.StatusNotFound {
		t.Errorf("without streets: %d", code)
	}
}
