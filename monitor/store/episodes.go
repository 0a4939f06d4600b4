package store

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"strconv"
	"strings"
	"time"

	"github.com/trenzinho/trenzinho/rules"
	"github.com/trenzinho/trenzinho/wire"
)

// EpisodeFilter selects episodes; zero fields select everything.
type EpisodeFilter struct {
	Vehicle string
	Rule    string
	// From and To select the episodes that overlap [From, To): started before To and not
	// ended before From (an open episode has not ended). Either may be zero.
	From, To time.Time
	Open     *bool // only open (true) or only closed (false) episodes
	// Triage selects the episodes in one triage state (triage.go); Assignee those assigned
	// to one user.
	Triage   TriageState
	Assignee string
}

// UpsertEpisode stores the current state of e, replacing the one stored under its ID, and adds
// the readings of newEvidence it does not have yet: a reading is known by (kind, epoch, seq, t),
// so a replayed batch adds nothing. e.Readings is not stored; pass the readings in newEvidence.
func (db *DB) UpsertEpisode(ctx context.Context, e *rules.Episode, newEvidence []rules.Evidence) error {
	doc, err := episodeDoc(e, newEvidence)
	if err != nil {
		return err
	}
	err = db.inTx(ctx, func(tx *sql.Tx) error { return db.upsertEpisode(ctx, tx, e, doc, newEvidence) })
	if err != nil {
		return fmt.Errorf("store: upsert episode %s: %w", e.ID, err)
	}
	return nil
}

// episodeDoc checks an episode and its new evidence and returns the JSON document stored.
func episodeDoc(e *rules.Episode, newEvidence []rules.Evidence) (string, error) {
	if e.ID == "" || e.Vehicle == "" || e.Rule == "" || e.Start.IsZero() {
		return "", fmt.Errorf("store: upsert episode %q: id, vehicle, rule and start are required: %w", e.ID, ErrRefused)
	}
	for i, r := range newEvidence {
		if r.Seq > math.MaxInt64 {
			return "", fmt.Errorf("store: upsert episode %s: evidence %d: seq %d out of range: %w", e.ID, i, r.Seq, ErrRefused)
		}
		if r.T.IsZero() || r.Kind == "" {
			return "", fmt.Errorf("store: upsert episode %s: evidence %d: kind and t are required: %w", e.ID, i, ErrRefused)
		}
	}
	doc := *e
	doc.Readings = nil
	b, err := json.Marshal(&doc)
	if err != nil {
		return "", fmt.Errorf("store: upsert episode %s: %w", e.ID, err)
	}
	return string(b), nil
}

func (db *DB) upsertEpisode(ctx context.Context, tx *sql.Tx, e *rules.Episode, doc string, newEvidence []rules.Evidence) error {
	var end sql.NullInt64
	if e.End != nil {
		end = sql.NullInt64{Int64: millis(e.End.Time), Valid: true}
	}
	{
		upsert, err := db.txStmt(ctx, tx, `
INSERT INTO episodes (id, vehicle, rule, start_at, end_at, open, doc, updated_at)
VALUES (?, ?, ?, ?, ?, ?, ?, ?)
ON CONFLICT (id) DO UPDATE SET
	vehicle = excluded.vehicle, rule = excluded.rule, start_at = excluded.start_at,
	end_at = excluded.end_at, open = excluded.open,
	-- The agent's verification is the store's, not the engine's: it survives the engine's
	-- updates of the episode.
	doc = CASE WHEN json_type(episodes.doc, '$.verification') = 'object'
		THEN json_set(excluded.doc, '$.verification', json_extract(episodes.doc, '$.verification'))
		ELSE excluded.doc END,
	updated_at = excluded.updated_at`)
		if err != nil {
			return err
		}
		_, err = upsert.ExecContext(ctx, e.ID, e.Vehicle, e.Rule, millis(e.Start.Time), end, e.Open(), doc, millis(db.now()))
		if err != nil || len(newEvidence) == 0 {
			return err
		}
		stmt, err := db.txStmt(ctx, tx, `
INSERT INTO evidence (episode_id, kind, epoch, seq, t, value, unit, lat, lon)
VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)
ON CONFLICT DO NOTHING`)
		if err != nil {
			return err
		}
		for _, r := range newEvidence {
			_, err := stmt.ExecContext(ctx, e.ID, r.Kind, r.Epoch, int64(r.Seq), millis(r.T.Time), r.Value, r.Unit, r.Lat, r.Lon)
			if err != nil {
				return err
			}
		}
		return nil
	}
}

