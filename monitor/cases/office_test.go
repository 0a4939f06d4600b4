package cases

import (
	"context"
	"crypto/ed25519"
	"crypto/rand"
	"encoding/json"
	"errors"
	"fmt"
	"github.com/trenzinho/trenzinho/internal/testkit/testenv"
	"maps"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/trenzinho/trenzinho/monitor/drafts"
	"github.com/trenzinho/trenzinho/monitor/penalty"
	"github.com/trenzinho/trenzinho/profile"
	"github.com/trenzinho/trenzinho/wire"
)

// memory is the office's test double for persistence: a Ledger whose books are maps, each
// transaction run on a copy that replaces them only when it succeeds (the SQLite ledger is the
// store's, tested through the API).
type memory struct {
	state books
	// fail makes the named book method fail, to show that an act is all or nothing.
	fail string
}

type auditRow struct {
	User, Action, Object string
	Before, After        string
}

type books struct {
	m        *memory
	drafts   map[string]*Draft
	cases    []*Case
	audit    []auditRow
	filings  []*Filing
	codes    map[string]string
	openings map[int64]*Opening
	servings map[int64][]PDFServing
	attached []*Attachment
}

var errNotFound = errors.New("not found")

func newMemory() *memory {
	m := &memory{}
	m.state = books{m: m, drafts: map[string]*Draft{}, codes: map[string]string{}, openings: map[int64]*Opening{}, servings: map[int64][]PDFServing{}}
	return m
}

func (b *books) clone() *books {
	c := &books{m: b.m, drafts: map[string]*Draft{}, audit: slices.Clone(b.audit), filings: slices.Clone(b.filings),
		codes: maps.Clone(b.codes), openings: maps.Clone(b.openings), servings: maps.Clone(b.servings), attached: slices.Clone(b.attached)}
	for id, d := range b.drafts {
		dd := *d
		c.drafts[id] = &dd
	}
	for _, k := range b.cases {
		kk := *k
		kk.Events = slices.Clone(k.Events)
		c.cases = append(c.cases, &kk)
	}
	return c
}

func (m *memory) Transact(_ context.Context, fn func(Books) error) error {
	b := m.state.clone()
	if err := fn(b); err != nil {
		return err
	}
	m.state = *b
	return nil
}

func (b *books) failing(what string) error {
	if b.m.fail == what {
		return fmt.Errorf("%s failed", what)
	}
	return nil
}

func (b *books) Draft(_ context.Context, id string) (*Draft, error) {
	d, ok := b.drafts[id]
	if !ok {
		return nil, errNotFound
	}
	dd := *d
	return &dd, nil
}

func (b *books) HashAt(_ context.Context, seq int64) (string, error) {
	for _, d := range b.drafts {
		if d.Sealed.Seq == seq {
			return d.Sealed.Hash, nil
		}
	}
	return "", errNotFound
}

func (b *books) History(_ context.Context, licensee string) ([]*Case, error) {
	var out []*Case
	for _, c := range b.cases {
		if c.Licensee == licensee {
			cc := *c
			out = append(out, &cc)
		}
	}
	return out, nil
}

func (b *books) NextNumber(_ context.Context, year int) (string, error) {
	prefix, n := fmt.Sprintf("AI-%d/", year), 0
	for _, c := range b.cases {
		var k int
		if _, err := fmt.Sscanf(strings.TrimPrefix(c.Notice, prefix), "%d", &k); err == nil && strings.HasPrefix(c.Notice, prefix) && k > n {
			n = k
		}
	}
	return fmt.Sprintf("%s%04d", prefix, n+1), nil
}

func (b *books) MarkIssued(_ context.Context, id, _, _, _ string, _ time.Time) error {
	b.drafts[id].Status = drafts.StatusIssued
	return nil
}

func (b *books) Insert(_ context.Context, c *Case) error {
	if err := b.failing("Insert"); err != nil {
		return err
	}
	c.ID = int64(len(b.cases) + 1)
	cc := *c
	b.cases = append(b.cases, &cc)
	return nil
}

func (b *books) Case(_ context.Context, id int64) (*Case, error) {
	for _, c := range b.cases {
		if c.ID == id {
			cc := *c
			cc.Events = slices.Clone(c.Events)
			cc.Opening = b.openings[id]
			return &cc, nil
		}
	}
	return nil, errNotFound
}

