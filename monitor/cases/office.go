package cases

import (
	"context"
	"crypto/ed25519"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/trenzinho/trenzinho/monitor/drafts"
	"github.com/trenzinho/trenzinho/monitor/penalty"
	"github.com/trenzinho/trenzinho/profile"
)

// The office of the auto: every act on a notice after its draft — its issue (Issue,
// IssueManual), the acts of its process (Act), what the licensee files online (File) and the
// opening of the auto in the portal, its PDF served there and the electronic ciência (Open,
// ServePDF, Ciencia) — decided here and run as one transaction of a Ledger.
// The store only persists what the office decides; the API only translates HTTP.

// Audit actions the office writes.
const (
	AuditIssueRefused  = "draft.issue_refused" // an issue refused, with its reasons
	AuditDraftIssue    = "draft.issue"         // a draft issued: its status and number
	AuditCaseIssue     = "case.issue"          // the case opened with the calculus
	AuditCaseOpened    = "case.opened"         // the auto opened in the licensee's portal
	AuditCasePDFServed = "case.pdf_served"     // the auto's PDF served in the licensee's portal
	AuditCaseCiencia   = "case.ciencia"        // the electronic ciência declared in the portal
	AuditCaseFiling    = "case.filing"         // a defence or an appeal filed online
)

// Actor is who acts, as the audit log records it.
type Actor struct {
	User       string
	RemoteAddr string
	Role       Role
	// Agent is the user's identification on file (full name, matrícula, cargo), frozen into
	// the autos the user issues.
	Agent Agent
}

func (a Actor) agent() *Agent {
	if a.Agent == (Agent{}) {
		return nil
	}
	ag := a.Agent
	return &ag
}

// Draft is a draft as the office issues it: its status, the sealed bundle and the draft as its
// row holds it (which must equal the sealed one).
type Draft struct {
	Status string
	Sealed drafts.Sealed
	Doc    drafts.Draft
}

// FilingFile is an attachment of a filing.
type FilingFile struct {
	N           int    `json:"n"`
	Name        string `json:"name"`
	ContentType string `json:"content_type"`
	Size        int64  `json:"size"`
	SHA256      string `json:"sha256"` // hex
	Data        []byte `json:"-"`
}

// Filing is a defence or an appeal filed online.
type Filing struct {
	ID         int64        `json:"id"`
	CaseID     int64        `json:"case_id"`
	Notice     string       `json:"notice"`
	Kind       string       `json:"kind"`
	Protocolo  string       `json:"protocolo"`
	FiledAt    time.Time    `json:"filed_at"`
	Day        string       `json:"day"` // the day of filing in the profile's time zone
	User       string       `json:"user"`
	RemoteAddr string       `json:"-"`
	Text       string       `json:"text"`
	Files      []FilingFile `json:"files"`
}

// Books is what one act reads and writes, inside its transaction.
type Books interface {
	// Draft is the draft id as stored; the store's not-found error when there is none.
	Draft(ctx context.Context, id string) (*Draft, error)
	// HashAt is the hash of the draft at seq of the chain.
	HashAt(ctx context.Context, seq int64) (string, error)
	// History is every case of the licensee, with its events folded.
	History(ctx context.Context, licensee string) ([]*Case, error)
	// NextNumber is the next notice number of the year: one series for issued drafts and
	// manual notices, after the highest number of the year any notice has.
	NextNumber(ctx context.Context, year int) (string, error)
	// MarkIssued records that the draft was issued as notice.
	MarkIssued(ctx context.Context, draftID, notice, user, reason string, at time.Time) error
	// Insert stores a new case with its first event (c.Events), setting c.ID.
	Insert(ctx context.Context, c *Case) error
	// Case is the case id with its events folded; the store's not-found error when none.
	Case(ctx context.Context, id int64) (*Case, error)
	// Append stores the event e of c and c's state after it (c folded with e).
	Append(ctx context.Context, c *Case, e Event) error
	// File stores a filing and its attachments, setting f.ID and f.Protocolo = number(f.ID).
	File(ctx context.Context, f *Filing, number func(id int64) string) error
	// Open stores the first opening of the case's auto in the licensee's portal.
	Open(ctx context.Context, caseID int64, o *Opening) error
	// ServePDF stores a download of the case's PDF in the portal; PDFServed is the latest
	// download by user, nil when there is none.
	ServePDF(ctx context.Context, caseID int64, s *PDFServing) error
	PDFServed(ctx context.Context, caseID int64, user string) (*PDFServing, error)
	// Attach stores a document of the case, setting a.ID; Attachment is the case's
	// attachment id, the store's not-found error when the case has none such.
	Attach(ctx context.Context, a *Attachment) error
	Attachment(ctx context.Context, caseID, id int64) (*Attachment, error)
	// Audit appends an entry to the audit log.
	Audit(ctx context.Context, actor Actor, action, object string, before, after any) error
	// PublicCode is the issued draft's public verification code, assigned on first call.
	PublicCode(ctx context.Context, draftID string) (string, error)
}

