package store

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"time"
	"unicode"
	"unicode/utf8"

	"github.com/trenzinho/trenzinho/monitor/cases"
	"github.com/trenzinho/trenzinho/rules"
)

// Triage is how the control room handles an alert (an episode): who acknowledged it, to whom it
// is assigned, who cleared it and why, and the history of every act (docs/api.md, "Triage").
//
// The states, and the acts that move between them:
//
//	novo ──ack──▶ reconhecido ──assign──▶ atribuido ──clear──▶ encerrado
//	  │               └──────────clear──────────────────────────▲   │
//	  ├──assign (acknowledges too)──▶ atribuido                  │   │
//	  └──clear──────────────────────────────────────────────────┘   │
//	encerrado ──reopen──▶ atribuido (when it had an assignee) or reconhecido
//
// A comment is allowed in every state and changes none. An escalation (escalate) happens only
// to a "novo" alert, once, and leaves it "novo". Triage is the control room's work on an alert:
// clearing one is not a decision on a draft, whose review and case stay their own process.
type Triage struct {
	EpisodeID string        `json:"episode_id"`
	State     TriageState   `json:"state"`
	AckedBy   string        `json:"acked_by,omitempty"`
	AckedAt   time.Time     `json:"acked_at,omitzero"`
	Assignee  string        `json:"assignee,omitempty"`
	AssignBy  string        `json:"assigned_by,omitempty"`
	AssignAt  time.Time     `json:"assigned_at,omitzero"`
	ClearedBy string        `json:"cleared_by,omitempty"`
	ClearedAt time.Time     `json:"cleared_at,omitzero"`
	Reason    string        `json:"clear_reason,omitempty"`
	Escalated time.Time     `json:"escalated_at,omitzero"`
	Events    []TriageEvent `json:"-"`
}

// TriageState is the state of an alert's triage.
type TriageState string

// The triage states (pt-BR, as the dashboard filters them; "atribuido" without its accent in
// the API).
const (
	TriageNew          TriageState = "novo"
	TriageAcknowledged TriageState = "reconhecido"
	TriageAssigned     TriageState = "atribuido"
	TriageCleared      TriageState = "encerrado"
)

// Valid reports whether s is one of the states.
func (s TriageState) Valid() bool {
	switch s {
	case TriageNew, TriageAcknowledged, TriageAssigned, TriageCleared:
		return true
	}
	return false
}

// The triage acts, as the history and the audit log ("episode.<act>") name them.
const (
	ActAck      = "ack"
	ActAssign   = "assign"
	ActComment  = "comment"
	ActClear    = "clear"
	ActReopen   = "reopen"
	ActEscalate = "escalate"
)

// TriageEvent is one act in an alert's history. The history is append-only: the database
// refuses to change or delete its rows, and the store has no method that would.
type TriageEvent struct {
	ID       int64     `json:"id"`
	At       time.Time `json:"at"`
	User     string    `json:"user"` // "" for the monitor itself (an escalation)
	Act      string    `json:"act"`
	Assignee string    `json:"assignee,omitempty"`
	Text     string    `json:"text,omitempty"` // the comment, the reason, the escalation's recipients
}

// TriageAct is an act a person takes on an alert: Act is ActAck, ActAssign (Assignee the user
// name), ActComment (Text the comment), ActClear or ActReopen (Text the reason).
type TriageAct struct {
	Act      string
	Assignee string
	Text     string
}

// MaxTriageText bounds a comment or a reason, in characters.
const MaxTriageText = 2000

// checkTriageText is the problem of a comment or reason, in Portuguese; "" when none.
func checkTriageText(name, s string) string {
	if !utf8.ValidString(s) {
		return name + " não é texto UTF-8 válido"
	}
	if strings.TrimSpace(s) == "" {
		return name + " é obrigatório"
	}
	if utf8.RuneCountInString(s) > MaxTriageText {
		return fmt.Sprintf("%s longo demais (até %d caracteres)", name, MaxTriageText)
	}
	for _, r := range s {
		if unicode.IsControl(r) && r != '\n' && r != '\t' && r != '\r' {
			return name + " contém caracteres de controle"
		}
	}
	return ""
}

