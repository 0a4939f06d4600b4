package store

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/trenzinho/trenzinho/monitor/cases"
	"github.com/trenzinho/trenzinho/monitor/drafts"
	"github.com/trenzinho/trenzinho/monitor/penalty"
	"github.com/trenzinho/trenzinho/profile"
)

// Cases are the notices (autos de infração) the penalty calculus counts, and their
// administrative process after issue (Lei 2.277/2018, Art. 51–57): an issued draft, a manual
// notice an agent writes from a street observation, or an earlier paper notice imported.
//
// A case's identity, facts and the penalty calculus made when it was issued never change. What
// happens to it is an append-only list of events (issue or import, then the acts of the
// process: delivery_failed, notify, defence, decide, notify_decision, appeal, decide_appeal,
// notify_appeal_decision, pay, divida_ativa, suspension, annul). The process itself — which act
// the state admits, its checks and deadlines, how it changes the state — is monitor/cases
// (docs/process.md): the store checks each act with it (cases.Case.Check), persists the event,
// and derives the state by folding the events with it (Case.fold); the state column of the row
// is that derivation, written in the same transaction as each event. Every event is also written
// to the audit log in that transaction, with the case before and after.

// Origins of a case (cases.Origin*).
const (
	OriginDraft  = cases.OriginDraft
	OriginManual = cases.OriginManual
	OriginImport = cases.OriginImport
)

// The actions, outcomes, acts and status of a case are the process's (monitor/cases); the
// store persists them under these names.
const (
	ActionIssue                = cases.ActionIssue
	ActionImport               = cases.ActionImport
	ActionNotify               = cases.ActionNotify
	ActionDefence              = cases.ActionDefence
	ActionDecide               = cases.ActionDecide
	ActionPay                  = cases.ActionPay
	ActionDividaAtiva          = cases.ActionDividaAtiva
	ActionSuspension           = cases.ActionSuspension
	ActionNotifyDecision       = cases.ActionNotifyDecision
	ActionDeliveryFailed       = cases.ActionDeliveryFailed
	ActionAnnul                = cases.ActionAnnul
	ActionAppeal               = cases.ActionAppeal
	ActionDecideAppeal         = cases.ActionDecideAppeal
	ActionNotifyAppealDecision = cases.ActionNotifyAppealDecision
	OutcomeAccepted            = cases.OutcomeAccepted
	OutcomeRejected            = cases.OutcomeRejected
)

type (
	// CaseError is an act the case cannot take (cases.Error).
	CaseError = cases.Error
	// CaseAction is an act on a case after issue (cases.Action).
	CaseAction = cases.Action
	// AppliedSuspension is a suspension of the licence applied on a notice (Art. 52).
	AppliedSuspension = cases.AppliedSuspension
	// CaseStatus is the state of a case as its events make it (cases.Status).
	CaseStatus = cases.Status
	// Case is a notice and its process (cases.Case); the store persists it.
	Case = cases.Case
	// CaseDoc are the facts of a case, fixed when it is created (cases.CaseDoc).
	CaseDoc = cases.CaseDoc
	// CaseEvent is one event of a case (cases.Event).
	CaseEvent = cases.Event
	// ManualDetails are what an agent writes on a manual notice (cases.ManualDetails).
	ManualDetails = cases.ManualDetails
	// ImportedNotice is an earlier paper notice as it stood when imported (cases.ImportedNotice).
	ImportedNotice = cases.ImportedNotice
	// ManualNotice is a notice an agent writes from a street observation (cases.ManualNotice).
	ManualNotice = cases.ManualNotice
)

// Actor is who acts, as the audit log records it.
type Actor struct {
	User       string
	RemoteAddr string
	// Agent is the user's identification on file (full name, matrícula, cargo), frozen into
	// the cases the user issues.
	Agent Agent
}

func conflictf(format string, a ...any) error {
	return &CaseError{Kind: cases.Conflict, Msg: fmt.Sprintf(format, a...)}
}