// Ledger runs one act of the office as one transaction: fn's writes are kept together when it
// returns nil, and none of them otherwise.
type Ledger interface {
	Transact(ctx context.Context, fn func(Books) error) error
}

// Office runs the acts on autos.
type Office struct {
	Ledger Ledger
	// Profile is the legal profile: the calculus, the deadlines, the time zone. nil: no auto is
	// issued (the calculus is part of every auto) and no act is recorded.
	Profile *profile.Profile
	// Key is the monitor's public key, against which a draft's seal is verified.
	Key ed25519.PublicKey
	// LicenseeAtFact finds the licensee responsible for a draft's facts (Art. 48, § 2º) on the
	// day of the facts; nil: the licensee as the drafter sealed it in the draft (its registry
	// snapshot), which is what the auto prints — the issue and the document read one source.
	LicenseeAtFact func(ctx context.Context, d *drafts.Draft) (Licensee, bool)
	// GroundsMissing says which episodes of a draft do not ground an auto by themselves, one
	// text each (ReasonGroundsMissing); nil: none is checked.
	GroundsMissing func(ctx context.Context, d *drafts.Draft) []string
	// InstrumentOnFile is the registry's current record of a measuring instrument; nil: the
	// record sealed with the draft is checked (ReasonInstrumentUnverified).
	InstrumentOnFile InstrumentOnFile
	// AdhesionOnFile finds a licensee's term of adhesion to the electronic notice; nil: no
	// licensee has one, and no electronic ciência is taken.
	AdhesionOnFile AdhesionOnFile
	Now            func() time.Time // default time.Now
}

// errNoProfile refuses an issue without the legal profile: the penalty calculus — the amount
// in UFMP and in reais at the confirmed UFMP value, the recidivism decided — is part of every
// auto.
var errNoProfile = &Error{Kind: Conflict, Msg: "O auto não pode ser emitido: o perfil legal não está carregado, e o cálculo da penalidade (valor em UFMP e em reais, reincidência) é parte de todo auto."}

// now is the time of an act, to the millisecond the ledger keeps.
func (o *Office) now() time.Time {
	now := time.Now
	if o.Now != nil {
		now = o.Now
	}
	return now().Truncate(time.Millisecond)
}

// VerifyDraft re-checks a stored draft: the bundle against its hash, the monitor's signature,
// the chain link to the previous draft (hashAt), and the draft row (doc) against the draft in
// the bundle. It is "ok", or in Portuguese what does not verify.
func VerifyDraft(ctx context.Context, key ed25519.PublicKey, hashAt func(ctx context.Context, seq int64) (string, error), s *drafts.Sealed, doc *drafts.Draft) string {
	b, err := drafts.Verify(s, key)
	if err != nil {
		return err.Error()
	}
	if s.Seq > 1 {
		prev, err := hashAt(ctx, s.Seq-1)
		if err != nil || prev != s.PrevHash {
			return "o encadeamento com o auto anterior não confere"
		}
	} else if s.PrevHash != "" {
		return "o encadeamento com o auto anterior não confere"
	}
	row, _ := json.Marshal(doc)
	sealed, _ := json.Marshal(&b.Draft)
	if string(row) != string(sealed) {
		return "os dados do auto no banco diferem dos selados no pacote de evidências"
	}
	return "ok"
}

// Blockers are every reason the actor may not issue the draft now, given its integrity
// (VerifyDraft): IssueBlockers on what the draft, the registry, the profile and the actor's
// account say.
func (o *Office) Blockers(ctx context.Context, d *drafts.Draft, integrity string, a Actor) []Reason {
	rs, _ := o.blockers(ctx, d, integrity, a)
	return rs
}

