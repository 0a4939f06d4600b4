package store

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"strconv"
	"time"
)

// NotifyDeadLetter is a notification the dispatcher gave up on (monitor/notify), kept for the
// admin to see and retry.
type NotifyDeadLetter struct {
	ID       int64
	At       time.Time // when it was given up
	User     string
	Channel  string // email, telegram, webpush
	Address  string // where to send again; a push subscription holds its keys: never shown
	Display  string // the address as the admin sees it (a push subscription: its service's host)
	Subject  string
	Episodes []string
	// Alerts is what the message is composed from (the dispatcher's JSON), to compose it again.
	Alerts   json.RawMessage
	Attempts int
	Error    string
	// Retries counts the admin's retries that failed too; LastRetry is the last one's time.
	Retries   int
	LastRetry time.Time
}

// AddNotifyDeadLetter stores l and returns its id. Retention, counted from l.At: the letters
// older than maxAge (none when ≤ 0) and all but the newest keep (none when ≤ 0) are deleted in
// the same transaction, so that a channel broken for months cannot fill the disk.
func (db *DB) AddNotifyDeadLetter(ctx context.Context, l NotifyDeadLetter, keep int, maxAge time.Duration) (int64, error) {
	episodes := l.Episodes
	if episodes == nil {
		episodes = []string{}
	}
	eps, err := json.Marshal(episodes)
	if err != nil {
		return 0, fmt.Errorf("store: dead letter: %w", err)
	}
	alerts := l.Alerts
	if len(alerts) == 0 {
		alerts = json.RawMessage("null")
	}
	if !json.Valid(alerts) {
		return 0, fmt.Errorf("store: dead letter: alerts: %w", ErrRefused)
	}
	var id int64
	err = db.inTx(ctx, func(tx *sql.Tx) error {
		if err := tx.QueryRowContext(ctx, `
INSERT INTO notify_dead_letters (at, user, channel, address, display, subject, episodes, alerts, attempts, error)
VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?) RETURNING id`, millis(l.At), l.User, l.Channel, l.Address, l.Display, l.Subject,
			string(eps), string(alerts), l.Attempts, l.Error).Scan(&id); err != nil {
			return err
		}
		if maxAge > 0 {
			if _, err := tx.ExecContext(ctx, `DELETE FROM notify_dead_letters WHERE at < ?`, millis(l.At.Add(-maxAge))); err != nil {
				return err
			}
		}
		if keep > 0 {
			_, err = tx.ExecContext(ctx, `
DELETE FROM notify_dead_letters WHERE id NOT IN (SELECT id FROM notify_dead_letters ORDER BY id DESC LIMIT ?)`, keep)
		}
		return err
	})
	if err != nil {
		return 0, fmt.Errorf("store: dead letter: %w", err)
	}
	return id, nil
}

const deadLetterColumns = `id, at, user, channel, address, display, subject, episodes, alerts, attempts, error, retries, last_retry_at`

func scanDeadLetter(sc interface{ Scan(...any) error }) (NotifyDeadLetter, error) {
	var l NotifyDeadLetter
	var at int64
	var last sql.NullInt64
	var eps, alerts string
	if err := sc.Scan(&l.ID, &at, &l.User, &l.Channel, &l.Address, &l.Display, &l.Subject, &eps, &alerts,
		&l.Attempts, &l.Error, &l.Retries, &last); err != nil {
		return l, err
	}
	l.At, l.Alerts = fromMillis(at), json.RawMessage(alerts)
	if last.Valid {
		l.LastRetry = fromMillis(last.Int64)
	}
	if err := json.Unmarshal([]byte(eps), &l.Episodes); err != nil {
		return l, err
	}
	return l, nil
}

// NotifyDeadLetters returns up to limit dead letters, newest first, after the page that ended
// at cursor ("" for the first page), and the cursor of the next page ("" when there is none).
func (db *DB) NotifyDeadLetters(ctx context.Context, limit int, cursor string) ([]NotifyDeadLetter, string, error) {
	limit = clampLimit(limit)
	after := int64(1<<63 - 1)
	if cursor != "" {
		key, err := decodeCursor(cursor)
		if err != nil {
			return nil, "", err
		}
		if after, err = strconv.ParseInt(key, 10, 64); err != nil {
			return nil, "", ErrBadCursor
		}
	}
	rows, err := db.db.QueryContext(ctx, `SELECT `+deadLetterColumns+` FROM notify_dead_letters WHERE id < ? ORDER BY id DESC LIMIT ?`,
		after, limit+1)
	if err != nil {
		return nil, "", fmt.Errorf("store: dead letters: %w", err)
	}
	defer rows.Close()
	var out []NotifyDeadLetter
	for rows.Next() {
		l, err := scanDeadLetter(rows)
		if err != nil {
			return nil, "", fmt.Errorf("store: dead letters: %w", err)
		}
		out = append(out, l)
	}
	if err := rows.Err(); err != nil {
		return nil, "", fmt.Errorf("store: dead letters: %w", err)
	}
	var next string
	if len(out) > limit {
		out = out[:limit]
		next = encodeCursor(strconv.FormatInt(out[limit-1].ID, 10))
	}
	return out, next, nil
}

// NotifyDeadLetter returns one dead letter (ErrNotFound when there is none of that id).
func (db *DB) NotifyDeadLetter(ctx context.Context, id int64) (*NotifyDeadLetter, error) {
	l, err := scanDeadLetter(db.db.QueryRowContext(ctx, `SELECT `+deadLetterColumns+` FROM notify_dead_letters WHERE id = ?`, id))
	if errors.Is(err, sql.ErrNoRows) {
		return nil, ErrNotFound
	}
	if err != nil {
		return nil, fmt.Errorf("store: dead letter %d: %w", id, err)
	}
	return &l, nil
}

// DeleteNotifyDeadLetter removes a dead letter once it has been delivered (ErrNotFound when
// there is none of that id).
func (db *DB) DeleteNotifyDeadLetter(ctx context.Context, id int64) error {
	res, err := db.db.ExecContext(ctx, `DELETE FROM notify_dead_letters WHERE id = ?`, id)
	if err != nil {
		return fmt.Errorf("store: delete dead letter %d: %w", id, err)
	}
	if n, _ := res.RowsAffected(); n == 0 {
		return ErrNotFound
	}
	return nil
}

// NotifyDeadLetterRetryFailed records a retry that failed: its time and error.
func (db *DB) NotifyDeadLetterRetryFailed(ctx context.Context, id int64, at time.Time, msg string) error {
	res, err := db.db.ExecContext(ctx, `
UPDATE notify_dead_letters SET retries = retries + 1, last_retry_at = ?, error = ? WHERE id = ?`, millis(at), msg, id)
	if err != nil {
		return fmt.Errorf("store: dead letter %d: %w", id, err)
	}
	if n, _ := res.RowsAffected(); n == 0 {
		return ErrNotFound
	}
	return nil
}
