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

	"github.com/trenzinho/trenzinho/monitor/drafts"
	"github.com/trenzinho/trenzinho/rules"
	"github.com/trenzinho/trenzinho/wire"
)

// Batch is one judged telemetry batch, kept verbatim for the evidence bundles.
type Batch struct {
	Vehicle    string
	Epoch      string
	Seq        uint64
	ReceivedAt time.Time
	TMin, TMax time.Time // device times of its first and last readings (and warnings)
	Payload    []byte
	// Warnings are the batch's warnings of the driver's coach, stored with it (warnings.go),
	// with the batch's Clock and the vehicle's Licensee when it was judged.
	Warnings []wire.Warning
	Clock    wire.Clock
	Licensee string
}

func (db *DB) insertBatches(ctx context.Context, tx *sql.Tx, bs []Batch) error {
	if len(bs) == 0 {
		return nil
	}
	stmt, err := db.txStmt(ctx, tx, `
INSERT INTO batch_log (vehicle, epoch, seq, received_at, t_min, t_max, payload)
VALUES (?, ?, ?, ?, ?, ?, ?) ON CONFLICT DO NOTHING`)
	if err != nil {
		return err
	}
	for _, b := range bs {
		if b.Seq > math.MaxInt64 {
			return fmt.Errorf("batch %s/%s/%d: seq out of range: %w", b.Vehicle, b.Epoch, b.Seq, ErrRefused)
		}
		if _, err := stmt.ExecContext(ctx, b.Vehicle, b.Epoch, int64(b.Seq), millis(b.ReceivedAt), millis(b.TMin), millis(b.TMax), b.Payload); err != nil {
			return fmt.Errorf("batch %s/%s/%d: %w", b.Vehicle, b.Epoch, b.Seq, err)
		}
	}
	return db.insertWarnings(ctx, tx, bs)
}

// addAddenda records, for every episode in c that already belongs to a draft, the episode as it
// is now: data that arrived after the draft was made, shown to the agent, never rewriting it.
func (db *DB) addAddenda(ctx context.Context, tx *sql.Tx, c *rules.Changes) error {
	for i := range c.Episodes {
		e := &c.Episodes[i]
		var draftID string
		err := tx.QueryRowContext(ctx, `SELECT draft_id FROM draft_episodes WHERE episode_id = ?`, e.ID).Scan(&draftID)
		if errors.Is(err, sql.ErrNoRows) {
			continue
		}
		if err != nil {
			return err
		}
		doc, err := json.Marshal(struct {
			Episode     *rules.Episode `json:"episode"`
			NewEvidence int            `json:"new_evidence"`
		}{e, len(c.Evidence[e.ID])})
		if err != nil {
			return err
		}
		if _, err := tx.ExecContext(ctx, `INSERT INTO draft_addenda (draft_id, episode_id, created_at, doc) VALUES (?, ?, ?, ?)`,
			draftID, e.ID, millis(db.now()), string(doc)); err != nil {
			return err
		}
	}
	return nil
}

// BatchesBetween returns the vehicle's logged batches whose readings overlap [from, to], in
// (epoch, seq) order of arrival.
func (db *DB) BatchesBetween(ctx context.Context, vehicle string, from, to time.Time) ([]drafts.RawBatch, error) {
	rows, err := db.db.QueryContext(ctx, `
SELECT epoch, seq, received_at, payload FROM batch_log
WHERE vehicle = ? AND t_max >= ? AND t_min <= ?
ORDER BY received_at, epoch, seq`, vehicle, millis(from), millis(to))
	if err != nil {
		return nil, fmt.Errorf("store: batches of %s: %w", vehicle, err)
	}
	defer rows.Close()
	var out []drafts.RawBatch
	for rows.Next() {
		var b drafts.RawBatch
		var seq, recv int64
		var payload []byte
		if err := rows.Scan(&b.Epoch, &seq, &recv, &payload); err != nil {
			return nil, fmt.Errorf("store: batches of %s: %w", vehicle, err)
		}
		b.Vehicle, b.Seq, b.ReceivedAt, b.Payload = vehicle, uint64(seq), wire.NewTime(fromMillis(recv)), string(payload)
		out = append(out, b)
	}
	return out, rows.Err()
}