// blockers are Blockers and the measuring instruments found fit, which the auto names.
func (o *Office) blockers(ctx context.Context, d *drafts.Draft, integrity string, a Actor) ([]Reason, []drafts.Device) {
	f := IssueFacts{Unregistered: d.Unregistered, Integrity: integrity, FactEnd: d.End.Time, Now: o.now(),
		User: a.User, Agent: a.Agent, Licensee: o.licenseeAtFact(ctx, d), PlateChecked: !d.Unregistered}
	if r := d.Registry; r != nil {
		f.Plate = r.Plate
	}
	seen := map[string]bool{}
	for _, fact := range d.Facts {
		if st := fact.Site; st != nil && !seen[st.ID] {
			seen[st.ID] = true
			f.Sites = append(f.Sites, Site{ID: st.ID, Name: st.Name, Verified: st.Verified, Source: st.Source})
		}
	}
	if p := o.Profile; p != nil {
		f.UnitChecked, f.UnitName, f.UnitConfirmed = true, p.FiscalUnit.Name, p.FiscalUnit.Confirmed()
		f.PrescriptionYears, f.Location = p.PrescriptionPeriod(), p.Location()
		f.FineContradiction = p.FineContradiction(d.Penalty, d.FineUFMP, d.FineUFMP > 0)
		f.CompetenceMissing = p.Competence.Missing()
		f.HolidaysUnconfirmed = unconfirmedDeadlineYears(p, f.Now)
	}
	if o.GroundsMissing != nil {
		f.GroundsMissing = o.GroundsMissing(ctx, d)
	}
	fit, unfit := instruments(ctx, d, o.InstrumentOnFile, f.Location)
	f.InstrumentsUnverified = unfit
	return IssueBlockers(f), fit
}

func (o *Office) licenseeAtFact(ctx context.Context, d *drafts.Draft) *Licensee {
	if o.LicenseeAtFact != nil {
		l, ok := o.LicenseeAtFact(ctx, d)
		if !ok {
			return nil
		}
		return &l
	}
	if d.Unregistered {
		return nil
	}
	if r := d.Registry; r != nil && r.Licensee != "" {
		return &Licensee{ID: r.Licensee, RazaoSocial: r.RazaoSocial, CNPJ: r.CNPJ, Address: r.Address}
	}
	if strings.TrimSpace(d.Licensee) == "" {
		return nil
	}
	// Known by its code only: the auto would print "razão social e CNPJ não informados".
	return &Licensee{ID: d.Licensee}
}

// Issue issues the draft id now, in one transaction: its integrity verified once, every reason
// against the issue (a refusal is audited and returned as a Conflict *Error with its Reasons),
// the next notice number, the draft marked issued, its case with the penalty calculus made over
// every earlier notice of its licensee (Art. 44, 48, 52, 53), the audit entries and the public
// verification code. It returns the case and the notice number.
func (o *Office) Issue(ctx context.Context, id, reason string, a Actor) (*Case, string, error) {
	if err := MayAct(o.Profile, a.Role, ActionIssue); err != nil {
		return nil, "", err
	}
	if o.Profile == nil {
		return nil, "", errNoProfile
	}
	at := o.now()
	var c *Case
	var notice string
	var refused []Reason
	err := o.Ledger.Transact(ctx, func(b Books) error {
		d, err := b.Draft(ctx, id)
		if err != nil {
			return err
		}
		if d.Status != drafts.StatusDraft {
			return conflictf("o auto já foi decidido")
		}
		integrity := VerifyDraft(ctx, o.Key, b.HashAt, &d.Sealed, &d.Doc)
		var fit []drafts.Device
		if refused, fit = o.blockers(ctx, &d.Doc, integrity, a); len(refused) > 0 {
			return b.Audit(ctx, a, AuditIssueRefused, "draft:"+id, nil, map[string]any{"reasons": refused})
		}
		res, err := o.assess(ctx, b, d.Doc.Licensee, func(p *profile.Profile) (*profile.Profile, penalty.Offence, error) {
			pp, off := draftOffence(p, &d.Doc, at)
			return pp, off, nil
		})
		if err != nil {
			return err
		}
		if notice, err = b.NextNumber(ctx, at.In(o.Profile.Location()).Year()); err != nil {
			return err
		}
		if err := b.MarkIssued(ctx, id, notice, a.User, reason, at); err != nil {
			return err
		}
		if err := b.Audit(ctx, a, AuditDraftIssue, "draft:"+id, map[string]string{"status": d.Status},
			map[string]string{"status": drafts.StatusIssued, "notice": notice, "reason": reason}); err != nil {
			return err
		}
		if _, err := b.PublicCode(ctx, id); err != nil {
			return err
		}
		c = &Case{Notice: notice, Origin: OriginDraft, DraftID: id, Vehicle: d.Doc.Vehicle, Licensee: d.Doc.Licensee,
			Offence: d.Doc.Start.Time, Issued: at, Assessment: res,
			CaseDoc: CaseDoc{Rules: d.Doc.Rules, Articles: d.Doc.Articles, Penalty: res.Penalty, Warning: res.Warning,
				IssuedBy: a.User, IssuerAgent: a.agent(), Instruments: fit}}
		return o.open(ctx, b, c, a, at)
	})
	if err != nil {
		return nil, "", err
	}
	if len(refused) > 0 {
		return nil, "", &Error{Kind: Conflict, Msg: Summary(refused), Reasons: refused}
	}
	return c, notice, nil
}

