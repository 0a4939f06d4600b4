package api

import (
	"encoding/json"
	"maps"
	"net/http"
	"slices"
	"time"

	"github.com/paulmach/orb/geojson"

	"github.com/trenzinho/trenzinho/geofences"
	"github.com/trenzinho/trenzinho/profile"
	"github.com/trenzinho/trenzinho/rules"
	"github.com/trenzinho/trenzinho/wire"
)

// MapConfig is what the dashboard's map needs: the geofences the monitor judges by
// (GET /api/v1/geofences) and the map settings (GET /api/v1/config). The zero value serves an
// empty collection and no tiles.
type MapConfig struct {
	Geofences *geofences.Set
	// Profile gives the time zone and the holidays that "open now" is evaluated in, the
	// sensitive radius and categories, the NBR area names and limits, and the speed limit.
	// Nil: the routes answer without them.
	Profile *profile.Profile
	// TileURL is the map tile URL template ({z}/{x}/{y}, optionally {s}); empty: the map has no
	// tiles, only the geofences, tracks and vehicles on a plain background.
	TileURL string
	Now     func() time.Time // default time.Now
	// Streets is the street extract drawn as the map's base when no tiles load (GET
	// /api/v1/basemap): its street features. Nil: the streets of Geofences, if any.
	Streets *geofences.Set
	// BasemapMaxBytes caps the encoded base map (default DefaultBasemapMaxBytes): a larger one
	// is not served, and the monitor logs why.
	BasemapMaxBytes int
}

// geofenceCollection is the answer of GET /api/v1/geofences: a GeoJSON FeatureCollection whose
// features carry their properties as loaded plus, computed at the time of the request:
// sensitive sites "verified", "open_now" (their opening hours at generated_at, the profile's
// holidays counted) and "in_profile" (their category is one the profile protects);
// itineraries "active_now" (valid today and within their days and hours). Foreign members give
// the sensitive radius and the NBR area types of the profile.
type geofenceCollection struct {
	Type             string              `json:"type"`
	Features         []geofenceFeature   `json:"features"`
	GeneratedAt      wire.Time           `json:"generated_at"`
	TimeZone         string              `json:"time_zone,omitempty"`
	SensitiveRadiusM *float64            `json:"sensitive_radius_m,omitempty"`
	DefaultArea      string              `json:"default_area,omitempty"`
	Areas            map[string]areaJSON `json:"areas,omitempty"`
}

type geofenceFeature struct {
	Type       string             `json:"type"`
	ID         string             `json:"id"`
	Geometry   *geojson.Geometry  `json:"geometry"`
	Properties geojson.Properties `json:"properties"`
}

type areaJSON struct {
	Name    string  `json:"name"`
	DayDB   float64 `json:"day_db"`
	NightDB float64 `json:"night_db"`
}

// handleGeofences serves GET /api/v1/geofences.
func (s *Server) handleGeofences(w http.ResponseWriter, r *http.Request) {
	now := s.now
	if s.mapCfg.Now != nil {
		now = s.mapCfg.Now
	}
	t := now()
	p := s.mapCfg.Profile
	out := geofenceCollection{Type: "FeatureCollection", Features: []geofenceFeature{}, GeneratedAt: wire.NewTime(t)}
	var isHoliday func(time.Time) bool
	if p != nil {
		if loc := p.Location(); loc != nil {
			t = t.In(loc)
			out.TimeZone = loc.String()
		}
		isHoliday = func(day time.Time) bool { _, ok := p.Holiday(day); return ok }
		out.SensitiveRadiusM = &p.Sensitive.RadiusM
		out.DefaultArea = p.Noise.DefaultArea
		out.Areas = make(map[string]areaJSON, len(p.Noise.Areas))
		for id, a := range p.Noise.Areas {
			out.Areas[id] = areaJSON{Name: a.Name, DayDB: a.Day, NightDB: a.Night}
		}
	}
	if set := s.mapCfg.Geofences; set != nil {
		for _, f := range set.Features() {
			if f.Kind == geofences.KindStreet || f.Kind == geofences.KindLandmark {
				continue // the street extract names the place of an auto; the map does not draw it
			}
			props := maps.Clone(f.Properties)
			if props == nil {
				props = geojson.Properties{}
			}
			switch f.Kind {
			case geofences.KindSensitive:
				props["verified"] = f.Verified()
				if p != nil {
					// As the rules judge it: unknown hours are not "open" (hours_known false),
					// holidays close a site unless its hours name PH, school recess.
					open, known := rules.SiteOpen(p, f, t)
					props["open_now"], props["hours_known"] = open && known, known
				} else {
					props["open_now"] = f.OpeningHours.OpenAt(t, isHoliday)
				}
				if p != nil {
					props["in_profile"] = slices.Contains(p.Sensitive.Categories, string(f.Category))
				}
			case geofences.KindItinerary:
				holiday := isHoliday != nil && isHoliday(t)
				props["active_now"] = f.ActiveAt(t, holiday)
			}
			out.Features = append(out.Features, geofenceFeature{Type: "Feature", ID: f.ID,
				Geometry: geojson.NewGeometry(f.Geometry), Properties: props})
		}
	}
	b, err := json.Marshal(out)
	if err != nil {
		s.internalError(w, r, err)
		return
	}
	h := w.Header()
	h.Set("Content-Type", "application/geo+json; charset=utf-8")
	h.Set("Cache-Control", "no-store")
	h.Set("Content-Security-Policy", "default-src 'none'; frame-ancestors 'none'")
	_, _ = w.Write(append(b, '\n'))
}