func invalidf(format string, a ...any) error {
	return &CaseError{Kind: cases.Invalid, Msg: fmt.Sprintf(format, a...)}
}

// agent is the actor's identification when on file, else nil.
func (a Actor) agent() *Agent {
	if a.Agent == (Agent{}) {
		return nil
	}
	ag := a.Agent
	return &ag
}

// ParseDay reads a calendar day: "YYYY-MM-DD", or an RFC 3339 time whose day in loc is taken.
func ParseDay(s string, loc *time.Location) (string, bool) { return cases.ParseDay(s, loc) }

// StateText describes a state in Portuguese, as in "o auto está …".
func StateText(s penalty.Status) string { return cases.StateText(s) }

// Stored cases.

const caseColumns = `id, notice, origin, coalesce(draft_id, ''), vehicle, licensee, offence_at, issued_at, doc,
	assessment, created_at, updated_at`

type queryer interface {
	QueryContext(ctx context.Context, query string, args ...any) (*sql.Rows, error)
	QueryRowContext(ctx context.Context, query string, args ...any) *sql.Row
}

func scanCase(r rowScanner) (*Case, error) {
	var c Case
	var offence, issued, created, updated int64
	var doc string
	var assessment sql.NullString
	if err := r.Scan(&c.ID, &c.Notice, &c.Origin, &c.DraftID, &c.Vehicle, &c.Licensee, &offence, &issued, &doc,
		&assessment, &created, &updated); err != nil {
		return nil, err
	}
	c.Offence, c.Issued, c.CreatedAt, c.UpdatedAt = fromMillis(offence), fromMillis(issued), fromMillis(created), fromMillis(updated)
	if err := json.Unmarshal([]byte(doc), &c.CaseDoc); err != nil {
		return nil, fmt.Errorf("case %s: %w", c.Notice, err)
	}
	if assessment.Valid {
		c.Assessment = new(penalty.Result)
		if err := json.Unmarshal([]byte(assessment.String), c.Assessment); err != nil {
			return nil, fmt.Errorf("case %s assessment: %w", c.Notice, err)
		}
	}
	return &c, nil
}

// loadEvents reads the events of the cases and folds them.
func loadEvents(ctx context.Context, q queryer, cs []*Case) error {
	for _, c := range cs {
		rows, err := q.QueryContext(ctx, `SELECT seq, action, date, at, user, data FROM case_events WHERE case_id = ? ORDER BY seq`, c.ID)
		if err != nil {
			return err
		}
		c.Events = nil
		for rows.Next() {
			var e CaseEvent
			var at int64
			var data string
			if err := rows.Scan(&e.Seq, &e.Action, &e.Date, &at, &e.User, &data); err != nil {
				rows.Close()
				return err
			}
			e.At, e.Data = fromMillis(at), json.RawMessage(data)
			c.Events = append(c.Events, e)
		}
		rows.Close()
		if err := rows.Err(); err != nil {
			return err
		}
		if err := c.Fold(); err != nil {
			return err
		}
		if c.Opening, err = openingOf(ctx, q, c.ID); err != nil {
			return err
		}
	}
	return nil
}

func caseWhere(ctx context.Context, q queryer, where string, args ...any) (*Case, error) {
	c, err := scanCase(q.QueryRowContext(ctx, `SELECT `+caseColumns+` FROM cases WHERE `+where, args...))
	if errors.Is(err, sql.ErrNoRows) {
		return nil, ErrNotFound
	}
	if err != nil {
		return nil, err
	}
	if err := loadEvents(ctx, q, []*Case{c}); err != nil {
		return nil, err
	}
	return c, nil
}

// CaseByID returns a case with its events, or ErrNotFound.
func (db *DB) CaseByID(ctx context.Context, id int64) (*Case, error) {
	c, err := caseWhere(ctx, db.db, `id = ?`, id)
	if err != nil && !errors.Is(err, ErrNotFound) {
		return nil, fmt.Errorf("store: case %d: %w", id, err)
	}
	return c, err
}