// IssueManual issues a manual notice now, in one transaction: the next notice number of the
// year (the series of issued drafts) and the penalty calculus, as for a draft.
func (o *Office) IssueManual(ctx context.Context, m ManualNotice, a Actor) (*Case, error) {
	if err := MayAct(o.Profile, a.Role, ActionIssue); err != nil {
		return nil, err
	}
	if o.Profile == nil {
		return nil, errNoProfile
	}
	at := o.now()
	var c *Case
	var refused []Reason
	err := o.Ledger.Transact(ctx, func(b Books) error {
		if refused = IssueBlockers(o.manualFacts(&m, a, at)); len(refused) > 0 {
			return b.Audit(ctx, a, AuditIssueRefused, "manual:"+m.Vehicle, nil, map[string]any{"reasons": refused, "notice": m})
		}
		res, err := o.assess(ctx, b, m.Licensee, func(p *profile.Profile) (*profile.Profile, penalty.Offence, error) {
			return manualOffence(p, &m, at)
		})
		if err != nil {
			return err
		}
		notice, err := b.NextNumber(ctx, at.In(o.Profile.Location()).Year())
		if err != nil {
			return err
		}
		details := m.ManualDetails
		c = &Case{Notice: notice, Origin: OriginManual, Vehicle: m.Vehicle, Licensee: m.Licensee, Offence: m.Offence,
			Issued: at, Assessment: res, CaseDoc: CaseDoc{Rules: m.Infractions, Articles: res.Articles, Penalty: res.Penalty,
				Warning: res.Warning, LicenseeName: m.LicenseeName, LicenseeCNPJ: m.LicenseeCNPJ, IssuedBy: a.User,
				IssuerAgent: a.agent(), Manual: &details}}
		return o.open(ctx, b, c, a, at)
	})
	if err != nil {
		return nil, err
	}
	if len(refused) > 0 {
		return nil, &Error{Kind: Conflict, Msg: Summary(refused), Reasons: refused}
	}
	return c, nil
}

// manualFacts are what the issue gate (IssueBlockers) checks of a manual notice: the autuado
// identified (razão social, CNPJ and address, Art. 48, § 2º), the agent identified, the facts
// before the issue and not prescribed, the UFMP value confirmed, the acts of competence named
// and the deadlines' holidays confirmed — as for a draft. Not checked, because a manual notice
// has none of them: the sealed evidence's integrity (it states what the agent saw, under the
// agent's fé pública), the sites and the episodes' grounds (no geofence or telemetry grounds
// it), the measuring instruments (nothing is measured) and the plate as sealed (no registry
// snapshot is sealed; the notice names the vehicle as the agent identified it). Its fine is the
// profile's for the manual infraction, which the profile's validation ties to the law.
func (o *Office) manualFacts(m *ManualNotice, a Actor, at time.Time) IssueFacts {
	f := IssueFacts{Integrity: "ok", FactEnd: m.Offence, Now: at, User: a.User, Agent: a.Agent}
	if strings.TrimSpace(m.Licensee+m.LicenseeName+m.LicenseeCNPJ) != "" {
		f.Licensee = &Licensee{ID: m.Licensee, RazaoSocial: m.LicenseeName, CNPJ: m.LicenseeCNPJ, Address: m.LicenseeAddress}
	}
	if p := o.Profile; p != nil {
		f.UnitChecked, f.UnitName, f.UnitConfirmed = true, p.FiscalUnit.Name, p.FiscalUnit.Confirmed()
		f.PrescriptionYears, f.Location = p.PrescriptionPeriod(), p.Location()
		f.CompetenceMissing = p.Competence.Missing()
		f.HolidaysUnconfirmed = unconfirmedDeadlineYears(p, at)
	}
	return f
}

