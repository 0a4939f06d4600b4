package store

import (
	"context"
	"database/sql"
	"encoding/json"
	"fmt"
	"strconv"
	"strings"
	"time"
)

// AuditEntry is one line of the audit log: who did what to which object, and the object before
// and after.
type AuditEntry struct {
	ID         int64
	Time       time.Time // the zero time means now
	User       string    // the user's name; "" when nobody was signed in
	Action     string    // e.g. "login", "login_failed", "user.create"
	Object     string    // e.g. "user:maria"
	Before     json.RawMessage
	After      json.RawMessage
	RemoteAddr string
}

// AuditFilter selects audit entries; zero fields select everything.
type AuditFilter struct {
	User   string
	Action string
	Object string
	From   time.Time // inclusive
	To     time.Time // exclusive
}

// Audit appends e to the audit log. The log is append-only: the database refuses to change or
// delete its rows.
func (db *DB) Audit(ctx context.Context, e AuditEntry) error {
	if e.Action == "" {
		return fmt.Errorf("store: audit: empty action")
	}
	if e.Time.IsZero() {
		e.Time = db.now()
	}
	if err := writeAudit(ctx, db.db, e); err != nil {
		return fmt.Errorf("store: %w", err)
	}
	return nil
}

// execer is a database or a transaction.
type execer interface {
	ExecContext(ctx context.Context, query string, args ...any) (sql.Result, error)
}

// writeAudit appends e to the audit log through ex: in a transaction, the entry is written
// with the act or not at all. It is the one writer of audit rows.
func writeAudit(ctx context.Context, ex execer, e AuditEntry) error {
	before, err := nullJSON(e.Before)
	if err != nil {
		return fmt.Errorf("audit %s: before: %w", e.Action, err)
	}
	after, err := nullJSON(e.After)
	if err != nil {
		return fmt.Errorf("audit %s: after: %w", e.Action, err)
	}
	_, err = ex.ExecContext(ctx, `
INSERT INTO audit (time, user, action, object, before, after, remote_addr) VALUES (?, ?, ?, ?, ?, ?, ?)`,
		millis(e.Time), e.User, e.Action, e.Object, before, after, e.RemoteAddr)
	if err != nil {
		return fmt.Errorf("audit %s: %w", e.Action, err)
	}
	return nil
}

// nullJSON is the stored form of a JSON document: NULL when absent.
func nullJSON(m json.RawMessage) (any, error) {
	if len(m) == 0 {
		return nil, nil
	}
	if !json.Valid(m) {
		return nil, fmt.Errorf("invalid JSON")
	}
	return string(m), nil
}

// ListAudit returns up to limit entries matching f, newest first, after the page that ended at
// cursor ("" for the first page), and the cursor of the next page ("" when there is none).
func (db *DB) ListAudit(ctx context.Context, f AuditFilter, limit int, cursor string) ([]AuditEntry, string, error) {
	limit = clampLimit(limit)
	var where []string
	var args []any
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
	if f.User != "" {
		where, args = append(where, "user = ?"), append(args, f.User)
	}
	if f.Action != "" {
		where, args = append(where, "action = ?"), append(args, f.Action)
	}
	if f.Object != "" {
		where, args = append(where, "object = ?"), append(args, f.Object)
	}
	if !f.From.IsZero() {
		where, args = append(where, "time >= ?"), append(args, millis(f.From))
	}
	if !f.To.IsZero() {
		where, args = append(where, "time < ?"), append(args, millis(f.To))
	}
	q := `SELECT id, time, user, action, object, before, after, remote_addr FROM audit`
	if len(where) > 0 {
		q += ` WHERE ` + strings.Join(where, " AND ")
	}
	q += ` ORDER BY id DESC LIMIT ?`
	args = append(args, limit+1)

	rows, err := db.db.QueryContext(ctx, q, args...)
	if err != nil {
		return nil, "", fmt.Errorf("store: list audit: %w", err)
	}
	defer rows.Close()
	var entries []AuditEntry
	for rows.Next() {
		var e AuditEntry
		var t int64
		var before, after *string
		if err := rows.Scan(&e.ID, &t, &e.User, &e.Action, &e.Object, &before, &after, &e.RemoteAddr); err != nil {
			return nil, "", fmt.Errorf("store: list audit: %w", err)
		}
		e.Time = fromMillis(t)
		if before != nil {
			e.Before = json.RawMessage(*before)
		}
		if after != nil {
			e.After = json.RawMessage(*after)
		}
		entries = append(entries, e)
	}
	if err := rows.Err(); err != nil {
		return nil, "", fmt.Errorf("store: list audit: %w", err)
	}
	var next string
	if len(entries) > limit {
		entries = entries[:limit]
		next = encodeCursor(strconv.FormatInt(entries[limit-1].ID, 10))
	}
	return entries, next, nil
}