// Triage returns the triage of episode id with its history, oldest first; an episode nobody
// has touched is "novo" with no history. ErrNotFound when there is no such episode.
func (db *DB) Triage(ctx context.Context, id string) (*Triage, error) {
	tr, err := loadTriage(ctx, db.db, id)
	if err == nil {
		tr.Events, err = triageEvents(ctx, db.db, id)
	}
	if err != nil {
		return nil, fmt.Errorf("store: triage of episode %q: %w", id, err)
	}
	return tr, nil
}

type rowsQuerier interface {
	querier
	QueryContext(ctx context.Context, query string, args ...any) (*sql.Rows, error)
}

// loadTriage reads the triage row of an episode (the default when it has none); ErrNotFound
// when there is no such episode.
func loadTriage(ctx context.Context, q rowsQuerier, id string) (*Triage, error) {
	var exists int
	if err := q.QueryRowContext(ctx, `SELECT count(*) FROM episodes WHERE id = ?`, id).Scan(&exists); err != nil {
		return nil, err
	}
	if exists == 0 {
		return nil, ErrNotFound
	}
	tr := &Triage{EpisodeID: id, State: TriageNew}
	var acked, assigned, cleared, escalated sql.NullInt64
	err := q.QueryRowContext(ctx, `
SELECT state, acked_by, acked_at, assignee, assigned_by, assigned_at, cleared_by, cleared_at, clear_reason, escalated_at
FROM episode_triage WHERE episode_id = ?`, id).Scan(&tr.State, &tr.AckedBy, &acked, &tr.Assignee, &tr.AssignBy, &assigned,
		&tr.ClearedBy, &cleared, &tr.Reason, &escalated)
	if errors.Is(err, sql.ErrNoRows) {
		return tr, nil
	}
	if err != nil {
		return nil, err
	}
	tr.AckedAt, tr.AssignAt, tr.ClearedAt, tr.Escalated = nullTime(acked), nullTime(assigned), nullTime(cleared), nullTime(escalated)
	return tr, nil
}

func nullTime(v sql.NullInt64) time.Time {
	if !v.Valid {
		return time.Time{}
	}
	return fromMillis(v.Int64)
}

func nullMillis(t time.Time) sql.NullInt64 {
	if t.IsZero() {
		return sql.NullInt64{}
	}
	return sql.NullInt64{Int64: millis(t), Valid: true}
}

func triageEvents(ctx context.Context, q rowsQuerier, id string) ([]TriageEvent, error) {
	rows, err := q.QueryContext(ctx, `
SELECT id, at, user, act, assignee, text FROM episode_triage_events WHERE episode_id = ? ORDER BY id`, id)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	var out []TriageEvent
	for rows.Next() {
		var ev TriageEvent
		var at int64
		if err := rows.Scan(&ev.ID, &at, &ev.User, &ev.Act, &ev.Assignee, &ev.Text); err != nil {
			return nil, err
		}
		ev.At = fromMillis(at)
		out = append(out, ev)
	}
	return out, rows.Err()
}

