package store

import (
	"bytes"
	"context"
	"errors"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/trenzinho/trenzinho/rules"
)

// openTemp opens a new database in a temporary directory and closes it when the test ends.
func openTemp(t *testing.T) *DB {
	t.Helper()
	if testEngine() == "postgres" {
		return openPostgresTemp(t)
	}
	return openSQLiteTemp(t)
}

// openSQLiteTemp is a store in a temporary SQLite file, whatever the engine of the run.
func openSQLiteTemp(t *testing.T) *DB {
	t.Helper()
	db, err := Open(context.Background(), filepath.Join(t.TempDir(), "monitor.db"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Close() })
	return db
}

// fakeClock makes db's clock return *now.
func fakeClock(db *DB, now *time.Time) { db.now = func() time.Time { return *now } }

func TestMigrationsOrdered(t *testing.T) {
	for i, m := range migrations {
		if m.version != i+1 {
			t.Fatalf("migration %d has version %d; versions must be 1, 2, 3, … in order", i, m.version)
		}
	}
}

func TestMigrationsIdempotentAcrossReopen(t *testing.T) {
	ctx := context.Background()
	path := filepath.Join(t.TempDir(), "monitor.db")
	db, err := Open(ctx, path)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := db.CreateUser(ctx, "maria", "senha-secreta", RoleFiscal); err != nil {
		t.Fatal(err)
	}
	db.Close()

	for range 2 {
		db, err = Open(ctx, path)
		if err != nil {
			t.Fatalf("reopen: %v", err)
		}
		v, err := db.schemaVersion(ctx)
		if err != nil {
			t.Fatal(err)
		}
		if want := migrations[len(migrations)-1].version; v != want {
			t.Errorf("schema version %d, want %d", v, want)
		}
		var n int
		if err := db.db.QueryRowContext(ctx, `SELECT count(*) FROM schema_migrations`).Scan(&n); err != nil {
			t.Fatal(err)
		}
		if n != len(migrations) {
			t.Errorf("%d rows in schema_migrations, want %d", n, len(migrations))
		}
		if _, err := db.UserByName(ctx, "maria"); err != nil {
			t.Errorf("data lost across reopen: %v", err)
		}
		db.Close()
	}
}

func TestOpenRefusesNewerSchema(t *testing.T) {
	ctx := context.Background()
	path := filepath.Join(t.TempDir(), "monitor.db")
	db, err := Open(ctx, path)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := db.db.ExecContext(ctx, `INSERT INTO schema_migrations (version, applied_at) VALUES (9999, 0)`); err != nil {
		t.Fatal(err)
	}
	db.Close()
	if db, err := Open(ctx, path); err == nil {
		db.Close()
		t.Fatal("Open accepted a database from a newer program")
	}
}

func TestPragmas(t *testing.T) {
	sqliteOnly(t)
	db := openTemp(t)
	ctx := context.Background()
	// Every connection of the pool must have them: hold several at once.
	conns := make([]interface{ Close() error }, 0, 3)
	for range 3 {
		c, err := db.db.Conn(ctx)
		if err != nil {
			t.Fatal(err)
		}
		conns = append(conns, c)
		var mode string
		var fk, busy int
		if err := c.QueryRowContext(ctx, `PRAGMA journal_mode`).Scan(&mode); err != nil {
			t.Fatal(err)
		}
		if err := c.QueryRowContext(ctx, `PRAGMA foreign_keys`).Scan(&fk); err != nil {
			t.Fatal(err)
		}
		if err := c.QueryRowContext(ctx, `PRAGMA busy_timeout`).Scan(&busy); err != nil {
			t.Fatal(err)
		}
		if mode != "wal" || fk != 1 || busy != int(busyTimeout.Milliseconds()) {
			t.Errorf("journal_mode=%s foreign_keys=%d busy_timeout=%d", mode, fk, busy)
		}
	}
	for _, c := range conns {
		c.Close()
	}
}

func TestOpenOddPath(t *testing.T) {
	path := filepath.Join(t.TempDir(), "a dir?x#y", "monitor.db")
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		t.Fatal(err)
	}
	db, err := Open(context.Background(), path)
	if err != nil {
		t.Fatal(err)
	}
	db.Close()
	if _, err := os.Stat(path); err != nil {
		t.Errorf("database not at %s: %v", path, err)
	}
}