// VehicleEpisodes returns the vehicle's episodes of the given rules that overlap [from, to] or
// are still open, oldest first, without their readings: the drafter freezes the vehicle's
// telemetry faults of a draft's period into its bundle (drafts.FaultRules).
func (db *DB) VehicleEpisodes(ctx context.Context, vehicle string, ruleIDs []string, from, to time.Time) ([]rules.Episode, error) {
	if len(ruleIDs) == 0 {
		return nil, nil
	}
	args := []any{vehicle}
	for _, r := range ruleIDs {
		args = append(args, r)
	}
	args = append(args, millis(to), millis(from))
	q := `SELECT start_at, doc FROM episodes
WHERE vehicle = ? AND rule IN (?` + strings.Repeat(", ?", len(ruleIDs)-1) + `)
AND (open = 1 OR (start_at <= ? AND end_at >= ?))
ORDER BY start_at, id`
	eps, _, err := db.queryEpisodes(ctx, q, args...)
	if err != nil {
		return nil, fmt.Errorf("store: episodes of %s: %w", vehicle, err)
	}
	return eps, nil
}

// PruneBatches deletes logged batches received before t; drafts keep their own copies, and the
// service spans (transparency.go) keep the time they cover.
func (db *DB) PruneBatches(ctx context.Context, before time.Time) (int64, error) {
	var n int64
	err := db.inTx(ctx, func(tx *sql.Tx) error {
		if err := keepServiceSpans(ctx, tx, millis(before)); err != nil {
			return err
		}
		res, err := tx.ExecContext(ctx, `DELETE FROM batch_log WHERE received_at < ?`, millis(before))
		if err != nil {
			return err
		}
		n, err = res.RowsAffected()
		return err
	})
	if err != nil {
		return 0, fmt.Errorf("store: prune batches: %w", err)
	}
	return n, nil
}

// UndraftedEpisodes returns the episodes of the given kinds that belong to no draft, open or
// closed, oldest first.
func (db *DB) UndraftedEpisodes(ctx context.Context, kinds []drafts.Kind) ([]drafts.Pending, error) {
	if len(kinds) == 0 {
		return nil, nil
	}
	var or []string
	var args []any
	for _, k := range kinds {
		if k.Detail == "" {
			or = append(or, `rule = ?`)
			args = append(args, k.Rule)
		} else {
			or = append(or, `(rule = ? AND json_extract(doc, '$.detail') = ?)`)
			args = append(args, k.Rule, k.Detail)
		}
	}
	q := `SELECT updated_at, doc FROM episodes WHERE (` + strings.Join(or, " OR ") + `)
AND id NOT IN (SELECT episode_id FROM draft_episodes)
-- Only episodes that ground an auto, or that need only the agent's verification (the drafter
-- holds their conduct's draft a while for it: rules.Episode.Draftable). Any other alert is
-- never read; an episode stored before grounds_auto existed has none and is never drafted.
AND (json_type(doc, '$.grounds_auto') = 'true' OR coalesce(json_extract(doc, '$.needs_verification'), '') <> '')
ORDER BY start_at, id`
	rows, err := db.db.QueryContext(ctx, q, args...)
	if err != nil {
		return nil, fmt.Errorf("store: undrafted episodes: %w", err)
	}
	defer rows.Close()
	var out []drafts.Pending
	for rows.Next() {
		var upd int64
		var doc []byte
		if err := rows.Scan(&upd, &doc); err != nil {
			return nil, fmt.Errorf("store: undrafted episodes: %w", err)
		}
		var p drafts.Pending
		if err := json.Unmarshal(doc, &p.Episode); err != nil {
			return nil, fmt.Errorf("store: undrafted episodes: %w", err)
		}
		p.UpdatedAt = fromMillis(upd)
		out = append(out, p)
	}
	return out, rows.Err()
}

// ChainHead returns the last draft's position and hash ("" and 0 when there is none).
func (db *DB) ChainHead(ctx context.Context) (seq int64, hash string, err error) {
	err = db.db.QueryRowContext(ctx, `SELECT seq, hash FROM drafts ORDER BY seq DESC LIMIT 1`).Scan(&seq, &hash)
	if errors.Is(err, sql.ErrNoRows) {
		return 0, "", nil
	}
	if err != nil {
		return 0, "", fmt.Errorf("store: chain head: %w", err)
	}
	return seq, hash, nil
}

// ErrChainMoved reports that another draft was inserted since the chain head was read.
var ErrChainMoved = errors.New("store: the draft chain moved")

