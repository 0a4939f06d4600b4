package cases

import (
	"context"
	"encoding/json"
	"errors"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/trenzinho/trenzinho/monitor/drafts"
)

// A draft whose fine is not the law's for its penalty (Art. 46, parágrafo único: 400 UFMPs)
// is not issued: the refusal names fine_contradicts_law and the provision that sets the amount.
func TestOfficeIssueRefusesFineContradictingLaw(t *testing.T) {
	ctx := context.Background()
	m := newMemory()
	now := time.Date(2026, 10, 2, 10, 0, 0, 0, sp)
	o := newOffice(t, m, &now)
	d := putDraft(t, m, "D1", time.Date(2026, 10, 1, 15, 0, 0, 0, sp))
	if rs := o.Blockers(ctx, &d.Doc, "ok", joao); len(rs) != 0 {
		t.Fatalf("the law's fine refused: %+v", rs)
	}
	d.Doc.FineUFMP = 250 // as sealed by a profile that fined speed under Art. 46, X at 250
	rs := o.Blockers(ctx, &d.Doc, "ok", joao)
	i := slices.IndexFunc(rs, func(r Reason) bool { return r.Code == ReasonFineContradictsLaw })
	if i < 0 || !strings.Contains(rs[i].Text, "400 UFMP (Art. 46, parágrafo único)") {
		t.Fatalf("blockers %+v", rs)
	}
	// Through the office: refused and audited, nothing issued.
	d2 := putDraft(t, m, "D2", time.Date(2026, 10, 1, 16, 0, 0, 0, sp))
	d2.Doc.FineUFMP = 300
	d2.Sealed = resealed(t, m, d2)
	_, _, err := o.Issue(ctx, "D2", "", joao)
	var e *Error
	if !errors.As(err, &e) || e.Kind != Conflict || !slices.ContainsFunc(e.Reasons, func(r Reason) bool { return r.Code == ReasonFineContradictsLaw }) {
		t.Fatalf("issue: %v", err)
	}
	if len(m.state.cases) != 0 || actions(m.state.audit) != AuditIssueRefused {
		t.Errorf("a refused issue left %d cases, audit %q", len(m.state.cases), actions(m.state.audit))
	}
}

// resealed seals rec's draft row again in its place of the chain (a draft sealed as it now
// reads).
func resealed(t *testing.T, _ *memory, rec *Draft) drafts.Sealed {
	t.Helper()
	b, err := json.Marshal(drafts.Bundle{Format: drafts.BundleFormat, Draft: rec.Doc, Batches: []drafts.RawBatch{}})
	if err != nil {
		t.Fatal(err)
	}
	return drafts.Seal(rec.Doc.ID, rec.Sealed.Seq, b, rec.Sealed.PrevHash, officeKey)
}

// Without the acts of competence (Art. 1, § 2º, Art. 34, Art. 20, § 1º, Art. 57, Art. 59) no
// auto is issued: the refusal competence_unproven names the missing keys.
func TestOfficeIssueRefusesWithoutCompetence(t *testing.T) {
	ctx := context.Background()
	m := newMemory()
	now := time.Date(2026, 10, 2, 10, 0, 0, 0, sp)
	o := newOffice(t, m, &now)
	d := putDraft(t, m, "D1", time.Date(2026, 10, 1, 15, 0, 0, 0, sp))
	o.Profile.Competence.TelemetryAct = ""
	rs := o.Blockers(ctx, &d.Doc, "ok", joao)
	if len(rs) != 1 || rs[0].Code != ReasonCompetenceUnproven || !strings.Contains(rs[0].Text, "competence.telemetry_act") {
		t.Fatalf("blockers %+v", rs)
	}
	if _, _, err := o.Issue(ctx, "D1", "", joao); err == nil {
		t.Fatal("issued without the act adopting the telemetry as proof")
	}
}
