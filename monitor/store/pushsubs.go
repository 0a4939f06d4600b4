package store

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"time"
)

// PushSubscription is a Web Push subscription a user made in the dashboard (Perfil →
// Notificações → "Receber avisos neste aparelho"): one browser on one device. Sub is the
// browser's PushSubscription JSON as the API checked and rewrote it; the notify package sends
// to it. An endpoint belongs to one user at a time: the browser is one, whoever signs in on it.
type PushSubscription struct {
	ID        int64
	User      string
	Endpoint  string
	Sub       string
	Label     string // the device as the browser describes itself ("Android · Chrome")
	CreatedAt time.Time
}

// AddPushSubscription stores s for s.User (its ID and CreatedAt set here) and returns it with
// the user who held the same endpoint before, if another did ("" otherwise): a browser
// subscribes once, so a second user signing in on it takes its subscription over. The same
// user subscribing again replaces the keys. A user holds at most max subscriptions
// (ErrTooMany); ErrNotFound when there is no such enabled user.
func (db *DB) AddPushSubscription(ctx context.Context, s PushSubscription, max int) (PushSubscription, string, error) {
	s.CreatedAt = db.now()
	var previous string
	err := db.inTx(ctx, func(tx *sql.Tx) error {
		var uid int64
		err := tx.QueryRowContext(ctx, `SELECT id, name FROM users WHERE name = ? AND disabled = 0`, s.User).Scan(&uid, &s.User)
		if errors.Is(err, sql.ErrNoRows) {
			return ErrNotFound
		}
		if err != nil {
			return err
		}
		var oldID, oldUID int64
		err = tx.QueryRowContext(ctx, `SELECT p.id, p.user_id, u.name FROM notify_push_subs p JOIN users u ON u.id = p.user_id WHERE p.endpoint = ?`,
			s.Endpoint).Scan(&oldID, &oldUID, &previous)
		switch {
		case errors.Is(err, sql.ErrNoRows):
		case err != nil:
			return err
		default:
			if oldUID == uid {
				previous = ""
			}
			if _, err := tx.ExecContext(ctx, `DELETE FROM notify_push_subs WHERE id = ?`, oldID); err != nil {
				return err
			}
		}
		var n int
		if err := tx.QueryRowContext(ctx, `SELECT count(*) FROM notify_push_subs WHERE user_id = ?`, uid).Scan(&n); err != nil {
			return err
		}
		if n >= max {
			return ErrTooMany
		}
		return tx.QueryRowContext(ctx, `INSERT INTO notify_push_subs (user_id, endpoint, sub, label, created_at) VALUES (?, ?, ?, ?, ?) RETURNING id`,
			uid, s.Endpoint, s.Sub, s.Label, millis(s.CreatedAt)).Scan(&s.ID)
	})
	if err != nil {
		return s, "", fmt.Errorf("store: push subscription of %q: %w", s.User, err)
	}
	return s, previous, nil
}

const pushSubColumns = `p.id, u.name, p.endpoint, p.sub, p.label, p.created_at`

func scanPushSubs(rows *sql.Rows) ([]PushSubscription, error) {
	defer rows.Close()
	var out []PushSubscription
	for rows.Next() {
		var s PushSubscription
		var at int64
		if err := rows.Scan(&s.ID, &s.User, &s.Endpoint, &s.Sub, &s.Label, &at); err != nil {
			return nil, fmt.Errorf("store: push subscriptions: %w", err)
		}
		s.CreatedAt = fromMillis(at)
		out = append(out, s)
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("store: push subscriptions: %w", err)
	}
	return out, nil
}

// PushSubscriptions returns a user's subscriptions, oldest first.
func (db *DB) PushSubscriptions(ctx context.Context, user string) ([]PushSubscription, error) {
	rows, err := db.db.QueryContext(ctx, `SELECT `+pushSubColumns+`
FROM notify_push_subs p JOIN users u ON u.id = p.user_id WHERE u.name = ? ORDER BY p.id`, user)
	if err != nil {
		return nil, fmt.Errorf("store: push subscriptions of %q: %w", user, err)
	}
	return scanPushSubs(rows)
}

// AllPushSubscriptions returns the subscriptions of the enabled users, by user: a disabled
// account is notified of nothing.
func (db *DB) AllPushSubscriptions(ctx context.Context) ([]PushSubscription, error) {
	rows, err := db.db.QueryContext(ctx, `SELECT `+pushSubColumns+`
FROM notify_push_subs p JOIN users u ON u.id = p.user_id WHERE u.disabled = 0 ORDER BY u.name, p.id`)
	if err != nil {
		return nil, fmt.Errorf("store: push subscriptions: %w", err)
	}
	return scanPushSubs(rows)
}

// DeletePushSubscription removes the user's subscription id and returns it (for the audit
// log); ErrNotFound when the user has no such subscription, another user's included.
func (db *DB) DeletePushSubscription(ctx context.Context, user string, id int64) (PushSubscription, error) {
	var s PushSubscription
	err := db.inTx(ctx, func(tx *sql.Tx) error {
		rows, err := tx.QueryContext(ctx, `SELECT `+pushSubColumns+`
FROM notify_push_subs p JOIN users u ON u.id = p.user_id WHERE u.name = ? AND p.id = ?`, user, id)
		if err != nil {
			return err
		}
		got, err := scanPushSubs(rows)
		if err != nil {
			return err
		}
		if len(got) == 0 {
			return ErrNotFound
		}
		s = got[0]
		_, err = tx.ExecContext(ctx, `DELETE FROM notify_push_subs WHERE id = ?`, id)
		return err
	})
	if err != nil {
		return s, fmt.Errorf("store: push subscription %d of %q: %w", id, user, err)
	}
	return s, nil
}

// DeletePushSubscriptionByEndpoint removes the subscription of that endpoint, whoever holds it,
// and returns it; ErrNotFound when none is stored (one of the notifications file's).
func (db *DB) DeletePushSubscriptionByEndpoint(ctx context.Context, endpoint string) (PushSubscription, error) {
	var s PushSubscription
	err := db.inTx(ctx, func(tx *sql.Tx) error {
		rows, err := tx.QueryContext(ctx, `SELECT `+pushSubColumns+`
FROM notify_push_subs p JOIN users u ON u.id = p.user_id WHERE p.endpoint = ?`, endpoint)
		if err != nil {
			return err
		}
		got, err := scanPushSubs(rows)
		if err != nil {
			return err
		}
		if len(got) == 0 {
			return ErrNotFound
		}
		s = got[0]
		_, err = tx.ExecContext(ctx, `DELETE FROM notify_push_subs WHERE id = ?`, s.ID)
		return err
	})
	if err != nil {
		return s, fmt.Errorf("store: push subscription: %w", err)
	}
	return s, nil
}
