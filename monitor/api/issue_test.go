package api_test

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"net/http"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/trenzinho/trenzinho/monitor/api"
	"github.com/trenzinho/trenzinho/monitor/cases"
	"github.com/trenzinho/trenzinho/monitor/drafts"
	"github.com/trenzinho/trenzinho/monitor/store"
	"github.com/trenzinho/trenzinho/rules"
	"github.com/trenzinho/trenzinho/wire"
)

func reasonCodes(rs []cases.Reason) []string {
	var out []string
	for _, r := range rs {
		out = append(out, r.Code)
	}
	return out
}

// An auto is refused (409) with every blocking reason at once — a vehicle not in the registry
// (no identified licensee), a sample site, facts past prescription, an agent without full name,
// matrícula and cargo — the refusal is audited, and the draft's view shows the same reasons
// before the agent tries. Once each is fixed, it issues.
func TestIssueRefusedWithEveryReason(t *testing.T) {
	cf := newCaseFixture(t)
	ctx := context.Background()
	if _, err := cf.db.CreateUser(ctx, "novato", "senha-do-novato", store.RoleFiscal); err != nil {
		t.Fatal(err)
	}
	_, novato := cf.login("novato", "senha-do-novato")
	now := at(2026, 11, 29, 15)
	cf.setClock(now)

	// Six years before, an unregistered vehicle, near a school of the sample set.
	id := cf.draft(t, "PIU-009", "", "sensitive_zone_sound", now.AddDate(-6, 0, 0))
	d, err := cf.db.DraftByID(ctx, id)
	if err != nil {
		t.Fatal(err)
	}
	doc := d.Doc
	doc.ID += ".site"
	doc.EpisodeIDs = []string{doc.ID + ".ep"}
	doc.Facts[0].EpisodeID = doc.ID + ".ep"
	doc.Facts[0].Site = &rules.Site{ID: "escola-exemplo", Kind: "sensitive", Name: "Escola de exemplo", Category: "school", Verified: false, Source: "sample"}
	id = cf.seal(t, doc)

	want := []string{cases.ReasonLicenseeUnidentified, cases.ReasonSiteUnverified, cases.ReasonPrescribed, cases.ReasonAgentIncomplete}
	code, body, _ := cf.do("GET", "/api/v1/drafts/"+id, nil, session{bearer: novato})
	var v api.DraftView
	if code != http.StatusOK || json.Unmarshal(body, &v) != nil || !slices.Equal(reasonCodes(v.IssueBlockers), want) {
		t.Fatalf("draft view blockers: %d %s", code, body)
	}
	code, body, _ = cf.do("POST", "/api/v1/drafts/"+id+"/decision", map[string]string{"decision": "issue"}, session{bearer: novato})
	var ref api.IssueRefusal
	if code != http.StatusConflict || json.Unmarshal(body, &ref) != nil || !slices.Equal(reasonCodes(ref.Reasons), want) ||
		!strings.Contains(ref.Error, "4 impedimentos") {
		t.Fatalf("refusal: %d %s", code, body)
	}
	for _, r := range ref.Reasons {
		if r.Text == "" {
			t.Errorf("%s without text", r.Code)
		}
	}
	if !strings.Contains(ref.Reasons[2].Text, "Decreto nº 20.910/1932") || !strings.Contains(ref.Reasons[3].Text, "matrícula") {
		t.Errorf("texts: %+v", ref.Reasons)
	}
	entries, _, err := cf.db.ListAudit(ctx, store.AuditFilter{Action: "draft.issue_refused"}, 10, "")
	if err != nil || len(entries) != 1 || entries[0].User != "novato" || entries[0].Object != "draft:"+id {
		t.Fatalf("audit: %+v %v", entries, err)
	}
	for _, c := range want {
		if !strings.Contains(string(entries[0].After), c) {
			t.Errorf("audit lacks %s: %s", c, entries[0].After)
		}
	}
	if got, _ := cf.db.DraftByID(ctx, id); got.Status != "draft" || got.Notice != "" {
		t.Fatalf("refused draft changed: %+v", got.Status)
	}

	// Prescription: 5 years from the end of the facts, to the day (an hours fact: it relies on
	// no measuring instrument, whose verification of five years ago the registry no longer has).
	fresh := cf.draft(t, "PIU-001", "L1", "hours", now.AddDate(-5, 0, 0).Add(-time.Minute))
	code, body, _ = cf.do("POST", "/api/v1/drafts/"+fresh+"/decision", map[string]string{"decision": "issue"}, session{bearer: cf.fiscal})
	if code != http.StatusConflict || !json.Valid(body) || json.Unmarshal(body, &ref) != nil || !slices.Equal(reasonCodes(ref.Reasons), []string{cases.ReasonPrescribed}) {
		t.Fatalf("5 years and a minute: %d %s", code, body)
	}
	within := cf.draft(t, "PIU-001", "L1", "hours", now.AddDate(-5, 0, 1))
	cf.issue(t, within, now)

	// The agent completes the account through the users API (admin).
	_, admin := cf.login("admin", adminPassword)
	code, body, _ = cf.do("PATCH", "/api/v1/users/novato", map[string]string{"full_name": "Ana Novais", "matricula": "FP-0107", "cargo": "Fiscal de Posturas"}, session{bearer: admin})
	if code != http.StatusOK || !strings.Contains(string(body), `"matricula":"FP-0107"`) {
		t.Fatalf("patch agent: %d %s", code, body)
	}
	if code, _, _ := cf.do("PATCH", "/api/v1/users/novato", map[string]string{"cargo": "Fiscal\x07"}, session{bearer: admin}); code != http.StatusBadRequest {
		t.Errorf("control character in cargo: %d", code)
	}
	ok := cf.draft(t, "PIU-001", "L1", "speed", now.Add(-24*time.Hour))
	code, body, _ = cf.do("POST", "/api/v1/drafts/"+ok+"/decision", map[string]string{"decision": "issue"}, session{bearer: novato})
	var ans api.DecisionAnswer
	if code != http.StatusOK || json.Unmarshal(body, &ans) != nil || ans.Notice != "AI-2026/0002" {
		t.Fatalf("complete agent, registered vehicle: %d %s", code, body)
	}
	// The issued auto: named after its number, with the agent as on file at the issue.
	code, body, hdr := cf.do("GET", "/api/v1/drafts/"+ok+"/pdf", nil, session{bearer: novato})
	if code != http.StatusOK || hdr.Get("Content-Disposition") != `inline; filename="AI-2026-0002.pdf"` {
		t.Fatalf("pdf: %d %q", code, hdr.Get("Content-Disposition"))
	}
	text := strings.Join(strings.Fields(pdfText(t, body)), " ")
	for _, want := range []string{"AUTO DE INFRAÇÃO Nº AI-2026/0002", "Ana Novais", "FP-0107", "Fiscal de Posturas",
		"Art. 23 c/c Art. 46, X da Lei Municipal nº 2.277/2018", "“dirigir o veículo desenvolvendo velocidade acima da permitida;”"} {
		if !strings.Contains(text, want) {
			t.Errorf("the issued PDF lacks %q", want)
		}
	}
	for _, bad := range []string{"minuta", "MINUTA", "AVISO", "Recomendação", "não usar"} {
		if strings.Contains(text, bad) {
			t.Errorf("the issued PDF says %q", bad)
		}
	}
}