// CaseByDraft returns the case of an issued draft, or ErrNotFound (a draft not issued has none).
func (db *DB) CaseByDraft(ctx context.Context, draftID string) (*Case, error) {
	c, err := caseWhere(ctx, db.db, `draft_id = ?`, draftID)
	if err != nil && !errors.Is(err, ErrNotFound) {
		return nil, fmt.Errorf("store: case of draft %s: %w", draftID, err)
	}
	return c, err
}

// CaseFilter selects cases; zero fields select everything.
type CaseFilter struct {
	State    string
	Origins  []string
	Licensee string
}

// Cases lists cases with their events, newest first.
func (db *DB) Cases(ctx context.Context, f CaseFilter, limit int, cursor string) ([]*Case, string, error) {
	limit = clampLimit(limit)
	where, args := []string{"1"}, []any{}
	if cursor != "" {
		key, err := decodeCursor(cursor)
		if err != nil {
			return nil, "", err
		}
		id, err := strconv.ParseInt(key, 10, 64)
		if err != nil {
			return nil, "", ErrBadCursor
		}
		where, args = append(where, "id < ?"), append(args, id)
	}
	if f.State != "" {
		where, args = append(where, "state = ?"), append(args, f.State)
	}
	if f.Licensee != "" {
		where, args = append(where, "licensee = ?"), append(args, f.Licensee)
	}
	if len(f.Origins) > 0 {
		where = append(where, "origin IN (?"+strings.Repeat(",?", len(f.Origins)-1)+")")
		for _, o := range f.Origins {
			args = append(args, o)
		}
	}
	rows, err := db.db.QueryContext(ctx, `SELECT `+caseColumns+` FROM cases WHERE `+strings.Join(where, " AND ")+
		` ORDER BY id DESC LIMIT ?`, append(args, limit+1)...)
	if err != nil {
		return nil, "", fmt.Errorf("store: cases: %w", err)
	}
	var out []*Case
	for rows.Next() {
		c, err := scanCase(rows)
		if err != nil {
			rows.Close()
			return nil, "", fmt.Errorf("store: cases: %w", err)
		}
		out = append(out, c)
	}
	rows.Close()
	if err := rows.Err(); err != nil {
		return nil, "", fmt.Errorf("store: cases: %w", err)
	}
	next := ""
	if len(out) > limit {
		out = out[:limit]
		next = encodeCursor(strconv.FormatInt(out[len(out)-1].ID, 10))
	}
	if err := loadEvents(ctx, db.db, out); err != nil {
		return nil, "", fmt.Errorf("store: cases: %w", err)
	}
	return out, next, nil
}

// history is every case of a licensee as the penalty calculus reads it; none without a
// licensee.
func history(ctx context.Context, tx *sql.Tx, p *profile.Profile, licensee string) ([]penalty.Notice, error) {
	if strings.TrimSpace(licensee) == "" {
		return nil, nil
	}
	rows, err := tx.QueryContext(ctx, `SELECT `+caseColumns+` FROM cases WHERE licensee = ? ORDER BY offence_at, id`, licensee)
	if err != nil {
		return nil, err
	}
	var cs []*Case
	for rows.Next() {
		c, err := scanCase(rows)
		if err != nil {
			rows.Close()
			return nil, err
		}
		cs = append(cs, c)
	}
	rows.Close()
	if err := rows.Err(); err != nil {
		return nil, err
	}
	if err := loadEvents(ctx, tx, cs); err != nil {
		return nil, err
	}
	out := make([]penalty.Notice, len(cs))
	for i, c := range cs {
		out[i] = c.PenaltyNotice(p)
	}
	return out, nil
}

// nextNoticeNumber is the next notice number of the year, "AI-2026/0001": one series for issued
// drafts and manual notices, after the highest number of the year any notice has (an imported
// paper notice may have taken one).
func nextNoticeNumber(ctx context.Context, q queryer, year int) (string, error) {
	prefix := fmt.Sprintf("AI-%d/", year)
	var n int64
	err := q.QueryRowContext(ctx, `
SELECT coalesce(max(CAST(substr(notice, ?) AS INTEGER)), 0) FROM (
	SELECT notice FROM drafts WHERE notice LIKE ? UNION ALL SELECT notice FROM cases WHERE notice LIKE ?)`,
		len(prefix)+1, prefix+"%", prefix+"%").Scan(&n)
	if err != nil {
		return "", err
	}
	return fmt.Sprintf("%s%04d", prefix, n+1), nil
}