// assess makes the calculus of the offence over the licensee's history in b.
func (o *Office) assess(ctx context.Context, b Books, licensee string, offence func(*profile.Profile) (*profile.Profile, penalty.Offence, error)) (*penalty.Result, error) {
	pp, off, err := offence(o.Profile)
	if err != nil {
		return nil, err
	}
	var hist []penalty.Notice
	if strings.TrimSpace(licensee) != "" {
		cs, err := b.History(ctx, licensee)
		if err != nil {
			return nil, err
		}
		for _, c := range cs {
			hist = append(hist, c.PenaltyNoticeOn(o.Profile, DayOf(off.Issue, o.Profile.Location())))
		}
	}
	return assess(pp, off, hist, assessOptions(o.Profile))
}

// Audit is a case as the audit log records it after an act.
type Audit struct {
	Notice string `json:"notice"`
	Status
	Event      any             `json:"event,omitempty"`
	Assessment *penalty.Result `json:"assessment,omitempty"`
}

// open stores an issued case with its issue event, and audits it.
func (o *Office) open(ctx context.Context, b Books, c *Case, a Actor, at time.Time) error {
	data, _ := json.Marshal(map[string]string{"notice": c.Notice, "origin": c.Origin})
	c.Events = []Event{{Seq: 1, Action: ActionIssue, At: at, User: a.User, Data: data}}
	if err := c.Fold(); err != nil {
		return err
	}
	if err := b.Insert(ctx, c); err != nil {
		return err
	}
	return b.Audit(ctx, a, AuditCaseIssue, "case:"+c.Notice, nil, Audit{Notice: c.Notice, Status: c.Status, Event: c.CaseDoc, Assessment: c.Assessment})
}

// Act records an act on the case id now, in one transaction: the actor's role (MayAct) and
// impediments (Impediment), the act against the case's state and dates (Check), the event,
// the new state and the audit entry (before and after). It returns the case before and after.
func (o *Office) Act(ctx context.Context, id int64, act Action, a Actor) (before, after *Case, err error) {
	if o.Profile == nil {
		return nil, nil, conflictf("o perfil legal não está carregado: não há processo.")
	}
	if err := MayAct(o.Profile, a.Role, act.Action); err != nil {
		return nil, nil, err
	}
	if err := staffMayRecord(act); err != nil {
		return nil, nil, err
	}
	err = o.Ledger.Transact(ctx, func(b Books) error {
		c, err := b.Case(ctx, id)
		if err != nil {
			return err
		}
		before, after, err = o.act(ctx, b, c, act, a, o.now())
		return err
	})
	if err != nil {
		return nil, nil, err
	}
	return before, after, nil
}

// act records act on c inside b.
func (o *Office) act(ctx context.Context, b Books, c *Case, act Action, a Actor, now time.Time) (before, after *Case, err error) {
	bc := *c
	before = &bc
	// Nobody judges their own auto, nor the appeal against their own decision.
	if msg := c.Impediment(act.Action, a.User); msg != "" {
		return nil, nil, conflictf("%s", msg)
	}
	day, err := c.Check(o.Profile, &act, now)
	if err != nil {
		return nil, nil, err
	}
	if err := c.checkScan(ctx, b, act); err != nil {
		return nil, nil, err
	}
	data, err := json.Marshal(act)
	if err != nil {
		return nil, nil, err
	}
	e := Event{Seq: len(c.Events) + 1, Action: act.Action, Date: day, At: now, User: a.User, Data: data}
	c.Events = append(slices.Clip(c.Events), e)
	if err := c.Fold(); err != nil {
		return nil, nil, err
	}
	c.UpdatedAt = now
	if err := b.Append(ctx, c, e); err != nil {
		return nil, nil, err
	}
	if err := b.Audit(ctx, a, "case."+act.Action, "case:"+c.Notice, Audit{Notice: c.Notice, Status: before.Status},
		Audit{Notice: c.Notice, Status: c.Status, Event: act}); err != nil {
		return nil, nil, err
	}
	return before, c, nil
}

