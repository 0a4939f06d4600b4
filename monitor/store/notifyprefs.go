package store

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"time"
)

// NotifyPrefs are the notification preferences a user saved in the dashboard (Perfil →
// Notificações): what to receive and where. The notify package gives them their meaning; the
// store keeps them as one JSON document per user, checked by the API before they get here.
type NotifyPrefs struct {
	User string `json:"-"`
	// Email and Telegram are the user's addresses (an e-mail address, a Telegram chat id).
	Email    string `json:"email,omitempty"`
	Telegram string `json:"telegram,omitempty"`
	// Rules, Vehicles and Licensees filter the alerts; empty lets everything pass.
	Rules     []string `json:"rules,omitempty"`
	Vehicles  []string `json:"vehicles,omitempty"`
	Licensees []string `json:"licensees,omitempty"`
	// MinSeverity is low, medium, high or empty (all).
	MinSeverity string `json:"min_severity,omitempty"`
	// Channels are the channels the user wants among their addresses; empty: all.
	Channels []string `json:"channels,omitempty"`
	// QuietHours is "22:00-07:00" in the municipality's time, or empty.
	QuietHours string    `json:"quiet_hours,omitempty"`
	OnDutyOnly bool      `json:"on_duty_only,omitempty"`
	UpdatedAt  time.Time `json:"-"`
}

// NotifyPrefs returns the preferences the user saved; ErrNotFound when they saved none (or
// there is no such user).
func (db *DB) NotifyPrefs(ctx context.Context, user string) (*NotifyPrefs, error) {
	var doc string
	var at int64
	err := db.db.QueryRowContext(ctx, `
SELECT p.doc, p.updated_at FROM notify_prefs p JOIN users u ON u.id = p.user_id WHERE u.name = ?`, user).Scan(&doc, &at)
	if errors.Is(err, sql.ErrNoRows) {
		return nil, ErrNotFound
	}
	if err != nil {
		return nil, fmt.Errorf("store: notification preferences of %q: %w", user, err)
	}
	var p NotifyPrefs
	if err := json.Unmarshal([]byte(doc), &p); err != nil {
		return nil, fmt.Errorf("store: notification preferences of %q: %w", user, err)
	}
	p.User, p.UpdatedAt = user, fromMillis(at)
	return &p, nil
}

// SetNotifyPrefs saves p as the preferences of p.User (replacing what they saved before);
// ErrNotFound when there is no such user.
func (db *DB) SetNotifyPrefs(ctx context.Context, p NotifyPrefs) error {
	doc, err := json.Marshal(p)
	if err != nil {
		return fmt.Errorf("store: notification preferences: %w", err)
	}
	return db.inTx(ctx, func(tx *sql.Tx) error {
		var id int64
		err := tx.QueryRowContext(ctx, `SELECT id FROM users WHERE name = ?`, p.User).Scan(&id)
		if errors.Is(err, sql.ErrNoRows) {
			return ErrNotFound
		}
		if err != nil {
			return fmt.Errorf("store: notification preferences of %q: %w", p.User, err)
		}
		_, err = tx.ExecContext(ctx, `
INSERT INTO notify_prefs (user_id, doc, updated_at) VALUES (?, ?, ?)
ON CONFLICT (user_id) DO UPDATE SET doc = excluded.doc, updated_at = excluded.updated_at`, id, string(doc), millis(db.now()))
		if err != nil {
			return fmt.Errorf("store: notification preferences of %q: %w", p.User, err)
		}
		return nil
	})
}

// AllNotifyPrefs returns the saved preferences of the enabled users, by user name: a disabled
// account is notified of nothing.
func (db *DB) AllNotifyPrefs(ctx context.Context) ([]NotifyPrefs, error) {
	rows, err := db.db.QueryContext(ctx, `
SELECT u.name, p.doc, p.updated_at FROM notify_prefs p JOIN users u ON u.id = p.user_id WHERE u.disabled = 0 ORDER BY u.name`)
	if err != nil {
		return nil, fmt.Errorf("store: notification preferences: %w", err)
	}
	defer rows.Close()
	var out []NotifyPrefs
	for rows.Next() {
		var name, doc string
		var at int64
		if err := rows.Scan(&name, &doc, &at); err != nil {
			return nil, fmt.Errorf("store: notification preferences: %w", err)
		}
		var p NotifyPrefs
		if err := json.Unmarshal([]byte(doc), &p); err != nil {
			return nil, fmt.Errorf("store: notification preferences of %q: %w", name, err)
		}
		p.User, p.UpdatedAt = name, fromMillis(at)
		out = append(out, p)
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("store: notification preferences: %w", err)
	}
	return out, nil
}