// auditTx appends an audit entry in tx: the entry is written with the act or not at all.
func (db *DB) auditTx(ctx context.Context, tx *sql.Tx, actor Actor, action, object string, before, after any) error {
	var b, a any
	if before != nil {
		j, err := json.Marshal(before)
		if err != nil {
			return err
		}
		b = string(j)
	}
	if after != nil {
		j, err := json.Marshal(after)
		if err != nil {
			return err
		}
		a = string(j)
	}
	_, err := tx.ExecContext(ctx, `INSERT INTO audit (time, user, action, object, before, after, remote_addr) VALUES (?, ?, ?, ?, ?, ?, ?)`,
		millis(db.now()), actor.User, action, object, b, a, actor.RemoteAddr)
	return err
}

// insertCase inserts a case with its first event and returns it folded.
func (db *DB) insertCase(ctx context.Context, tx *sql.Tx, c *Case, first CaseEvent) error {
	doc, err := json.Marshal(c.CaseDoc)
	if err != nil {
		return err
	}
	var assessment any
	if c.Assessment != nil {
		j, err := json.Marshal(c.Assessment)
		if err != nil {
			return err
		}
		assessment = string(j)
	}
	c.Events = []CaseEvent{first}
	if err := c.Fold(); err != nil {
		return err
	}
	now := db.now()
	var draftID any
	if c.DraftID != "" {
		draftID = c.DraftID
	}
	res, err := tx.ExecContext(ctx, `
INSERT INTO cases (notice, origin, draft_id, vehicle, licensee, offence_at, issued_at, state, doc, assessment, created_at, updated_at)
VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`,
		c.Notice, c.Origin, draftID, c.Vehicle, c.Licensee, millis(c.Offence), millis(c.Issued), string(c.State),
		string(doc), assessment, millis(now), millis(now))
	if err != nil {
		if strings.Contains(err.Error(), "UNIQUE") {
			return conflictf("já existe um auto com o número %s.", c.Notice)
		}
		return err
	}
	if c.ID, err = res.LastInsertId(); err != nil {
		return err
	}
	c.CreatedAt, c.UpdatedAt = fromMillis(millis(now)), fromMillis(millis(now))
	return insertEvent(ctx, tx, c.ID, first)
}

func insertEvent(ctx context.Context, tx *sql.Tx, caseID int64, e CaseEvent) error {
	_, err := tx.ExecContext(ctx, `INSERT INTO case_events (case_id, seq, action, date, at, user, data) VALUES (?, ?, ?, ?, ?, ?, ?)`,
		caseID, e.Seq, e.Action, e.Date, millis(e.At), e.User, string(e.Data))
	return err
}

// caseAudit is a case as the audit log records it after an act.
type caseAudit struct {
	Notice string `json:"notice"`
	CaseStatus
	Event      any             `json:"event,omitempty"`
	Assessment *penalty.Result `json:"assessment,omitempty"`
}

// The calculus at issue.

// assessOptions are the options of the penalty calculus the profile holds: the repeat fines of
// its warning-first rules (rules.<id>.repeat).
func assessOptions(p *profile.Profile) penalty.Options {
	opt := penalty.Options{Repeat: map[string]penalty.RepeatFine{}}
	for id, r := range p.Rules {
		if r.Repeat != nil {
			opt.Repeat[id] = penalty.RepeatFine{Penalty: r.Repeat.Penalty, UFMP: r.Repeat.Fine}
		}
	}
	return opt
}

