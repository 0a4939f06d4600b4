package api

import (
	"net/http"

	"github.com/trenzinho/trenzinho/monitor/notice"
	"github.com/trenzinho/trenzinho/monitor/store"
	"github.com/trenzinho/trenzinho/profile"
)

// The legal profile in force, for the admins' "Perfil legal" page: its identity, what the issue
// of an auto reads from it, and each of its warnings (profile.Warnings) with what it blocks and
// the keys that fix it. Read-only: the profile is a file (TRENZINHO_PROFILE), versioned with the
// monitor's configuration; the page says which keys to edit there.

// legalProfileJSON is GET /api/v1/profile.
type legalProfileJSON struct {
	ID           string `json:"id"`
	Version      string `json:"version"`
	Municipality string `json:"municipality"`
	State        string `json:"state"`
	FiscalOrgan  string `json:"fiscal_organ"`
	Law          string `json:"law"`
	LawInForce   bool   `json:"law_in_force"`
	// Demonstration: a demonstration profile (its version begins with "demonstração", as
	// `make run`'s): its acts and confirmations are fictitious, labelled DemonstrationLabel.
	Demonstration      bool   `json:"demonstration"`
	DemonstrationLabel string `json:"demonstration_label,omitempty"`
	FiscalUnit         struct {
		Name        string              `json:"name"`
		Values      []profile.UnitValue `json:"values"`
		ConfirmedBy string              `json:"confirmed_by"`
		Act         string              `json:"act"`
		Confirmed   bool                `json:"confirmed"`
	} `json:"fiscal_unit"`
	Defence struct {
		To      string `json:"to"`
		Address string `json:"address"`
		Email   string `json:"email"`
		Portal  string `json:"portal"`
	} `json:"defence"`
	Electronic struct {
		On  bool   `json:"on"`
		Act string `json:"act"`
	} `json:"electronic"`
	Warnings []profileWarningJSON `json:"warnings"`
}

// profileWarningJSON is one warning of the profile: its text, what it blocks (pt-BR), whether
// it blocks the issue of autos, and the keys of the profile that fix it.
type profileWarningJSON struct {
	Text        string   `json:"text"`
	Blocks      string   `json:"blocks"`
	BlocksIssue bool     `json:"blocks_issue"`
	Keys        []string `json:"keys"`
}

func profileWarnings(p *profile.Profile) []profileWarningJSON {
	out := []profileWarningJSON{}
	for _, w := range p.Problems() {
		out = append(out, profileWarningJSON{Text: w.Text, Blocks: w.Blocks, BlocksIssue: w.BlocksIssue, Keys: w.Keys})
	}
	return out
}

// handleLegalProfile serves GET /api/v1/profile (admin).
func (s *Server) handleLegalProfile(w http.ResponseWriter, r *http.Request) {
	p := s.mapCfg.Profile
	if p == nil {
		s.writeError(w, r, http.StatusNotFound, "nenhum perfil legal carregado")
		return
	}
	var out legalProfileJSON
	out.ID, out.Version, out.Municipality, out.State, out.FiscalOrgan = p.ID, p.Version, p.Municipality, p.State, p.FiscalOrgan
	out.Law, out.LawInForce = p.Law.Name, p.Law.InForce
	if notice.IsDemonstration(p.Version) {
		out.Demonstration, out.DemonstrationLabel = true, notice.DemonstrationLabel
	}
	fu := p.FiscalUnit
	out.FiscalUnit.Name, out.FiscalUnit.Values, out.FiscalUnit.ConfirmedBy, out.FiscalUnit.Act = fu.Name, fu.Values, fu.ConfirmedBy, fu.Act
	out.FiscalUnit.Confirmed = fu.Confirmed()
	if out.FiscalUnit.Values == nil {
		out.FiscalUnit.Values = []profile.UnitValue{}
	}
	out.Defence.To, out.Defence.Address, out.Defence.Email, out.Defence.Portal = p.Defence.To, p.Defence.Address, p.Defence.Email, p.Defence.Portal
	out.Electronic.On, out.Electronic.Act = p.Notification.Electronic, p.Notification.ElectronicAct
	out.Warnings = profileWarnings(p)
	s.writeJSON(w, r, http.StatusOK, out)
}

func (s *Server) legalProfileRoutes(a *http.ServeMux) {
	a.Handle("GET /api/v1/profile", s.requireRole(store.RoleAdmin, s.handleLegalProfile))
}