func (b *books) Append(_ context.Context, c *Case, _ Event) error {
	for i, k := range b.cases {
		if k.ID == c.ID {
			cc := *c
			b.cases[i] = &cc
		}
	}
	return nil
}

func (b *books) File(_ context.Context, f *Filing, number func(int64) string) error {
	f.ID = int64(len(b.filings) + 1)
	f.Protocolo = number(f.ID)
	b.filings = append(b.filings, f)
	return nil
}

func (b *books) Open(_ context.Context, id int64, o *Opening) error { b.openings[id] = o; return nil }

func (b *books) ServePDF(_ context.Context, id int64, s *PDFServing) error {
	b.servings[id] = append(slices.Clip(b.servings[id]), *s)
	return nil
}

func (b *books) PDFServed(_ context.Context, id int64, user string) (*PDFServing, error) {
	for i := len(b.servings[id]) - 1; i >= 0; i-- {
		if s := b.servings[id][i]; s.User == user {
			return &s, nil
		}
	}
	return nil, nil
}

func (b *books) Audit(_ context.Context, a Actor, action, object string, before, after any) error {
	j := func(v any) string {
		if v == nil {
			return ""
		}
		out, _ := json.Marshal(v)
		return string(out)
	}
	b.audit = append(b.audit, auditRow{User: a.User, Action: action, Object: object, Before: j(before), After: j(after)})
	return nil
}

func (b *books) PublicCode(_ context.Context, id string) (string, error) {
	if err := b.failing("PublicCode"); err != nil {
		return "", err
	}
	if b.codes[id] == "" {
		b.codes[id] = "code-" + id
	}
	return b.codes[id], nil
}

// The office's fixture: the Piúma profile with its UFMP confirmed, a key, users.
var (
	officeKey = func() ed25519.PrivateKey { _, k, _ := ed25519.GenerateKey(rand.Reader); return k }()
	joao      = Actor{User: "joao", Role: RoleFiscal, Agent: Agent{FullName: "João da Silva", Matricula: "123", Cargo: "Fiscal de Posturas"}}
	carla     = Actor{User: "carla", Role: RoleAutoridade, Agent: Agent{FullName: "Carla Souza", Matricula: "7", Cargo: "Autoridade Julgadora"}}
	chefe     = Actor{User: "chefe", Role: RoleAutoridade}
	licensee  = Licensee{ID: "L1", RazaoSocial: "Trenzinho da Praia Ltda", CNPJ: "11.222.333/0001-81", Address: "Av. Beira-Mar, 1"}
)

func newOffice(t *testing.T, m *memory, now *time.Time) *Office {
	t.Helper()
	p := testenv.ConfirmedProfile(profile.Piuma())
	return &Office{Ledger: m, Profile: p, Key: officeKey.Public().(ed25519.PublicKey), Now: func() time.Time { return *now },
		LicenseeAtFact: func(_ context.Context, d *drafts.Draft) (Licensee, bool) { return licensee, d.Licensee == licensee.ID }}
}

// tachograph is the instrument of putDraft's speed fact, verified for 2026.
var tachograph = drafts.Device{Kind: "tachograph", Serial: "TC-1", Model: "VDO 1318", INMETROVerification: "2026-01-10", ValidUntil: "2026-12-31"}

// putDraft seals a speed draft of L1 at start into m, after the drafts it holds.
func putDraft(t *testing.T, m *memory, id string, start time.Time) *Draft {
	t.Helper()
	return putDraftWith(t, m, id, start, nil)
}

// putDraftWith is putDraft with the draft changed by edit before it is sealed.
func putDraftWith(t *testing.T, m *memory, id string, start time.Time, edit func(*drafts.Draft)) *Draft {
	t.Helper()
	s := wire.NewTime(start)
	d := drafts.Draft{ID: id, EpisodeIDs: []string{id + ".ep"}, Vehicle: "PIU-001", Licensee: "L1", Rules: []string{"speed"},
		Articles: []string{"Art. 23"}, Penalty: "Art. 46, X", FineUFMP: 400, FiscalUnit: "UFMP", Start: s, End: s, CreatedAt: s,
		Facts: []drafts.Fact{{EpisodeID: id + ".ep", Rule: "speed", Article: "Art. 23", Start: s, End: s,
			Instrument: &tachograph}},
		Registry: &drafts.Registered{Licensee: "L1", Plate: "ABC1D23", Devices: []drafts.Device{tachograph}}}
	if edit != nil {
		edit(&d)
	}
	b, err := json.Marshal(drafts.Bundle{Format: drafts.BundleFormat, Draft: d, Batches: []drafts.RawBatch{}})
	if err != nil {
		t.Fatal(err)
	}
	seq, prev := int64(len(m.state.drafts)), ""
	for _, o := range m.state.drafts {
		if o.Sealed.Seq == seq {
			prev = o.Sealed.Hash
		}
	}
	rec := &Draft{Status: drafts.StatusDraft, Sealed: drafts.Seal(id, seq+1, b, prev, officeKey), Doc: d}
	m.state.drafts[id] = rec
	return rec
}

