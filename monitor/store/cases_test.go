package store

import (
	"context"
	"crypto/ed25519"
	"crypto/rand"
	"encoding/json"
	"errors"
	"fmt"
	"github.com/trenzinho/trenzinho/internal/testkit/testenv"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/trenzinho/trenzinho/monitor/cases"
	"github.com/trenzinho/trenzinho/monitor/drafts"
	"github.com/trenzinho/trenzinho/monitor/penalty"
	"github.com/trenzinho/trenzinho/profile"
	"github.com/trenzinho/trenzinho/wire"
)

// caseProfile is the Piúma profile with a second UFMP value from 2027.
func caseProfile(t *testing.T) *profile.Profile {
	t.Helper()
	y := strings.Replace(string(profile.PiumaYAML()),
		"    - {from: \"2026-01-01\", brl: \"4.2000\"",
		"    - {from: \"2027-01-01\", brl: \"4.41234\"}\n    - {from: \"2026-01-01\", brl: \"4.2000\"", 1)
	p, err := profile.Parse([]byte(y), "test.yaml")
	if err != nil {
		t.Fatal(err)
	}
	if len(p.FiscalUnit.Values) != 2 {
		t.Fatal("the second UFMP value was not added")
	}
	return p
}

var sp = func() *time.Location { l, _ := time.LoadLocation("America/Sao_Paulo"); return l }()

// local is a time in Piúma.
func local(y int, m time.Month, d, h, min int) time.Time { return time.Date(y, m, d, h, min, 0, 0, sp) }

var testKey = func() ed25519.PrivateKey { _, k, _ := ed25519.GenerateKey(rand.Reader); return k }()

