package store

import (
	"context"
	"database/sql"
	"encoding/json"
	"fmt"
	"slices"
	"time"
)

// TelemetryGap is the longest pause between two consecutive logged batches of a vehicle that
// still counts as one stretch of service: a bridge sends a batch every few seconds while it
// runs, so a longer silence is the vehicle off (or out of coverage), not in service.
const TelemetryGap = 60 * time.Second

// ServiceDay is what the monitor observed of one vehicle on one local day, for the
// transparency report (docs/transparency.md).
type ServiceDay struct {
	Vehicle string
	Day     string // YYYY-MM-DD in the report's time zone
	// TelemetryS is the time covered by the vehicle's logged batches, in seconds: the union of
	// the spans from each batch's first to its last reading, pauses of up to TelemetryGap
	// between batches closed.
	TelemetryS float64
	// OffenceS is the part of TelemetryS during an episode of a rule of the law that can ground
	// an auto as observed (grounds_auto) or that an agent verified, in seconds. Device faults
	// and alerts the law does not let the monitor assert are not counted against the licensee.
	OffenceS float64
	// Episodes counts, by rule, the episodes that started on the day.
	Episodes map[string]int
}

// IssuedNotice is a notice issued in the report's period, as the transparency report counts
// it: who was fined (the registry's licensee id) and under which articles.
type IssuedNotice struct {
	Licensee string
	Articles []string
	Warning  bool   // a notificação preliminar (Art. 41, I), not an auto de infração
	State    string // the case's state now (penalty.Status): its outcome for the report
}

// Transparency is the raw material of the public transparency report for [From, To).
type Transparency struct {
	From, To time.Time
	Days     []ServiceDay   // by vehicle, then day
	Issued   []IssuedNotice // notices issued in the period, in order of issue
	// TelemetrySince is the first reading still in the batch log (pruned after its retention
	// period): service time before it is not counted. Zero: the log is empty.
	TelemetrySince time.Time
}

type span struct{ from, to int64 } // milliseconds, from < to

// Transparency gathers, for the period [from, to), the vehicles' service time by local day (in
// loc), the time of their episodes, the episodes by rule and the notices issued. It reads no
// position, no driver and no personal data.
func (db *DB) Transparency(ctx context.Context, from, to time.Time, loc *time.Location) (*Transparency, error) {
	lo, hi := millis(from), millis(to)
	out := &Transparency{From: from, To: to}

	var since *int64
	if err := db.db.QueryRowContext(ctx, `
SELECT MIN(t) FROM (SELECT MIN(t_min) AS t FROM batch_log UNION ALL SELECT MIN(t_from) FROM service_spans)`).Scan(&since); err != nil {
		return nil, fmt.Errorf("store: transparency: %w", err)
	}
	if since != nil {
		out.TelemetrySince = fromMillis(*since)
	}

	// Service: the logged batches' spans and those kept of the pruned ones, merged per vehicle.
	service := map[string][]span{}
	rows, err := db.db.QueryContext(ctx, `
SELECT vehicle, t_min, t_max FROM batch_log
WHERE t_max >= ?1 AND t_min < ?2 AND t_max >= t_min
UNION ALL
SELECT vehicle, t_from, t_to FROM service_spans WHERE t_to >= ?1 AND t_from < ?2
ORDER BY 1, 2`, lo-TelemetryGap.Milliseconds(), hi)
	if err != nil {
		return nil, fmt.Errorf("store: transparency: %w", err)
	}
	for rows.Next() {
		var v string
		var s span
		if err := rows.Scan(&v, &s.from, &s.to); err != nil {
			rows.Close()
			return nil, fmt.Errorf("store: transparency: %w", err)
		}
		ss := service[v]
		if n := len(ss); n > 0 && s.from-ss[n-1].to <= TelemetryGap.Milliseconds() {
			ss[n-1].to = max(ss[n-1].to, s.to)
		} else {
			ss = append(ss, s)
		}
		service[v] = ss
	}
	rows.Close()
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("store: transparency: %w", err)
	}

	// Episodes: counted on the day they started; their time against the licensee only when
	// they can ground an auto or an agent verified them.
	type dayRule struct{ vehicle, day, rule string }
	counts := map[dayRule]int{}
	offences := map[string][]span{}
	rows, err = db.db.QueryContext(ctx, `
SELECT vehicle, rule, start_at, COALESCE(end_at, ?),
	COALESCE(json_extract(doc, '$.article'), '') != ''
	AND (json_type(doc, '$.grounds_auto') = 'true' OR json_type(doc, '$.verification') = 'object')
FROM episodes WHERE start_at < ? AND COALESCE(end_at, ?) >= ?
ORDER BY vehicle, start_at`, hi, hi, hi, lo)
	if err != nil {
		return nil, fmt.Errorf("store: transparency: %w", err)
	}
	for rows.Next() {
		var v, rule string
		var s span
		var against bool
		if err := rows.Scan(&v, &rule, &s.from, &s.to, &against); err != nil {
			rows.Close()
			return nil, fmt.Errorf("store: transparency: %w", err)
		}
		if s.from >= lo {
			counts[dayRule{v, fromMillis(s.from).In(loc).Format(time.DateOnly), rule}]++
		}
		if against && s.to > s.from {
			offences[v] = append(offences[v], s)
		}
	}
	rows.Close()
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("store: transparency: %w", err)
	}

	days := map[[2]string]*ServiceDay{}
	day := func(v, d string) *ServiceDay {
		k := [2]string{v, d}
		if days[k] == nil {
			days[k] = &ServiceDay{Vehicle: v, Day: d, Episodes: map[string]int{}}
		}
		return days[k]
	}
	for v, ss := range service {
		ss = clip(ss, lo, hi)
		for _, part := range splitDays(ss, loc) {
			day(v, part.day).TelemetryS += part.seconds
		}
		for _, part := range splitDays(intersect(ss, merge(offences[v])), loc) {
			day(v, part.day).OffenceS += part.seconds
		}
	}
	for k, n := range counts {
		day(k.vehicle, k.day).Episodes[k.rule] += n
	}
	for _, d := range days {
		out.Days = append(out.Days, *d)
	}
	slices.SortFunc(out.Days, func(a, b ServiceDay) int {
		if a.Vehicle != b.Vehicle {
			if a.Vehicle < b.Vehicle {
				return -1
			}
			return 1
		}
		if a.Day < b.Day {
			return -1
		}
		if a.Day > b.Day {
			return 1
		}
		return 0
	})

	// Notices issued in the period.
	rows, err = db.db.QueryContext(ctx, `SELECT licensee, doc, state FROM cases WHERE issued_at >= ? AND issued_at < ? ORDER BY issued_at, id`, lo, hi)
	if err != nil {
		return nil, fmt.Errorf("store: transparency: %w", err)
	}
	defer rows.Close()
	for rows.Next() {
		var licensee, doc, state string
		if err := rows.Scan(&licensee, &doc, &state); err != nil {
			return nil, fmt.Errorf("store: transparency: %w", err)
		}
		var d CaseDoc
		if err := json.Unmarshal([]byte(doc), &d); err != nil {
			return nil, fmt.Errorf("store: transparency: case doc: %w", err)
		}
		out.Issued = append(out.Issued, IssuedNotice{Licensee: licensee, Articles: d.Articles, Warning: d.Warning, State: state})
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("store: transparency: %w", err)
	}
	return out, nil
}