// withRules returns a copy of p whose rules also hold extra; p itself is not changed.
func withRules(p *profile.Profile, extra map[string]profile.Rule) *profile.Profile {
	if len(extra) == 0 {
		return p
	}
	cp := *p
	cp.Rules = make(map[string]profile.Rule, len(p.Rules)+len(extra))
	for id, r := range p.Rules {
		cp.Rules[id] = r
	}
	for id, r := range extra {
		cp.Rules[id] = r
	}
	return &cp
}

// draftOffence is the offence of a draft for the calculus. A rule the profile maps under
// rules.<id> is assessed by that mapping; a rule whose mapping depends on its facts (e.g.
// document_expired, by document kind) is assessed by the legal mapping the draft recorded for
// each fact (its article, the draft's penalty and fine).
func draftOffence(p *profile.Profile, d *drafts.Draft, issue time.Time) (*profile.Profile, penalty.Offence) {
	o := penalty.Offence{Licensee: d.Licensee, Date: d.Start.Time, Issue: issue}
	extra := map[string]profile.Rule{}
	for _, id := range d.Rules {
		if r, ok := p.Rules[id]; ok && r.Infraction {
			o.Rules = append(o.Rules, id)
			continue
		}
		var arts, texts []string // in the order of the facts
		for _, f := range d.Facts {
			if f.Rule == id && f.Article != "" && !slices.Contains(arts, f.Article) {
				arts, texts = append(arts, f.Article), append(texts, f.LegalText)
			}
		}
		if len(arts) == 0 && len(d.Articles) > 0 {
			arts, texts = d.Articles[:1], []string{""}
		}
		for i, art := range arts {
			key := id + ":" + art
			extra[key] = profile.Rule{Article: art, Penalty: d.Penalty, Text: texts[i], FineUFMP: d.FineUFMP, Infraction: true}
			o.Rules = append(o.Rules, key)
		}
	}
	return withRules(p, extra), o
}

// manualOffence is the offence of a manual notice for the calculus: its infractions
// (manual_infractions.<id>) assessed as rules.
func manualOffence(p *profile.Profile, m *ManualNotice, issue time.Time) (*profile.Profile, penalty.Offence, error) {
	if len(m.Infractions) == 0 {
		return nil, penalty.Offence{}, invalidf("informe ao menos uma infração (infractions) do perfil legal.")
	}
	extra := map[string]profile.Rule{}
	for _, id := range m.Infractions {
		mi, ok := p.ManualInfractions[id]
		if !ok {
			return nil, penalty.Offence{}, invalidf("infração %q não consta do perfil legal (manual_infractions).", id)
		}
		extra[id] = profile.Rule{Article: mi.Article, Penalty: mi.Penalty, Text: mi.Text, FineUFMP: mi.Fine, Infraction: true, Notice: mi.Notice}
	}
	return withRules(p, extra), penalty.Offence{Rules: m.Infractions, Licensee: m.Licensee, Date: m.Offence, Issue: issue}, nil
}

// assess runs the penalty calculus; its failure is a conflict the agent reads.
func assess(p *profile.Profile, o penalty.Offence, hist []penalty.Notice, opt penalty.Options) (*penalty.Result, error) {
	res, err := penalty.Assess(p, o, hist, opt)
	if err != nil {
		return nil, conflictf("não foi possível calcular a penalidade na emissão (verifique o perfil legal): %v", err)
	}
	return &res, nil
}