// Filing kinds: the acts the licensee files online (Case.Fileable).
const (
	FilingDefence = ActionDefence
	FilingAppeal  = ActionAppeal
)

// File files a defence (FilingDefence) or an appeal (FilingAppeal) on the case id now, the
// server's time, in one transaction: the gate of the control room (Case.Fileable), the act on
// the day of now (checked as every act), the filing with its protocolo and attachments (their
// SHA256 and Size computed here), and the audit entries.
func (o *Office) File(ctx context.Context, id int64, kind, text string, files []FilingFile, a Actor) (*Filing, *Case, error) {
	word := map[string]string{FilingDefence: "Defesa", FilingAppeal: "Recurso"}[kind]
	if word == "" {
		return nil, nil, invalidf("tipo de petição inválido %q: use defence ou appeal.", kind)
	}
	if o.Profile == nil {
		return nil, nil, conflictf("o perfil legal não está carregado: não há processo.")
	}
	now := o.now()
	p := o.Profile
	var f *Filing
	var after *Case
	err := o.Ledger.Transact(ctx, func(b Books) error {
		c, err := b.Case(ctx, id)
		if err != nil {
			return err
		}
		if c.Fileable() != kind {
			return conflictf("este auto não admite %s agora: está %s", map[string]string{FilingDefence: "defesa", FilingAppeal: "recurso"}[kind], StateText(c.State))
		}
		day := DayOf(now, p.Location())
		f = &Filing{CaseID: id, Notice: c.Notice, Kind: kind, FiledAt: now, Day: day, User: a.User, RemoteAddr: a.RemoteAddr,
			Text: text, Files: []FilingFile{}}
		for i, file := range files {
			h := sha256.Sum256(file.Data)
			file.N, file.Size, file.SHA256 = i+1, int64(len(file.Data)), hex.EncodeToString(h[:])
			f.Files = append(f.Files, file)
		}
		year := now.In(p.Location()).Year()
		if err := b.File(ctx, f, func(id int64) string { return fmt.Sprintf("PROT-%d/%06d", year, id) }); err != nil {
			return err
		}
		for i := range f.Files {
			f.Files[i].Data = nil
		}
		act := Action{Action: kind, Date: day, Note: word + " apresentada pelo portal do permissionário, protocolo " + f.Protocolo + "."}
		if _, after, err = o.act(ctx, b, c, act, a, now); err != nil {
			return err
		}
		return b.Audit(ctx, a, AuditCaseFiling, "case:"+c.Notice, nil, f)
	})
	if err != nil {
		return nil, nil, err
	}
	return f, after, nil
}

// Open records that the licensee's user opened the case's auto in the portal now, the server's
// time: only the first opening, audited. It delivers nothing (the ciência is Ciencia's). It
// returns the case as it is after.
func (o *Office) Open(ctx context.Context, id int64, a Actor) (*Case, error) {
	now := o.now()
	var out *Case
	err := o.Ledger.Transact(ctx, func(b Books) error {
		c, err := b.Case(ctx, id)
		if err != nil {
			return err
		}
		if c.Opening == nil {
			op := &Opening{At: now, User: a.User, RemoteAddr: a.RemoteAddr}
			if err := b.Open(ctx, c.ID, op); err != nil {
				return err
			}
			if err := b.Audit(ctx, a, AuditCaseOpened, "case:"+c.Notice, nil, op); err != nil {
				return err
			}
			c.Opening = op
		}
		out = c
		return nil
	})
	if err != nil {
		return nil, err
	}
	return out, nil
}

// ServePDF records that the auto's PDF, whose bytes hash to sha256 (hex), was served to the
// licensee's user in the portal now, and audits it: the document a later ciência refers to.
func (o *Office) ServePDF(ctx context.Context, id int64, sha256 string, a Actor) error {
	now := o.now()
	return o.Ledger.Transact(ctx, func(b Books) error {
		c, err := b.Case(ctx, id)
		if err != nil {
			return err
		}
		sv := &PDFServing{At: now, User: a.User, RemoteAddr: a.RemoteAddr, SHA256: sha256}
		if err := b.ServePDF(ctx, c.ID, sv); err != nil {
			return err
		}
		return b.Audit(ctx, a, AuditCasePDFServed, "case:"+c.Notice, nil, sv)
	})
}

