package notify

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"time"

	"github.com/trenzinho/trenzinho/monitor/store"
)

// DeadLetterStore keeps the dead letters across restarts; *store.DB implements it.
type DeadLetterStore interface {
	AddNotifyDeadLetter(ctx context.Context, l store.NotifyDeadLetter, keep int, maxAge time.Duration) (int64, error)
	NotifyDeadLetters(ctx context.Context, limit int, cursor string) ([]store.NotifyDeadLetter, string, error)
	NotifyDeadLetter(ctx context.Context, id int64) (*store.NotifyDeadLetter, error)
	DeleteNotifyDeadLetter(ctx context.Context, id int64) error
	NotifyDeadLetterRetryFailed(ctx context.Context, id int64, at time.Time, msg string) error
}

// Errors of RetryDeadLetter besides the channel's own and store.ErrNotFound.
var (
	ErrNoDeadLetterStore = errors.New("notify: dead letters are not stored")
	ErrNoChannel         = errors.New("notify: the dead letter's channel is not configured")
)

// stored is what a stored dead letter keeps to compose its message again.
type stored struct {
	Alerts []Alert `json:"alerts"`
	More   int     `json:"more,omitempty"`
}

// storeDeadLetter keeps a given-up delivery in the store, with what it takes to send it again.
func (d *Dispatcher) storeDeadLetter(ctx context.Context, dl *delivery, l DeadLetter) error {
	alerts, err := json.Marshal(stored{Alerts: dl.alerts, More: dl.more})
	if err != nil {
		return err
	}
	// The send's context may be near its end; the letter must outlive it.
	ctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 10*time.Second)
	defer cancel()
	_, err = d.cfg.DeadLetterStore.AddNotifyDeadLetter(ctx, store.NotifyDeadLetter{
		At: l.At, User: l.User, Channel: l.Channel, Address: dl.to, Display: l.To, Subject: l.Subject,
		Episodes: l.Episodes, Alerts: alerts, Attempts: l.Attempts, Error: l.Error,
	}, d.cfg.MaxDeadLetters, d.cfg.DeadLetterMaxAge)
	return err
}

// ListDeadLetters lists the stored dead letters, newest first, by pages (store.NotifyDeadLetters).
func (d *Dispatcher) ListDeadLetters(ctx context.Context, limit int, cursor string) ([]store.NotifyDeadLetter, string, error) {
	if d.cfg.DeadLetterStore == nil {
		return nil, "", ErrNoDeadLetterStore
	}
	return d.cfg.DeadLetterStore.NotifyDeadLetters(ctx, limit, cursor)
}

// RetryDeadLetter sends a stored dead letter again, once, now, composed as it was: delivered,
// it is deleted (the caller audits the retry); failed, it stays with the retry's time and error,
// and the error is returned. It does not go through the grouping window nor the queue: an admin
// asked for this one message.
func (d *Dispatcher) RetryDeadLetter(ctx context.Context, id int64) error {
	if d.cfg.DeadLetterStore == nil {
		return ErrNoDeadLetterStore
	}
	d.retryMu.Lock()
	defer d.retryMu.Unlock()
	l, err := d.cfg.DeadLetterStore.NotifyDeadLetter(ctx, id)
	if err != nil {
		return err
	}
	ch, ok := d.cfg.Channels[l.Channel]
	if !ok {
		return fmt.Errorf("%w: %s", ErrNoChannel, l.Channel)
	}
	var st stored
	if err := json.Unmarshal(l.Alerts, &st); err != nil || len(st.Alerts) == 0 {
		return fmt.Errorf("notify: dead letter %d: no alerts to compose from", id)
	}
	m := d.cfg.Composer.Compose(st.Alerts, st.More)
	sendErr := ch.Send(ctx, l.Address, m)
	if sendErr == nil {
		d.metrics.sent.WithLabelValues(l.Channel).Inc()
		d.log.Info("notify: dead letter delivered on retry", "id", id, "channel", l.Channel, "user", l.User)
		return d.cfg.DeadLetterStore.DeleteNotifyDeadLetter(context.WithoutCancel(ctx), id)
	}
	if err := d.cfg.DeadLetterStore.NotifyDeadLetterRetryFailed(context.WithoutCancel(ctx), id, d.clock.Now(), sendErr.Error()); err != nil {
		d.log.Error("notify: dead letter retry not recorded", "id", id, "err", err)
	}
	return sendErr
}
