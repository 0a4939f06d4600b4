// Package store is the monitor's SQLite database: users and their sessions, the append-only audit
// log, and the rule episodes with their evidence (README.md, "Architecture").
//
// The database is one file opened through the pure-Go driver modernc.org/sqlite, in WAL mode so
// that readers never wait for the writer, with a busy timeout so that concurrent writers queue
// instead of failing, and with foreign keys enforced. Its schema is versioned in the code (see
// migrations.go) and brought up to date by Open.
//
// Times are stored as INTEGER milliseconds since the Unix epoch in UTC, the precision of the wire
// format, so that they sort and compare as numbers.
package store

import (
	"context"
	"database/sql"
	"database/sql/driver"
	"encoding/base64"
	"errors"
	"fmt"
	"net/url"
	"os"
	"path/filepath"
	"sync"
	"sync/atomic"
	"time"

	_ "modernc.org/sqlite" // registers the "sqlite" driver
)

// Errors returned by the store. Callers test them with errors.Is.
var (
	ErrNotFound           = errors.New("store: not found")
	ErrExists             = errors.New("store: already exists")
	ErrInvalidCredentials = errors.New("store: invalid user name or password")
	ErrInvalidRole        = errors.New("store: invalid role")
	ErrWeakPassword       = errors.New("store: password too short or too long")
	ErrInvalidName        = errors.New("store: invalid user name")
	ErrLastAdmin          = errors.New("store: the last active admin cannot be demoted or disabled")
	ErrNoAdmin            = errors.New("store: no admin account exists and none was given")
	ErrBadCursor          = errors.New("store: invalid cursor")
)

// Page sizes of the list methods: a limit ≤ 0 means DefaultLimit, and a larger one than MaxLimit
// is cut to MaxLimit.
const (
	DefaultLimit = 100
	MaxLimit     = 1000
)

// busyTimeout is how long a statement waits for another connection's write lock before it fails
// with SQLITE_BUSY.
const busyTimeout = 10 * time.Second

// DB is the monitor's database. It is safe for concurrent use.
type DB struct {
	db   *sql.DB
	path string
	// now is the clock; tests replace it.
	now func() time.Time

	stmtMu sync.Mutex
	stmts  map[string]*sql.Stmt // prepared once by txStmt

	// writer is the connection of Commit, held so that its page cache stays warm: SQLite
	// empties a connection's cache when another connection has written since its last
	// transaction, which alternating pool connections would do at every commit.
	writerMu   sync.Mutex
	writer     *sql.Conn
	writerSync string // the writer's PRAGMA synchronous: "FULL", "NORMAL", "" when not set yet

	// walLooks counts the WAL sizes CheckpointAt has read and acted on, for whoever must know
	// that it has looked (the tests wait on it rather than on time).
	walLooks atomic.Int64

	// postgres: the database is PostgreSQL (openPostgres), not a SQLite file.
	postgres bool
}

// Open opens (creating it if needed) the database file at path and applies the schema
// migrations it has not seen yet. A path that is a PostgreSQL URL (IsURL) opens that database
// instead (postgres.go).
func Open(ctx context.Context, path string) (*DB, error) {
	if IsURL(path) {
		return openPostgres(ctx, path)
	}
	if path == "" {
		return nil, errors.New("store: empty database path")
	}
	abs, err := filepath.Abs(path)
	if err != nil {
		return nil, fmt.Errorf("store: %w", err)
	}
	// SQLite would only say "unable to open database file".
	if _, err := os.Stat(filepath.Dir(abs)); err != nil {
		return nil, fmt.Errorf("store: database directory: %w", err)
	}
	sqldb, err := sql.Open("sqlite", dsn(abs))
	if err != nil {
		return nil, fmt.Errorf("store: open %s: %w", abs, err)
	}
	db := &DB{db: sqldb, path: abs, now: time.Now}
	if err := sqldb.PingContext(ctx); err != nil {
		sqldb.Close()
		return nil, fmt.Errorf("store: open %s: %w", abs, err)
	}
	if err := db.migrate(ctx); err != nil {
		sqldb.Close()
		return nil, err
	}
	return db, nil
}

