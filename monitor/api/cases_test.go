package api_test

import (
	"bytes"
	"context"
	"crypto/ed25519"
	"crypto/rand"
	"encoding/json"
	"errors"
	"fmt"
	"github.com/trenzinho/trenzinho/internal/testkit/testenv"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/trenzinho/trenzinho/monitor/api"
	"github.com/trenzinho/trenzinho/monitor/cases"
	"github.com/trenzinho/trenzinho/monitor/drafts"
	"github.com/trenzinho/trenzinho/monitor/notice"
	"github.com/trenzinho/trenzinho/monitor/store"
	"github.com/trenzinho/trenzinho/profile"
	"github.com/trenzinho/trenzinho/registry"
	"github.com/trenzinho/trenzinho/wire"
)

var _ api.Cases = (*store.DB)(nil)

var piuma = func() *time.Location { l, _ := time.LoadLocation("America/Sao_Paulo"); return l }()

// at is a time in Piúma.
func at(y int, m time.Month, d, h int) time.Time { return time.Date(y, m, d, h, 0, 0, 0, piuma) }

// caseFixture is the API on a real store with the case workflow: the Piúma profile with a second
// UFMP value (R$ 4.41234 from 2027), the example registry (PIU-001 of L1; L2 with an
// alphanumeric CNPJ), a clock the test sets, and the notice PDF as the monitor renders it.
type caseFixture struct {
	*fixture
	key     ed25519.PrivateKey
	p       *profile.Profile
	mu      sync.Mutex
	clock   time.Time
	fiscal  string // tokens
	super   string
	auth    string // an autoridade who issued nothing
	sup     string // another autoridade, the superior authority who decides appeals
	viewer  string
	drafted int
	reg     *registry.Store
}

func newCaseFixture(t *testing.T) *caseFixture {
	t.Helper()
	return newCaseFixtureEdit(t, func(y string) string { return confirmUFMP(t, y) })
}

// newCaseFixtureEdit is newCaseFixture on the Piúma profile as edit changes it; extra may change
// the API's configuration further (reg is the fixture's registry).
func newCaseFixtureEdit(t *testing.T, edit func(string) string, extra ...func(c *api.Config, reg *registry.Store)) *caseFixture {
	t.Helper()
	y := strings.Replace(string(profile.PiumaYAML()), "    - {from: \"2026-01-01\", brl: \"4.2000\"",
		"    - {from: \"2027-01-01\", brl: \"4.41234\"}\n    - {from: \"2026-01-01\", brl: \"4.2000\"", 1)
	y = edit(testenv.CompetenceYAML(y))
	p, err := profile.Parse([]byte(y), "test.yaml")
	if err != nil || len(p.FiscalUnit.Values) != 2 {
		t.Fatalf("profile: %v", err)
	}
	src, err := os.ReadFile("../../registry/testdata/piuma-example.yaml")
	if err != nil {
		t.Fatal(err)
	}
	regPath := filepath.Join(t.TempDir(), "registry.yaml")
	if err := os.WriteFile(regPath, src, 0o600); err != nil {
		t.Fatal(err)
	}
	reg, err := registry.Open(regPath)
	if err != nil {
		t.Fatal(err)
	}
	reg.SetLocation(p.Location())
	_, key, _ := ed25519.GenerateKey(rand.Reader)
	cf := &caseFixture{key: key, p: p, reg: reg, clock: at(2026, 11, 29, 15)}
	cf.fixture = newFixture(t, func(c *api.Config) {
		db := c.Episodes.(*store.DB)
		c.Drafts, c.DraftKey = db, key.Public().(ed25519.PublicKey)
		c.Cases = &api.CasesConfig{Store: db, Profile: p, Registry: reg, Now: cf.now}
		// As monitor/serve.go renders it.
		c.RenderPDF = func(w io.Writer, d *store.DraftRecord) error {
			in := notice.Input{Sealed: d.Sealed, Profile: p, Addenda: len(d.Addenda),
				Decision: notice.Decision{Status: d.Status, Notice: d.Notice, DecidedBy: d.DecidedBy, Reason: d.Reason}}
			if d.DecidedAt != nil {
				t := d.DecidedAt.Time
				in.Decision.DecidedAt = &t
			}
			c, err := db.CaseByDraft(context.Background(), d.Sealed.ID)
			switch {
			case errors.Is(err, store.ErrNotFound):
			case err != nil:
				return err
			default:
				if c.Assessment != nil {
					in.Penalty = notice.PenaltyOf(c.Assessment, c.Licensee, c.Issued, p.Location())
				}
				in.Decision.HandedOver = c.HandedOverAtIssue(p.Location())
				if a := c.IssuerAgent; a != nil {
					in.Decision.Agent = &notice.Agent{FullName: a.FullName, Matricula: a.Matricula, Cargo: a.Cargo}
				}
				for _, dev := range c.Instruments {
					in.Verified = append(in.Verified, notice.DeviceOf(dev))
				}
			}
			return notice.Render(w, in)
		}
		for _, x := range extra {
			x(c, reg)
		}
	})
	ctx := context.Background()
	for _, u := range []struct {
		name string
		role store.Role
	}{{"joao", store.RoleFiscal}, {"sandra", store.RoleSupervisor}, {"carla", store.RoleAutoridade}, {"sofia", store.RoleAutoridade}} {
		if _, err := cf.db.CreateUser(ctx, u.name, "senha-de-"+u.name, u.role); err != nil {
			t.Fatal(err)
		}
	}
	setAgent(t, cf.db, "joao", "João Batista Moreira", "FP-0042", "Agente de Fiscalização de Posturas")
	_, cf.fiscal = cf.login("joao", "senha-de-joao")
	_, cf.super = cf.login("sandra", "senha-de-sandra")
	_, cf.auth = cf.login("carla", "senha-de-carla")
	_, cf.sup = cf.login("sofia", "senha-de-sofia")
	_, cf.viewer = cf.login("maria", viewerPassword)
	return cf
}

// confirmUFMP is a profile whose UFMP value is confirmed (the Piúma profile ships it
// illustrative, and no auto can be issued on it).
func confirmUFMP(t *testing.T, y string) string {
	t.Helper()
	out := strings.Replace(y, "  confirmed_by: \"\"\n  act: \"\"", "  confirmed_by: Secretaria Municipal de Fazenda (teste)\n  act: Decreto nº 999/2025 (teste)", 1)
	if out == y {
		t.Fatal("confirmUFMP: profile unchanged")
	}
	return out
}