// Episode returns the episode id with its readings in time order, or ErrNotFound.
func (db *DB) Episode(ctx context.Context, id string) (*rules.Episode, error) {
	var doc string
	err := db.db.QueryRowContext(ctx, `SELECT doc FROM episodes WHERE id = ?`, id).Scan(&doc)
	if errors.Is(err, sql.ErrNoRows) {
		return nil, fmt.Errorf("store: episode %q: %w", id, ErrNotFound)
	}
	if err != nil {
		return nil, fmt.Errorf("store: episode %q: %w", id, err)
	}
	var e rules.Episode
	if err := json.Unmarshal([]byte(doc), &e); err != nil {
		return nil, fmt.Errorf("store: episode %q: %w", id, err)
	}
	rows, err := db.db.QueryContext(ctx, `
SELECT kind, epoch, seq, t, value, unit, lat, lon FROM evidence
WHERE episode_id = ? ORDER BY t, kind, epoch, seq`, id)
	if err != nil {
		return nil, fmt.Errorf("store: evidence of episode %q: %w", id, err)
	}
	defer rows.Close()
	for rows.Next() {
		var r rules.Evidence
		var seq, t int64
		if err := rows.Scan(&r.Kind, &r.Epoch, &seq, &t, &r.Value, &r.Unit, &r.Lat, &r.Lon); err != nil {
			return nil, fmt.Errorf("store: evidence of episode %q: %w", id, err)
		}
		r.Seq = uint64(seq)
		r.T = wire.Time{Time: fromMillis(t)}
		e.Readings = append(e.Readings, r)
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("store: evidence of episode %q: %w", id, err)
	}
	return &e, nil
}

// Episodes returns up to limit episodes matching f, the latest start first (then by id), after
// the page that ended at cursor ("" for the first page), and the cursor of the next page (""
// when there is none). The episodes come without their readings.
func (db *DB) Episodes(ctx context.Context, f EpisodeFilter, limit int, cursor string) ([]rules.Episode, string, error) {
	limit = clampLimit(limit)
	var where []string
	var args []any
	if cursor != "" {
		start, id, err := decodeEpisodeCursor(cursor)
		if err != nil {
			return nil, "", err
		}
		where = append(where, "(start_at < ? OR (start_at = ? AND id > ?))")
		args = append(args, start, start, id)
	}
	if f.Vehicle != "" {
		where, args = append(where, "vehicle = ?"), append(args, f.Vehicle)
	}
	if f.Rule != "" {
		where, args = append(where, "rule = ?"), append(args, f.Rule)
	}
	if !f.From.IsZero() {
		where, args = append(where, "(end_at IS NULL OR end_at >= ?)"), append(args, millis(f.From))
	}
	if !f.To.IsZero() {
		where, args = append(where, "start_at < ?"), append(args, millis(f.To))
	}
	if f.Open != nil {
		where, args = append(where, "open = ?"), append(args, *f.Open)
	}
	if f.Triage != "" {
		where = append(where, "coalesce((SELECT state FROM episode_triage t WHERE t.episode_id = episodes.id), 'novo') = ?")
		args = append(args, string(f.Triage))
	}
	if f.Assignee != "" {
		where = append(where, "EXISTS (SELECT 1 FROM episode_triage t WHERE t.episode_id = episodes.id AND t.assignee = ? COLLATE NOCASE)")
		args = append(args, f.Assignee)
	}
	q := `SELECT start_at, doc FROM episodes`
	if len(where) > 0 {
		q += ` WHERE ` + strings.Join(where, " AND ")
	}
	q += ` ORDER BY start_at DESC, id LIMIT ?`
	args = append(args, limit+1)

	eps, starts, err := db.queryEpisodes(ctx, q, args...)
	if err != nil {
		return nil, "", fmt.Errorf("store: list episodes: %w", err)
	}
	var next string
	if len(eps) > limit {
		eps = eps[:limit]
		next = encodeCursor(strconv.FormatInt(starts[limit-1], 10) + ":" + eps[limit-1].ID)
	}
	return eps, next, nil
}

