package store

import (
	"context"
	"database/sql"
	"fmt"
	"math"
	"time"

	"github.com/trenzinho/trenzinho/monitor/drafts"
	"github.com/trenzinho/trenzinho/wire"
)

// Warning is a warning of a bridge's driver's coach as stored (docs/protocol.md §2.7): with its
// vehicle, the vehicle's licensee when it was judged, and the batch that carried it.
type Warning struct {
	Vehicle  string `json:"vehicle"`
	Licensee string `json:"licensee,omitempty"`
	drafts.Warning
	Epoch string `json:"epoch"`
	Seq   uint64 `json:"seq"`
}

// WarningFilter selects warnings; zero fields select all.
type WarningFilter struct {
	Vehicle  string
	Licensee string
	From, To time.Time // device time, [From, To]
}

// insertWarnings stores the warnings of judged batches in tx, in the transaction of their
// judgement: a warning is stored exactly once however often its batch is delivered (the key is
// the vehicle, time, kind, rule and site: a replay is a no-op).
func (db *DB) insertWarnings(ctx context.Context, tx *sql.Tx, bs []Batch) error {
	n := 0
	for _, b := range bs {
		n += len(b.Warnings)
	}
	if n == 0 {
		return nil
	}
	stmt, err := db.txStmt(ctx, tx, `
INSERT INTO warnings (vehicle, t, kind, rule, site, licensee, clock, distance_m, value, limit_value, epoch, seq)
VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?) ON CONFLICT DO NOTHING`)
	if err != nil {
		return err
	}
	for _, b := range bs {
		if b.Seq > math.MaxInt64 {
			return fmt.Errorf("batch %s/%s/%d: seq out of range: %w", b.Vehicle, b.Epoch, b.Seq, ErrRefused)
		}
		for _, w := range b.Warnings {
			if _, err := stmt.ExecContext(ctx, b.Vehicle, millis(w.T.Time), string(w.Kind), w.Rule, w.Site, b.Licensee,
				string(b.Clock), w.DistanceM, w.Value, w.Limit, b.Epoch, int64(b.Seq)); err != nil {
				return fmt.Errorf("warning of batch %s/%s/%d: %w", b.Vehicle, b.Epoch, b.Seq, err)
			}
		}
	}
	return nil
}

// Warnings returns the warnings f selects, oldest first, at most limit.
func (db *DB) Warnings(ctx context.Context, f WarningFilter, limit int) ([]Warning, error) {
	q := `SELECT vehicle, licensee, t, kind, rule, site, clock, distance_m, value, limit_value, epoch, seq FROM warnings WHERE 1 = 1`
	var args []any
	if f.Vehicle != "" {
		q += ` AND vehicle = ?`
		args = append(args, f.Vehicle)
	}
	if f.Licensee != "" {
		q += ` AND licensee = ?`
		args = append(args, f.Licensee)
	}
	if !f.From.IsZero() {
		q += ` AND t >= ?`
		args = append(args, millis(f.From))
	}
	if !f.To.IsZero() {
		q += ` AND t <= ?`
		args = append(args, millis(f.To))
	}
	q += ` ORDER BY t, vehicle, kind, rule, site LIMIT ?`
	args = append(args, limit)
	rows, err := db.db.QueryContext(ctx, q, args...)
	if err != nil {
		return nil, fmt.Errorf("store: warnings: %w", err)
	}
	defer rows.Close()
	var out []Warning
	for rows.Next() {
		var w Warning
		var t, seq int64
		var kind, clock string
		var dist, value, lim sql.NullFloat64
		if err := rows.Scan(&w.Vehicle, &w.Licensee, &t, &kind, &w.Rule, &w.Site, &clock, &dist, &value, &lim, &w.Epoch, &seq); err != nil {
			return nil, fmt.Errorf("store: warnings: %w", err)
		}
		w.T, w.Kind, w.Clock, w.Seq = wire.NewTime(fromMillis(t)), wire.WarningKind(kind), wire.Clock(clock), uint64(seq)
		w.DistanceM, w.Value, w.Limit = nullFloat(dist), nullFloat(value), nullFloat(lim)
		out = append(out, w)
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("store: warnings: %w", err)
	}
	return out, nil
}

func nullFloat(f sql.NullFloat64) *float64 {
	if !f.Valid {
		return nil
	}
	return &f.Float64
}

// maxVehicleWarnings bounds the warnings read for one draft or one episode's timeline: a coach
// warns a few times a minute at most.
const maxVehicleWarnings = 1000

// VehicleWarnings returns the vehicle's warnings timed within [from, to], oldest first (the
// drafter's drafts.Store).
func (db *DB) VehicleWarnings(ctx context.Context, vehicle string, from, to time.Time) ([]drafts.Warning, error) {
	ws, err := db.Warnings(ctx, WarningFilter{Vehicle: vehicle, From: from, To: to}, maxVehicleWarnings)
	if err != nil {
		return nil, err
	}
	out := make([]drafts.Warning, len(ws))
	for i := range ws {
		out[i] = ws[i].Warning
	}
	return out, nil
}

// LicenseeWarnings counts a licensee's warnings of a period by what followed them
// (docs/rules.md, "Warnings of the driver's coach").
type LicenseeWarnings struct {
	Licensee string `json:"licensee"`
	Warnings int    `json:"warnings"`
	// Heeded: no episode of the warning's rule (and site, when both name one) of that vehicle
	// was open at any time within [t, t + within].
	Heeded int `json:"heeded"`
	// Followed: such an episode was.
	Followed int `json:"followed"`
	// Pending: not followed yet, and within has not passed since the warning (at now).
	Pending int `json:"pending"`
}

// WarningSummary counts, per licensee, the warnings timed within [from, to) that were heeded,
// followed by an episode within the given time, or still pending at now.
func (db *DB) WarningSummary(ctx context.Context, from, to, now time.Time, within time.Duration) ([]LicenseeWarnings, error) {
	q := `
SELECT w.licensee, w.t, EXISTS (
	SELECT 1 FROM episodes e
	WHERE e.vehicle = w.vehicle AND e.rule = w.rule AND e.start_at <= w.t + ?
	  AND (e.end_at IS NULL OR e.end_at >= w.t)
	  AND (w.site = '' OR coalesce(json_extract(e.doc, '$.site.id'), '') IN ('', w.site))
) FROM warnings w WHERE 1 = 1`
	args := []any{within.Milliseconds()}
	if !from.IsZero() {
		q += ` AND w.t >= ?`
		args = append(args, millis(from))
	}
	if !to.IsZero() {
		q += ` AND w.t < ?`
		args = append(args, millis(to))
	}
	q += ` ORDER BY w.licensee`
	rows, err := db.db.QueryContext(ctx, q, args...)
	if err != nil {
		return nil, fmt.Errorf("store: warning summary: %w", err)
	}
	defer rows.Close()
	var out []LicenseeWarnings
	for rows.Next() {
		var licensee string
		var t int64
		var followed bool
		if err := rows.Scan(&licensee, &t, &followed); err != nil {
			return nil, fmt.Errorf("store: warning summary: %w", err)
		}
		if len(out) == 0 || out[len(out)-1].Licensee != licensee {
			out = append(out, LicenseeWarnings{Licensee: licensee})
		}
		l := &out[len(out)-1]
		l.Warnings++
		switch {
		case followed:
			l.Followed++
		case fromMillis(t).Add(within).After(now):
			l.Pending++
		default:
			l.Heeded++
		}
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("store: warning summary: %w", err)
	}
	return out, nil
}