// ActOnTriage takes a person's act on the triage of episode id and returns the triage after
// it, with its history. The act, its history entry and its audit entry ("episode.<act>", the
// triage before and after) are written in one transaction: an act is never taken unaudited.
// An act the state does not allow, or malformed, is a *CaseError (Conflict for the former);
// ErrNotFound when there is no such episode.
func (db *DB) ActOnTriage(ctx context.Context, id string, who Actor, act TriageAct) (*Triage, error) {
	if who.User == "" {
		return nil, invalidf("o ato de triagem precisa de um usuário")
	}
	var after *Triage
	err := db.inTx(ctx, func(tx *sql.Tx) error {
		before, err := loadTriage(ctx, tx, id)
		if err != nil {
			return err
		}
		now := db.now()
		next, ev, err := applyTriage(ctx, tx, *before, who.User, act, now)
		if err != nil {
			return err
		}
		if err := saveTriage(ctx, tx, &next, now); err != nil {
			return err
		}
		if err := insertTriageEvent(ctx, tx, id, ev); err != nil {
			return err
		}
		if err := writeAudit(ctx, tx, AuditEntry{Time: now, User: who.User, Action: "episode." + act.Act, Object: "episode:" + id,
			Before: mustMarshal(before), After: mustMarshal(auditTriage(&next, ev)), RemoteAddr: who.RemoteAddr}); err != nil {
			return err
		}
		after = &next
		after.Events, err = triageEvents(ctx, tx, id)
		return err
	})
	if err != nil {
		return nil, fmt.Errorf("store: triage of episode %q: %w", id, err)
	}
	return after, nil
}

// auditTriage is what the audit log keeps of a triage after an act: its state, and the
// comment or reason the act carried.
func auditTriage(t *Triage, ev TriageEvent) any {
	return struct {
		*Triage
		Text string `json:"text,omitempty"`
	}{t, ev.Text}
}

func mustMarshal(v any) json.RawMessage {
	b, err := json.Marshal(v)
	if err != nil {
		panic(err) // the triage's own types always marshal
	}
	return b
}

// applyTriage is the state machine (Triage's comment): the triage after act, and the act's
// history entry.
func applyTriage(ctx context.Context, tx *sql.Tx, t Triage, user string, act TriageAct, now time.Time) (Triage, TriageEvent, error) {
	ev := TriageEvent{At: now, User: user, Act: act.Act}
	ack := func() {
		if t.AckedBy == "" {
			t.AckedBy, t.AckedAt = user, now
		}
	}
	switch act.Act {
	case ActAck:
		switch t.State {
		case TriageNew:
		case TriageCleared:
			return t, ev, conflictf("o alerta está encerrado; reabra-o antes")
		default:
			return t, ev, conflictf("o alerta já foi reconhecido por %s", t.AckedBy)
		}
		ack()
		t.State = TriageAcknowledged
	case ActAssign:
		if t.State == TriageCleared {
			return t, ev, conflictf("o alerta está encerrado; reabra-o antes")
		}
		if act.Assignee == "" {
			return t, ev, invalidf("user é obrigatório: a quem atribuir o alerta")
		}
		if t.State == TriageAssigned && strings.EqualFold(t.Assignee, act.Assignee) {
			return t, ev, conflictf("o alerta já está atribuído a %s", t.Assignee)
		}
		var name string
		var role Role
		var disabled bool
		err := tx.QueryRowContext(ctx, `SELECT name, role, disabled FROM users WHERE name = ?`, act.Assignee).Scan(&name, &role, &disabled)
		if errors.Is(err, sql.ErrNoRows) {
			return t, ev, invalidf("usuário %q não existe", act.Assignee)
		}
		if err != nil {
			return t, ev, err
		}
		if disabled || !role.AtLeast(RoleFiscal) {
			return t, ev, invalidf("o alerta só pode ser atribuído a um usuário ativo de papel fiscal ou acima")
		}
		ack() // assigning an alert acknowledges it
		t.State, t.Assignee, t.AssignBy, t.AssignAt = TriageAssigned, name, user, now
		ev.Assignee = name
	case ActComment:
		if p := checkTriageText("text", act.Text); p != "" {
			return t, ev, invalidf("%s", p)
		}
		ev.Text = strings.TrimSpace(act.Text)
	case ActClear:
		if t.State == TriageCleared {
			return t, ev, conflictf("o alerta já foi encerrado por %s", t.ClearedBy)
		}
		if p := checkTriageText("reason", act.Text); p != "" {
			return t, ev, invalidf("%s", p)
		}
		ack()
		ev.Text = strings.TrimSpace(act.Text)
		t.State, t.ClearedBy, t.ClearedAt, t.Reason = TriageCleared, user, now, ev.Text
	case ActReopen:
		if t.State != TriageCleared {
			return t, ev, conflictf("só um alerta encerrado pode ser reaberto")
		}
		if p := checkTriageText("reason", act.Text); p != "" {
			return t, ev, invalidf("%s", p)
		}
		ev.Text = strings.TrimSpace(act.Text)
		t.State, t.ClearedBy, t.ClearedAt, t.Reason = TriageAcknowledged, "", time.Time{}, ""
		if t.Assignee != "" {
			t.State = TriageAssigned
		}
	default:
		return t, ev, invalidf("ato de triagem desconhecido %q", act.Act)
	}
	return t, ev, nil
}