func actions(rows []auditRow) string {
	var s []string
	for _, r := range rows {
		s = append(s, r.Action)
	}
	return strings.Join(s, " ")
}

// An issue is one transaction: the number, the draft marked, the case with the calculus, the
// audit entries and the public code, together; a second issue of the same draft is refused.
func TestOfficeIssue(t *testing.T) {
	ctx := context.Background()
	m := newMemory()
	now := time.Date(2026, 10, 2, 10, 0, 0, 0, sp)
	o := newOffice(t, m, &now)
	putDraft(t, m, "D1", time.Date(2026, 10, 1, 15, 0, 0, 0, sp))
	c, notice, err := o.Issue(ctx, "D1", "conferido", joao)
	if err != nil {
		t.Fatal(err)
	}
	if notice != "AI-2026/0001" || c.Notice != notice || c.State != penalty.StatusIssued || c.Assessment == nil ||
		c.Assessment.TotalUFMP != 400 || c.IssuerAgent == nil || c.IssuerAgent.Matricula != "123" {
		t.Fatalf("issued %s %+v", notice, c)
	}
	st := m.state
	if st.drafts["D1"].Status != drafts.StatusIssued || len(st.cases) != 1 || st.codes["D1"] == "" ||
		actions(st.audit) != "draft.issue case.issue" || !strings.Contains(st.audit[1].After, `"total_ufmp":400`) {
		t.Fatalf("books after the issue: %+v", st)
	}
	_, _, err = o.Issue(ctx, "D1", "", joao)
	var e *Error
	if !errors.As(err, &e) || e.Kind != Conflict || !strings.Contains(e.Msg, "já foi decidido") {
		t.Errorf("issued twice: %v", err)
	}
	// A viewer issues nothing.
	putDraft(t, m, "D2", time.Date(2026, 10, 1, 16, 0, 0, 0, sp))
	if _, _, err := o.Issue(ctx, "D2", "", Actor{User: "v", Role: RoleViewer}); !errors.As(err, &e) || e.Kind != Forbidden {
		t.Errorf("a viewer issued: %v", err)
	}
	// Nothing of an issue stays when one of its writes fails.
	m.fail = "PublicCode"
	if _, _, err := o.Issue(ctx, "D2", "", joao); err == nil {
		t.Fatal("an issue whose public code failed")
	}
	if st := m.state; st.drafts["D2"].Status != drafts.StatusDraft || len(st.cases) != 1 || len(st.audit) != 2 {
		t.Errorf("a failed issue left %d cases, %d audit entries, draft %s", len(st.cases), len(st.audit), st.drafts["D2"].Status)
	}
	m.fail = ""
	if _, notice, err := o.Issue(ctx, "D2", "", joao); err != nil || notice != "AI-2026/0002" {
		t.Errorf("the second issue: %s %v", notice, err)
	}
}

// A refused issue says every reason at once, is audited, and writes nothing else; the integrity
// of the draft is what the office itself verified.
func TestOfficeIssueRefused(t *testing.T) {
	ctx := context.Background()
	m := newMemory()
	now := time.Date(2026, 10, 2, 10, 0, 0, 0, sp)
	o := newOffice(t, m, &now)
	d := putDraft(t, m, "D1", time.Date(2026, 10, 1, 15, 0, 0, 0, sp))
	d.Doc.Vehicle = "PIU-999" // the row no longer says what was sealed
	_, _, err := o.Issue(ctx, "D1", "", Actor{User: "novato", Role: RoleFiscal})
	var e *Error
	if !errors.As(err, &e) || e.Kind != Conflict {
		t.Fatalf("refusal: %v", err)
	}
	var codes []string
	for _, r := range e.Reasons {
		codes = append(codes, r.Code)
	}
	if strings.Join(codes, " ") != ReasonIntegrityBroken+" "+ReasonAgentIncomplete || !strings.Contains(e.Msg, "2 impedimentos") {
		t.Errorf("reasons %v: %s", codes, e.Msg)
	}
	if st := m.state; st.drafts["D1"].Status != drafts.StatusDraft || len(st.cases) != 0 || len(st.codes) != 0 ||
		actions(st.audit) != AuditIssueRefused || !strings.Contains(st.audit[0].After, ReasonIntegrityBroken) {
		t.Errorf("books after a refusal: %+v", st)
	}
}