// Ciencia is the licensee's representative declaring, in the portal, ciência of the case's
// auto now, the server's time ("Declaro ciência"): the electronic notice's delivery. It is
// refused (a *Error with one Reason) unless the profile adopts the electronic notice and the
// auto waits for it (ReasonNotAwaitingCiencia, ReasonAlreadyDelivered), the licensee has a term
// of adhesion signed by today (ReasonNoElectronicAdhesion) naming the user as its
// representative (ReasonNotARepresentative, Forbidden), and the auto's PDF was served to the
// user before (ReasonPDFNotServed). The case is notified, mode electronic, on the day of now;
// the event's note and the audit entry name the term, the user and the hash of the PDF served.
func (o *Office) Ciencia(ctx context.Context, id int64, a Actor) (*Case, error) {
	if o.Profile == nil {
		return nil, conflictf("o perfil legal não está carregado: não há processo.")
	}
	now, p := o.now(), o.Profile
	today := DayOf(now, p.Location())
	var out *Case
	err := o.Ledger.Transact(ctx, func(b Books) error {
		c, err := b.Case(ctx, id)
		if err != nil {
			return err
		}
		if c.Notified != "" || c.Published != "" {
			return refusal(Conflict, ReasonAlreadyDelivered, "Este auto já foi notificado ("+modeText(c.Mode)+"): não há ciência a declarar.")
		}
		if !c.AwaitsCiencia(p, now) {
			msg := "Este auto não aguarda ciência eletrônica: "
			if e, ok := c.ElectronicNotice(p, nil, now); ok && e.Fallback {
				msg += "o prazo de disponibilidade no portal terminou em " + br(e.Until) + "; será notificado por outro meio (Art. 54)."
			} else {
				msg += "a notificação eletrônica não está adotada para ele."
			}
			return refusal(Conflict, ReasonNotAwaitingCiencia, msg)
		}
		var ad Adhesion
		ok := false
		if o.AdhesionOnFile != nil && c.Licensee != "" {
			ad, ok = o.AdhesionOnFile(ctx, c.Licensee)
		}
		if !ok || ad.SignedOn == "" || ad.SignedOn > today {
			return refusal(Conflict, ReasonNoElectronicAdhesion, "O permissionário não tem termo de adesão à notificação eletrônica registrado: este auto será notificado em mãos, por via postal com AR ou por edital.")
		}
		if a.Role != RoleLicensee || !ad.Represents(a.User) {
			return refusal(Forbidden, ReasonNotARepresentative, "Somente o representante indicado no "+ad.Term+" declara ciência pelo permissionário; o usuário "+a.User+" não é um deles.")
		}
		sv, err := b.PDFServed(ctx, c.ID, a.User)
		if err != nil {
			return err
		}
		if sv == nil {
			return refusal(Conflict, ReasonPDFNotServed, "Baixe o PDF do auto antes de declarar ciência: a ciência se refere ao documento recebido.")
		}
		act := Action{Action: ActionNotify, Mode: penalty.ModeElectronic, Date: today,
			Note: fmt.Sprintf("Ciência declarada no portal do permissionário por %s, representante indicado no %s (assinado em %s), em %s, após o download do PDF do auto em %s (SHA-256 %s); %s.",
				a.User, ad.Term, br(ad.SignedOn), now.In(p.Location()).Format("02/01/2006 15:04:05"),
				sv.At.In(p.Location()).Format("02/01/2006 15:04:05"), sv.SHA256, p.Notification.ElectronicAct)}
		if _, c, err = o.act(ctx, b, c, act, a, now); err != nil {
			return err
		}
		if err := b.Audit(ctx, a, AuditCaseCiencia, "case:"+c.Notice, nil, Ciencia{At: now, User: a.User, RemoteAddr: a.RemoteAddr,
			Term: ad.Term, TermSignedOn: ad.SignedOn, PDF: *sv}); err != nil {
			return err
		}
		out = c
		return nil
	})
	if err != nil {
		return nil, err
	}
	return out, nil
}

// Ciencia is an electronic ciência as the audit log keeps it.
type Ciencia struct {
	At           time.Time  `json:"declared_at"`
	User         string     `json:"user"`
	RemoteAddr   string     `json:"remote_addr"`
	Term         string     `json:"term"`
	TermSignedOn string     `json:"term_signed_on"`
	PDF          PDFServing `json:"pdf"`
}