func saveTriage(ctx context.Context, tx *sql.Tx, t *Triage, now time.Time) error {
	_, err := tx.ExecContext(ctx, `
INSERT INTO episode_triage (episode_id, state, acked_by, acked_at, assignee, assigned_by, assigned_at, cleared_by, cleared_at, clear_reason, escalated_at, updated_at)
VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)
ON CONFLICT (episode_id) DO UPDATE SET
	state = excluded.state, acked_by = excluded.acked_by, acked_at = excluded.acked_at,
	assignee = excluded.assignee, assigned_by = excluded.assigned_by, assigned_at = excluded.assigned_at,
	cleared_by = excluded.cleared_by, cleared_at = excluded.cleared_at, clear_reason = excluded.clear_reason,
	escalated_at = excluded.escalated_at, updated_at = excluded.updated_at`,
		t.EpisodeID, string(t.State), t.AckedBy, nullMillis(t.AckedAt), t.Assignee, t.AssignBy, nullMillis(t.AssignAt),
		t.ClearedBy, nullMillis(t.ClearedAt), t.Reason, nullMillis(t.Escalated), millis(now))
	return err
}

func insertTriageEvent(ctx context.Context, tx *sql.Tx, id string, ev TriageEvent) error {
	_, err := tx.ExecContext(ctx, `
INSERT INTO episode_triage_events (episode_id, at, user, act, assignee, text) VALUES (?, ?, ?, ?, ?, ?)`,
		id, millis(ev.At), ev.User, ev.Act, ev.Assignee, ev.Text)
	return err
}

// TriageSummaries returns the triage (without history) of each of ids that has been touched;
// the others are "novo".
func (db *DB) TriageSummaries(ctx context.Context, ids []string) (map[string]Triage, error) {
	out := make(map[string]Triage, len(ids))
	for len(ids) > 0 {
		chunk := ids[:min(len(ids), 500)]
		ids = ids[len(chunk):]
		args := make([]any, len(chunk))
		for i, id := range chunk {
			args[i] = id
		}
		rows, err := db.db.QueryContext(ctx, `
SELECT episode_id, state, acked_by, acked_at, assignee, assigned_by, assigned_at, cleared_by, cleared_at, clear_reason, escalated_at
FROM episode_triage WHERE episode_id IN (?`+strings.Repeat(", ?", len(chunk)-1)+`)`, args...)
		if err != nil {
			return nil, fmt.Errorf("store: triage summaries: %w", err)
		}
		for rows.Next() {
			var t Triage
			var acked, assigned, cleared, escalated sql.NullInt64
			if err := rows.Scan(&t.EpisodeID, &t.State, &t.AckedBy, &acked, &t.Assignee, &t.AssignBy, &assigned,
				&t.ClearedBy, &cleared, &t.Reason, &escalated); err != nil {
				rows.Close()
				return nil, fmt.Errorf("store: triage summaries: %w", err)
			}
			t.AckedAt, t.AssignAt, t.ClearedAt, t.Escalated = nullTime(acked), nullTime(assigned), nullTime(cleared), nullTime(escalated)
			out[t.EpisodeID] = t
		}
		err = rows.Err()
		rows.Close()
		if err != nil {
			return nil, fmt.Errorf("store: triage summaries: %w", err)
		}
	}
	return out, nil
}