// setAgent records an agent's full name, matrícula and cargo: issuing requires them.
func setAgent(t *testing.T, db *store.DB, user, name, matricula, cargo string) {
	t.Helper()
	if err := db.SetAgent(context.Background(), user, store.Agent{FullName: name, Matricula: matricula, Cargo: cargo}); err != nil {
		t.Fatal(err)
	}
}

func (cf *caseFixture) now() time.Time { cf.mu.Lock(); defer cf.mu.Unlock(); return cf.clock }

func (cf *caseFixture) setClock(t time.Time) { cf.mu.Lock(); cf.clock = t; cf.mu.Unlock() }

// draft seals a draft of one fact of rule (speed or hours) of the vehicle and licensee at start.
func (cf *caseFixture) draft(t *testing.T, vehicle, licensee, rule string, start time.Time) string {
	t.Helper()
	cf.drafted++
	r := cf.p.Rules[rule]
	id := fmt.Sprintf("%s.%s.%d", vehicle, rule, cf.drafted)
	s, e := wire.NewTime(start), wire.NewTime(start.Add(40*time.Second))
	d := drafts.Draft{ID: id, EpisodeIDs: []string{id + ".ep"}, Vehicle: vehicle, Licensee: licensee, Unregistered: licensee == "",
		Rules: []string{rule}, Articles: []string{r.Article}, Penalty: r.Penalty, FineUFMP: r.FineUFMP, FiscalUnit: "UFMP",
		Start: s, End: e, Municipality: "Piúma-ES", FiscalOrgan: cf.p.FiscalOrgan, Law: cf.p.Law.Name, CreatedAt: e,
		Software: "test", ProfileID: "piuma", ProfileVer: cf.p.Version,
		Facts: []drafts.Fact{{EpisodeID: id + ".ep", Rule: rule, Article: r.Article, LegalText: r.Text, Description: "Fato de teste.",
			Start: s, End: e, DurationS: 40, Peak: 45, Unit: "km/h", Limit: 37, Source: "tacho"}}}
	d.Registry = cf.snapshot(vehicle, licensee)
	drafts.SealInstruments(&d)
	return cf.seal(t, d)
}

// snapshot is the registry's record of the vehicle and licensee as the drafter seals it in a
// draft; nil when the vehicle or the licensee is not in the registry.
func (cf *caseFixture) snapshot(vehicle, licensee string) *drafts.Registered {
	v, ok := cf.reg.Vehicle(vehicle)
	if !ok || licensee == "" {
		return nil
	}
	r := &drafts.Registered{Licensee: licensee, Plate: v.Plate}
	for _, dev := range v.Devices {
		r.Devices = append(r.Devices, drafts.Device{Kind: string(dev.Kind), Serial: dev.Serial, Model: dev.Model,
			INMETROVerification: dev.INMETROVerification.String(), Calibration: dev.Calibration.String(), ValidUntil: dev.ValidUntil.String()})
	}
	if l, ok := cf.reg.Licensee(licensee); ok {
		r.RazaoSocial, r.CNPJ, r.Address = l.RazaoSocial, l.CNPJ, l.Address
	}
	return r
}

