package api

import (
	"encoding/json"
	"github.com/trenzinho/trenzinho/monitor/rules"
	"maps"
	"net/http"
	"slices"
	"time"

	"github.com/paulmach/orb/geojson"

	"github.com/trenzinho/trenzinho/geofences"
	"github.com/trenzinho/trenzinho/monitor/profile"
	"github.com/trenzinho/trenzinho/monitor/store"
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
}

// mapSettings is the answer of GET /api/v1/config.
type mapSettings struct {
	// ProfileWarnings are, for admins only, what the legal profile leaves unset that makes the
	// monitor's legal output doubtful (profile.Warnings: municipal holidays, UFMP, defence
	// office), in Portuguese, until set.
	ProfileWarnings []string `json:"profile_warnings,omitempty"`
	// PaymentDays is the period to pay once the decision on the defence is notified.
	PaymentDays int `json:"payment_days,omitempty"`
	// AuthorityTitle names the role autoridade (authority.title), AppealDays and AppealRole
	// the appeal period and who decides it, ElectronicNotice whether the profile notifies by
	// electronic means: the dashboard's case page says them.
	AuthorityTitle    string   `json:"authority_title,omitempty"`
	AppealDays        int      `json:"appeal_days,omitempty"`
	AppealRole        string   `json:"appeal_role,omitempty"`
	ElectronicNotice  bool     `json:"electronic_notice,omitempty"`
	TileURL           string   `json:"tile_url,omitempty"`
	TimeZone          string   `json:"time_zone"`
	Municipality      string   `json:"municipality,omitempty"`
	State             string   `json:"state,omitempty"`
	FiscalOrgan       string   `json:"fiscal_organ,omitempty"`
	Law               string   `json:"law,omitempty"`
	LawInForce        *bool    `json:"law_in_force,omitempty"`
	FiscalUnit        string   `json:"fiscal_unit,omitempty"`
	SpeedLimitKmh     *float64 `json:"speed_limit_kmh,omitempty"`
	SpeedToleranceKmh *float64 `json:"speed_tolerance_kmh,omitempty"`
	SensitiveRadiusM  *float64 `json:"sensitive_radius_m,omitempty"`
	// Registry says whether the monitor has a registry (the /api/v1/registry routes answer
	// instead of 404) and Cases whether it serves the case workflow (/api/v1/cases,
	// /api/v1/notices): the dashboard asks here rather than probing a route that may be absent.
	Registry bool `json:"registry"`
	Cases    bool `json:"cases"`
	// ManualInfractions are the profile's infractions an agent may notice by hand
	// (POST /api/v1/notices), sorted by id; Suspension the profile's range of days (Art. 52).
	ManualInfractions []manualInfractionJSON `json:"manual_infractions,omitempty"`
	Suspension        *suspensionJSON        `json:"suspension,omitempty"`
	// Rules is the profile's legal mapping of each rule (its article, penalty, fine and the
	// notice text of a rule whose first offence is not fined, e.g. a notificação preliminar),
	// and Noise the parameters of the receptor estimate, so that the dashboard names a draft
	// without a fine as what it is and charts the estimate the noise rule judged.
	Rules map[string]ruleJSON `json:"rules,omitempty"`
	Noise *noiseJSON          `json:"noise,omitempty"`
	// RuleLabels is rules.Table: each rule's name, short label and colour, which the dashboard
	// shows (always present).
	RuleLabels []rules.RuleInfo `json:"rule_labels"`
}

type ruleJSON struct {
	Article       string   `json:"article"`
	Penalty       string   `json:"penalty"`
	Fine          float64  `json:"fine"`
	Notice        string   `json:"notice,omitempty"`
	RepeatPenalty string   `json:"repeat_penalty,omitempty"`
	RepeatFine    *float64 `json:"repeat_fine,omitempty"`
}

type noiseJSON struct {
	WindowS float64 `json:"window_s"`
	R1M     float64 `json:"r1_m"`
	R2M     float64 `json:"r2_m"`
}

type manualInfractionJSON struct {
	ID      string  `json:"id"`
	Article string  `json:"article"`
	Penalty string  `json:"penalty"`
	Text    string  `json:"text"`
	Fine    float64 `json:"fine"`
	Notice  string  `json:"notice,omitempty"`
}

type suspensionJSON struct {
	MinDays int `json:"min_days"`
	MaxDays int `json:"max_days"`
}

// handleConfig serves GET /api/v1/config: the settings the dashboard reads once after login.
func (s *Server) handleConfig(w http.ResponseWriter, r *http.Request) {
	out := mapSettings{TileURL: s.mapCfg.TileURL, TimeZone: "America/Sao_Paulo", RuleLabels: rules.Table}
	if p := s.mapCfg.Profile; p != nil {
		if loc := p.Location(); loc != nil {
			out.TimeZone = loc.String()
		}
		inForce := p.Law.InForce
		out.Municipality, out.State, out.FiscalOrgan = p.Municipality, p.State, p.FiscalOrgan
		out.Law, out.LawInForce, out.FiscalUnit = p.Law.Name, &inForce, p.FiscalUnit.Name
		out.SpeedLimitKmh, out.SpeedToleranceKmh = &p.Speed.LimitKmh, &p.Speed.ToleranceKmh
		out.SensitiveRadiusM = &p.Sensitive.RadiusM
		out.Rules = make(map[string]ruleJSON, len(p.Rules))
		for id, ru := range p.Rules {
			rj := ruleJSON{Article: ru.Article, Penalty: ru.Penalty, Fine: ru.FineUFMP, Notice: ru.Notice}
			if ru.Repeat != nil {
				rj.RepeatPenalty, rj.RepeatFine = ru.Repeat.Penalty, &ru.Repeat.Fine
			}
			out.Rules[id] = rj
		}
		out.Noise = &noiseJSON{WindowS: p.Noise.WindowS, R1M: p.Noise.R1M, R2M: p.Noise.R2M}
	}
	out.Registry = s.reg != nil
	if p := s.mapCfg.Profile; p != nil && userFrom(r.Context()).Role.AtLeast(store.RoleAdmin) {
		out.ProfileWarnings = p.Warnings()
	}
	if c := s.cases; c != nil && c.Store != nil && c.Profile != nil {
		out.Cases = true
		for _, id := range slices.Sorted(maps.Keys(c.Profile.ManualInfractions)) {
			m := c.Profile.ManualInfractions[id]
			out.ManualInfractions = append(out.ManualInfractions, manualInfractionJSON{ID: id, Article: m.Article,
				Penalty: m.Penalty, Text: m.Text, Fine: m.Fine, Notice: m.Notice})
		}
		out.Suspension = &suspensionJSON{MinDays: c.Profile.Suspension.MinDays, MaxDays: c.Profile.Suspension.MaxDays}
		out.PaymentDays = c.Profile.Payment.Period()
		out.AuthorityTitle, out.AppealDays, out.AppealRole = c.Profile.Authority.Title, c.Profile.Appeal.Period(), c.Profile.Appeal.Role()
		out.ElectronicNotice = c.Profile.Notification.Electronic
	}
	s.writeJSON(w, r, http.StatusOK, out)
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
	now := time.Now
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