// An illustrative UFMP value (fiscal_unit.confirmed_by and act unset, as Piúma ships) blocks
// every issue.
func TestIssueRefusedOnUnconfirmedUFMP(t *testing.T) {
	cf := newCaseFixtureEdit(t, func(y string) string { return y })
	id := cf.draft(t, "PIU-001", "L1", "speed", at(2026, 11, 28, 15))
	code, body, _ := cf.do("POST", "/api/v1/drafts/"+id+"/decision", map[string]string{"decision": "issue"}, session{bearer: cf.fiscal})
	var ref api.IssueRefusal
	if code != http.StatusConflict || json.Unmarshal(body, &ref) != nil || !slices.Equal(reasonCodes(ref.Reasons), []string{cases.ReasonUFMPUnconfirmed}) ||
		!strings.Contains(ref.Error, "UFMP") {
		t.Fatalf("unconfirmed UFMP: %d %s", code, body)
	}
	// Dismissing is not blocked.
	if code, body, _ := cf.do("POST", "/api/v1/drafts/"+id+"/decision", map[string]string{"decision": "dismiss", "reason": "Sem valor da UFMP."}, session{bearer: cf.fiscal}); code != http.StatusOK {
		t.Fatalf("dismiss: %d %s", code, body)
	}
}

// The acts that decide on an auto are the autoridade's (Art. 57), and never of the user who
// issued it (Lei 9.784/1999, arts. 18–19): the issuer — an autoridade too — is refused (409), a
// fiscal is refused (403), another autoridade decides.
func TestOnlyAnImpartialAutoridadeDecides(t *testing.T) {
	cf := newCaseFixture(t)
	ctx := context.Background()
	if _, err := cf.db.CreateUser(ctx, "chefe", "senha-do-chefe", store.RoleAutoridade); err != nil {
		t.Fatal(err)
	}
	setAgent(t, cf.db, "chefe", "Carlos Chefe", "FP-0001", "Chefe de Fiscalização")
	_, chefe := cf.login("chefe", "senha-do-chefe")
	id := cf.draft(t, "PIU-001", "L1", "speed", at(2026, 10, 1, 15))
	cf.setClock(at(2026, 10, 2, 10))
	if code, body, _ := cf.do("POST", "/api/v1/drafts/"+id+"/decision", map[string]string{"decision": "issue"}, session{bearer: chefe}); code != http.StatusOK {
		t.Fatalf("issue: %d %s", code, body)
	}
	cf.setClock(at(2026, 10, 20, 10))
	cf.mustAct(t, id, map[string]any{"action": "notify", "mode": "in_person", "date": "2026-10-05"})
	cf.mustAct(t, id, map[string]any{"action": "defence", "date": "2026-10-10"})
	decide := cf.proven(t, id, map[string]any{"action": "decide", "outcome": "rejected", "date": "2026-10-20", "text": "Defesa indeferida."})
	code, body, _ := cf.do("POST", "/api/v1/drafts/"+id+"/case", decide, session{bearer: chefe})
	if code != http.StatusConflict || !strings.Contains(errorMessage(t, body), "Impedimento") {
		t.Errorf("the issuer decided: %d %s", code, body)
	}
	code, body, _ = cf.do("POST", "/api/v1/drafts/"+id+"/case", decide, session{bearer: cf.fiscal})
	if code != http.StatusForbidden || !strings.Contains(errorMessage(t, body), "Autoridade Julgadora de Posturas") {
		t.Errorf("a fiscal decided: %d %s", code, body)
	}
	code, body, _ = cf.do("POST", "/api/v1/drafts/"+id+"/case", decide, session{bearer: cf.auth})
	if code != http.StatusOK || !strings.Contains(string(body), `"state":"defence_rejected"`) && !strings.Contains(string(body), `"state":"confirmed"`) {
		t.Errorf("the autoridade could not decide: %d %s", code, body)
	}
	// The office refuses the issuer too, whoever calls it, whatever the role.
	c, err := cf.db.CaseByDraft(ctx, id)
	if err != nil {
		t.Fatal(err)
	}
	o := &cases.Office{Ledger: cf.db, Profile: cf.p, Now: func() time.Time { return at(2026, 12, 1, 10) }}
	_, _, err = o.Act(ctx, c.ID, store.CaseAction{Action: "divida_ativa", Date: "2026-12-01"}, store.Actor{User: "chefe", Role: store.RoleAdmin})
	var ce *store.CaseError
	if !errors.As(err, &ce) || ce.Kind != cases.Conflict || !strings.Contains(ce.Msg, "Impedimento") {
		t.Errorf("store: %v", err)
	}
}