// Act: the role first (Forbidden), then the impediments (nobody judges their own auto), then
// the process's checks; each act is audited with the case before and after.
func TestOfficeAct(t *testing.T) {
	ctx := context.Background()
	m := newMemory()
	now := time.Date(2026, 10, 2, 10, 0, 0, 0, sp)
	o := newOffice(t, m, &now)
	putDraft(t, m, "D1", time.Date(2026, 10, 1, 15, 0, 0, 0, sp))
	issuer := chefe
	issuer.Agent = joao.Agent
	c, _, err := o.Issue(ctx, "D1", "", issuer)
	if err != nil {
		t.Fatal(err)
	}
	now = time.Date(2026, 11, 29, 12, 0, 0, 0, sp)
	if _, _, err := o.Act(ctx, c.ID, mailed(t, o, c.ID), joao); err != nil {
		t.Fatal(err)
	}
	var e *Error
	if _, _, err := o.Act(ctx, c.ID, reject, joao); !errors.As(err, &e) || e.Kind != Forbidden || !strings.Contains(e.Msg, "Art. 57") {
		t.Errorf("a fiscal decided: %v", err)
	}
	if _, _, err := o.Act(ctx, c.ID, reject, chefe); !errors.As(err, &e) || e.Kind != Conflict || !strings.Contains(e.Msg, "Impedimento") {
		t.Errorf("the issuer decided: %v", err)
	}
	before, after, err := o.Act(ctx, c.ID, reject, carla)
	if err != nil || before.State != penalty.StatusNotified || after.State != penalty.StatusConfirmed || !after.Revelia {
		t.Fatalf("decided: %v %+v", err, after)
	}
	if got, _ := m.state.Case(ctx, c.ID); got.State != penalty.StatusConfirmed || len(got.Events) != 3 {
		t.Errorf("stored %+v", got)
	}
	if a := actions(m.state.audit); a != "draft.issue case.issue case.attachment case.notify case.decide" {
		t.Errorf("audit %s", a)
	}
	if _, _, err := o.Act(ctx, 99, notifyMail, joao); !errors.Is(err, errNotFound) {
		t.Errorf("no such case: %v", err)
	}
}

// File: the licensee files through the control room's gate (Fileable), with a protocolo, and
// the act recorded as any other.
func TestOfficeFile(t *testing.T) {
	ctx := context.Background()
	m := newMemory()
	now := time.Date(2026, 10, 2, 10, 0, 0, 0, sp)
	o := newOffice(t, m, &now)
	putDraft(t, m, "D1", time.Date(2026, 10, 1, 15, 0, 0, 0, sp))
	c, _, err := o.Issue(ctx, "D1", "", joao)
	if err != nil {
		t.Fatal(err)
	}
	portal := Actor{User: "trenzinho", Role: RoleLicensee, RemoteAddr: "198.51.100.7"}
	var e *Error
	if _, _, err := o.File(ctx, c.ID, FilingDefence, "Não houve excesso.", nil, portal); !errors.As(err, &e) || e.Kind != Conflict ||
		!strings.Contains(e.Msg, "não admite defesa") {
		t.Errorf("a defence before the notice: %v", err)
	}
	now = time.Date(2026, 10, 6, 9, 0, 0, 0, sp)
	if _, _, err := o.Act(ctx, c.ID, mailed(t, o, c.ID), joao); err != nil {
		t.Fatal(err)
	}
	f, after, err := o.File(ctx, c.ID, FilingDefence, "Não houve excesso.", []FilingFile{{Name: "a.pdf", ContentType: "application/pdf", Data: []byte("%PDF-1.4")}}, portal)
	if err != nil {
		t.Fatal(err)
	}
	if f.Protocolo != "PROT-2026/000001" || after.State != penalty.StatusDefenceFiled || after.DefenceFiled != "2026-10-06" ||
		f.Files[0].Size != 8 || len(f.Files[0].SHA256) != 64 || f.Files[0].Data != nil {
		t.Errorf("filed %+v, case %+v", f, after.Status)
	}
	if a := actions(m.state.audit); !strings.HasSuffix(a, "case.defence case.filing") {
		t.Errorf("audit %s", a)
	}
	if _, _, err := o.File(ctx, c.ID, FilingAppeal, "Recurso.", nil, portal); !errors.As(err, &e) || !strings.Contains(e.Msg, "não admite recurso") {
		t.Errorf("an appeal with the defence pending: %v", err)
	}
}