// OpenEpisodes returns every episode that has not closed, the latest start first. The monitor
// reads them at start to resume its rules.
func (db *DB) OpenEpisodes(ctx context.Context) ([]rules.Episode, error) {
	eps, _, err := db.queryEpisodes(ctx, `SELECT start_at, doc FROM episodes WHERE open = 1 ORDER BY start_at DESC, id`)
	if err != nil {
		return nil, fmt.Errorf("store: open episodes: %w", err)
	}
	return eps, nil
}

// queryEpisodes runs q, which selects (start_at, doc), and decodes the episodes.
func (db *DB) queryEpisodes(ctx context.Context, q string, args ...any) ([]rules.Episode, []int64, error) {
	rows, err := db.db.QueryContext(ctx, q, args...)
	if err != nil {
		return nil, nil, err
	}
	defer rows.Close()
	var (
		eps    []rules.Episode
		starts []int64
	)
	for rows.Next() {
		var start int64
		var doc []byte
		if err := rows.Scan(&start, &doc); err != nil {
			return nil, nil, err
		}
		eps = append(eps, rules.Episode{})
		if err := json.Unmarshal(doc, &eps[len(eps)-1]); err != nil {
			return nil, nil, err
		}
		starts = append(starts, start)
	}
	if err := rows.Err(); err != nil {
		return nil, nil, err
	}
	return eps, starts, nil
}

func decodeEpisodeCursor(cursor string) (start int64, id string, err error) {
	key, err := decodeCursor(cursor)
	if err != nil {
		return 0, "", err
	}
	ms, id, ok := strings.Cut(key, ":")
	if !ok {
		return 0, "", ErrBadCursor
	}
	start, err = strconv.ParseInt(ms, 10, 64)
	if err != nil {
		return 0, "", ErrBadCursor
	}
	return start, id, nil
}

// RecordVerification records an agent's verification on episode id (replacing an earlier one)
// and returns the episode as it stood before and after. It does not touch the episode's
// updated_at: a verification does not make the drafter wait for more data. ErrNotFound when
// there is no such episode.
func (db *DB) RecordVerification(ctx context.Context, id string, v *rules.Verification) (before, after *rules.Episode, err error) {
	b, err := json.Marshal(v)
	if err != nil {
		return nil, nil, fmt.Errorf("store: verification of episode %q: %w", id, err)
	}
	before, err = db.Episode(ctx, id)
	if err != nil {
		return nil, nil, err
	}
	res, err := db.db.ExecContext(ctx, `UPDATE episodes SET doc = json_set(doc, '$.verification', json(?)) WHERE id = ?`, string(b), id)
	if err != nil {
		return nil, nil, fmt.Errorf("store: verification of episode %q: %w", id, err)
	}
	if n, _ := res.RowsAffected(); n == 0 {
		return nil, nil, fmt.Errorf("store: episode %q: %w", id, ErrNotFound)
	}
	after, err = db.Episode(ctx, id)
	if err != nil {
		return nil, nil, err
	}
	return before, after, nil
}
