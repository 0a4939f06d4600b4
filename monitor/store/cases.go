package store

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/trenzinho/trenzinho/monitor/cases"
	"github.com/trenzinho/trenzinho/monitor/penalty"
)

// Cases are the notices (autos de infração) and their events, as the office of the auto
// (monitor/cases, docs/process.md) decides them: the store persists a case, its append-only
// events and the state column (the folding of the events, written in the same transaction as
// each), and reads them back folded. Every act runs in one transaction of the ledger
// (ledger.go); nothing here decides whether an act may be taken.

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
	ActionWaiver               = cases.ActionWaiver
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

// Actor is who acts, as the audit log records it (cases.Actor).
type Actor = cases.Actor

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
	where, args := []string{"1 = 1"}, []any{}
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

// nextNoticeNumber is the next notice number of the year, "AI-2026/0001": one series for issued
// drafts and manual notices, after the highest number of the year any notice has (an imported
// paper notice may have taken one).
func nextNoticeNumber(ctx context.Context, q queryer, year int) (string, error) {
	prefix := fmt.Sprintf("AI-%d/", year)
	var n int64
	err := q.QueryRowContext(ctx, `
SELECT coalesce(max(CAST(substr(notice, ?) AS INTEGER)), 0) FROM (
	SELECT notice FROM drafts WHERE notice LIKE ? UNION ALL SELECT notice FROM cases WHERE notice LIKE ?) AS notices`,
		len(prefix)+1, prefix+"%", prefix+"%").Scan(&n)
	if err != nil {
		return "", err
	}
	return fmt.Sprintf("%s%04d", prefix, n+1), nil
}

// auditTx appends an audit entry of the actor's act in tx (writeAudit), before and after as
// JSON.
func (db *DB) auditTx(ctx context.Context, tx *sql.Tx, actor Actor, action, object string, before, after any) error {
	e := AuditEntry{Time: db.now(), User: actor.User, Action: action, Object: object, RemoteAddr: actor.RemoteAddr}
	for _, v := range []struct {
		dst *json.RawMessage
		v   any
	}{{&e.Before, before}, {&e.After, after}} {
		if v.v == nil {
			continue
		}
		j, err := json.Marshal(v.v)
		if err != nil {
			return err
		}
		*v.dst = j
	}
	return writeAudit(ctx, tx, e)
}

// insertCase inserts a case with its first event (c.Events[0]), setting c.ID.
func (db *DB) insertCase(ctx context.Context, tx *sql.Tx, c *Case) error {
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
	now := db.now()
	var draftID any
	if c.DraftID != "" {
		draftID = c.DraftID
	}
	err = tx.QueryRowContext(ctx, `
INSERT INTO cases (notice, origin, draft_id, vehicle, licensee, offence_at, issued_at, state, doc, assessment, created_at, updated_at)
VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?) RETURNING id`,
		c.Notice, c.Origin, draftID, c.Vehicle, c.Licensee, millis(c.Offence), millis(c.Issued), string(c.State),
		string(doc), assessment, millis(now), millis(now)).Scan(&c.ID)
	if isUnique(err) {
		return &CaseError{Kind: cases.Conflict, Msg: fmt.Sprintf("já existe um auto com o número %s.", c.Notice)}
	}
	if err != nil {
		return err
	}
	c.CreatedAt, c.UpdatedAt = fromMillis(millis(now)), fromMillis(millis(now))
	return insertEvent(ctx, tx, c.ID, c.Events[0])
}

func insertEvent(ctx context.Context, tx *sql.Tx, caseID int64, e CaseEvent) error {
	_, err := tx.ExecContext(ctx, `INSERT INTO case_events (case_id, seq, action, date, at, user, data) VALUES (?, ?, ?, ?, ?, ?, ?)`,
		caseID, e.Seq, e.Action, e.Date, millis(e.At), e.User, string(e.Data))
	return err
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
					LicenseeName: n.LicenseeName, LicenseeCNPJ: n.LicenseeCNPJ},
				Events: []CaseEvent{{Seq: 1, Action: ActionImport, At: at, User: actor.User, Data: data}}}
			if err := c.Fold(); err != nil {
				return err
			}
			if err := db.insertCase(ctx, tx, c); err != nil {
				var ce *CaseError
				if errors.As(err, &ce) {
					ce.Msg = fmt.Sprintf("auto %d (%s): %s", i+1, n.Number, ce.Msg)
				}
				return err
			}
			if err := db.auditTx(ctx, tx, actor, "case.import", "case:"+c.Notice, nil, cases.Audit{Notice: c.Notice, Status: c.Status, Event: n}); err != nil {
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
