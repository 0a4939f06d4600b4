package api

import (
	"maps"
	"net/http"
	"slices"

	"github.com/trenzinho/trenzinho/monitor/notice"
	"github.com/trenzinho/trenzinho/monitor/store"
	"github.com/trenzinho/trenzinho/rules"
)

// configResponse is the answer of GET /api/v1/config: the settings the dashboard reads once
// after login (the map's tiles and time zone, the profile's legal mapping, which optional routes
// are served).
type configResponse struct {
	// ProfileWarnings are, for admins only, what the legal profile leaves unset that makes the
	// monitor's legal output doubtful (profile.Warnings: municipal holidays, UFMP, defence
	// office), in Portuguese, until set.
	ProfileWarnings []string `json:"profile_warnings,omitempty"`
	// Demonstration is the label of a demonstration profile (notice.IsDemonstration: `make
	// run`'s), whose acts and confirmations are fictitious; "" for any other.
	Demonstration string `json:"demonstration,omitempty"`
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
	// VerificationWaitS is how long, in seconds, an episode that needs an agent's verification
	// holds its conduct's draft (TRENZINHO_DRAFT_VERIFICATION_WAIT): a verification recorded
	// within it joins the same draft, and its draft comes no sooner.
	VerificationWaitS float64 `json:"verification_wait_s,omitempty"`
	// Complaints says whether the monitor takes citizens' complaints (complaints.go).
	Complaints bool `json:"complaints"`
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
	// DraftSettleS is how long, in seconds, after its episode's last change the monitor makes
	// a draft (TRENZINHO_DRAFT_SETTLE): the Revisão page says it. Absent when not said.
	DraftSettleS float64 `json:"draft_settle_s,omitempty"`
	// Basemap says whether GET /api/v1/basemap serves a street base map, how many streets it
	// holds and whether it is a sample (invented, not a survey); absent: none.
	Basemap *basemapJSON `json:"basemap,omitempty"`
	// RuleLabels is rules.Table: each rule's name, short label and colour, which the dashboard
	// shows (always present).
	RuleLabels []rules.RuleInfo `json:"rule_labels"`
}

type basemapJSON struct {
	Streets     int    `json:"streets"`
	Sample      bool   `json:"sample"`
	Attribution string `json:"attribution"`
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
	out := configResponse{TileURL: s.mapCfg.TileURL, TimeZone: "America/Sao_Paulo", RuleLabels: rules.Table}
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
	out.DraftSettleS = s.draftSettle.Seconds()
	if b := s.basemap; b != nil {
		out.Basemap = &basemapJSON{Streets: b.streets, Sample: b.sample, Attribution: BasemapAttribution}
	}
	if p := s.mapCfg.Profile; p != nil && notice.IsDemonstration(p.Version) {
		out.Demonstration = notice.DemonstrationLabel
	}
	if p := s.mapCfg.Profile; p != nil && userFrom(r.Context()).Role.AtLeast(store.RoleAdmin) {
		out.ProfileWarnings = p.Warnings()
	}
	out.Complaints = s.complaints != nil
	out.VerificationWaitS = s.verifyWait.Seconds()
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
