package api

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"net/http"
	"strconv"

	"github.com/paulmach/orb/geojson"

	"github.com/trenzinho/trenzinho/geofences"
)

// BasemapAttribution is the attribution the street base map is shown with: an OpenStreetMap
// extract is licensed under the ODbL, which requires it wherever the data are shown.
const BasemapAttribution = "© OpenStreetMap contributors (ODbL)"

// DefaultBasemapMaxBytes caps the encoded street base map (MapConfig.BasemapMaxBytes): a
// municipality's extract of its streets is a few hundred kilobytes; one that is much larger is
// the wrong extract (a state's), which the dashboard should not download on every login.
const DefaultBasemapMaxBytes = 4 << 20

// basemap is the encoded answer of GET /api/v1/basemap, built once: the street features of
// the extract, reduced to what the map draws.
type basemap struct {
	body    []byte
	etag    string
	streets int
	sample  bool
}

// basemapCollection is GET /api/v1/basemap: a GeoJSON FeatureCollection of the streets with
// their name and highway class, and as foreign members the attribution and whether the extract
// is a sample (invented, not a survey).
type basemapCollection struct {
	Type        string             `json:"type"`
	Attribution string             `json:"attribution"`
	Sample      bool               `json:"sample"`
	Features    []*geojson.Feature `json:"features"`
}

// newBasemap encodes the streets of set; nil, nil when it has none.
func newBasemap(set *geofences.Set, maxBytes int) (*basemap, error) {
	if set == nil {
		return nil, nil
	}
	streets := set.OfKind(geofences.KindStreet)
	if len(streets) == 0 {
		return nil, nil
	}
	fc := basemapCollection{Type: "FeatureCollection", Attribution: BasemapAttribution}
	for _, f := range streets {
		g := geojson.NewFeature(f.Geometry)
		g.Properties = geojson.Properties{"name": f.Name}
		if tag, ok := f.Properties["osm_tag"].(string); ok {
			g.Properties["osm_tag"] = tag
		}
		// The extract is a sample when any of its streets is (invented): the map says so.
		fc.Sample = fc.Sample || f.Source == "sample"
		fc.Features = append(fc.Features, g)
	}
	body, err := json.Marshal(fc)
	if err != nil {
		return nil, fmt.Errorf("encode the street base map: %w", err)
	}
	if len(body) > maxBytes {
		return nil, fmt.Errorf("the street base map is %d bytes, more than the %d allowed: not served", len(body), maxBytes)
	}
	sum := sha256.Sum256(body)
	return &basemap{body: body, etag: `"` + hex.EncodeToString(sum[:12]) + `"`, streets: len(streets), sample: fc.Sample}, nil
}

// handleBasemap serves GET /api/v1/basemap: the street base map the dashboard draws under the
// geofences when no map tiles load, with an ETag (a revalidation answers 304).
func (s *Server) handleBasemap(w http.ResponseWriter, r *http.Request) {
	b := s.basemap
	if b == nil {
		s.writeError(w, r, http.StatusNotFound, "sem mapa base de ruas")
		return
	}
	h := w.Header()
	h.Set("ETag", b.etag)
	h.Set("Cache-Control", "private, no-cache")
	if r.Header.Get("If-None-Match") == b.etag {
		w.WriteHeader(http.StatusNotModified)
		return
	}
	h.Set("Content-Type", "application/geo+json")
	h.Set("Content-Length", strconv.Itoa(len(b.body)))
	_, _ = w.Write(b.body)
}