// Annulment ex officio (Súmula 473 STF): by the autoridade, with a reason, at any point before
// payment; never by the issuer, never by a fiscal.
func TestAnnulmentExOfficio(t *testing.T) {
	cf := newCaseFixture(t)
	id := cf.draft(t, "PIU-001", "L1", "speed", at(2026, 10, 1, 15))
	cf.issue(t, id, at(2026, 10, 2, 10))
	cf.setClock(at(2026, 10, 20, 10))
	cf.mustAct(t, id, map[string]any{"action": "notify", "mode": "in_person", "date": "2026-10-05"})
	annul := map[string]any{"action": "annul", "date": "2026-10-20", "text": "Velocidade medida com tacógrafo sem aferição válida."}
	if code, body, _ := cf.do("POST", "/api/v1/drafts/"+id+"/case", annul, session{bearer: cf.fiscal}); code != http.StatusForbidden {
		t.Errorf("a fiscal annulled: %d %s", code, body)
	}
	if code, _, body := cf.act(t, id, map[string]any{"action": "annul", "date": "2026-10-20", "text": "curto"}); code != http.StatusBadRequest {
		t.Errorf("annulled without a reason: %d %s", code, body)
	}
	v := cf.mustAct(t, id, annul)
	if v.State != "annulled" || v.Annulled != "2026-10-20" || !strings.Contains(v.AnnulReason, "aferição") || len(v.Allowed) != 0 {
		t.Fatalf("annulled: %+v", v.CaseStatus)
	}
	// A paid fine is not annulled here.
	paid := cf.draft(t, "PIU-001", "L1", "speed", at(2026, 10, 3, 15))
	cf.issue(t, paid, at(2026, 10, 4, 10))
	cf.setClock(at(2026, 10, 20, 10))
	cf.mustAct(t, paid, map[string]any{"action": "notify", "mode": "in_person", "date": "2026-10-05"})
	cf.mustAct(t, paid, map[string]any{"action": "pay", "date": "2026-10-06"})
	if code, _, body := cf.act(t, paid, annul); code != http.StatusConflict {
		t.Errorf("a paid fine annulled: %d %s", code, body)
	}
}