// NotifyShift is a turn of the on-duty schedule (escala de plantão): User is on call from From
// (inclusive) to To (exclusive).
type NotifyShift struct {
	ID        int64
	User      string
	From, To  time.Time
	CreatedBy string
	CreatedAt time.Time
}

// MaxNotifyShifts bounds the shifts not yet ended: a municipality's handful of inspectors on
// a year of daily shifts fits well within it.
const MaxNotifyShifts = 5000

// ErrTooMany is returned when a bounded collection is full.
var ErrTooMany = errors.New("store: too many")

// AddNotifyShift stores s (its ID and CreatedAt are set here) and returns it. The user must be
// an enabled account (ErrNotFound otherwise); To must be after From (ErrRefused).
func (db *DB) AddNotifyShift(ctx context.Context, s NotifyShift) (NotifyShift, error) {
	if !s.To.After(s.From) {
		return s, fmt.Errorf("store: shift: to is not after from: %w", ErrRefused)
	}
	s.CreatedAt = db.now()
	err := db.inTx(ctx, func(tx *sql.Tx) error {
		var name string
		err := tx.QueryRowContext(ctx, `SELECT name FROM users WHERE name = ? AND disabled = 0`, s.User).Scan(&name)
		if errors.Is(err, sql.ErrNoRows) {
			return ErrNotFound
		}
		if err != nil {
			return err
		}
		s.User = name // as the account spells it
		var n int
		if err := tx.QueryRowContext(ctx, `SELECT count(*) FROM notify_shifts WHERE t_to > ?`, millis(s.CreatedAt)).Scan(&n); err != nil {
			return err
		}
		if n >= MaxNotifyShifts {
			return ErrTooMany
		}
		return tx.QueryRowContext(ctx, `INSERT INTO notify_shifts (user, t_from, t_to, created_by, created_at) VALUES (?, ?, ?, ?, ?) RETURNING id`,
			s.User, millis(s.From), millis(s.To), s.CreatedBy, millis(s.CreatedAt)).Scan(&s.ID)
	})
	if err != nil {
		return s, fmt.Errorf("store: shift: %w", err)
	}
	return s, nil
}

// NotifyShifts returns the shifts that overlap [from, to), by start; a zero to is no end.
func (db *DB) NotifyShifts(ctx context.Context, from, to time.Time) ([]NotifyShift, error) {
	end := int64(1<<63 - 1)
	if !to.IsZero() {
		end = millis(to)
	}
	rows, err := db.db.QueryContext(ctx, `
SELECT id, user, t_from, t_to, created_by, created_at FROM notify_shifts WHERE t_to > ? AND t_from < ? ORDER BY t_from, id LIMIT ?`,
		millis(from), end, MaxNotifyShifts)
	if err != nil {
		return nil, fmt.Errorf("store: shifts: %w", err)
	}
	defer rows.Close()
	var out []NotifyShift
	for rows.Next() {
		var s NotifyShift
		var f, t, c int64
		if err := rows.Scan(&s.ID, &s.User, &f, &t, &s.CreatedBy, &c); err != nil {
			return nil, fmt.Errorf("store: shifts: %w", err)
		}
		s.From, s.To, s.CreatedAt = fromMillis(f), fromMillis(t), fromMillis(c)
		out = append(out, s)
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("store: shifts: %w", err)
	}
	return out, nil
}

// DeleteNotifyShift removes a shift and returns it (for the audit log); ErrNotFound when there
// is none.
func (db *DB) DeleteNotifyShift(ctx context.Context, id int64) (NotifyShift, error) {
	var s NotifyShift
	err := db.inTx(ctx, func(tx *sql.Tx) error {
		var f, t, c int64
		err := tx.QueryRowContext(ctx, `SELECT id, user, t_from, t_to, created_by, created_at FROM notify_shifts WHERE id = ?`, id).
			Scan(&s.ID, &s.User, &f, &t, &s.CreatedBy, &c)
		if errors.Is(err, sql.ErrNoRows) {
			return ErrNotFound
		}
		if err != nil {
			return err
		}
		s.From, s.To, s.CreatedAt = fromMillis(f), fromMillis(t), fromMillis(c)
		_, err = tx.ExecContext(ctx, `DELETE FROM notify_shifts WHERE id = ?`, id)
		return err
	})
	if err != nil {
		return s, fmt.Errorf("store: shift %d: %w", id, err)
	}
	return s, nil
}