// dsn is the driver's connection string for the database file at the absolute path abs. Every
// connection of the pool gets the same pragmas. Transactions begin IMMEDIATE: each one of this
// package writes, and taking the write lock up front lets the busy timeout apply instead of a
// deferred transaction failing with SQLITE_BUSY when it upgrades its read lock.
func dsn(abs string) string {
	u := url.URL{Path: abs}
	q := url.Values{}
	q.Set("_busy_timeout", fmt.Sprint(busyTimeout.Milliseconds()))
	q.Set("_journal_mode", "WAL")
	q.Set("_foreign_keys", "1")
	q.Set("_txlock", "immediate")
	// Under load (2,000 vehicles, 20 commits a second) SQLite's defaults — a checkpoint every
	// 1,000 WAL pages, a 2 MB page cache — copied the same vehicle_state and batch_log index
	// pages from the WAL to the database file several times a second and read them back from
	// the file: 38% of the judge's CPU per batch (docs/benchmarks.md, "Judge: the commit's
	// cost"). A checkpoint every 10,000 pages
	// (40 MB of WAL at most) copies each page once for several commits, and the judge's
	// commits, on a connection of their own (Commit), keep their pages in a 32 MB cache.
	q.Add("_pragma", "wal_autocheckpoint(10000)")
	q.Add("_pragma", "cache_size(-32768)")
	// The "file:" form hands the escaped path to SQLite as a URI, so that a '?' or '#' in a
	// file name is not taken for the start of the parameters.
	return "file:" + u.EscapedPath() + "?" + q.Encode()
}

// Close closes the database.
// SetClock makes now the clock of everything the store dates (sessions, the audit, drafts,
// cases, complaints), as the monitor's one clock; before the store is used.
func (db *DB) SetClock(now func() time.Time) { db.now = now }

func (db *DB) Close() error {
	db.writerMu.Lock()
	if db.writer != nil {
		db.writer.Close()
		db.writer = nil
	}
	db.writerMu.Unlock()
	db.stmtMu.Lock()
	for _, s := range db.stmts {
		s.Close()
	}
	db.stmts = nil
	db.stmtMu.Unlock()
	if err := db.db.Close(); err != nil {
		return fmt.Errorf("store: close: %w", err)
	}
	return nil
}

// Path is the absolute path of the database file.
func (db *DB) Path() string { return db.path }

// Ping checks that the database answers; the health check uses it.
func (db *DB) Ping(ctx context.Context) error {
	var one int
	if err := db.db.QueryRowContext(ctx, `SELECT 1`).Scan(&one); err != nil {
		return fmt.Errorf("store: ping: %w", err)
	}
	return nil
}

// Backup writes a consistent copy of the database to destPath while the database stays in use
// (SQLite's VACUUM INTO). The copy is compacted and has no WAL file of its own. destPath must not
// exist yet.
func (db *DB) Backup(ctx context.Context, destPath string) error {
	if db.postgres {
		return errors.New("store: backup: a PostgreSQL store is backed up with pg_dump (docs/operations.md)")
	}
	abs, err := filepath.Abs(destPath)
	if err != nil {
		return fmt.Errorf("store: backup: %w", err)
	}
	if _, err := os.Lstat(abs); err == nil {
		return fmt.Errorf("store: backup: %s: %w", abs, os.ErrExist)
	} else if !errors.Is(err, os.ErrNotExist) {
		return fmt.Errorf("store: backup: %w", err)
	}
	if _, err := db.db.ExecContext(ctx, `VACUUM INTO ?`, abs); err != nil {
		return fmt.Errorf("store: backup to %s: %w", abs, err)
	}
	return nil
}

// inTx runs fn in a transaction, committing when it returns nil and rolling back otherwise.
func (db *DB) inTx(ctx context.Context, fn func(tx *sql.Tx) error) error {
	tx, err := db.db.BeginTx(ctx, nil)
	if err != nil {
		return fmt.Errorf("begin: %w", err)
	}
	defer tx.Rollback() // a no-op after Commit
	if db.postgres {
		// One writing transaction at a time, as SQLite's (its BEGIN IMMEDIATE): the notice
		// numbers, the chain of drafts and every read-then-write of the store rely on it,
		// whichever monitor of the installation writes.
		if _, err := tx.ExecContext(ctx, `SELECT pg_advisory_xact_lock(7278)`); err != nil {
			return fmt.Errorf("begin: %w", err)
		}
	}
	if err := fn(tx); err != nil {
		return err
	}
	if err := tx.Commit(); err != nil {
		return fmt.Errorf("commit: %w", err)
	}
	return nil
}