// The issue reads what the auto prints: the registry's record sealed with the draft. A draft
// whose sealed record lacks the licensee's razão social, CNPJ and address is refused even when
// today's registry has them (its auto would print "razão social e CNPJ não informados"), one
// without the vehicle's plate is refused, and so is an issue dated before the end of the facts.
func TestIssueReadsWhatTheAutoPrints(t *testing.T) {
	cf := newCaseFixture(t)
	ctx := context.Background()
	now := at(2026, 11, 29, 15)
	cf.setClock(now)
	good := cf.draft(t, "PIU-001", "L1", "speed", now.Add(-2*time.Hour))
	d, err := cf.db.DraftByID(ctx, good)
	if err != nil || d.Doc.Registry == nil || d.Doc.Registry.Plate == "" || d.Doc.Registry.RazaoSocial == "" {
		t.Fatalf("fixture draft: %+v %v", d, err)
	}
	variant := func(suffix string, change func(*drafts.Draft)) string {
		doc := d.Doc
		reg := *doc.Registry
		doc.Registry = &reg
		doc.ID += suffix
		doc.EpisodeIDs = []string{doc.ID + ".ep"}
		doc.Facts = slices.Clone(doc.Facts)
		doc.Facts[0].EpisodeID = doc.ID + ".ep"
		change(&doc)
		return cf.seal(t, doc)
	}
	noRecord := variant(".norecord", func(d *drafts.Draft) { d.Registry = nil })
	noPlate := variant(".noplate", func(d *drafts.Draft) { d.Registry.Plate = "" })
	early := variant(".early", func(d *drafts.Draft) {
		end := wire.NewTime(now.Add(time.Hour))
		d.End, d.Facts[0].End = end, end
	})
	for _, c := range []struct {
		id   string
		want []string
	}{
		{noRecord, []string{cases.ReasonLicenseeUnidentified, cases.ReasonVehicleUnidentified}},
		{noPlate, []string{cases.ReasonVehicleUnidentified}},
		{early, []string{cases.ReasonIssueBeforeFacts}},
	} {
		code, body, _ := cf.do("POST", "/api/v1/drafts/"+c.id+"/decision", map[string]string{"decision": "issue"}, session{bearer: cf.fiscal})
		var ref api.IssueRefusal
		if code != http.StatusConflict || json.Unmarshal(body, &ref) != nil || !slices.Equal(reasonCodes(ref.Reasons), c.want) {
			t.Errorf("%s: %d %s, want %v", c.id, code, body, c.want)
		}
	}
	if code, body, _ := cf.do("POST", "/api/v1/drafts/"+good+"/decision", map[string]string{"decision": "issue"}, session{bearer: cf.fiscal}); code != http.StatusOK {
		t.Errorf("the sealed record complete: %d %s", code, body)
	}
}

// The notified document is frozen: an issued auto's PDF is the one rendered at its issue, served
// byte for byte after the profile changed, with the SHA-256 the monitor registered for it.
func TestIssuedPDFIsFrozen(t *testing.T) {
	cf := newCaseFixture(t)
	ctx := context.Background()
	now := at(2026, 11, 29, 15)
	id := cf.draft(t, "PIU-001", "L1", "speed", now.Add(-2*time.Hour))
	cf.issue(t, id, now)
	get := func() ([]byte, string) {
		t.Helper()
		code, body, h := cf.do("GET", "/api/v1/drafts/"+id+"/pdf", nil, session{bearer: cf.fiscal})
		if code != http.StatusOK || !strings.HasPrefix(string(body), "%PDF") {
			t.Fatalf("pdf: %d %.80s", code, body)
		}
		return body, h.Get(api.HeaderPDFSHA256)
	}
	first, sum := get()
	cf.p.Defence.To = "Outra autoridade, de outro endereço"
	second, sum2 := get()
	if string(first) != string(second) || sum == "" || sum2 != sum {
		t.Fatalf("the auto changed after the profile did: %d and %d bytes, hashes %q %q", len(first), len(second), sum, sum2)
	}
	h := sha256.Sum256(first)
	if hex.EncodeToString(h[:]) != sum {
		t.Errorf("header hash %s is not the document's", sum)
	}
	if ok, err := cf.db.IsPublicPDF(ctx, id, sum); err != nil || !ok {
		t.Errorf("the frozen PDF's hash is not registered: %v %v", ok, err)
	}
	frozen, fh, err := cf.db.FrozenPDF(ctx, id)
	if err != nil || fh != sum || string(frozen) != string(first) {
		t.Errorf("frozen at the issue: %s %v", fh, err)
	}
	// The frozen document cannot be rewritten.
	if _, _, err := cf.db.FreezePDF(ctx, id, []byte("%PDF-forged")); err != nil {
		t.Fatal(err)
	}
	if third, _ := get(); string(third) != string(first) {
		t.Error("a second freeze replaced the document")
	}
}