// EpisodeRef names an episode briefly.
type EpisodeRef struct {
	ID, Rule string
	Start    time.Time
}

// Unescalated lists the episodes started in [from, to] whose triage is "novo" and that were
// never escalated, oldest first, up to limit: the escalation's candidates.
func (db *DB) Unescalated(ctx context.Context, from, to time.Time, limit int) ([]EpisodeRef, error) {
	rows, err := db.db.QueryContext(ctx, `
SELECT e.id, e.rule, e.start_at FROM episodes e LEFT JOIN episode_triage t ON t.episode_id = e.id
WHERE e.start_at >= ? AND e.start_at <= ? AND (t.episode_id IS NULL OR (t.state = 'novo' AND t.escalated_at IS NULL))
ORDER BY e.start_at, e.id LIMIT ?`, millis(from), millis(to), limit)
	if err != nil {
		return nil, fmt.Errorf("store: unescalated episodes: %w", err)
	}
	defer rows.Close()
	var out []EpisodeRef
	for rows.Next() {
		var r EpisodeRef
		var start int64
		if err := rows.Scan(&r.ID, &r.Rule, &start); err != nil {
			return nil, fmt.Errorf("store: unescalated episodes: %w", err)
		}
		r.Start = fromMillis(start)
		out = append(out, r)
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("store: unescalated episodes: %w", err)
	}
	return out, nil
}

// MarkEscalated records, once, that episode id was escalated at at to the users to: it reports
// false (and changes nothing) when the episode is no longer "novo" or was escalated already —
// so that an alert is escalated at most once whatever runs concurrently. The history entry and
// the audit entry ("episode.escalate", by the monitor: no user) are written in the same
// transaction. It returns the episode (without readings) for the message.
func (db *DB) MarkEscalated(ctx context.Context, id string, at time.Time, to []string) (*rules.Episode, bool, error) {
	var ep *rules.Episode
	done := false
	err := db.inTx(ctx, func(tx *sql.Tx) error {
		before, err := loadTriage(ctx, tx, id)
		if err != nil {
			return err
		}
		if before.State != TriageNew || !before.Escalated.IsZero() {
			return nil
		}
		var doc string
		if err := tx.QueryRowContext(ctx, `SELECT doc FROM episodes WHERE id = ?`, id).Scan(&doc); err != nil {
			return err
		}
		ep = new(rules.Episode)
		if err := json.Unmarshal([]byte(doc), ep); err != nil {
			return err
		}
		next := *before
		next.Escalated = at
		if err := saveTriage(ctx, tx, &next, at); err != nil {
			return err
		}
		ev := TriageEvent{At: at, Act: ActEscalate, Text: strings.Join(to, ", ")}
		if err := insertTriageEvent(ctx, tx, id, ev); err != nil {
			return err
		}
		if err := writeAudit(ctx, tx, AuditEntry{Time: at, Action: "episode." + ActEscalate, Object: "episode:" + id,
			Before: mustMarshal(before), After: mustMarshal(map[string]any{"escalated_at": at, "to": to})}); err != nil {
			return err
		}
		done = true
		return nil
	})
	if err != nil {
		return nil, false, fmt.Errorf("store: escalate episode %q: %w", id, err)
	}
	return ep, done, nil
}

func conflictf(format string, a ...any) error {
	return &CaseError{Kind: cases.Conflict, Msg: fmt.Sprintf(format, a...)}
}

func invalidf(format string, a ...any) error {
	return &CaseError{Kind: cases.Invalid, Msg: fmt.Sprintf(format, a...)}
}
