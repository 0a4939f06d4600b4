package store

import (
	"context"
	"fmt"
	"time"
)

// VehicleDays are the calendar days on which a vehicle's logged batches carry readings.
type VehicleDays struct {
	Vehicle string
	Days    []string // "2026-11-29", ascending
}

// DefaultBatchRetention is how long the batch log keeps a batch unless told otherwise (the
// judge prunes it; drafts take their evidence from it within minutes).
const DefaultBatchRetention = 48 * time.Hour

// ActivityDays returns, for each vehicle with logged batches overlapping [from, to], the local
// days (at offset east of UTC) its batches' readings fall on. A batch spanning midnight counts
// on the days of its first and last readings. The log is pruned after its retention period:
// for days before it, no batch does not mean no data.
func (db *DB) ActivityDays(ctx context.Context, from, to time.Time, offset time.Duration) ([]VehicleDays, error) {
	off := offset.Milliseconds()
	rows, err := db.db.QueryContext(ctx, `
SELECT vehicle, (t_min + ?) / 86400000 AS d0, (t_max + ?) / 86400000 AS d1 FROM batch_log
WHERE t_max >= ? AND t_min <= ?
GROUP BY vehicle, d0, d1
ORDER BY vehicle`, off, off, millis(from), millis(to))
	if err != nil {
		return nil, fmt.Errorf("store: activity: %w", err)
	}
	defer rows.Close()
	var out []VehicleDays
	seen := map[string]map[int64]bool{}
	for rows.Next() {
		var v string
		var d0, d1 int64
		if err := rows.Scan(&v, &d0, &d1); err != nil {
			return nil, fmt.Errorf("store: activity: %w", err)
		}
		if len(out) == 0 || out[len(out)-1].Vehicle != v {
			out = append(out, VehicleDays{Vehicle: v})
			seen[v] = map[int64]bool{}
		}
		// A batch is short (at most 600 readings): its first and last readings' days. (Only the
		// ends: a batch mixing clocks must not make a week of data out of two readings.)
		seen[v][d0], seen[v][d1] = true, true
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("store: activity: %w", err)
	}
	lo, hi := (millis(from)+off)/86400000, (millis(to)+off)/86400000
	for i := range out {
		for d := lo; d <= hi; d++ {
			if seen[out[i].Vehicle][d] {
				out[i].Days = append(out[i].Days, time.UnixMilli(d*86400000).UTC().Format(time.DateOnly))
			}
		}
	}
	return out, nil
}
