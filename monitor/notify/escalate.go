package notify

import (
	"context"
	"fmt"
	"log/slog"
	"time"

	"github.com/trenzinho/trenzinho/monitor/store"
	"github.com/trenzinho/trenzinho/rules"
)

// EscalationStore finds the alerts nobody acknowledged and records their escalation;
// *store.DB implements it.
type EscalationStore interface {
	// Unescalated lists the episodes started in [from, to], still "novo" and never escalated.
	Unescalated(ctx context.Context, from, to time.Time, limit int) ([]store.EpisodeRef, error)
	// MarkEscalated records the escalation once, audited; false when it was escalated or
	// acknowledged meanwhile.
	MarkEscalated(ctx context.Context, id string, at time.Time, to []string) (*rules.Episode, bool, error)
}

// Escalation is the policy: an alert of MinSeverity or more that nobody acknowledged (or
// assigned, or cleared) After its start is sent once more, to the users To (the supervisors).
type Escalation struct {
	MinSeverity Severity
	After       time.Duration
	To          []string
	// MaxAge bounds how old an alert may be to be escalated: an episode the monitor learns of
	// late (a bridge that was offline for a day) or the backlog of the day escalation is
	// switched on are not sent to the supervisors in bulk. 12 h when zero.
	MaxAge time.Duration
}

// DefaultEscalationMaxAge is Escalation.MaxAge when zero.
const DefaultEscalationMaxAge = 12 * time.Hour

// Escalator applies an Escalation: each Check escalates the alerts due, through the
// dispatcher, each at most once (the store's mark comes first: a message lost afterwards goes
// to the dead letters, never twice to the supervisor).
type Escalator struct {
	Policy     Escalation
	Store      EscalationStore
	Dispatcher *Dispatcher
	Clock      Clock                       // the real clock when nil
	Severity   func(rule string) Severity  // DefaultSeverity when nil
	Licensee   func(vehicle string) string // nil: unknown
	Logger     *slog.Logger                // slog.Default() when nil
}

// escalationBatch bounds the candidates one Check reads.
const escalationBatch = 500

// Check escalates every alert due now and returns how many it escalated.
func (e *Escalator) Check(ctx context.Context) (int, error) {
	clock := e.Clock
	if clock == nil {
		clock = realClock{}
	}
	log := e.Logger
	if log == nil {
		log = slog.Default()
	}
	severity := e.Severity
	if severity == nil {
		severity = DefaultSeverity
	}
	maxAge := e.Policy.MaxAge
	if maxAge <= 0 {
		maxAge = DefaultEscalationMaxAge
	}
	now := clock.Now()
	from, to := now.Add(-maxAge), now.Add(-e.Policy.After)
	n := 0
	for {
		refs, err := e.Store.Unescalated(ctx, from, to, escalationBatch)
		if err != nil {
			return n, fmt.Errorf("escalation: %w", err)
		}
		for _, r := range refs {
			// A severity below the policy's leaves the episode a candidate: the next pages
			// start after it.
			from = r.Start
			sev := severity(r.Rule)
			if sev < e.Policy.MinSeverity {
				continue
			}
			ep, ok, err := e.Store.MarkEscalated(ctx, r.ID, now, e.Policy.To)
			if err != nil {
				return n, fmt.Errorf("escalation: %w", err)
			}
			if !ok {
				continue
			}
			var licensee string
			if e.Licensee != nil {
				licensee = e.Licensee(ep.Vehicle)
			}
			a := FromEpisode(ep, licensee, sev)
			a.Unacknowledged = now.Sub(ep.Start.Time)
			e.Dispatcher.Escalate(a, e.Policy.To)
			log.Info("alert escalated", "episode", ep.ID, "rule", ep.Rule, "to", e.Policy.To, "unacknowledged", a.Unacknowledged)
			n++
		}
		if len(refs) < escalationBatch {
			return n, nil
		}
		// Same start as the last one of the page: step past it by a millisecond (the store's
		// precision) so that a page of low-severity episodes cannot hold the loop.
		from = from.Add(time.Millisecond)
	}
}

// Run checks every tick (30 s when zero) until ctx ends.
func (e *Escalator) Run(ctx context.Context, tick time.Duration) {
	if tick <= 0 {
		tick = 30 * time.Second
	}
	t := time.NewTicker(tick)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
		if _, err := e.Check(ctx); err != nil && ctx.Err() == nil {
			if e.Logger != nil {
				e.Logger.Error("escalation failed", "err", err)
			} else {
				slog.Error("escalation failed", "err", err)
			}
		}
	}
}