func TestBackup(t *testing.T) {
	sqliteOnly(t)
	ctx := context.Background()
	db := openTemp(t)
	if _, err := db.CreateUser(ctx, "maria", "senha-secreta", RoleFiscal); err != nil {
		t.Fatal(err)
	}
	e := testEpisode("PIU-001", "speed", t0, true)
	if err := db.UpsertEpisode(ctx, e, testEvidence(3)); err != nil {
		t.Fatal(err)
	}

	dest := filepath.Join(t.TempDir(), "backup.db")
	if err := db.Backup(ctx, dest); err != nil {
		t.Fatal(err)
	}
	if err := db.Backup(ctx, dest); !errors.Is(err, os.ErrExist) {
		t.Errorf("backup over an existing file: %v, want os.ErrExist", err)
	}

	copyDB, err := Open(ctx, dest)
	if err != nil {
		t.Fatal(err)
	}
	defer copyDB.Close()
	if _, err := copyDB.CheckPassword(ctx, "maria", "senha-secreta"); err != nil {
		t.Errorf("user in backup: %v", err)
	}
	got, err := copyDB.Episode(ctx, e.ID)
	if err != nil {
		t.Fatal(err)
	}
	if len(got.Readings) != 3 {
		t.Errorf("backup has %d readings, want 3", len(got.Readings))
	}
}

// TestVehicleSnapshotsKeptAcrossBinaryMigration: a database whose vehicle_state held JSON
// snapshots in a TEXT column (before migration 8) keeps them, byte for byte, and then takes
// binary snapshots.
func TestVehicleSnapshotsKeptAcrossBinaryMigration(t *testing.T) {
	ctx := context.Background()
	path := filepath.Join(t.TempDir(), "monitor.db")
	db, err := Open(ctx, path)
	if err != nil {
		t.Fatal(err)
	}
	// Back to the table as migration 2 made it, holding a JSON snapshot.
	const old = `{"id":"PIU-001","cursors":{"e1":{"next":3}},"detectors":{},"episodes":{}}`
	for _, q := range []string{
		`DROP TABLE vehicle_state`,
		`CREATE TABLE vehicle_state (vehicle TEXT PRIMARY KEY, snapshot TEXT NOT NULL, updated_at INTEGER NOT NULL) STRICT, WITHOUT ROWID`,
		`INSERT INTO vehicle_state VALUES ('PIU-001', '` + old + `', 1)`,
		`DELETE FROM schema_migrations WHERE version >= 8`,
		// What the later migrations create, so that they run again.
		`DROP TABLE public_pdfs`, `DROP TABLE public_codes`, `DROP TABLE service_spans`,
		`DROP TABLE episode_triage_events`, `DROP TABLE episode_triage`, `DROP TABLE photos`,
		`DROP TABLE notify_shifts`, `DROP TABLE notify_prefs`, `DROP TABLE warnings`,
		`DROP TABLE filing_files`, `DROP TABLE filings`, `DROP TABLE electronic_openings`,
		`DROP TABLE complaints`, `DROP TABLE notify_push_subs`, `DROP TABLE issued_pdfs`, `DROP TABLE case_attachments`, `DROP TABLE pdf_servings`, `DROP TABLE case_documents`, `DROP TABLE login_failures`,
	} {
		if _, err := db.db.ExecContext(ctx, q); err != nil {
			t.Fatal(err)
		}
	}
	db.Close()
	db, err = Open(ctx, path)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	snaps, err := db.VehicleSnapshots(ctx)
	if err != nil || len(snaps) != 1 || string(snaps[0]) != old {
		t.Fatalf("after the migration: %q, %v", snaps, err)
	}
	bin := []byte("\x00TS\x01\x00\xff{}") // not text: a STRICT TEXT column refuses it
	if err := db.Commit(ctx, &rules.Changes{Snapshots: map[string][]byte{"PIU-001": bin}}, nil); err != nil {
		t.Fatal(err)
	}
	if snaps, err := db.VehicleSnapshots(ctx); err != nil || len(snaps) != 1 || !bytes.Equal(snaps[0], bin) {
		t.Fatalf("binary snapshot: %q, %v", snaps, err)
	}
}
