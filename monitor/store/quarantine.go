package store

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/jackc/pgx/v5/pgconn"

	"github.com/trenzinho/trenzinho/wire"
)

// QuarantineKeep is how many quarantine records the database keeps; older ones are deleted as
// new ones arrive, so that a device that sends nothing but refused batches cannot fill the disk.
const QuarantineKeep = 10_000

// Quarantined is a telemetry message the monitor could not keep as a judged batch.
type Quarantined struct {
	ReceivedAt time.Time
	Vehicle    string
	Topic      string
	Reason     wire.Reason
	Detail     string
	Payload    []byte // cut at wire.QuarantineCut
}

// Quarantine stores q, keeping the newest QuarantineKeep records.
func (db *DB) Quarantine(ctx context.Context, q Quarantined) error {
	payload, truncated := q.Payload, false
	if len(payload) > wire.QuarantineCut {
		payload, truncated = payload[:wire.QuarantineCut], true
	}
	err := db.inTx(ctx, func(tx *sql.Tx) error {
		var id int64
		if err := tx.QueryRowContext(ctx, `
INSERT INTO quarantine (received_at, vehicle, topic, reason, detail, payload, truncated) VALUES (?, ?, ?, ?, ?, ?, ?) RETURNING id`,
			millis(q.ReceivedAt), q.Vehicle, q.Topic, string(q.Reason), q.Detail, payload, truncated).Scan(&id); err != nil {
			return err
		}
		_, err := tx.ExecContext(ctx, `DELETE FROM quarantine WHERE id <= ?`, id-QuarantineKeep)
		return err
	})
	if err != nil {
		return fmt.Errorf("store: quarantine: %w", err)
	}
	return nil
}

// QuarantineRecords returns the newest quarantine records of vehicle ("" : every vehicle),
// newest first, at most limit (clamped like every list).
func (db *DB) QuarantineRecords(ctx context.Context, vehicle string, limit int) ([]Quarantined, error) {
	rows, err := db.db.QueryContext(ctx, `
SELECT received_at, vehicle, topic, reason, detail, payload FROM quarantine
WHERE ? = '' OR vehicle = ? ORDER BY id DESC LIMIT ?`, vehicle, vehicle, clampLimit(limit))
	if err != nil {
		return nil, fmt.Errorf("store: quarantine records: %w", err)
	}
	defer rows.Close()
	var out []Quarantined
	for rows.Next() {
		var q Quarantined
		var at int64
		var reason string
		if err := rows.Scan(&at, &q.Vehicle, &q.Topic, &reason, &q.Detail, &q.Payload); err != nil {
			return nil, fmt.Errorf("store: quarantine records: %w", err)
		}
		q.ReceivedAt, q.Reason = fromMillis(at), wire.Reason(reason)
		out = append(out, q)
	}
	return out, rows.Err()
}

// ErrRefused marks data the store refuses whatever the retries: see Permanent.
var ErrRefused = errors.New("store: data refused")

// SQLite result codes (https://sqlite.org/rescode.html), primary codes only.
const (
	sqliteBusy       = 5
	sqliteLocked     = 6
	sqliteTooBig     = 18
	sqliteConstraint = 19
	sqliteMismatch   = 20
	sqliteRange      = 25
)

func sqliteCode(err error) (int, bool) {
	var c interface{ Code() int }
	if errors.As(err, &c) {
		return c.Code() & 0xff, true
	}
	return 0, false
}

// postgresState is the SQLSTATE of a PostgreSQL error (https://www.postgresql.org/docs/current/errcodes-appendix.html).
func postgresState(err error) (string, bool) {
	var e *pgconn.PgError
	if errors.As(err, &e) {
		return e.Code, true
	}
	return "", false
}

// Transient reports whether err is a failure that goes away by itself (the database is busy or
// locked by another writer; on PostgreSQL a serialisation failure, a deadlock or a lock not
// available): retry it for as long as it takes.
func Transient(err error) bool {
	if state, ok := postgresState(err); ok {
		return state == "40001" || state == "40P01" || state == "55P03"
	}
	code, ok := sqliteCode(err)
	return ok && (code == sqliteBusy || code == sqliteLocked)
}

// Permanent reports whether err means the database refuses the data itself (a constraint, a
// value it cannot hold, a value too big), on SQLite or on PostgreSQL: retrying the same data can never succeed. Any other
// error (I/O, a full disk, a corrupt or read-only file) is neither transient nor permanent: the
// caller retries a few times and then stops, for an operator to look.
func Permanent(err error) bool {
	if errors.Is(err, ErrRefused) {
		return true
	}
	if state, ok := postgresState(err); ok {
		// Class 22, data exception (a value out of range, too long, not valid in the
		// encoding — a NUL byte in a text); class 23, integrity constraint violation.
		return strings.HasPrefix(state, "22") || strings.HasPrefix(state, "23")
	}
	code, ok := sqliteCode(err)
	return ok && (code == sqliteTooBig || code == sqliteConstraint || code == sqliteMismatch || code == sqliteRange)
}

// LoggedBatch returns the payload of the batch (vehicle, epoch, seq) as the batch log holds it
// (ErrNotFound when it is not there: never judged, or pruned).
func (db *DB) LoggedBatch(ctx context.Context, vehicle, epoch string, seq uint64) ([]byte, error) {
	if seq > MaxSeq {
		return nil, ErrNotFound
	}
	var p []byte
	err := db.db.QueryRowContext(ctx, `SELECT payload FROM batch_log WHERE vehicle = ? AND epoch = ? AND seq = ?`,
		vehicle, epoch, int64(seq)).Scan(&p)
	if errors.Is(err, sql.ErrNoRows) {
		return nil, ErrNotFound
	}
	if err != nil {
		return nil, fmt.Errorf("store: logged batch: %w", err)
	}
	return p, nil
}

// MaxSeq is the largest seq the store holds (SQLite integers are signed 64-bit).
const MaxSeq = wire.MaxSeq