// keepServiceSpans adds to service_spans the merged spans of the logged batches received
// before (milliseconds), which the caller is about to prune.
func keepServiceSpans(ctx context.Context, tx *sql.Tx, before int64) error {
	rows, err := tx.QueryContext(ctx, `
SELECT vehicle, t_min, t_max FROM batch_log WHERE received_at < ? AND t_max >= t_min ORDER BY vehicle, t_min`, before)
	if err != nil {
		return fmt.Errorf("service spans: %w", err)
	}
	type vspan struct {
		vehicle string
		span
	}
	var keep []vspan
	for rows.Next() {
		var v vspan
		if err := rows.Scan(&v.vehicle, &v.from, &v.to); err != nil {
			rows.Close()
			return fmt.Errorf("service spans: %w", err)
		}
		if n := len(keep); n > 0 && keep[n-1].vehicle == v.vehicle && v.from-keep[n-1].to <= TelemetryGap.Milliseconds() {
			keep[n-1].to = max(keep[n-1].to, v.to)
			continue
		}
		keep = append(keep, v)
	}
	rows.Close()
	if err := rows.Err(); err != nil {
		return fmt.Errorf("service spans: %w", err)
	}
	for _, v := range keep {
		if _, err := tx.ExecContext(ctx, `
INSERT INTO service_spans (vehicle, t_from, t_to) VALUES (?, ?, ?)
ON CONFLICT (vehicle, t_from) DO UPDATE SET t_to = max(t_to, excluded.t_to)`, v.vehicle, v.from, v.to); err != nil {
			return fmt.Errorf("service spans: %w", err)
		}
	}
	return nil
}

// merge sorts spans and joins those that overlap or touch.
func merge(ss []span) []span {
	ss = slices.Clone(ss)
	slices.SortFunc(ss, func(a, b span) int { return int(min(max(a.from-b.from, -1), 1)) })
	var out []span
	for _, s := range ss {
		if n := len(out); n > 0 && s.from <= out[n-1].to {
			out[n-1].to = max(out[n-1].to, s.to)
			continue
		}
		out = append(out, s)
	}
	return out
}

// clip cuts sorted, disjoint spans to [lo, hi).
func clip(ss []span, lo, hi int64) []span {
	var out []span
	for _, s := range ss {
		s.from, s.to = max(s.from, lo), min(s.to, hi)
		if s.to > s.from {
			out = append(out, s)
		}
	}
	return out
}

// intersect returns the common part of two lists of sorted, disjoint spans.
func intersect(a, b []span) []span {
	var out []span
	for i, j := 0, 0; i < len(a) && j < len(b); {
		from, to := max(a[i].from, b[j].from), min(a[i].to, b[j].to)
		if to > from {
			out = append(out, span{from, to})
		}
		if a[i].to < b[j].to {
			i++
		} else {
			j++
		}
	}
	return out
}

type daySeconds struct {
	day     string
	seconds float64
}

// splitDays cuts spans at local midnights (in loc) and returns each piece's day and length.
func splitDays(ss []span, loc *time.Location) []daySeconds {
	var out []daySeconds
	for _, s := range ss {
		for from := s.from; from < s.to; {
			t := fromMillis(from).In(loc)
			y, m, d := t.Date()
			next := millis(time.Date(y, m, d+1, 0, 0, 0, 0, loc))
			to := min(s.to, next)
			out = append(out, daySeconds{t.Format(time.DateOnly), float64(to-from) / 1000})
			from = to
		}
	}
	return out
}