// InsertDraft stores a sealed draft at the head of the chain with its episodes. It fails with
// ErrChainMoved when the head is no longer s.Seq−1, and with ErrExists when one of its episodes
// is already in a draft (or the draft id exists): a draft is never made twice.
func (db *DB) InsertDraft(ctx context.Context, s drafts.Sealed, d *drafts.Draft) error {
	doc, err := json.Marshal(d)
	if err != nil {
		return fmt.Errorf("store: insert draft %s: %w", s.ID, err)
	}
	err = db.inTx(ctx, func(tx *sql.Tx) error {
		var head int64
		var hash string
		err := tx.QueryRowContext(ctx, `SELECT seq, hash FROM drafts ORDER BY seq DESC LIMIT 1`).Scan(&head, &hash)
		if err != nil && !errors.Is(err, sql.ErrNoRows) {
			return err
		}
		if head != s.Seq-1 || hash != s.PrevHash {
			return ErrChainMoved
		}
		for _, id := range d.EpisodeIDs {
			var n int
			if err := tx.QueryRowContext(ctx, `SELECT count(*) FROM draft_episodes WHERE episode_id = ?`, id).Scan(&n); err != nil {
				return err
			}
			if n > 0 {
				return fmt.Errorf("episode %s: %w: %w", id, ErrExists, drafts.ErrDrafted)
			}
		}
		_, err = tx.ExecContext(ctx, `
INSERT INTO drafts (seq, id, vehicle, status, created_at, doc, bundle, hash, prev_hash, signature, public_key)
VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`,
			s.Seq, s.ID, d.Vehicle, drafts.StatusDraft, millis(d.CreatedAt.Time), string(doc), []byte(s.Bundle),
			s.Hash, s.PrevHash, s.Signature, s.PublicKey)
		if err != nil {
			if strings.Contains(err.Error(), "UNIQUE") {
				return fmt.Errorf("draft %s: %w: %w", s.ID, ErrExists, drafts.ErrDrafted)
			}
			return err
		}
		for _, id := range d.EpisodeIDs {
			if _, err := tx.ExecContext(ctx, `INSERT INTO draft_episodes (episode_id, draft_id) VALUES (?, ?)`, id, s.ID); err != nil {
				return err
			}
		}
		return nil
	})
	if err != nil {
		return fmt.Errorf("store: insert draft %s: %w", s.ID, err)
	}
	return nil
}

// DraftRecord is a stored draft: the sealed draft, the draft as stored in its row (which the
// server compares with the one in the bundle), its case status and its addenda.
type DraftRecord struct {
	Sealed    drafts.Sealed
	Doc       drafts.Draft
	RawDoc    json.RawMessage
	Status    string
	Notice    string
	DecidedBy string
	DecidedAt *wire.Time
	Reason    string
	Addenda   []Addendum
	CreatedAt time.Time
}

// Addendum is data that arrived after a draft was made.
type Addendum struct {
	EpisodeID string          `json:"episode_id"`
	CreatedAt wire.Time       `json:"created_at"`
	Doc       json.RawMessage `json:"doc"`
}

const draftColumns = `seq, id, status, created_at, doc, bundle, hash, prev_hash, signature, public_key,
	coalesce(notice, ''), coalesce(decided_by, ''), decided_at, coalesce(reason, '')`

func scanDraft(r rowScanner) (*DraftRecord, error) {
	var d DraftRecord
	var created int64
	var decided sql.NullInt64
	var doc string
	var bundle []byte
	err := r.Scan(&d.Sealed.Seq, &d.Sealed.ID, &d.Status, &created, &doc, &bundle, &d.Sealed.Hash, &d.Sealed.PrevHash,
		&d.Sealed.Signature, &d.Sealed.PublicKey, &d.Notice, &d.DecidedBy, &decided, &d.Reason)
	if err != nil {
		return nil, err
	}
	d.Sealed.Bundle = bundle
	d.RawDoc = json.RawMessage(doc)
	if err := json.Unmarshal([]byte(doc), &d.Doc); err != nil {
		return nil, fmt.Errorf("draft %s: %w", d.Sealed.ID, err)
	}
	d.CreatedAt = fromMillis(created)
	if decided.Valid {
		t := wire.NewTime(fromMillis(decided.Int64))
		d.DecidedAt = &t
	}
	return &d, nil
}