// seal stores d sealed at the head of the chain and returns its id.
func (cf *caseFixture) seal(t *testing.T, d drafts.Draft) string {
	t.Helper()
	ctx := context.Background()
	id := d.ID
	b, err := json.Marshal(drafts.Bundle{Format: drafts.BundleFormat, Draft: d, Batches: []drafts.RawBatch{}})
	if err != nil {
		t.Fatal(err)
	}
	seq, prev, err := cf.db.ChainHead(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if err := cf.db.InsertDraft(ctx, drafts.Seal(id, seq+1, b, prev, cf.key), &d); err != nil {
		t.Fatal(err)
	}
	return id
}

// issue issues a draft at the time when through the decision route and returns the answer.
func (cf *caseFixture) issue(t *testing.T, id string, when time.Time) api.DecisionAnswer {
	t.Helper()
	cf.setClock(when)
	code, body, _ := cf.do("POST", "/api/v1/drafts/"+id+"/decision", map[string]string{"decision": "issue"}, session{bearer: cf.fiscal})
	var ans api.DecisionAnswer
	if code != http.StatusOK || json.Unmarshal(body, &ans) != nil || ans.Case == nil || ans.Case.Assessment == nil {
		t.Fatalf("issue %s: %d %s", id, code, body)
	}
	return ans
}

// act posts an act on a draft's case and returns the status and the case or error.
func (cf *caseFixture) act(t *testing.T, draftID string, a map[string]any) (int, api.CaseView, []byte) {
	t.Helper()
	// The acts that decide are the autoridade's (who issued none of the fixture's autos).
	token := cf.fiscal
	if act, _ := a["action"].(string); cases.NeedsAuthority(act) {
		token = cf.auth
	}
	code, body, _ := cf.do("POST", "/api/v1/drafts/"+draftID+"/case", cf.proven(t, draftID, a), session{bearer: token})
	var v api.CaseView
	if code == http.StatusOK {
		if err := json.Unmarshal(body, &v); err != nil {
			t.Fatal(err)
		}
	}
	return code, v, body
}

func (cf *caseFixture) mustAct(t *testing.T, draftID string, a map[string]any) api.CaseView {
	t.Helper()
	code, v, body := cf.act(t, draftID, a)
	if code != http.StatusOK {
		t.Fatalf("%v: %d %s", a, code, body)
	}
	return v
}

func (cf *caseFixture) getDraft(t *testing.T, id string) api.DraftView {
	t.Helper()
	code, body, _ := cf.do("GET", "/api/v1/drafts/"+id, nil, session{bearer: cf.fiscal})
	var v api.DraftView
	if code != http.StatusOK || json.Unmarshal(body, &v) != nil {
		t.Fatalf("get %s: %d %s", id, code, body)
	}
	return v
}

func TestCaseWorkflowThroughTheAPI(t *testing.T) {
	cf := newCaseFixture(t)
	id := cf.draft(t, "PIU-001", "L1", "speed", at(2026, 10, 1, 15))

	// A draft not issued has no process yet.
	if code, _, body := cf.act(t, id, map[string]any{"action": "notify", "mode": "in_person", "date": "2026-10-05"}); code != http.StatusConflict ||
		!strings.Contains(errorMessage(t, body), "ainda não foi emitida") {
		t.Errorf("act on a draft: %d %s", code, body)
	}
	ans := cf.issue(t, id, at(2026, 10, 2, 10))
	c := ans.Case
	if ans.Status != drafts.StatusIssued || ans.Notice != "AI-2026/0001" || c.Notice != "AI-2026/0001" || c.State != "issued" ||
		c.Assessment.TotalBRL != "1680.00" || c.Assessment.Recidivist || c.Deadline != nil || strings.Join(c.Allowed, ",") != "delivery_failed,notify,annul" {
		t.Fatalf("issue answer: %+v", ans)
	}
	// The sealed draft did not change: its integrity is still ok.
	if v := cf.getDraft(t, id); v.Integrity != "ok" || v.Case == nil || v.Case.Assessment.TotalBRL != "1680.00" {
		t.Fatalf("draft after issue: %s %+v", v.Integrity, v.Case)
	}
	// A viewer may not act.
	if code, _, _ := cf.do("POST", "/api/v1/drafts/"+id+"/case", map[string]any{"action": "notify", "mode": "mail", "date": "2026-10-05"}, session{bearer: cf.viewer}); code != http.StatusForbidden {
		t.Errorf("viewer acted: %d", code)
	}

	cf.setClock(at(2026, 11, 29, 15))
	v := cf.mustAct(t, id, map[string]any{"action": "notify", "mode": "mail", "date": "2026-10-05", "note": "AR nº JT123"})
	if v.State != "notified" || v.Deadline == nil || v.Deadline.Date != "2026-10-15" || !strings.Contains(v.Deadline.Explanation, "recebimento do auto pelo correio") {
		t.Fatalf("notified: %+v", v)
	}
	v = cf.mustAct(t, id, map[string]any{"action": "defence", "date": "2026-10-15"})
	if v.State != "defence_filed" || v.DefenceTimely == nil || !*v.DefenceTimely || !v.FineSuspended.Suspended ||
		!strings.Contains(v.FineSuspended.Explanation, "Art. 57") {
		t.Fatalf("defence: %+v", v)
	}
	v = cf.mustAct(t, id, map[string]any{"action": "decide", "outcome": "rejected", "date": "2026-10-30", "text": "Defesa indeferida: medição do tacógrafo aferido."})
	if v.State != "confirmed" || v.Decided != "2026-10-30" || v.FineSuspended.Suspended {
		t.Fatalf("decided: %+v", v)
	}
	v = cf.mustAct(t, id, map[string]any{"action": "pay", "date": "2026-11-10"})
	if v.State != "paid" || v.Paid != "2026-11-10" || len(v.Events) != 5 || v.Events[0].Action != "issue" || v.Events[4].User != "joao" {
		t.Fatalf("paid: %+v", v)
	}
	// The same case by its id and in the lists.
	code, body, _ := cf.do("GET", fmt.Sprintf("/api/v1/cases/%d", v.ID), nil, session{bearer: cf.viewer})
	if code != http.StatusOK || !strings.Contains(string(body), `"state":"paid"`) {
		t.Errorf("case by id: %d %s", code, body)
	}
	var list struct{ Items []api.CaseView }
	code, body, _ = cf.do("GET", "/api/v1/cases?state=paid", nil, session{bearer: cf.viewer})
	if code != http.StatusOK || json.Unmarshal(body, &list) != nil || len(list.Items) != 1 || list.Items[0].Notice != "AI-2026/0001" {
		t.Errorf("cases?state=paid: %d %s", code, body)
	}
	if code, _, _ := cf.do("GET", "/api/v1/cases?state=lost", nil, session{bearer: cf.viewer}); code != http.StatusBadRequest {
		t.Errorf("cases?state=lost: %d", code)
	}

	// Every step is in the audit log, with the case before and after.
	entries, _, err := cf.db.ListAudit(context.Background(), store.AuditFilter{Object: "case:AI-2026/0001"}, 100, "")
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, e := range entries {
		got = append(got, e.Action)
		if e.Action == cases.AuditCaseAttachment { // the AR's scan: a document, not a transition
			continue
		}
		var before, after struct {
			State string          `json:"state"`
			Event json.RawMessage `json:"event"`
		}
		json.Unmarshal(e.After, &after)
		user := "joao"
		if cases.NeedsAuthority(strings.TrimPrefix(e.Action, "case.")) {
			user = "carla"
		}
		if e.User != user || after.State == "" || len(after.Event) == 0 {
			t.Errorf("%s: user %q after %s", e.Action, e.User, e.After)
		}
		if e.Action != "case.issue" && (json.Unmarshal(e.Before, &before) != nil || before.State == "" || before.State == after.State && e.Action != "case.suspension") {
			t.Errorf("%s: before %s after %s", e.Action, e.Before, e.After)
		}
	}
	if strings.Join(got, " ") != "case.pay case.decide case.defence case.notify case.attachment case.issue" {
		t.Errorf("audit %v", got)
	}
	if entries, _, _ := cf.db.ListAudit(context.Background(), store.AuditFilter{Action: "draft.issue"}, 10, ""); len(entries) != 1 {
		t.Errorf("draft.issue audited %d times", len(entries))
	}
}

func TestCaseInvalidTransitionsThroughTheAPI(t *testing.T) {
	cf := newCaseFixture(t)
	id := cf.draft(t, "PIU-001", "L1", "speed", at(2026, 10, 1, 15))
	cf.issue(t, id, at(2026, 10, 2, 10))
	cf.setClock(at(2026, 11, 29, 15))
	check := func(a map[string]any, want int, msg string) {
		t.Helper()
		code, _, body := cf.act(t, id, a)
		if code != want || !strings.Contains(errorMessage(t, body), msg) {
			t.Errorf("%v: %d %s, want %d %q", a, code, body, want, msg)
		}
	}
	// Issued: only the notification (or a suspension) comes next.
	check(map[string]any{"action": "defence", "date": "2026-10-10"}, 409, "não é possível registrar a defesa: o auto AI-2026/0001 está emitido, ainda não notificado")
	check(map[string]any{"action": "decide", "outcome": "rejected", "date": "2026-10-10", "text": "Indeferida."}, 409, "não é possível registrar a decisão")
	check(map[string]any{"action": "pay", "date": "2026-10-10"}, 409, "não é possível registrar o pagamento")
	check(map[string]any{"action": "divida_ativa", "date": "2026-10-10"}, 409, "não é possível inscrever a multa em dívida ativa")
	check(map[string]any{"action": "notify", "mode": "in_person", "date": "2026-12-01"}, 400, "é futura")
	check(map[string]any{"action": "notify", "mode": "in_person", "date": "2026-09-30"}, 409, "anterior à emissão do auto (02/10/2026)")
	check(map[string]any{"action": "recurso"}, 400, "ação desconhecida")
	if code, _, body := cf.act(t, id, map[string]any{"action": "notify", "when": "ontem"}); code != 400 || !strings.Contains(errorMessage(t, body), "campo desconhecido") {
		t.Errorf("unknown field: %d %s", code, body)
	}
	cf.mustAct(t, id, map[string]any{"action": "notify", "mode": "in_person", "date": "2026-10-05"})
	check(map[string]any{"action": "notify", "mode": "in_person", "date": "2026-10-06"}, 409, "está notificado")
	check(map[string]any{"action": "decide", "outcome": "accepted", "date": "2026-10-10", "text": "Acolhida."}, 409, "à revelia em 10/10/2026: o prazo de defesa")
	check(map[string]any{"action": "divida_ativa", "date": "2026-10-15"}, 409, "só é exigível depois da decisão")
	check(map[string]any{"action": "defence", "date": "2026-10-04"}, 409, "anterior à notificação (05/10/2026)")
	cf.mustAct(t, id, map[string]any{"action": "defence", "date": "2026-10-09"})
	check(map[string]any{"action": "divida_ativa", "date": "2026-10-20"}, 409, "Art. 57")
	check(map[string]any{"action": "defence", "date": "2026-10-10"}, 409, "com defesa pendente de decisão")
	check(map[string]any{"action": "decide", "outcome": "accepted", "date": "2026-10-08", "text": "Acolhida."}, 409, "anterior à apresentação da defesa")
	check(map[string]any{"action": "decide", "outcome": "talvez", "date": "2026-10-10", "text": "Acolhida."}, 400, "outcome")
	v := cf.mustAct(t, id, map[string]any{"action": "decide", "outcome": "accepted", "date": "2026-10-20", "text": "Defesa acolhida: o tacógrafo estava sem aferição."})
	if v.State != "defence_accepted" || len(v.Allowed) != 0 {
		t.Fatalf("accepted: %+v", v)
	}
	// A notice whose defence was accepted has no effect: nothing more.
	for _, a := range []string{"notify", "defence", "decide", "pay", "divida_ativa"} {
		check(map[string]any{"action": a, "date": "2026-11-01", "mode": "mail", "outcome": "rejected", "text": "Indeferida."}, 409, "com defesa acolhida (auto sem efeito)")
	}
	check(map[string]any{"action": "suspension", "from": "2026-11-01", "days": 10}, 409, "auto sem efeito")
	// Unknown case, unknown draft.
	if code, _, _ := cf.do("POST", "/api/v1/cases/999/actions", map[string]any{"action": "pay", "date": "2026-11-01"}, session{bearer: cf.fiscal}); code != 404 {
		t.Errorf("unknown case: %d", code)
	}
	if code, _, _ := cf.do("POST", "/api/v1/drafts/nope/case", map[string]any{"action": "pay", "date": "2026-11-01"}, session{bearer: cf.fiscal}); code != 404 {
		t.Errorf("unknown draft: %d", code)
	}
	// A dismissed draft has no process.
	other := cf.draft(t, "PIU-001", "L1", "speed", at(2026, 10, 3, 15))
	if code, body, _ := cf.do("POST", "/api/v1/drafts/"+other+"/decision", map[string]string{"decision": "dismiss", "reason": "GPS com sinal ruim."}, session{bearer: cf.fiscal}); code != 200 || strings.Contains(string(body), `"case"`) {
		t.Fatalf("dismiss: %d %s", code, body)
	}
	if code, _, body := cf.act(t, other, map[string]any{"action": "notify", "mode": "mail", "date": "2026-10-05"}); code != 409 || !strings.Contains(errorMessage(t, body), "arquivada") {
		t.Errorf("act on a dismissed draft: %d %s", code, body)
	}
}

func TestDefenceDeadlinesThroughTheAPI(t *testing.T) {
	cf := newCaseFixture(t)
	weekend := cf.draft(t, "PIU-001", "L1", "speed", at(2026, 11, 4, 15))
	holiday := cf.draft(t, "PIU-001", "L1", "speed", at(2026, 11, 4, 16))
	edital := cf.draft(t, "PIU-001", "L1", "speed", at(2026, 11, 4, 17))
	for _, id := range []string{weekend, holiday, edital} {
		cf.issue(t, id, at(2026, 11, 5, 10))
	}
	cf.setClock(at(2026, 11, 29, 15))

	// Handed over on Thursday 12 November: day 10 is Sunday the 22nd → Monday the 23rd.
	v := cf.mustAct(t, weekend, map[string]any{"action": "notify", "mode": "in_person", "date": "2026-11-12", "refused_to_sign": true})
	if v.Deadline == nil || v.Deadline.Date != "2026-11-23" || !strings.Contains(v.Deadline.Explanation, "22/11/2026 (domingo)") ||
		!strings.Contains(v.Deadline.Explanation, "23/11/2026 (segunda-feira)") || !strings.Contains(v.Deadline.Explanation, "Art. 54, § 2º") || !v.RefusedToSign {
		t.Errorf("weekend: %+v", v.Deadline)
	}
	// Received by post on Tuesday 10 November: day 10 is Friday the 20th, a national holiday → Monday the 23rd.
	v = cf.mustAct(t, holiday, map[string]any{"action": "notify", "mode": "mail", "date": "2026-11-10"})
	if v.Deadline == nil || v.Deadline.Date != "2026-11-23" ||
		!strings.Contains(v.Deadline.Explanation, "20/11/2026 (sexta-feira, feriado: Dia Nacional de Zumbi e da Consciência Negra)") {
		t.Errorf("holiday: %+v", v.Deadline)
	}
	// A defence on the last day is timely and suspends the fine; one the day after is not.
	v = cf.mustAct(t, holiday, map[string]any{"action": "defence", "date": "2026-11-23"})
	if v.DefenceTimely == nil || !*v.DefenceTimely || !v.FineSuspended.Suspended {
		t.Errorf("defence on the last day: timely %v, suspended %+v", v.DefenceTimely, v.FineSuspended)
	}
	v = cf.mustAct(t, weekend, map[string]any{"action": "defence", "date": "2026-11-24"})
	if v.DefenceTimely == nil || *v.DefenceTimely || v.FineSuspended.Suspended || !strings.Contains(v.FineSuspended.Explanation, "após o prazo") {
		t.Errorf("late defence: timely %v, suspended %+v", v.DefenceTimely, v.FineSuspended)
	}
	// By edital published on Tuesday 1 December: counted from the publication → Friday the 11th.
	// Art. 54, § 1º: only after the failed attempts to deliver it (two).
	code, _, body := cf.act(t, edital, map[string]any{"action": "notify", "mode": "edital", "published": "2026-11-30"})
	if code != http.StatusConflict || !strings.Contains(errorMessage(t, body), "Art. 54, § 1º") {
		t.Errorf("edital without failed attempts: %d %s", code, body)
	}
	cf.mustAct(t, edital, map[string]any{"action": "delivery_failed", "mode": "in_person", "date": "2026-11-20", "text": "Sede fechada; vizinhos não conhecem o prestador."})
	cf.mustAct(t, edital, map[string]any{"action": "delivery_failed", "mode": "mail", "date": "2026-11-25", "text": "AR devolvido: endereço insuficiente."})
	code, _, body = cf.act(t, edital, map[string]any{"action": "notify", "mode": "edital", "published": "2026-12-01"})
	if code != 400 || !strings.Contains(errorMessage(t, body), "é futura") {
		t.Errorf("edital in the future: %d %s", code, body)
	}
	cf.setClock(at(2026, 12, 15, 10))
	v = cf.mustAct(t, edital, map[string]any{"action": "notify", "mode": "edital", "published": "2026-12-01"})
	if v.Deadline == nil || v.Deadline.Date != "2026-12-11" || !strings.Contains(v.Deadline.Explanation, "da publicação do edital em 01/12/2026") ||
		v.Notified != "2026-12-01" || v.Published != "2026-12-01" {
		t.Errorf("edital: %+v %+v", v.CaseStatus, v.Deadline)
	}
	// The period ran out without a defence: not dívida ativa yet (Art. 51), but a decision à
	// revelia, its notification, and the payment period first.
	if code, _, body := cf.act(t, edital, map[string]any{"action": "divida_ativa", "date": "2026-12-14"}); code != http.StatusConflict {
		t.Errorf("dívida ativa right after the defence period: %d %s", code, body)
	}
	v = cf.mustAct(t, edital, map[string]any{"action": "decide", "outcome": "rejected", "date": "2026-12-14", "text": "Julgamento à revelia: auto mantido."})
	if v.State != "confirmed" || !strings.Contains(string(v.Events[len(v.Events)-1].Data), `"revelia":true`) {
		t.Errorf("revelia: %+v", v.CaseStatus)
	}
	v = cf.mustAct(t, edital, map[string]any{"action": "notify_decision", "date": "2026-12-15"})
	cf.setClock(at(2027, 1, 20, 10))
	if code, _, body := cf.act(t, edital, map[string]any{"action": "divida_ativa", "date": "2027-01-14"}); code != http.StatusConflict || !strings.Contains(errorMessage(t, body), "termina em 14/01/2027") {
		t.Errorf("dívida ativa within the payment period: %d %s", code, body)
	}
	v = cf.mustAct(t, edital, map[string]any{"action": "divida_ativa", "date": "2027-01-15"})
	if v.State != "dividaativa" {
		t.Errorf("dívida ativa: %+v", v.CaseStatus)
	}
}

func TestRecidivismAtIssue(t *testing.T) {
	cf := newCaseFixture(t)
	// L1 was fined for speeding (Art. 23): notified on 3 September, no defence by 14 September
	// (day 10 is Sunday the 13th), judged à revelia on the 15th and notified of it on the 16th:
	// final from the 16th.
	first := cf.draft(t, "PIU-001", "L1", "speed", at(2026, 9, 1, 15))
	cf.issue(t, first, at(2026, 9, 2, 10))
	cf.setClock(at(2026, 9, 3, 18))
	cf.mustAct(t, first, map[string]any{"action": "notify", "mode": "in_person", "date": "2026-09-03"})
	cf.setClock(at(2026, 9, 16, 18))
	cf.mustAct(t, first, map[string]any{"action": "decide", "outcome": "rejected", "date": "2026-09-15", "text": "Julgado à revelia: multa confirmada."})
	cf.mustAct(t, first, map[string]any{"action": "notify_decision", "date": "2026-09-16"})
	// A speeding draft dismissed by the agent, and a paper notice of L1 for Art. 23 that was
	// dismissed (arquivado): neither counts.
	dismissed := cf.draft(t, "PIU-001", "L1", "speed", at(2026, 9, 5, 15))
	if code, body, _ := cf.do("POST", "/api/v1/drafts/"+dismissed+"/decision", map[string]string{"decision": "dismiss", "reason": "Velocidade do GPS sem fixação."}, session{bearer: cf.fiscal}); code != 200 {
		t.Fatalf("dismiss: %d %s", code, body)
	}
	cf.setClock(at(2026, 9, 20, 10))
	code, body, _ := cf.do("POST", "/api/v1/notices/import", []map[string]any{{
		"number": "0031/2026", "offence_date": "2026-08-01", "issue_date": "2026-08-02", "licensee": "L1",
		"articles": []string{"Art. 23"}, "penalty": "Art. 46, X", "status": "dismissed", "notified_date": "2026-08-03", "notified_mode": "in_person",
	}}, session{bearer: cf.super})
	if code != http.StatusCreated {
		t.Fatalf("import: %d %s", code, body)
	}

	// A new speeding fact on 1 October, issued on the 2nd: specific recidivism.
	second := cf.draft(t, "PIU-001", "L1", "speed", at(2026, 10, 1, 15))
	ans := cf.issue(t, second, at(2026, 10, 2, 10))
	a := ans.Case.Assessment
	if !a.Recidivist || a.TotalUFMP != 800 || a.TotalBRL != "3360.00" || len(a.RelyingOn) != 1 || a.RelyingOn[0].ID != "AI-2026/0001" {
		t.Fatalf("recidivism: %+v", a)
	}
	if s := a.SuspensionRecommended; s == nil || s.MinDays != 10 || s.MaxDays != 45 || !strings.Contains(s.Reason, "AI-2026/0001") {
		t.Fatalf("suspension recommendation: %+v", s)
	}
	expl := strings.Join(a.Explanation, "\n")
	if !strings.Contains(expl, "o auto 0031/2026 (fato de 01/08/2026) não conta: foi arquivado") || strings.Contains(expl, dismissed) {
		t.Errorf("explanation:\n%s", expl)
	}
	if a.CassacaoRecommended != nil {
		t.Error("cassação without suspensions")
	}

	// The PDF of the issued notice: the fine in R$, the recidivism and the notice relied on.
	code, pdf, hdr := cf.do("GET", "/api/v1/drafts/"+second+"/pdf", nil, session{bearer: cf.fiscal})
	if code != http.StatusOK || hdr.Get("Content-Type") != "application/pdf" {
		t.Fatalf("pdf: %d %s", code, pdf)
	}
	text := pdfText(t, pdf)
	for _, want := range []string{"AUTO DE INFRAÇÃO Nº AI-2026/0002", "800 UFMP = R$ 3.360,00", "1 UFMP = R$ 4,20 em 02/10/2026",
		"Reincidência (Art. 48)", "Sim (Art. 48): multa aplicada em dobro", "auto nº AI-2026/0001 (fato de 01/09/2026, emitido em 02/09/2026)"} {
		if !strings.Contains(flat(text), want) {
			t.Errorf("the PDF does not say %q", want)
		}
	}
	// The suspension recommendation is the review's (the case view), never the issued auto's.
	if strings.Contains(flat(text), "suspensão da licença por 10 a 45 dias") {
		t.Error("the issued auto prints the recommendation to the agent")
	}
	if t.Failed() {
		t.Log(text)
	}

	// Suspensions applied within 12 months: one on a paper notice of March (imported), then one
	// on the second notice; the next issue recommends the cassação (Art. 53, III). A suspension
	// needs the specific recidivism found at issue (Art. 52): not on the first notice.
	cf.setClock(at(2026, 11, 29, 15))
	if code, _, body := cf.act(t, first, map[string]any{"action": "suspension", "from": "2026-10-05", "days": 10}); code != http.StatusConflict ||
		!strings.Contains(errorMessage(t, body), "reincidência específica") {
		t.Errorf("suspension on a first offence: %d %s", code, body)
	}
	if code, body, _ := cf.do("POST", "/api/v1/notices/import", []map[string]any{{
		"number": "0012/2026", "offence_date": "2026-03-01", "issue_date": "2026-03-02", "licensee": "L1",
		"articles": []string{"Art. 26"}, "penalty": "Art. 46, II", "status": "paid", "notified_date": "2026-03-03", "notified_mode": "in_person",
		"paid_date": "2026-03-10", "suspension_from": "2026-03-20", "suspension_days": 10,
	}}, session{bearer: cf.super}); code != http.StatusCreated {
		t.Fatalf("import: %d %s", code, body)
	}
	third := cf.draft(t, "PIU-002", "L1", "hours", at(2026, 11, 1, 23))
	if a := cf.issue(t, third, at(2026, 11, 2, 10)).Case.Assessment; a.CassacaoRecommended != nil || a.Recidivist {
		t.Errorf("one suspension: %+v", a)
	}
	cf.setClock(at(2026, 11, 29, 15))
	if code, _, body := cf.act(t, second, map[string]any{"action": "suspension", "from": "2026-11-10", "to": "2026-11-24"}); code != http.StatusConflict {
		t.Errorf("suspension before notification: %d %s", code, body)
	}
	cf.mustAct(t, second, map[string]any{"action": "notify", "mode": "in_person", "date": "2026-10-05"}) // defence to 15/10
	cf.mustAct(t, second, map[string]any{"action": "decide", "outcome": "rejected", "date": "2026-10-16", "text": "Julgado à revelia: multa confirmada."})
	// The suspension needs the decision notified (final from its notification).
	if code, _, body := cf.act(t, second, map[string]any{"action": "suspension", "from": "2026-11-10", "to": "2026-11-24"}); code != http.StatusConflict ||
		!strings.Contains(errorMessage(t, body), "ainda não foi notificada") {
		t.Errorf("suspension before the decision's notice: %d %s", code, body)
	}
	cf.mustAct(t, second, map[string]any{"action": "notify_decision", "date": "2026-10-19"})
	cf.mustAct(t, second, map[string]any{"action": "suspension", "from": "2026-11-10", "to": "2026-11-24"})
	fourth := cf.draft(t, "PIU-002", "L1", "hours", at(2026, 11, 27, 23))
	a = cf.issue(t, fourth, at(2026, 11, 28, 10)).Case.Assessment
	if c := a.CassacaoRecommended; c == nil || len(c.Suspensions) != 2 || !strings.Contains(c.Reason, "AI-2026/0002") || !strings.Contains(c.Reason, "não é automática") {
		t.Fatalf("cassação: %+v", a.CassacaoRecommended)
	}
}

// An earlier paper notice, imported by CNPJ, makes the next fact a recidivism.
func TestImportedNoticeCounts(t *testing.T) {
	cf := newCaseFixture(t)
	cf.setClock(at(2026, 11, 29, 15))
	csvBody := "number;offence_date;issue_date;licensee_cnpj;licensee_name;articles;penalty;status;notified_date;notified_mode;paid_date\n" +
		"PM-118/2025;2025-12-20;2025-12-21;12.ABC.345/01DE-35;Passeios Ilha do Gambá;Art. 29;Art. 47;paid;2025-12-22;in_person;2026-01-05\n" +
		"PM-119/2025;2025-12-27;2025-12-28;12ABC34501DE35;;Art. 23;Art. 46, X;notified;;;\n"
	// A viewer or a fiscal may not import; a supervisor may.
	if code, _, _ := cf.do("POST", "/api/v1/notices/import", csvBody, session{bearer: cf.fiscal}, "Content-Type", "text/csv"); code != http.StatusForbidden {
		t.Errorf("fiscal imported: %d", code)
	}
	code, body, _ := cf.do("POST", "/api/v1/notices/import", csvBody, session{bearer: cf.super}, "Content-Type", "text/csv; charset=utf-8")
	var imported struct{ Items []api.CaseView }
	if code != http.StatusCreated || json.Unmarshal(body, &imported) != nil || len(imported.Items) != 2 {
		t.Fatalf("import: %d %s", code, body)
	}
	if it := imported.Items[0]; it.Notice != "PM-118/2025" || it.Licensee != "L2" || it.State != "paid" || it.Origin != "import" ||
		it.LicenseeName != "Passeios Ilha do Gambá" || it.Assessment != nil || it.AssessmentNote == "" {
		t.Errorf("imported: %+v", it)
	}
	// Importing it again: the number is taken; a bad row names itself; nothing is half imported.
	if code, body, _ := cf.do("POST", "/api/v1/notices/import", csvBody, session{bearer: cf.super}, "Content-Type", "text/csv"); code != http.StatusConflict ||
		!strings.Contains(errorMessage(t, body), "PM-118/2025") {
		t.Errorf("import twice: %d %s", code, body)
	}
	for _, bad := range []struct{ row, msg string }{
		{`{"number":"X1","offence_date":"2026-01-02","issue_date":"2026-01-01","licensee":"L2","articles":["Art. 29"],"penalty":"Art. 47","status":"paid"}`, "a emissão é anterior à infração"},
		{`{"number":"X1","offence_date":"2026-01-02","issue_date":"2026-01-03","licensee":"L9","articles":["Art. 29"],"penalty":"Art. 47","status":"paid"}`, "L9 não encontrado no cadastro"},
		{`{"number":"X1","offence_date":"2026-01-02","issue_date":"2026-01-03","licensee":"L2","articles":["Art. 29"],"penalty":"Art. 47","status":"lost"}`, "situação (status) inválida"},
		{`{"number":"X1","offence_date":"2026-01-02","issue_date":"2027-01-03","licensee":"L2","articles":["Art. 29"],"penalty":"Art. 47","status":"paid"}`, "(03/01/2027) é futura"},
	} {
		code, body, _ := cf.do("POST", "/api/v1/notices/import", `{"notices":[`+bad.row+`]}`, session{bearer: cf.super})
		if code != http.StatusBadRequest || !strings.Contains(errorMessage(t, body), "auto 1 (X1): ") || !strings.Contains(errorMessage(t, body), bad.msg) {
			t.Errorf("bad row: %d %s, want %q", code, body, bad.msg)
		}
	}
	var notices struct{ Items []api.CaseView }
	code, body, _ = cf.do("GET", "/api/v1/notices?origin=import", nil, session{bearer: cf.viewer})
	if code != http.StatusOK || json.Unmarshal(body, &notices) != nil || len(notices.Items) != 2 {
		t.Errorf("notices: %d %s", code, body)
	}

	// L2 runs outside the hours again (Art. 29): the paid paper notice makes it a recidivism;
	// the one only notified, with its deadline unknown, does not count (and is another precept).
	id := cf.draft(t, "PIU-003", "L2", "hours", at(2026, 11, 27, 23))
	a := cf.issue(t, id, at(2026, 11, 28, 10)).Case.Assessment
	if !a.Recidivist || a.TotalUFMP != 500 || a.TotalBRL != "2100.00" || len(a.RelyingOn) != 1 || a.RelyingOn[0].ID != "PM-118/2025" {
		t.Fatalf("recidivism from an imported notice: %+v", a)
	}
}

// The fine in R$ at the value of the UFMP on the day of issue (Art. 44), in Piúma's time zone.
func TestFineInReaisAtTheIssueDate(t *testing.T) {
	cf := newCaseFixture(t)
	cases := []struct {
		issue time.Time
		brl   string
		unit  string
		num   string
	}{
		{at(2026, 12, 31, 10), "1680.00", "4.2000", "AI-2026/0001"},
		{time.Date(2027, 1, 1, 1, 30, 0, 0, time.UTC), "1680.00", "4.2000", "AI-2026/0002"}, // still 31 December in Piúma
		{at(2027, 1, 2, 10), "1764.94", "4.41234", "AI-2027/0001"},                          // 400 × 4.41234 = 1764.936
	}
	for _, c := range cases {
		// (An unregistered vehicle can no longer be issued: licensee_unidentified.) The earlier
		// fines are not final, so none of them is a repeat.
		id := cf.draft(t, "PIU-001", "L1", "speed", at(2026, 12, 30, 15))
		ans := cf.issue(t, id, c.issue)
		a := ans.Case.Assessment
		if a.TotalBRL != c.brl || a.UnitValueBRL != c.unit || ans.Notice != c.num || a.Recidivist {
			t.Errorf("issued %s: %s at %s, number %s", c.issue, a.TotalBRL, a.UnitValueBRL, ans.Notice)
		}
	}
}

func TestManualNotice(t *testing.T) {
	cf := newCaseFixture(t)
	cf.setClock(at(2026, 11, 29, 15))
	req := map[string]any{"vehicle": "PIU-001", "infractions": []string{"art16"}, "at": "2026-11-28T16:40:00-03:00",
		"place": "Av. Beira-Mar, em frente ao nº 1000", "lat": -20.8367, "lon": -40.7292,
		"description": "Três crianças de cerca de 8 anos viajando sem responsável no último vagão."}
	if code, _, _ := cf.do("POST", "/api/v1/notices", req, session{bearer: cf.viewer}); code != http.StatusForbidden {
		t.Errorf("viewer wrote a notice: %d", code)
	}
	code, body, _ := cf.do("POST", "/api/v1/notices", req, session{bearer: cf.fiscal})
	var v api.CaseView
	if code != http.StatusCreated || json.Unmarshal(body, &v) != nil {
		t.Fatalf("manual: %d %s", code, body)
	}
	if v.Notice != "AI-2026/0001" || v.Origin != "manual" || v.Licensee != "L1" || v.Articles[0] != "Art. 16" || v.Penalty != "Art. 46, XII" ||
		v.Assessment == nil || v.Assessment.TotalBRL != "1680.00" || v.Manual == nil || v.Manual.Agent != "joao" || v.State != "issued" {
		t.Fatalf("manual notice: %+v", v)
	}
	// It is in the one series of numbers, and the process is the same (by case id).
	id := cf.draft(t, "PIU-001", "L1", "speed", at(2026, 11, 28, 17))
	if ans := cf.issue(t, id, at(2026, 11, 29, 10)); ans.Notice != "AI-2026/0002" {
		t.Errorf("next number %s", ans.Notice)
	}
	cf.setClock(at(2026, 11, 29, 15))
	code, body, _ = cf.do("POST", fmt.Sprintf("/api/v1/cases/%d/actions", v.ID), map[string]any{"action": "notify", "mode": "in_person", "date": "2026-11-29", "refused_to_sign": true,
		"recipient": "José Lima", "recipient_role": "gerente da sede"}, session{bearer: cf.fiscal})
	if code != http.StatusOK || !strings.Contains(string(body), `"state":"notified"`) {
		t.Errorf("notify a manual notice: %d %s", code, body)
	}
	var list struct{ Items []api.CaseView }
	code, body, _ = cf.do("GET", "/api/v1/notices", nil, session{bearer: cf.viewer})
	if code != http.StatusOK || json.Unmarshal(body, &list) != nil || len(list.Items) != 1 || list.Items[0].Notice != "AI-2026/0001" {
		t.Errorf("notices: %d %s", code, body)
	}
	for _, bad := range []struct {
		edit func(map[string]any)
		msg  string
	}{
		{func(m map[string]any) { m["infractions"] = []string{"speed"} }, "não consta do perfil legal"},
		{func(m map[string]any) { m["at"] = "2026-12-01T10:00:00-03:00" }, "futura"},
		{func(m map[string]any) { m["place"] = "" }, "local"},
		{func(m map[string]any) { m["licensee"] = "L7" }, "L7 não encontrado"},
		{func(m map[string]any) { m["infractions"] = []string{"art16", "art26"} }, "não foi possível calcular a penalidade"},
	} {
		m := map[string]any{}
		for k, v := range req {
			m[k] = v
		}
		bad.edit(m)
		code, body, _ := cf.do("POST", "/api/v1/notices", m, session{bearer: cf.fiscal})
		if (code != http.StatusBadRequest && code != http.StatusConflict) || !strings.Contains(errorMessage(t, body), bad.msg) {
			t.Errorf("%v: %d %s", m, code, body)
		}
	}
}

// TestManualNoticeRefused: a manual notice passes the same issue gate as a draft: the licensee's
// registry record without an address, or an agent without full name, matrícula and cargo, is
// a 409 with each reason, and no number is taken.
func TestManualNoticeRefused(t *testing.T) {
	cf := newCaseFixture(t)
	ctx := context.Background()
	src, err := os.ReadFile(cf.reg.Path())
	if err != nil {
		t.Fatal(err)
	}
	y := strings.Replace(string(src), "    address: Rua das Conchas, 25, Acaiaca, Piúma-ES (endereço fictício)\n", "", 1)
	if y == string(src) {
		t.Fatal("registry: L2's address not found")
	}
	if err := os.WriteFile(cf.reg.Path(), []byte(y), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := cf.reg.Reload(); err != nil {
		t.Fatal(err)
	}
	if _, err := cf.db.CreateUser(ctx, "novato", "senha-de-novato", store.RoleFiscal); err != nil {
		t.Fatal(err)
	}
	_, novato := cf.login("novato", "senha-de-novato")
	cf.setClock(at(2026, 11, 29, 15))
	req := func(vehicle string) map[string]any {
		return map[string]any{"vehicle": vehicle, "infractions": []string{"art16"}, "at": "2026-11-28T16:40:00-03:00",
			"place": "Av. Beira-Mar", "description": "Passageiros em pé no último vagão."}
	}
	for _, x := range []struct {
		vehicle, token string
		codes          []string
		text           string
	}{
		{"PIU-003", cf.fiscal, []string{cases.ReasonLicenseeUnidentified}, "não tem endereço"},
		{"PIU-001", novato, []string{cases.ReasonAgentIncomplete}, "nome completo, matrícula e cargo"},
		{"PIU-003", novato, []string{cases.ReasonLicenseeUnidentified, cases.ReasonAgentIncomplete}, "2 impedimentos"},
	} {
		code, body, _ := cf.do("POST", "/api/v1/notices", req(x.vehicle), session{bearer: x.token})
		var refusal api.IssueRefusal
		if code != http.StatusConflict || json.Unmarshal(body, &refusal) != nil || !strings.Contains(string(body), x.text) {
			t.Errorf("%s: %d %s", x.vehicle, code, body)
			continue
		}
		var got []string
		for _, r := range refusal.Reasons {
			got = append(got, r.Code)
		}
		if !slices.Equal(got, x.codes) {
			t.Errorf("%s: reasons %v, want %v", x.vehicle, got, x.codes)
		}
	}
	code, body, _ := cf.do("POST", "/api/v1/notices", req("PIU-001"), session{bearer: cf.fiscal})
	if code != http.StatusCreated || !strings.Contains(string(body), `"notice":"AI-2026/0001"`) {
		t.Errorf("the identified notice: %d %s", code, body)
	}
}

// pdfText is the text of a PDF (pdftotext from poppler-utils).
func pdfText(t *testing.T, pdf []byte) string {
	t.Helper()
	bin, err := exec.LookPath("pdftotext")
	if err != nil {
		if os.Getenv("CI") != "" {
			t.Fatal("pdftotext not found: install poppler-utils")
		}
		t.Skip("pdftotext not found (poppler-utils)")
	}
	path := filepath.Join(t.TempDir(), "notice.pdf")
	if err := os.WriteFile(path, pdf, 0o600); err != nil {
		t.Fatal(err)
	}
	out, err := exec.Command(bin, "-layout", "-enc", "UTF-8", path, "-").CombinedOutput()
	if err != nil {
		t.Fatalf("pdftotext: %v\n%s", err, out)
	}
	return string(bytes.TrimSpace(out))
}

// flat joins the words of a text with single spaces, so that a phrase wrapped across lines is
// found.
func flat(s string) string { return strings.Join(strings.Fields(s), " ") }