// putDraft stores a sealed speed draft of the licensee at start.
func putDraft(t *testing.T, db *DB, id, licensee string, start time.Time) {
	t.Helper()
	ctx := context.Background()
	s := wire.NewTime(start)
	d := drafts.Draft{ID: id, EpisodeIDs: []string{id + ".ep"}, Vehicle: "PIU-001", Licensee: licensee, Rules: []string{"speed"},
		Articles: []string{"Art. 23"}, Penalty: "Art. 46, X", FineUFMP: 400, FiscalUnit: "UFMP", Start: s, End: s, CreatedAt: s,
		Facts: []drafts.Fact{{EpisodeID: id + ".ep", Rule: "speed", Article: "Art. 23", Start: s, End: s}},
		Registry: &drafts.Registered{Licensee: licensee, Plate: "ABC1D23", Devices: []drafts.Device{{Kind: "tachograph",
			Serial: "TC-1", INMETROVerification: "2020-01-01", ValidUntil: "2099-12-31"}}}}
	drafts.SealInstruments(&d)
	b, err := json.Marshal(drafts.Bundle{Format: drafts.BundleFormat, Draft: d, Batches: []drafts.RawBatch{}})
	if err != nil {
		t.Fatal(err)
	}
	seq, prev, err := db.ChainHead(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if err := db.InsertDraft(ctx, drafts.Seal(id, seq+1, b, prev, testKey), &d); err != nil {
		t.Fatal(err)
	}
}

var (
	fiscal = Actor{User: "joao", RemoteAddr: "192.0.2.1"}
	// autoridade decides (the store refuses the issuer, joao, the acts that decide).
	autoridade = Actor{User: "carla", RemoteAddr: "192.0.2.2"}
)

// actorFor is who records a: the autoridade for the acts that decide, else the fiscal.
func actorFor(a CaseAction) Actor {
	if cases.NeedsAuthority(a.Action) {
		return autoridade
	}
	return fiscal
}

// The store's cases are written by the office of the auto (monitor/cases) over the store's
// ledger: these run its acts at a given time, as a user whose role and identification the
// office admits (roles and the issue's checks are the office's and the API's tests), on a
// profile whose UFMP is confirmed and with the licensee of the drafts identified.

func officeAt(db *DB, p *profile.Profile, at time.Time) *cases.Office {
	cp := *p
	testenv.ConfirmedProfile(&cp)
	return &cases.Office{Ledger: db, Profile: &cp, Key: testKey.Public().(ed25519.PublicKey), Now: func() time.Time { return at },
		LicenseeAtFact: func(_ context.Context, d *drafts.Draft) (cases.Licensee, bool) {
			return cases.Licensee{ID: d.Licensee, RazaoSocial: "Trenzinho Ltda", CNPJ: "11.222.333/0001-81", Address: "Av. Beira-Mar, 1"}, true
		}}
}

func asAgent(a Actor) Actor {
	a.Role, a.Agent = RoleAutoridade, Agent{FullName: "Agente " + a.User, Matricula: "1", Cargo: "Fiscal"}
	return a
}

func issueDraft(ctx context.Context, db *DB, id, reason string, p *profile.Profile, at time.Time, a Actor) (*Case, error) {
	c, _, err := officeAt(db, p, at).Issue(ctx, id, reason, asAgent(a))
	return c, err
}

func issueManual(ctx context.Context, db *DB, m ManualNotice, p *profile.Profile, at time.Time, a Actor) (*Case, error) {
	return officeAt(db, p, at).IssueManual(ctx, m, asAgent(a))
}

func caseAct(ctx context.Context, db *DB, id int64, act CaseAction, p *profile.Profile, now time.Time, a Actor) (before, after *Case, err error) {
	if act, err = proven(ctx, db, id, act, p, now); err != nil {
		return nil, nil, err
	}
	return officeAt(db, p, now).Act(ctx, id, act, asAgent(a))
}

// The office refuses the acts that decide to the user who issued the auto.
func TestIssuerCannotDecide(t *testing.T) {
	db := openTemp(t)
	p := profile.Piuma()
	c := caseAt(t, db, p, "IMP", CaseAction{Action: ActionNotify, Mode: penalty.ModeInPerson, Date: "2026-10-05"},
		CaseAction{Action: ActionDefence, Date: "2026-10-10"})
	for _, a := range []CaseAction{{Action: ActionDecide, Outcome: OutcomeRejected, Text: "Indeferida.", Date: "2026-10-20"},
		{Action: ActionDividaAtiva, Date: "2026-12-20"}, {Action: ActionSuspension, From: "2026-12-20", Days: 10}} {
		_, _, err := caseAct(context.Background(), db, c.ID, a, p, local(2026, 12, 20, 10, 0), fiscal)
		var ce *CaseError
		if !errors.As(err, &ce) || ce.Kind != cases.Conflict || !strings.Contains(ce.Msg, "Impedimento") {
			t.Errorf("%s by the issuer: %v", a.Action, err)
		}
	}
	act(t, db, p, c.ID, local(2026, 10, 20, 10, 0), CaseAction{Action: ActionDecide, Outcome: OutcomeRejected, Text: "Indeferida.", Date: "2026-10-20"})
}

func act(t *testing.T, db *DB, p *profile.Profile, id int64, now time.Time, a CaseAction) *Case {
	t.Helper()
	_, after, err := caseAct(context.Background(), db, id, a, p, now, actorFor(a))
	if err != nil {
		t.Fatalf("%s: %v", a.Action, err)
	}
	return after
}

func TestCaseWorkflow(t *testing.T) {
	ctx := context.Background()
	db, p := openTemp(t), caseProfile(t)
	// An earlier paper notice for the same precept, final in June: this offence is a specific
	// recidivism (Art. 48 ×2; Art. 52 suspension recommended).
	if _, err := db.ImportNotices(ctx, []ImportedNotice{{Number: "P-2026/012", Offence: local(2026, 6, 1, 15, 0), Issued: local(2026, 6, 2, 10, 0),
		Licensee: "L1", Articles: []string{"Art. 23"}, Penalty: "Art. 46, X", Status: penalty.StatusConfirmed,
		Notified: "2026-06-05", Mode: penalty.ModeMail, Final: "2026-06-20"}}, local(2026, 9, 1, 10, 0), fiscal); err != nil {
		t.Fatal(err)
	}
	putDraft(t, db, "D1", "L1", local(2026, 10, 1, 15, 0))
	c, err := issueDraft(ctx, db, "D1", "conferido", p, local(2026, 10, 2, 10, 0), fiscal)
	if err != nil {
		t.Fatal(err)
	}
	if c.Notice != "AI-2026/0001" || c.State != penalty.StatusIssued || c.Assessment == nil || c.Assessment.TotalBRL != "3360.00" ||
		c.Assessment.SuspensionRecommended == nil {
		t.Fatalf("issued %+v", c)
	}
	// The draft row says it was issued, with the number; its sealed bundle is untouched.
	d, err := db.DraftByID(ctx, "D1")
	if err != nil || d.Status != drafts.StatusIssued || d.Notice != "AI-2026/0001" || d.DecidedBy != "joao" {
		t.Fatalf("draft %+v %v", d, err)
	}
	if _, err := drafts.Verify(&d.Sealed, testKey.Public().(ed25519.PublicKey)); err != nil {
		t.Fatal(err)
	}
	if _, err := issueDraft(ctx, db, "D1", "", p, local(2026, 10, 2, 11, 0), fiscal); err == nil || !strings.Contains(err.Error(), "já foi decidido") {
		t.Fatalf("issued twice: %v", err)
	}

	now := local(2026, 11, 29, 12, 0)
	c = act(t, db, p, c.ID, now, CaseAction{Action: ActionNotify, Mode: penalty.ModeInPerson, Date: "2026-10-05", RefusedToSign: true})
	if c.State != penalty.StatusNotified || c.Notified != "2026-10-05" || !c.RefusedToSign {
		t.Fatalf("notified %+v", c.Status)
	}
	deadline, why := c.DefenceDeadline(p)
	if deadline.Format(time.DateOnly) != "2026-10-15" || !strings.Contains(why, "recusou-se") {
		t.Errorf("deadline %s %q", deadline, why)
	}
	c = act(t, db, p, c.ID, now, CaseAction{Action: ActionDefence, Date: "2026-10-14"})
	if c.State != penalty.StatusDefenceFiled {
		t.Fatal(c.State)
	}
	if ok, _ := penalty.FineSuspended(p, c.PenaltyNotice(p), local(2026, 10, 20, 12, 0)); !ok {
		t.Error("a timely defence did not suspend the fine (Art. 57)")
	}
	c = act(t, db, p, c.ID, now, CaseAction{Action: ActionDecide, Outcome: OutcomeRejected, Date: "2026-10-30", Text: "Defesa indeferida: a velocidade foi medida pelo tacógrafo."})
	if c.State != penalty.StatusConfirmed || c.Decided != "2026-10-30" || c.Outcome != OutcomeRejected {
		t.Fatalf("decided %+v", c.Status)
	}
	c = act(t, db, p, c.ID, now, CaseAction{Action: ActionNotifyDecision, Date: "2026-10-31"})
	// Final the day after the appeal period (10 days from Saturday 31/10: Tuesday 10/11).
	c = act(t, db, p, c.ID, now, CaseAction{Action: ActionSuspension, From: "2026-11-11", Days: 10})
	if c.Suspension == nil || c.Suspension.To != "2026-11-20" || c.State != penalty.StatusConfirmed {
		t.Fatalf("suspension %+v", c.Status)
	}
	c = act(t, db, p, c.ID, now, CaseAction{Action: ActionPay, Date: "2026-11-05"})
	if c.State != penalty.StatusPaid || len(c.Events) != 7 {
		t.Fatalf("paid %+v, %d events", c.Status, len(c.Events))
	}

	// The stored state is the fold of the events; the row's state column agrees.
	got, err := db.CaseByDraft(ctx, "D1")
	if err != nil || got.State != penalty.StatusPaid || got.Notified != "2026-10-05" || got.Suspension.Days != 10 {
		t.Fatalf("reloaded %+v %v", got, err)
	}
	var state string
	if err := db.db.QueryRow(`SELECT state FROM cases WHERE id = ?`, c.ID).Scan(&state); err != nil || state != "paid" {
		t.Fatalf("row state %q %v", state, err)
	}
	list, _, err := db.Cases(ctx, CaseFilter{State: "paid"}, 10, "")
	if err != nil || len(list) != 1 || list[0].Notice != "AI-2026/0001" {
		t.Fatalf("cases paid: %v %v", list, err)
	}

	// Every step is audited with the case before and after.
	entries, _, err := db.ListAudit(ctx, AuditFilter{Object: "case:AI-2026/0001"}, 100, "")
	if err != nil {
		t.Fatal(err)
	}
	want := []string{"case.pay", "case.suspension", "case.notify_decision", "case.decide", "case.defence", "case.notify", "case.issue"}
	if len(entries) != len(want) {
		t.Fatalf("%d audit entries, want %d", len(entries), len(want))
	}
	for i, e := range entries {
		by := fiscal
		if cases.NeedsAuthority(strings.TrimPrefix(e.Action, "case.")) {
			by = autoridade
		}
		if e.Action != want[i] || e.User != by.User || e.RemoteAddr != by.RemoteAddr || len(e.After) == 0 {
			t.Errorf("audit %d: %s by %s, after %s", i, e.Action, e.User, e.After)
		}
		if e.Action != "case.issue" && len(e.Before) == 0 {
			t.Errorf("audit %s without before", e.Action)
		}
	}
	var before, after struct {
		State string `json:"state"`
		Event struct {
			Date string `json:"date"`
		} `json:"event"`
	}
	if json.Unmarshal(entries[0].Before, &before) != nil || json.Unmarshal(entries[0].After, &after) != nil ||
		before.State != "confirmed" || after.State != "paid" || after.Event.Date != "2026-11-05" {
		t.Errorf("pay audit: before %s after %s", entries[0].Before, entries[0].After)
	}
	if !strings.Contains(string(entries[6].After), `"total_brl":"3360.00"`) {
		t.Errorf("issue audit lacks the calculus: %s", entries[6].After)
	}

	// The events and the calculus cannot be rewritten.
	if _, err := db.db.Exec(`UPDATE case_events SET date = '2026-10-01' WHERE case_id = ?`, c.ID); err == nil {
		t.Error("an event was rewritten")
	}
	if _, err := db.db.Exec(`DELETE FROM case_events WHERE case_id = ?`, c.ID); err == nil {
		t.Error("an event was deleted")
	}
	if _, err := db.db.Exec(`UPDATE cases SET assessment = NULL WHERE id = ?`, c.ID); err == nil {
		t.Error("the calculus was rewritten")
	}
	if _, err := db.db.Exec(`DELETE FROM cases WHERE id = ?`, c.ID); err == nil {
		t.Error("a case was deleted")
	}
}

// caseAt issues a fresh draft of L1 (fact on 1 October 2026, issued on the 2nd) and plays the
// actions on it.
func caseAt(t *testing.T, db *DB, p *profile.Profile, id string, actions ...CaseAction) *Case {
	t.Helper()
	putDraft(t, db, id, "L1", local(2026, 10, 1, 15, 0))
	c, err := issueDraft(context.Background(), db, id, "", p, local(2026, 10, 2, 10, 0), fiscal)
	if err != nil {
		t.Fatal(err)
	}
	for _, a := range actions {
		c = act(t, db, p, c.ID, local(2026, 11, 29, 12, 0), a)
	}
	return c
}

func TestCaseInvalidActions(t *testing.T) {
	db, p := openTemp(t), caseProfile(t)
	notify := CaseAction{Action: ActionNotify, Mode: penalty.ModeMail, Date: "2026-10-05"}
	defence := CaseAction{Action: ActionDefence, Date: "2026-10-10"}
	reject := CaseAction{Action: ActionDecide, Outcome: OutcomeRejected, Date: "2026-10-20", Text: "Indeferida."}
	accept := CaseAction{Action: ActionDecide, Outcome: OutcomeAccepted, Date: "2026-10-20", Text: "Acolhida."}
	notifyDecision := CaseAction{Action: ActionNotifyDecision, Date: "2026-10-20"} // payment period to 19/11/2026
	pay := CaseAction{Action: ActionPay, Date: "2026-11-20"}
	divida := CaseAction{Action: ActionDividaAtiva, Date: "2026-11-20"}
	now := local(2026, 11, 29, 12, 0)

	states := map[string][]CaseAction{
		"issued":           nil,
		"notified":         {notify},
		"defence_filed":    {notify, defence},
		"confirmed":        {notify, defence, reject, notifyDecision},
		"defence_accepted": {notify, defence, accept},
		"paid":             {notify, pay},
		"dividaativa":      {notify, reject, notifyDecision, divida}, // decided à revelia
	}
	// First offences: no suspension anywhere (Art. 52 needs specific recidivism; see
	// TestCaseSuspensionNeedsRecidivismAndAFinalFine). A timely defence blocks dívida ativa, not
	// a payment.
	allowed := map[string][]string{
		"issued":           {ActionDeliveryFailed, ActionNotify, ActionAnnul},
		"notified":         {ActionDefence, ActionDecide, ActionPay, ActionAnnul}, // decide: à revelia, once the period ran out
		"defence_filed":    {ActionDecide, ActionPay, ActionAnnul},
		"confirmed":        {ActionAppeal, ActionPay, ActionDividaAtiva, ActionAnnul},
		"defence_accepted": nil,
		"paid":             {ActionWaiver},
		"dividaativa":      {ActionPay, ActionAnnul},
	}
	try := map[string]CaseAction{ActionNotify: notify, ActionDefence: defence, ActionDecide: reject,
		ActionPay: {Action: ActionPay, Date: "2026-11-25"}, ActionDividaAtiva: {Action: ActionDividaAtiva, Date: "2026-11-25"},
		ActionSuspension:     {Action: ActionSuspension, From: "2026-11-02", Days: 10},
		ActionDeliveryFailed: {Action: ActionDeliveryFailed, Mode: penalty.ModeMail, Date: "2026-10-05", Text: "AR devolvido: mudou-se."},
		ActionAnnul:          {Action: ActionAnnul, Date: "2026-11-28", Text: "Erro na identificação do veículo."}}
	n := 0
	for state, steps := range states {
		n++
		c := caseAt(t, db, p, fmt.Sprintf("S%d", n), steps...)
		if string(c.State) != state {
			t.Fatalf("built %s, want %s", c.State, state)
		}
		if got := strings.Join(c.Allowed(), ","); got != strings.Join(allowed[state], ",") {
			t.Errorf("%s allows %s, want %v", state, got, allowed[state])
		}
		for action, a := range try {
			_, _, err := caseAct(context.Background(), db, c.ID, a, p, now, actorFor(a))
			ok := strings.Contains(","+strings.Join(allowed[state], ",")+",", ","+action+",")
			var ce *CaseError
			switch {
			case ok && err != nil:
				t.Errorf("%s: %s refused: %v", state, action, err)
			case !ok && (!errors.As(err, &ce) || ce.Kind != cases.Conflict):
				t.Errorf("%s: %s: want a conflict, got %v", state, action, err)
			case !ok && !strings.Contains(ce.Msg, "não é possível"):
				t.Errorf("%s: %s: message %q", state, action, ce.Msg)
			}
			if ok { // undo by building again: take a fresh case
				n++
				c = caseAt(t, db, p, fmt.Sprintf("S%d", n), steps...)
			}
		}
	}

	// Dates.
	failed1 := CaseAction{Action: ActionDeliveryFailed, Mode: penalty.ModeInPerson, Date: "2026-10-05", Text: "Sede fechada; ninguém atendeu."}
	failed2 := CaseAction{Action: ActionDeliveryFailed, Mode: penalty.ModeMail, Date: "2026-10-10", Text: "AR devolvido: mudou-se."}
	dated := []struct {
		name     string
		steps    []CaseAction
		a        CaseAction
		conflict bool
		msg      string
	}{
		{"future", nil, CaseAction{Action: ActionNotify, Mode: penalty.ModeInPerson, Date: "2026-11-30"}, false, "é futura"},
		{"before the issue", nil, CaseAction{Action: ActionNotify, Mode: penalty.ModeInPerson, Date: "2026-10-01"}, true, "anterior à emissão do auto (02/10/2026)"},
		{"no date", nil, CaseAction{Action: ActionNotify, Mode: penalty.ModeMail}, false, "informe a data"},
		{"bad date", nil, CaseAction{Action: ActionNotify, Mode: penalty.ModeMail, Date: "05/10/2026"}, false, "inválida"},
		{"bad mode", nil, CaseAction{Action: ActionNotify, Mode: "pombo", Date: "2026-10-05"}, false, "forma de notificação"},
		{"refusal by mail", nil, CaseAction{Action: ActionNotify, Mode: penalty.ModeMail, Date: "2026-10-05", RefusedToSign: true}, false, "Art. 54, § 2º"},
		{"edital without failed attempts", nil, CaseAction{Action: ActionNotify, Mode: penalty.ModeEdital, Published: "2026-10-20"}, true, "Art. 54, § 1º"},
		{"edital without publication", []CaseAction{failed1, failed2}, CaseAction{Action: ActionNotify, Mode: penalty.ModeEdital}, false, "publicação do edital"},
		{"defence before notice", []CaseAction{notify}, CaseAction{Action: ActionDefence, Date: "2026-10-04"}, true, "anterior à notificação (05/10/2026)"},
		{"defence in the future", []CaseAction{notify}, CaseAction{Action: ActionDefence, Date: "2027-01-04"}, false, "é futura"},
		{"decision before defence", []CaseAction{notify, defence}, CaseAction{Action: ActionDecide, Outcome: OutcomeRejected, Date: "2026-10-09", Text: "Indeferida."}, true, "anterior à apresentação da defesa"},
		{"decision without text", []CaseAction{notify, defence}, CaseAction{Action: ActionDecide, Outcome: OutcomeRejected, Date: "2026-10-20"}, false, "texto"},
		{"decision without outcome", []CaseAction{notify, defence}, CaseAction{Action: ActionDecide, Date: "2026-10-20", Text: "Indeferida."}, false, "outcome"},
		{"payment before decision", []CaseAction{notify, defence, reject}, CaseAction{Action: ActionPay, Date: "2026-10-19"}, true, "anterior à decisão sobre a defesa"},
		{"pay before the defence", []CaseAction{notify, defence}, CaseAction{Action: ActionPay, Date: "2026-10-09"}, true, "anterior à apresentação da defesa"},
		{"dívida ativa without a decision", []CaseAction{notify}, CaseAction{Action: ActionDividaAtiva, Date: "2026-10-15"}, true, "só é exigível depois da decisão"},
		{"revelia within the defence period", []CaseAction{notify}, CaseAction{Action: ActionDecide, Outcome: OutcomeRejected, Text: "À revelia.", Date: "2026-10-15"}, true, "termina em 15/10/2026"},
		{"unknown action", nil, CaseAction{Action: "recurso"}, false, "ação desconhecida"},
	}
	for _, c := range dated {
		n++
		k := caseAt(t, db, p, fmt.Sprintf("T%d", n), c.steps...)
		_, _, err := caseAct(context.Background(), db, k.ID, c.a, p, now, actorFor(c.a))
		var ce *CaseError
		if !errors.As(err, &ce) || (ce.Kind == cases.Conflict) != c.conflict || !strings.Contains(ce.Msg, c.msg) {
			t.Errorf("%s: got %v (conflict %v), want %q (conflict %v)", c.name, err, ce != nil && ce.Kind == cases.Conflict, c.msg, c.conflict)
		}
	}
	// A refused act leaves no event and no audit entry.
	entries, _, _ := db.ListAudit(context.Background(), AuditFilter{Action: "case.recurso"}, 10, "")
	if len(entries) != 0 {
		t.Error("a refused act was audited")
	}
	if _, _, err := caseAct(context.Background(), db, 9999, notify, p, now, fiscal); !errors.Is(err, ErrNotFound) {
		t.Errorf("no such case: %v", err)
	}
}

// Notices issued at once, from as many goroutines (as two monitors on one database would), take
// one number each of the one series: none twice, none skipped.
func TestNoticeNumbersConcurrent(t *testing.T) {
	ctx := context.Background()
	db, p := openTemp(t), caseProfile(t)
	const n = 8
	numbers := make([]string, n)
	errs := make([]error, n)
	var wg sync.WaitGroup
	for i := range n {
		wg.Add(1)
		go func() {
			defer wg.Done()
			c, err := issueManual(ctx, db, ManualNotice{Vehicle: "PIU-001", Licensee: "L1", LicenseeName: "Trenzinho da Praia Ltda",
				LicenseeCNPJ: "11222333000181", LicenseeAddress: "Av. Beira-Mar, 1", Infractions: []string{"art16"},
				Offence: local(2026, 10, 3, 16, 0), ManualDetails: ManualDetails{Place: "Av. Beira-Mar", Description: "Passageiros em pé.", Agent: "joao"}},
				p, local(2026, 10, 3, 17, i), fiscal)
			if err == nil {
				numbers[i] = c.Notice
			}
			errs[i] = err
		}()
	}
	wg.Wait()
	for i, err := range errs {
		if err != nil {
			t.Fatalf("notice %d: %v", i, err)
		}
	}
	slices.Sort(numbers)
	for i, got := range numbers {
		if want := fmt.Sprintf("AI-2026/%04d", i+1); got != want {
			t.Errorf("numbers %v: want AI-2026/0001 … AI-2026/%04d", numbers, n)
			break
		}
	}
}

func TestNoticeNumbersOneSeries(t *testing.T) {
	ctx := context.Background()
	db, p := openTemp(t), caseProfile(t)
	putDraft(t, db, "D1", "L1", local(2026, 10, 1, 15, 0))
	c1, err := issueDraft(ctx, db, "D1", "", p, local(2026, 10, 2, 10, 0), fiscal)
	if err != nil {
		t.Fatal(err)
	}
	m, err := issueManual(ctx, db, ManualNotice{Vehicle: "PIU-001", Licensee: "L1", LicenseeName: "Trenzinho da Praia Ltda",
		LicenseeCNPJ: "11222333000181", LicenseeAddress: "Av. Beira-Mar, 1", Infractions: []string{"art16"},
		Offence: local(2026, 10, 3, 16, 0), ManualDetails: ManualDetails{Place: "Av. Beira-Mar", Description: "Três crianças sem responsável.", Agent: "joao"}},
		p, local(2026, 10, 3, 17, 0), fiscal)
	if err != nil {
		t.Fatal(err)
	}
	// A paper notice took a number of the series.
	if _, err := db.ImportNotices(ctx, []ImportedNotice{{Number: "AI-2026/0007", Offence: local(2026, 9, 1, 0, 0), Issued: local(2026, 9, 2, 0, 0),
		Licensee: "L2", Articles: []string{"Art. 29"}, Penalty: "Art. 47", Status: penalty.StatusIssued}}, time.Now(), fiscal); err != nil {
		t.Fatal(err)
	}
	putDraft(t, db, "D2", "L1", local(2026, 10, 4, 15, 0))
	if err := func() error {
		_, err := db.DecideDraft(ctx, "D2", drafts.StatusIssued, "", "joao", local(2026, 10, 5, 10, 0))
		return err
	}(); err != nil {
		t.Fatal(err)
	}
	d2, _ := db.DraftByID(ctx, "D2")
	putDraft(t, db, "D3", "L1", local(2026, 12, 30, 15, 0))
	c3, err := issueDraft(ctx, db, "D3", "", p, time.Date(2027, 1, 1, 1, 30, 0, 0, time.UTC), fiscal) // still 2026 in Piúma
	if err != nil {
		t.Fatal(err)
	}
	if got := []string{c1.Notice, m.Notice, d2.Notice, c3.Notice}; strings.Join(got, " ") != "AI-2026/0001 AI-2026/0002 AI-2026/0008 AI-2026/0009" {
		t.Errorf("numbers %v", got)
	}
	if m.Assessment == nil || m.Assessment.TotalUFMP != 400 || m.Penalty != "Art. 46, XII" || m.Articles[0] != "Art. 16" || m.Manual.Place != "Av. Beira-Mar" {
		t.Errorf("manual %+v", m)
	}
	// Imported numbers are unique.
	_, err = db.ImportNotices(ctx, []ImportedNotice{{Number: "AI-2026/0007", Offence: local(2026, 9, 1, 0, 0), Issued: local(2026, 9, 2, 0, 0),
		Licensee: "L2", Articles: []string{"Art. 29"}, Penalty: "Art. 47", Status: penalty.StatusIssued}}, time.Now(), fiscal)
	var ce *CaseError
	if !errors.As(err, &ce) || ce.Kind != cases.Conflict || !strings.Contains(ce.Msg, "AI-2026/0007") {
		t.Errorf("duplicate import: %v", err)
	}
	if _, err := issueManual(ctx, db, ManualNotice{Licensee: "L1", Infractions: []string{"art99"}, Offence: local(2026, 10, 3, 16, 0)}, p, local(2026, 10, 3, 17, 0), fiscal); err == nil {
		t.Error("a manual notice of an infraction the profile lacks")
	}
}

// Drafts issued before migration 4 become issued cases without a calculus.
func TestMigrationBackfillsIssuedDrafts(t *testing.T) {
	ctx := context.Background()
	path := filepath.Join(t.TempDir(), "m.db")
	all := migrations
	migrations = all[:3]
	db, err := Open(ctx, path)
	if err != nil {
		migrations = all
		t.Fatal(err)
	}
	putDraft(t, db, "OLD", "L1", time.Date(2026, 10, 1, 15, 0, 0, 250e6, time.UTC))
	putDraft(t, db, "PENDING", "L1", time.Date(2026, 10, 2, 15, 0, 0, 0, time.UTC))
	if _, err := db.db.Exec(`UPDATE drafts SET status = 'issued', notice = 'AI-2026/0001', decided_by = 'ana', decided_at = ? WHERE id = 'OLD'`,
		time.Date(2026, 10, 3, 12, 0, 0, 0, time.UTC).UnixMilli()); err != nil {
		t.Fatal(err)
	}
	db.Close()
	migrations = all
	if db, err = Open(ctx, path); err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	c, err := db.CaseByDraft(ctx, "OLD")
	if err != nil {
		t.Fatal(err)
	}
	if c.Notice != "AI-2026/0001" || c.State != penalty.StatusIssued || c.Licensee != "L1" || c.Assessment != nil ||
		!c.Offence.Equal(time.Date(2026, 10, 1, 15, 0, 0, 250e6, time.UTC)) || c.IssuedBy != "ana" ||
		strings.Join(c.Articles, ",") != "Art. 23" || strings.Join(c.Rules, ",") != "speed" || len(c.Events) != 1 {
		t.Errorf("backfilled %+v", c)
	}
	if _, err := db.CaseByDraft(ctx, "PENDING"); !errors.Is(err, ErrNotFound) {
		t.Errorf("a pending draft got a case: %v", err)
	}
}

// putDraftOf stores a sealed draft of the given rule, penalty, fine and facts' articles.
func putDraftOf(t *testing.T, db *DB, id, licensee, rule, pen string, fine float64, start time.Time, articles ...string) {
	t.Helper()
	ctx := context.Background()
	s := wire.NewTime(start)
	d := drafts.Draft{ID: id, EpisodeIDs: []string{id + ".ep"}, Vehicle: "PIU-001", Licensee: licensee, Rules: []string{rule},
		Articles: articles, Penalty: pen, FineUFMP: fine, FiscalUnit: "UFMP", Start: s, End: s, CreatedAt: s,
		Registry: &drafts.Registered{Licensee: licensee, Plate: "ABC1D23"}}
	for i, a := range articles {
		d.Facts = append(d.Facts, drafts.Fact{EpisodeID: fmt.Sprintf("%s.ep%d", id, i), Rule: rule, Article: a, Start: s, End: s})
	}
	b, err := json.Marshal(drafts.Bundle{Format: drafts.BundleFormat, Draft: d, Batches: []drafts.RawBatch{}})
	if err != nil {
		t.Fatal(err)
	}
	seq, prev, err := db.ChainHead(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if err := db.InsertDraft(ctx, drafts.Seal(id, seq+1, b, prev, testKey), &d); err != nil {
		t.Fatal(err)
	}
}

// route_deviation is fined only on repeat (Art. 41, I): the profile's rules.route_deviation.repeat.
func TestIssueWarningFirstRule(t *testing.T) {
	ctx := context.Background()
	db, p := openTemp(t), caseProfile(t)
	putDraftOf(t, db, "R1", "L1", "route_deviation", "Art. 41, I", 0, local(2026, 10, 1, 15, 0), "Art. 38")
	c, err := issueDraft(ctx, db, "R1", "", p, local(2026, 10, 2, 10, 0), fiscal)
	if err != nil {
		t.Fatal(err)
	}
	if a := c.Assessment; !a.Warning || a.TotalBRL != "0.00" || !c.Warning {
		t.Fatalf("first route deviation: %+v", a)
	}
	// Not yet delivered (Art. 54): a new deviation is again a first one.
	putDraftOf(t, db, "R0", "L1", "route_deviation", "Art. 41, I", 0, local(2026, 10, 3, 15, 0), "Art. 38")
	c0, err := issueDraft(ctx, db, "R0", "", p, local(2026, 10, 4, 10, 0), fiscal)
	if err != nil {
		t.Fatal(err)
	}
	if a := c0.Assessment; !a.Warning || len(a.RepeatOf) != 0 {
		t.Fatalf("after an undelivered warning: %+v", a)
	}
	act(t, db, p, c.ID, local(2026, 10, 5, 10, 0), CaseAction{Action: ActionNotify, Mode: penalty.ModeInPerson, Date: "2026-10-05"})
	putDraftOf(t, db, "R2", "L1", "route_deviation", "Art. 41, I", 0, local(2026, 10, 10, 15, 0), "Art. 38")
	c, err = issueDraft(ctx, db, "R2", "", p, local(2026, 10, 11, 10, 0), fiscal)
	if err != nil {
		t.Fatal(err)
	}
	if a := c.Assessment; a.Warning || a.Penalty != "Art. 45, I" || a.TotalUFMP != 300 || len(a.RepeatOf) != 1 || c.Penalty != "Art. 45, I" {
		t.Fatalf("repeated route deviation: %+v", a)
	}
	// The fine of a deviation after a notified one is Art. 41, I's own consequence (the
	// notificação preliminar not heeded), not recidivism (Art. 48): no doubled fine, and the
	// calculus says which it is.
	if a, why := c.Assessment, strings.Join(c.Assessment.Explanation, " "); a.Recidivist || a.Factor != 1 ||
		!strings.Contains(why, "Repetição da infração já notificada") || !strings.Contains(why, "Sem reincidência") {
		t.Errorf("the repeated deviation is called recidivism: %+v", a)
	}
}

// A rule whose legal mapping depends on its facts (document_expired, by document kind) is
// assessed by the mapping the draft recorded for each fact.
func TestIssueRuleMappedByFact(t *testing.T) {
	ctx := context.Background()
	db, p := openTemp(t), caseProfile(t)
	// An earlier paper notice of L1 for an expired licence (Art. 7), final long ago.
	if _, err := db.ImportNotices(ctx, []ImportedNotice{{Number: "P-1/2026", Offence: local(2026, 3, 1, 0, 0), Issued: local(2026, 3, 2, 12, 0),
		Licensee: "L1", Articles: []string{"Art. 7"}, Penalty: "Art. 47", Status: penalty.StatusConfirmed, Final: "2026-04-01"}}, time.Now(), fiscal); err != nil {
		t.Fatal(err)
	}
	putDraftOf(t, db, "E1", "L1", "document_expired", "Art. 47", 250, local(2026, 10, 1, 15, 0), "Art. 7", "Art. 20, III, b")
	c, err := issueDraft(ctx, db, "E1", "", p, local(2026, 10, 2, 10, 0), fiscal)
	if err != nil {
		t.Fatal(err)
	}
	a := c.Assessment
	if strings.Join(a.Articles, ";") != "Art. 7;Art. 20, III, b" || a.Penalty != "Art. 47" || !a.Recidivist || a.TotalUFMP != 500 || a.RelyingOn[0].ID != "P-1/2026" {
		t.Fatalf("document_expired: %+v", a)
	}
}

// A suspension (Art. 52) follows specific recidivism found at issue, on a final fine, from its
// first final day; a late defence neither suspends the fine (Art. 57) nor blocks dívida ativa.
func TestCaseSuspensionNeedsRecidivismAndAFinalFine(t *testing.T) {
	ctx := context.Background()
	db, p := openTemp(t), caseProfile(t)
	now := local(2026, 11, 29, 12, 0)
	suspension := func(from string) CaseAction { return CaseAction{Action: ActionSuspension, From: from, Days: 10} }
	conflict := func(c *Case, a CaseAction, msg string) {
		t.Helper()
		_, _, err := caseAct(ctx, db, c.ID, a, p, now, actorFor(a))
		var ce *CaseError
		if !errors.As(err, &ce) || ce.Kind != cases.Conflict || !strings.Contains(ce.Msg, msg) {
			t.Errorf("%s from %s: %v, want a conflict saying %q", a.Action, a.From, err, msg)
		}
	}

	// A first offence: never.
	first := caseAt(t, db, p, "F1", CaseAction{Action: ActionNotify, Mode: penalty.ModeMail, Date: "2026-10-05"})
	conflict(first, suspension("2026-11-02"), "reincidência específica")

	// A specific recidivism: once the fine is final, not before.
	if _, err := db.ImportNotices(ctx, []ImportedNotice{{Number: "P-2026/001", Offence: local(2026, 6, 1, 15, 0), Issued: local(2026, 6, 2, 10, 0),
		Licensee: "L1", Articles: []string{"Art. 23"}, Penalty: "Art. 46, X", Status: penalty.StatusPaid,
		Notified: "2026-06-05", Mode: penalty.ModeMail, Paid: "2026-06-10"}}, local(2026, 9, 1, 10, 0), fiscal); err != nil {
		t.Fatal(err)
	}
	rec := caseAt(t, db, p, "R1")
	if rec.Assessment == nil || rec.Assessment.SuspensionRecommended == nil {
		t.Fatalf("no suspension recommended: %+v", rec.Assessment)
	}
	conflict(rec, suspension("2026-10-03"), "não é possível") // not even notified
	rec = act(t, db, p, rec.ID, now, CaseAction{Action: ActionNotify, Mode: penalty.ModeMail, Date: "2026-10-05"})
	deadline, _ := rec.DefenceDeadline(p)
	last := deadline.Format(time.DateOnly)
	conflict(rec, suspension(last), "só é exigível depois da decisão")
	// Decided à revelia the day after the defence deadline, notified three days later.
	rec = act(t, db, p, rec.ID, now, CaseAction{Action: ActionDecide, Outcome: OutcomeRejected, Text: "Julgado à revelia.",
		Date: deadline.AddDate(0, 0, 1).Format(time.DateOnly)})
	conflict(rec, suspension("2026-10-19"), "ainda não foi notificada")
	rec = act(t, db, p, rec.ID, now, CaseAction{Action: ActionNotifyDecision, Date: "2026-10-19"})
	// Final the day after the appeal period ran out without an appeal (29/10), not on the
	// decision's notice.
	conflict(rec, suspension("2026-10-29"), "só é definitiva a partir de 30/10/2026")
	after := "2026-10-30"
	for _, c := range []struct {
		a   CaseAction
		msg string
	}{
		{CaseAction{Action: ActionSuspension, From: after, Days: 9}, "de 10 a 45 dias"},
		{CaseAction{Action: ActionSuspension, From: after, Days: 46}, "de 10 a 45 dias"},
		{CaseAction{Action: ActionSuspension, From: "2026-11-02", To: "2026-11-01"}, "anterior ao início"},
		{CaseAction{Action: ActionSuspension, From: "2026-11-02", To: "2026-11-20", Days: 10}, "são 19 dias"},
		{CaseAction{Action: ActionSuspension, From: "2026-09-30", Days: 10}, "anterior à emissão"},
	} {
		if _, _, err := caseAct(ctx, db, rec.ID, c.a, p, now, actorFor(c.a)); err == nil || !strings.Contains(err.Error(), c.msg) {
			t.Errorf("suspension %+v: %v, want %q", c.a, err, c.msg)
		}
	}
	rec = act(t, db, p, rec.ID, now, suspension(after))
	conflict(rec, suspension("2026-11-20"), "já há suspensão")
	if rec.Suspension == nil || rec.Suspension.Days != 10 {
		t.Fatalf("suspension %+v", rec.Suspension)
	}

	// A defence filed in time: no dívida ativa, no suspension until decided; a payment is fine.
	timely := caseAt(t, db, p, "T1", CaseAction{Action: ActionNotify, Mode: penalty.ModeMail, Date: "2026-10-05"},
		CaseAction{Action: ActionDefence, Date: "2026-10-08"})
	conflict(timely, CaseAction{Action: ActionDividaAtiva, Date: "2026-11-20"}, "defesa apresentada no prazo")
	conflict(timely, suspension("2026-11-20"), "defesa apresentada no prazo")

	// A late defence: the fine stays due (Art. 57 suspends only a timely one).
	late := caseAt(t, db, p, "L1", CaseAction{Action: ActionNotify, Mode: penalty.ModeMail, Date: "2026-10-05"},
		CaseAction{Action: ActionDefence, Date: "2026-11-10"})
	if got := strings.Join(late.Allowed(), ","); got != "decide,pay,annul" {
		t.Errorf("late defence allows %s", got)
	}
	// Art. 51: dívida ativa only after the decision, notified, and the payment period.
	conflict(late, CaseAction{Action: ActionDividaAtiva, Date: "2026-11-20"}, "só é exigível depois da decisão")
	act(t, db, p, late.ID, now, CaseAction{Action: ActionDecide, Outcome: OutcomeRejected, Text: "Defesa intempestiva.", Date: "2026-11-11"})
	act(t, db, p, late.ID, now, CaseAction{Action: ActionNotifyDecision, Date: "2026-11-12"})
	// 30 days from 12/11 end on Saturday 12/12: the next business day, Monday 14/12.
	conflict(late, CaseAction{Action: ActionDividaAtiva, Date: "2026-11-28"}, "termina em 14/12/2026")
	late = act(t, db, p, late.ID, local(2026, 12, 20, 10, 0), CaseAction{Action: ActionDividaAtiva, Date: "2026-12-15"})
	if late.State != penalty.StatusDividaAtiva {
		t.Errorf("late defence, dívida ativa: %s", late.State)
	}
}

// Art. 51: dívida ativa only "caso o infrator se recusar a pagá-la no prazo legal": after a
// rejected defence, not before the decision is notified nor within payment.days (30) of it.
func TestDividaAtivaAfterThePaymentPeriod(t *testing.T) {
	db := openTemp(t)
	p := profile.Piuma()
	c := caseAt(t, db, p, "DA", CaseAction{Action: ActionNotify, Mode: penalty.ModeInPerson, Date: "2026-10-05"},
		CaseAction{Action: ActionDefence, Date: "2026-10-10"},
		CaseAction{Action: ActionDecide, Outcome: OutcomeRejected, Text: "Indeferida.", Date: "2026-10-20"})
	now := local(2027, 1, 10, 10, 0)
	try := func(date, want string) {
		t.Helper()
		_, _, err := caseAct(context.Background(), db, c.ID, CaseAction{Action: ActionDividaAtiva, Date: date}, p, now, autoridade)
		var ce *CaseError
		if !errors.As(err, &ce) || ce.Kind != cases.Conflict || !strings.Contains(ce.Msg, want) {
			t.Errorf("dívida ativa on %s: %v, want %q", date, err, want)
		}
	}
	try("2026-12-20", "ainda não foi notificada")
	if _, _, err := caseAct(context.Background(), db, c.ID, CaseAction{Action: ActionNotifyDecision, Date: "2026-10-19"}, p, now, fiscal); err == nil {
		t.Error("decision notified before the decision")
	}
	act(t, db, p, c.ID, now, CaseAction{Action: ActionNotifyDecision, Date: "2026-10-23"})
	// 30 days from 23/10 end on Sunday 22/11: the next business day, Monday 23/11.
	try("2026-11-23", "termina em 23/11/2026")
	c = act(t, db, p, c.ID, now, CaseAction{Action: ActionDividaAtiva, Date: "2026-11-24"})
	if c.State != penalty.StatusDividaAtiva || c.DecisionNotified != "2026-10-23" {
		t.Fatalf("after the period: %+v", c.Status)
	}
	if n := c.PenaltyNotice(p); n.DecisionNotified.IsZero() {
		t.Error("the calculus does not see the decision's notification")
	}
}

// Recidivism counts a fine of the monitor only once it is final: the day after its appeal
// period ran out without an appeal, or the day the appeal's decision was notified; never from
// the decision, nor from its notice while the appeal period runs.
func TestFinalFromTheDecisionsNotification(t *testing.T) {
	ctx := context.Background()
	db, p := openTemp(t), caseProfile(t)
	now := local(2026, 11, 29, 12, 0)
	first := caseAt(t, db, p, "A", CaseAction{Action: ActionNotify, Mode: penalty.ModeMail, Date: "2026-10-05"},
		CaseAction{Action: ActionDecide, Outcome: OutcomeRejected, Text: "Julgado à revelia.", Date: "2026-10-16"},
		CaseAction{Action: ActionNotifyDecision, Date: "2026-10-22"})
	issue := func(id string, fact, at time.Time) *penalty.Result {
		t.Helper()
		putDraft(t, db, id, "L1", fact)
		c, err := issueDraft(ctx, db, id, "", p, at, fiscal)
		if err != nil {
			t.Fatal(err)
		}
		return c.Assessment
	}
	relies := func(r *penalty.Result) bool {
		return r.Recidivist && len(r.RelyingOn) == 1 && r.RelyingOn[0].ID == first.Notice
	}
	// A fact after the decision but before its notice: not a recidivism.
	if r := issue("B", local(2026, 10, 21, 15, 0), local(2026, 10, 23, 10, 0)); r.Recidivist {
		t.Errorf("a fact before the decision's notice is a recidivism: %v", r.Explanation)
	}
	// A fact after the notice, within the appeal period (to 03/11: 01/11 a Sunday, 02/11
	// Finados): not a recidivism, an appeal may still change the fine.
	if r := issue("C", local(2026, 10, 23, 15, 0), local(2026, 10, 24, 10, 0)); r.Recidivist ||
		!strings.Contains(strings.Join(r.Explanation, " "), "prazo de recurso em curso até 03/11/2026") {
		t.Errorf("a fact within the appeal period is a recidivism: %v", r.Explanation)
	}
	// A timely appeal: not final while it is pending.
	act(t, db, p, first.ID, now, CaseAction{Action: ActionAppeal, Date: "2026-10-26"})
	r := issue("D", local(2026, 10, 28, 15, 0), local(2026, 10, 29, 10, 0))
	if r.Recidivist || !strings.Contains(strings.Join(r.Explanation, " "), "recurso interposto em 26/10/2026") {
		t.Errorf("a pending appeal counts: %v", r.Explanation)
	}
	admin := Actor{User: "admin", RemoteAddr: "192.0.2.3"}
	for _, a := range []CaseAction{{Action: ActionDecideAppeal, Outcome: OutcomeRejected, Text: "Recurso improvido.", Date: "2026-11-05"},
		{Action: ActionNotifyAppealDecision, Date: "2026-11-06"}} {
		if _, _, err := caseAct(ctx, db, first.ID, a, p, now, admin); err != nil {
			t.Fatal(err)
		}
	}
	// Final from the appeal's decision's notice (06/11), not from the first notice (22/10).
	if r := issue("E", local(2026, 11, 5, 15, 0), local(2026, 11, 9, 10, 0)); r.Recidivist {
		t.Errorf("a fact before the appeal's decision was notified is a recidivism: %v", r.Explanation)
	}
	if r := issue("F", local(2026, 11, 7, 15, 0), local(2026, 11, 9, 11, 0)); !relies(r) {
		t.Errorf("a fact after the appeal's decision was notified is not a recidivism: %+v", r)
	}
}