// IssueDraft issues a draft at the time at: the next notice number of the year (in the
// profile's time zone), and its case, with the penalty calculus made now over every earlier
// notice of its licensee as it stands (Art. 44, 48, 52, 53). The draft's sealed bundle is not
// changed: the calculus is a record of its own in the case. It fails with ErrDecided when the
// draft was already decided, and with a *CaseError when the calculus cannot be made.
func (db *DB) IssueDraft(ctx context.Context, id, reason string, p *profile.Profile, at time.Time, actor Actor) (*Case, error) {
	var c *Case
	err := db.inTx(ctx, func(tx *sql.Tx) error {
		var status, doc string
		if err := tx.QueryRowContext(ctx, `SELECT status, doc FROM drafts WHERE id = ?`, id).Scan(&status, &doc); err != nil {
			if errors.Is(err, sql.ErrNoRows) {
				return ErrNotFound
			}
			return err
		}
		if status != drafts.StatusDraft {
			return ErrDecided
		}
		var d drafts.Draft
		if err := json.Unmarshal([]byte(doc), &d); err != nil {
			return err
		}
		hist, err := history(ctx, tx, p, d.Licensee)
		if err != nil {
			return err
		}
		pp, o := draftOffence(p, &d, at)
		res, err := assess(pp, o, hist, assessOptions(p))
		if err != nil {
			return err
		}
		notice, err := nextNoticeNumber(ctx, tx, at.In(p.Location()).Year())
		if err != nil {
			return err
		}
		if _, err := tx.ExecContext(ctx, `UPDATE drafts SET status = ?, notice = ?, decided_by = ?, decided_at = ?, reason = ? WHERE id = ?`,
			drafts.StatusIssued, notice, actor.User, millis(at), reason, id); err != nil {
			return err
		}
		c = &Case{Notice: notice, Origin: OriginDraft, DraftID: id, Vehicle: d.Vehicle, Licensee: d.Licensee,
			Offence: d.Start.Time, Issued: at, Assessment: res,
			CaseDoc: CaseDoc{Rules: d.Rules, Articles: d.Articles, Penalty: res.Penalty, Warning: res.Warning, IssuedBy: actor.User,
				IssuerAgent: actor.agent()}}
		return db.issue(ctx, tx, c, actor, at)
	})
	if err != nil {
		return nil, fmt.Errorf("store: issue draft %s: %w", id, err)
	}
	return c, nil
}

// issue inserts an issued case with its issue event and audits it.
func (db *DB) issue(ctx context.Context, tx *sql.Tx, c *Case, actor Actor, at time.Time) error {
	data, _ := json.Marshal(map[string]string{"notice": c.Notice, "origin": c.Origin})
	if err := db.insertCase(ctx, tx, c, CaseEvent{Seq: 1, Action: ActionIssue, At: at, User: actor.User, Data: data}); err != nil {
		return err
	}
	return db.auditTx(ctx, tx, actor, "case.issue", "case:"+c.Notice, nil,
		caseAudit{Notice: c.Notice, CaseStatus: c.Status, Event: c.CaseDoc, Assessment: c.Assessment})
}

// IssueManual issues a manual notice at the time at: the next notice number of the year (the
// series of issued drafts) and the penalty calculus, as for a draft.
func (db *DB) IssueManual(ctx context.Context, m ManualNotice, p *profile.Profile, at time.Time, actor Actor) (*Case, error) {
	pp, o, err := manualOffence(p, &m, at)
	if err != nil {
		return nil, err
	}
	var c *Case
	err = db.inTx(ctx, func(tx *sql.Tx) error {
		hist, err := history(ctx, tx, p, m.Licensee)
		if err != nil {
			return err
		}
		res, err := assess(pp, o, hist, assessOptions(p))
		if err != nil {
			return err
		}
		notice, err := nextNoticeNumber(ctx, tx, at.In(p.Location()).Year())
		if err != nil {
			return err
		}
		details := m.ManualDetails
		c = &Case{Notice: notice, Origin: OriginManual, Vehicle: m.Vehicle, Licensee: m.Licensee, Offence: m.Offence,
			Issued: at, Assessment: res, CaseDoc: CaseDoc{Rules: m.Infractions, Articles: res.Articles, Penalty: res.Penalty,
				Warning: res.Warning, LicenseeName: m.LicenseeName, LicenseeCNPJ: m.LicenseeCNPJ, IssuedBy: actor.User,
				IssuerAgent: actor.agent(), Manual: &details}}
		return db.issue(ctx, tx, c, actor, at)
	})
	if err != nil {
		return nil, fmt.Errorf("store: manual notice: %w", err)
	}
	return c, nil
}