// A manual notice passes the issue gate as a draft does: the autuado identified by razão
// social, CNPJ and address, the agent by full name, matrícula and cargo, the facts before the
// issue and not prescribed, the profile's confirmations; a refusal says every reason at once,
// is audited and takes no number; issued, it opens its case with the calculus.
func TestOfficeIssueManual(t *testing.T) {
	ctx := context.Background()
	m := newMemory()
	now := time.Date(2026, 10, 2, 10, 0, 0, 0, sp)
	o := newOffice(t, m, &now)
	seen := ManualNotice{Vehicle: "PIU-001", Licensee: "L1", LicenseeName: licensee.RazaoSocial, LicenseeCNPJ: licensee.CNPJ,
		Infractions: []string{"art16"}, Offence: now.Add(-time.Hour),
		ManualDetails: ManualDetails{Place: "Av. Beira-Mar", Description: "Três crianças sem responsável.", Agent: "joao"}}

	codes := func(_ *Case, err error) string {
		t.Helper()
		var e *Error
		if !errors.As(err, &e) || e.Kind != Conflict {
			t.Fatalf("want a refusal, got %v", err)
		}
		var out []string
		for _, r := range e.Reasons {
			out = append(out, r.Code)
		}
		return strings.Join(out, " ")
	}
	// No address on file, an agent without identification, facts after the issue.
	early := seen
	early.Offence = now.Add(time.Minute)
	if got := codes(o.IssueManual(ctx, early, Actor{User: "novato", Role: RoleFiscal})); got != strings.Join([]string{ReasonLicenseeUnidentified,
		ReasonIssueBeforeFacts, ReasonAgentIncomplete}, " ") {
		t.Errorf("refused for %s", got)
	}
	// Nobody identified at all.
	anon := seen
	anon.Licensee, anon.LicenseeName, anon.LicenseeCNPJ = "", "", ""
	if got := codes(o.IssueManual(ctx, anon, joao)); got != ReasonLicenseeUnidentified {
		t.Errorf("anonymous: refused for %s", got)
	}
	// Prescribed: facts of more than five years ago.
	old := seen
	old.LicenseeAddress, old.Offence = licensee.Address, now.AddDate(-5, 0, -1)
	if got := codes(o.IssueManual(ctx, old, joao)); got != ReasonPrescribed {
		t.Errorf("prescribed: refused for %s", got)
	}
	// The profile's confirmations: the UFMP value, the acts of competence, the holidays.
	bare := newOffice(t, m, &now)
	bare.Profile = profile.Piuma()
	full := seen
	full.LicenseeAddress = licensee.Address
	if got := codes(bare.IssueManual(ctx, full, joao)); !strings.Contains(got, ReasonUFMPUnconfirmed) || !strings.Contains(got, ReasonCompetenceUnproven) ||
		!strings.Contains(got, ReasonHolidaysUnconfirmed) {
		t.Errorf("unconfirmed profile: refused for %s", got)
	}
	if len(m.state.cases) != 0 || actions(m.state.audit) != strings.TrimSpace(strings.Repeat(AuditIssueRefused+" ", 4)) {
		t.Fatalf("the refusals left %d cases and the audit %q", len(m.state.cases), actions(m.state.audit))
	}
	c, err := o.IssueManual(ctx, full, joao)
	if err != nil {
		t.Fatal(err)
	}
	if c.Notice != "AI-2026/0001" || c.Origin != OriginManual || c.Assessment == nil || c.IssuerAgent == nil || c.State != penalty.StatusIssued {
		t.Errorf("issued %+v", c)
	}
}