// inWriterTx is inTx on the writer connection; calls are serialised. A connection that failed
// is given back, and the next call takes another. With synced, the commit returns once the WAL
// is on the disk (PRAGMA synchronous=FULL); without, once SQLite has written it (NORMAL): a
// kill loses nothing, a power cut may lose the transaction, and the next synced commit makes
// it durable with its own.
func (db *DB) inWriterTx(ctx context.Context, synced bool, fn func(tx *sql.Tx) error) error {
	db.writerMu.Lock()
	defer db.writerMu.Unlock()
	if db.postgres {
		// No file to sync nor one writer to keep: PostgreSQL's commit is durable and its
		// transactions are its own.
		return db.inTx(ctx, fn)
	}
	if db.writer == nil {
		c, err := db.db.Conn(ctx)
		if err != nil {
			return fmt.Errorf("begin: %w", err)
		}
		db.writer, db.writerSync = c, ""
	}
	want := "FULL"
	if !synced {
		want = "NORMAL"
	}
	if db.writerSync != want {
		if _, err := db.writer.ExecContext(ctx, "PRAGMA synchronous = "+want); err != nil {
			// Its setting unknown, the connection is not used again.
			db.writer.Close()
			db.writer, db.writerSync = nil, ""
			return fmt.Errorf("synchronous %s: %w", want, err)
		}
		db.writerSync = want
	}
	tx, err := db.writer.BeginTx(ctx, nil)
	if err == nil {
		defer tx.Rollback() // a no-op after Commit
		if err = fn(tx); err == nil {
			if err = tx.Commit(); err != nil {
				err = fmt.Errorf("commit: %w", err)
			}
		}
	} else {
		err = fmt.Errorf("begin: %w", err)
	}
	if err != nil && (errors.Is(err, sql.ErrConnDone) || errors.Is(err, driver.ErrBadConn)) {
		db.writer.Close()
		db.writer, db.writerSync = nil, ""
	}
	return err
}

// txStmt returns the statement query for use in tx, prepared once for the database and then
// reused: the statements of a commit run hundreds of times a second under load, and SQLite
// would otherwise compile each of them at every use.
func (db *DB) txStmt(ctx context.Context, tx *sql.Tx, query string) (*sql.Stmt, error) {
	db.stmtMu.Lock()
	defer db.stmtMu.Unlock()
	s := db.stmts[query]
	if s == nil {
		var err error
		if s, err = db.db.PrepareContext(ctx, query); err != nil {
			return nil, err
		}
		if db.stmts == nil {
			db.stmts = map[string]*sql.Stmt{}
		}
		db.stmts[query] = s
	}
	return tx.StmtContext(ctx, s), nil
}

// millis is t as stored: milliseconds since the Unix epoch.
func millis(t time.Time) int64 { return t.UnixMilli() }

// fromMillis is the UTC time of a stored millisecond count.
func fromMillis(ms int64) time.Time { return time.UnixMilli(ms).UTC() }

// clampLimit applies DefaultLimit and MaxLimit.
func clampLimit(limit int) int {
	switch {
	case limit <= 0:
		return DefaultLimit
	case limit > MaxLimit:
		return MaxLimit
	}
	return limit
}

// encodeCursor makes the opaque cursor of a page's last key.
func encodeCursor(key string) string { return base64.RawURLEncoding.EncodeToString([]byte(key)) }

// decodeCursor reverses encodeCursor.
func decodeCursor(cursor string) (string, error) {
	b, err := base64.RawURLEncoding.DecodeString(cursor)
	if err != nil || len(b) == 0 {
		return "", ErrBadCursor
	}
	return string(b), nil
}

// Checkpoint copies the WAL's committed pages back to the database file every interval, on a
// connection of the pool, until ctx ends. SQLite otherwise checkpoints inside the commit that
// brings the WAL to wal_autocheckpoint pages (10,000, see dsn): that commit then copies up to 40 MB
// before it returns, and under the 2,000-vehicle load those commits were the slowest 1–3% — the p99
// of publish → episode (docs/benchmarks.md, "Monitor: publish to episode"). A PASSIVE checkpoint
// neither waits for nor blocks the writer or the readers; once it has copied everything, the next
// commit starts the WAL over, so the commit-time checkpoint stays a backstop that rarely has
// anything left to copy. A checkpoint that fails is tried again at the next tick; the backstop
// bounds the WAL meanwhile. The cost: hot pages (the vehicle snapshots, rewritten at every commit)
// are copied at every tick instead of once per 10,000 pages, more CPU in all, spent beside the
// commits rather than inside one of them.
func (db *DB) Checkpoint(ctx context.Context, interval time.Duration) {
	if db.postgres {
		return // PostgreSQL checkpoints itself
	}
	t := time.NewTicker(interval)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
			_, _ = db.db.ExecContext(ctx, `PRAGMA wal_checkpoint(PASSIVE)`)
		}
	}
}
