package api

import (
	"context"
	"net/http"
	"strings"

	"github.com/trenzinho/trenzinho/monitor/cases"
	"github.com/trenzinho/trenzinho/monitor/drafts"
	"github.com/trenzinho/trenzinho/monitor/store"
)

// auditIssueRefused is the audit action of an issue the monitor refused, with its reasons.
const auditIssueRefused = "draft.issue_refused"

// IssueRefusal is the answer (409) of an issue the monitor refuses: a summary and every
// blocking reason at once (codes: monitor/cases, docs/api.md).
type IssueRefusal struct {
	Error   string         `json:"error"`
	Reasons []cases.Reason `json:"reasons"`
}

// issueBlockers are the reasons the user may not issue the draft now (cases.IssueBlockers on
// what the draft, the registry, the profile and the user's account say).
func (s *Server) issueBlockers(ctx context.Context, d *store.DraftRecord, u *store.User) []cases.Reason {
	f := cases.IssueFacts{Unregistered: d.Doc.Unregistered, Integrity: s.verify(ctx, d), FactEnd: d.Doc.End.Time,
		Now: s.casesNow()}
	if u != nil {
		f.User, f.Agent = u.Name, u.Agent
	}
	f.Licensee = s.licenseeAtFact(ctx, &d.Doc)
	seen := map[string]bool{}
	for _, fact := range d.Doc.Facts {
		if st := fact.Site; st != nil && !seen[st.ID] {
			seen[st.ID] = true
			f.Sites = append(f.Sites, cases.Site{ID: st.ID, Name: st.Name, Verified: st.Verified, Source: st.Source})
		}
	}
	if s.cases != nil && s.cases.Profile != nil {
		p := s.cases.Profile
		f.UnitChecked, f.UnitName, f.UnitConfirmed = true, p.FiscalUnit.Name, p.FiscalUnit.Confirmed()
		f.PrescriptionYears, f.Location = p.PrescriptionPeriod(), p.Location()
	}
	if s.cases != nil && s.cases.GroundsMissing != nil {
		f.GroundsMissing = s.cases.GroundsMissing(ctx, &d.Doc)
	}
	return cases.IssueBlockers(f)
}

// licenseeAtFact is the licensee responsible for the draft's facts: CasesConfig.LicenseeAtFact
// when set, else the licensee as the drafter recorded it (the registry snapshot in the draft,
// else the registry's record of the draft's licensee).
func (s *Server) licenseeAtFact(ctx context.Context, d *drafts.Draft) *cases.Licensee {
	if s.cases != nil && s.cases.LicenseeAtFact != nil {
		l, ok := s.cases.LicenseeAtFact(ctx, d)
		if !ok {
			return nil
		}
		return &l
	}
	if d.Unregistered {
		return nil
	}
	if r := d.Registry; r != nil && r.Licensee != "" {
		return &cases.Licensee{ID: r.Licensee, RazaoSocial: r.RazaoSocial, CNPJ: r.CNPJ, Address: r.Address}
	}
	if strings.TrimSpace(d.Licensee) == "" || s.cases == nil || s.cases.Registry == nil {
		return nil
	}
	l, ok := s.cases.Registry.Licensee(d.Licensee)
	if !ok {
		return nil
	}
	return &cases.Licensee{ID: l.ID, RazaoSocial: l.RazaoSocial, CNPJ: l.CNPJ, Address: l.Address}
}

// refuseIssue answers 409 with the reasons and audits the refusal; it reports whether it did.
func (s *Server) refuseIssue(w http.ResponseWriter, r *http.Request, d *store.DraftRecord) bool {
	u := userFrom(r.Context())
	rs := s.issueBlockers(r.Context(), d, u)
	if len(rs) == 0 {
		return false
	}
	s.record(r, store.AuditEntry{User: u.Name, Action: auditIssueRefused, Object: "draft:" + d.Sealed.ID,
		After: mustJSON(map[string]any{"reasons": rs})})
	s.writeJSON(w, r, http.StatusConflict, IssueRefusal{Error: cases.Summary(rs), Reasons: rs})
	return true
}