// DraftByID returns a stored draft with its addenda, or ErrNotFound.
func (db *DB) DraftByID(ctx context.Context, id string) (*DraftRecord, error) {
	d, err := scanDraft(db.db.QueryRowContext(ctx, `SELECT `+draftColumns+` FROM drafts WHERE id = ?`, id))
	if errors.Is(err, sql.ErrNoRows) {
		return nil, ErrNotFound
	}
	if err != nil {
		return nil, fmt.Errorf("store: draft %s: %w", id, err)
	}
	rows, err := db.db.QueryContext(ctx, `SELECT episode_id, created_at, doc FROM draft_addenda WHERE draft_id = ? ORDER BY id`, id)
	if err != nil {
		return nil, fmt.Errorf("store: draft %s addenda: %w", id, err)
	}
	defer rows.Close()
	for rows.Next() {
		var a Addendum
		var at int64
		var doc string
		if err := rows.Scan(&a.EpisodeID, &at, &doc); err != nil {
			return nil, err
		}
		a.CreatedAt, a.Doc = wire.NewTime(fromMillis(at)), json.RawMessage(doc)
		d.Addenda = append(d.Addenda, a)
	}
	return d, rows.Err()
}

// HashAt returns the hash of the draft at seq, for chain checks.
func (db *DB) HashAt(ctx context.Context, seq int64) (string, error) {
	var h string
	err := db.db.QueryRowContext(ctx, `SELECT hash FROM drafts WHERE seq = ?`, seq).Scan(&h)
	if errors.Is(err, sql.ErrNoRows) {
		return "", ErrNotFound
	}
	return h, err
}

// Drafts lists stored drafts, newest first, optionally of one status.
func (db *DB) Drafts(ctx context.Context, status string, limit int, cursor string) ([]DraftRecord, string, error) {
	limit = clampLimit(limit)
	before := int64(1<<62 - 1)
	if cursor != "" {
		key, err := decodeCursor(cursor)
		if err != nil {
			return nil, "", err
		}
		if before, err = strconv.ParseInt(key, 10, 64); err != nil {
			return nil, "", ErrBadCursor
		}
	}
	q := `SELECT ` + draftColumns + ` FROM drafts WHERE seq < ?`
	args := []any{before}
	if status != "" {
		q += ` AND status = ?`
		args = append(args, status)
	}
	q += ` ORDER BY seq DESC LIMIT ?`
	args = append(args, limit+1)
	rows, err := db.db.QueryContext(ctx, q, args...)
	if err != nil {
		return nil, "", fmt.Errorf("store: drafts: %w", err)
	}
	defer rows.Close()
	var out []DraftRecord
	for rows.Next() {
		d, err := scanDraft(rows)
		if err != nil {
			return nil, "", fmt.Errorf("store: drafts: %w", err)
		}
		out = append(out, *d)
	}
	if err := rows.Err(); err != nil {
		return nil, "", err
	}
	next := ""
	if len(out) > limit {
		out = out[:limit]
		next = encodeCursor(strconv.FormatInt(out[len(out)-1].Sealed.Seq, 10))
	}
	return out, next, nil
}

// ErrDecided reports a decision on a draft that is no longer a draft.
var ErrDecided = errors.New("store: the draft was already decided")

// DecideDraft records an agent's decision on a draft: issue (with the next notice number of the
// year, "AI-2026/0001") or dismiss (with a reason). It returns the notice number.
func (db *DB) DecideDraft(ctx context.Context, id, decision, reason, user string, at time.Time) (string, error) {
	var notice string
	err := db.inTx(ctx, func(tx *sql.Tx) error {
		var status string
		if err := tx.QueryRowContext(ctx, `SELECT status FROM drafts WHERE id = ?`, id).Scan(&status); err != nil {
			if errors.Is(err, sql.ErrNoRows) {
				return ErrNotFound
			}
			return err
		}
		if status != drafts.StatusDraft {
			return ErrDecided
		}
		switch decision {
		case drafts.StatusIssued:
			// One series with manual notices, after any number taken (cases.go).
			var err error
			if notice, err = nextNoticeNumber(ctx, tx, at.Year()); err != nil {
				return err
			}
			_, err = tx.ExecContext(ctx, `UPDATE drafts SET status = ?, notice = ?, decided_by = ?, decided_at = ?, reason = ? WHERE id = ?`,
				drafts.StatusIssued, notice, user, millis(at), reason, id)
			return err
		case drafts.StatusDismissed:
			_, err := tx.ExecContext(ctx, `UPDATE drafts SET status = ?, decided_by = ?, decided_at = ?, reason = ? WHERE id = ?`,
				drafts.StatusDismissed, user, millis(at), reason, id)
			return err
		}
		return fmt.Errorf("decision %q", decision)
	})
	if err != nil {
		return "", fmt.Errorf("store: decide draft %s: %w", id, err)
	}
	return notice, nil
}