// ImportNotices stores earlier paper notices as they stood, all or none: each keeps its own
// number (unique among all notices) and counts for recidivism like any other.
func (db *DB) ImportNotices(ctx context.Context, ns []ImportedNotice, at time.Time, actor Actor) ([]*Case, error) {
	var out []*Case
	err := db.inTx(ctx, func(tx *sql.Tx) error {
		for i := range ns {
			n := &ns[i]
			data, err := json.Marshal(n)
			if err != nil {
				return err
			}
			c := &Case{Notice: n.Number, Origin: OriginImport, Vehicle: n.Vehicle, Licensee: n.Licensee, Offence: n.Offence,
				Issued: n.Issued, CaseDoc: CaseDoc{Articles: n.Articles, Penalty: n.Penalty, Warning: n.Warning,
					LicenseeName: n.LicenseeName, LicenseeCNPJ: n.LicenseeCNPJ}}
			if err := db.insertCase(ctx, tx, c, CaseEvent{Seq: 1, Action: ActionImport, At: at, User: actor.User, Data: data}); err != nil {
				var ce *CaseError
				if errors.As(err, &ce) {
					ce.Msg = fmt.Sprintf("auto %d (%s): %s", i+1, n.Number, ce.Msg)
				}
				return err
			}
			if err := db.auditTx(ctx, tx, actor, "case.import", "case:"+c.Notice, nil, caseAudit{Notice: c.Notice, CaseStatus: c.Status, Event: n}); err != nil {
				return err
			}
			out = append(out, c)
		}
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("store: import notices: %w", err)
	}
	return out, nil
}

// CaseAct records an act on a case at the time now, after checking it against the case's state
// and dates with the profile: the event, the new state and the audit entry (before and after),
// in one transaction. It returns the case before and after; a *CaseError when the act is not
// possible; ErrNotFound when there is no such case.
func (db *DB) CaseAct(ctx context.Context, id int64, a CaseAction, p *profile.Profile, now time.Time, actor Actor) (before, after *Case, err error) {
	err = db.inTx(ctx, func(tx *sql.Tx) error {
		before, after, err = db.caseActTx(ctx, tx, id, a, p, now, actor)
		return err
	})
	if err != nil {
		return nil, nil, fmt.Errorf("store: case %d: %w", id, err)
	}
	return before, after, nil
}

// caseActTx is CaseAct inside the transaction tx.
func (db *DB) caseActTx(ctx context.Context, tx *sql.Tx, id int64, a CaseAction, p *profile.Profile, now time.Time, actor Actor) (before, after *Case, err error) {
	c, err := caseWhere(ctx, tx, `id = ?`, id)
	if err != nil {
		return nil, nil, err
	}
	b := *c
	before = &b
	// Nobody judges their own auto, nor the appeal against their own decision (enforced
	// here too, whoever calls).
	pc := c
	if msg := pc.Impediment(a.Action, actor.User); msg != "" {
		return nil, nil, &CaseError{Kind: cases.Conflict, Msg: msg}
	}
	day, err := pc.Check(p, &a, now)
	if err != nil {
		return nil, nil, err
	}
	data, err := json.Marshal(a)
	if err != nil {
		return nil, nil, err
	}
	e := CaseEvent{Seq: len(c.Events) + 1, Action: a.Action, Date: day, At: now, User: actor.User, Data: data}
	if err := insertEvent(ctx, tx, c.ID, e); err != nil {
		return nil, nil, err
	}
	c.Events = append(slices.Clip(c.Events), e)
	if err := c.Fold(); err != nil {
		return nil, nil, err
	}
	c.UpdatedAt = fromMillis(millis(now))
	if _, err := tx.ExecContext(ctx, `UPDATE cases SET state = ?, updated_at = ? WHERE id = ?`, string(c.State), millis(now), c.ID); err != nil {
		return nil, nil, err
	}
	err = db.auditTx(ctx, tx, actor, "case."+a.Action, "case:"+c.Notice,
		caseAudit{Notice: c.Notice, CaseStatus: before.Status}, caseAudit{Notice: c.Notice, CaseStatus: c.Status, Event: a})
	if err != nil {
		return nil, nil, err
	}
	return before, c, nil
}
