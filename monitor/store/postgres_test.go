package store

import (
	"context"
	"database/sql"
	"fmt"
	neturl "net/url"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/trenzinho/trenzinho/internal/testkit/pgtest"
)

// column is a column as both engines can describe it.
type column struct {
	Name, Type string
	NotNull    bool
}

// table is a table's columns in order and its primary key.
type table struct {
	Columns []column
	Key     []string
}

// sqliteSchema describes the tables of a SQLite store.
func sqliteSchema(t *testing.T, db *sql.DB) map[string]table {
	t.Helper()
	rows, err := db.Query(`SELECT name FROM sqlite_master WHERE type = 'table' AND name NOT LIKE 'sqlite_%'`)
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for rows.Next() {
		var n string
		if err := rows.Scan(&n); err != nil {
			t.Fatal(err)
		}
		names = append(names, n)
	}
	rows.Close()
	out := map[string]table{}
	for _, n := range names {
		cols, err := db.Query(`SELECT name, type, "notnull", pk FROM pragma_table_info(?) ORDER BY cid`, n)
		if err != nil {
			t.Fatal(err)
		}
		var tb table
		keys := map[int]string{}
		for cols.Next() {
			var c column
			var pk int
			if err := cols.Scan(&c.Name, &c.Type, &c.NotNull, &pk); err != nil {
				t.Fatal(err)
			}
			c.Type = map[string]string{"INTEGER": "bigint", "TEXT": "text", "BLOB": "bytea", "REAL": "double precision"}[strings.ToUpper(c.Type)]
			if pk > 0 {
				keys[pk] = c.Name
				c.NotNull = true // a key column holds no NULL in either engine's use here
			}
			tb.Columns = append(tb.Columns, c)
		}
		cols.Close()
		for i := 1; i <= len(keys); i++ {
			tb.Key = append(tb.Key, keys[i])
		}
		out[n] = tb
	}
	return out
}

// postgresSchema describes the tables of the public schema of a PostgreSQL database.
func postgresSchema(t *testing.T, db *sql.DB) map[string]table {
	t.Helper()
	out := map[string]table{}
	rows, err := db.Query(`SELECT table_name, column_name, data_type, is_nullable = 'NO' FROM information_schema.columns
		WHERE table_schema = 'public' ORDER BY table_name, ordinal_position`)
	if err != nil {
		t.Fatal(err)
	}
	for rows.Next() {
		var tn string
		var c column
		if err := rows.Scan(&tn, &c.Name, &c.Type, &c.NotNull); err != nil {
			t.Fatal(err)
		}
		tb := out[tn]
		tb.Columns = append(tb.Columns, c)
		out[tn] = tb
	}
	rows.Close()
	keys, err := db.Query(`SELECT k.table_name, k.column_name FROM information_schema.table_constraints c
		JOIN information_schema.key_column_usage k ON k.constraint_name = c.constraint_name AND k.table_schema = c.table_schema
		WHERE c.table_schema = 'public' AND c.constraint_type = 'PRIMARY KEY' ORDER BY k.table_name, k.ordinal_position`)
	if err != nil {
		t.Fatal(err)
	}
	for keys.Next() {
		var tn, cn string
		if err := keys.Scan(&tn, &cn); err != nil {
			t.Fatal(err)
		}
		tb := out[tn]
		tb.Key = append(tb.Key, cn)
		out[tn] = tb
	}
	keys.Close()
	return out
}

// postgresDB is a migrated store schema on a real PostgreSQL of its own.
func postgresDB(t *testing.T, srv *pgtest.Server) *sql.DB {
	t.Helper()
	db, err := sql.Open("pgx", srv.NewDatabase(t))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Close() })
	if err := migratePostgres(context.Background(), db, time.Now); err != nil {
		t.Fatal(err)
	}
	return db
}

// TestPostgresSchema: the history of migrations, translated, gives a real PostgreSQL the tables
// SQLite has — the same columns in the same order, types, nullability and primary keys; it runs
// again as a no-op and from two monitors at once; and the schema's own rules hold there as in
// SQLite: the append-only tables refuse an update and a delete with SQLite's message, a user's
// name is unique whatever its case, a JSON column refuses what is not JSON.
func TestPostgresSchema(t *testing.T) {
	srv := pgtest.Shared(t)
	ctx := context.Background()
	pg := postgresDB(t, srv)

	want := sqliteSchema(t, openSQLiteTemp(t).db)
	got := postgresSchema(t, pg)
	var names []string
	for n := range want {
		names = append(names, n)
	}
	slices.Sort(names)
	for _, n := range names {
		if fmt.Sprint(got[n]) != fmt.Sprint(want[n]) {
			t.Errorf("table %s:\n postgres %+v\n sqlite   %+v", n, got[n], want[n])
		}
	}
	for n := range got {
		if _, ok := want[n]; !ok {
			t.Errorf("table %s only on postgres", n)
		}
	}
	var version int
	if err := pg.QueryRow(`SELECT max(version) FROM schema_migrations`).Scan(&version); err != nil || version != migrations[len(migrations)-1].version {
		t.Errorf("schema version %d %v, want %d", version, err, migrations[len(migrations)-1].version)
	}

	// Again: nothing to do. Two monitors on a new database: one migrates, the other waits.
	if err := migratePostgres(ctx, pg, time.Now); err != nil {
		t.Errorf("a second migration: %v", err)
	}
	fresh, err := sql.Open("pgx", srv.NewDatabase(t))
	if err != nil {
		t.Fatal(err)
	}
	defer fresh.Close()
	var wg sync.WaitGroup
	errs := make([]error, 2)
	for i := range errs {
		wg.Add(1)
		go func() { defer wg.Done(); errs[i] = migratePostgres(ctx, fresh, time.Now) }()
	}
	wg.Wait()
	for i, err := range errs {
		if err != nil {
			t.Errorf("monitor %d migrating at once: %v", i, err)
		}
	}

	// The rules of the schema.
	if _, err := pg.Exec(`INSERT INTO audit (time, "user", action, object, before, after, remote_addr) VALUES (1, 'ana', 'x', 'y', NULL, '{}', '')`); err != nil {
		t.Fatal(err)
	}
	for _, q := range []string{`UPDATE audit SET action = 'z'`, `DELETE FROM audit`} {
		if _, err := pg.Exec(q); err == nil || !strings.Contains(err.Error(), "the audit log is append-only") {
			t.Errorf("%s: %v", q, err)
		}
	}
	if _, err := pg.Exec(`INSERT INTO audit (time, "user", action, object, after, remote_addr) VALUES (1, 'ana', 'x', 'y', 'não é JSON', '')`); err == nil {
		t.Error("the audit log took an after that is not JSON")
	}
	if _, err := pg.Exec(`INSERT INTO users (name, password_hash, role, created_at) VALUES ('Ana', 'h', 'admin', 1)`); err != nil {
		t.Fatal(err)
	}
	if _, err := pg.Exec(`INSERT INTO users (name, password_hash, role, created_at) VALUES ('ANA', 'h', 'viewer', 1)`); err == nil {
		t.Error("two users whose names differ only in case")
	}
	var id int64
	if err := pg.QueryRow(`SELECT id FROM users WHERE name = 'ana'`).Scan(&id); err != nil || id <= 0 {
		t.Errorf("a user found by the name in another case: %d %v", id, err)
	}
	if _, err := pg.Exec(`INSERT INTO users (name, password_hash, role, created_at, licensee) VALUES ('orla', 'h', 'viewer', 1, 'L1')`); err == nil {
		t.Error("a user of the control room bound to a licensee")
	}
	if _, err := pg.Exec(`UPDATE cases SET notice = 'x'`); err != nil {
		t.Errorf("an update of no row: %v", err)
	}
}

// TestPostgresStatements: the translation of the forms the history uses.
func TestPostgresStatements(t *testing.T) {
	got, err := postgresStatements(`
-- a comment; with a semicolon
CREATE TABLE x (
	id   INTEGER PRIMARY KEY,
	case_id INTEGER PRIMARY KEY REFERENCES cases (id),
	user TEXT NOT NULL, user_id INTEGER, v REAL, b BLOB, note TEXT DEFAULT 'a;b'
) STRICT, WITHOUT ROWID;
CREATE INDEX x_user ON x (user, id);
CREATE TRIGGER x_no_update BEFORE UPDATE OF id, user ON x
BEGIN
	SELECT RAISE(ABORT, 'x is append-only; it''s kept');
END;
INSERT INTO x (id) SELECT id FROM y;
CREATE TEMP TABLE k AS SELECT * FROM x;
DROP TABLE k;
ALTER TABLE x_new RENAME TO x;
`)
	if err != nil {
		t.Fatal(err)
	}
	want := []string{
		"CREATE TABLE x (\n\tid   BIGINT GENERATED BY DEFAULT AS IDENTITY PRIMARY KEY,\n\tcase_id BIGINT PRIMARY KEY REFERENCES cases (id),\n\t\"user\" TEXT NOT NULL, user_id BIGINT, v DOUBLE PRECISION, b BYTEA, note TEXT DEFAULT 'a;b'\n)",
		`CREATE INDEX x_user ON x ("user", id)`,
		`CREATE TRIGGER x_no_update BEFORE UPDATE OF id, "user" ON x FOR EACH ROW EXECUTE FUNCTION trenzinho_refuse('x is append-only; it''s kept')`,
	}
	if !slices.Equal(got, want) {
		t.Errorf("got\n%q\nwant\n%q", got, want)
	}
	if _, err := postgresStatements("CREATE TRIGGER t AFTER INSERT ON x BEGIN UPDATE y SET n = 1; END"); err == nil {
		t.Error("a trigger that does more than refuse was translated")
	}
}

func TestMain(m *testing.M) {
	code := m.Run()
	pgtest.StopShared()
	os.Exit(code)
}

// testEngine is the engine the store's tests run on: TRENZINHO_TEST_STORE, sqlite (the default)
// or postgres (a database of its own per test on a real PostgreSQL, pgtest.Shared). make test
// runs this package on both.
func testEngine() string {
	if os.Getenv("TRENZINHO_TEST_STORE") == "postgres" {
		return "postgres"
	}
	return "sqlite"
}

// sqliteOnly skips a test of what only the SQLite engine has (its file, its WAL, its pragmas,
// its history of migrations) on the other engine's run.
func sqliteOnly(t *testing.T) {
	t.Helper()
	if testEngine() != "sqlite" {
		t.Skip("SQLite's own: run by the SQLite pass of the store's tests")
	}
}

// openPostgresTemp is openTemp on PostgreSQL: a database of its own, a copy of one migrated
// once for the test binary (storeTemplate).
func openPostgresTemp(t *testing.T) *DB {
	t.Helper()
	srv := pgtest.Shared(t)
	storeTemplate.Do(func() {
		url := srv.NewDatabase(t)
		db, err := openPostgres(context.Background(), url)
		if err == nil {
			db.Close()
			var u *neturl.URL
			if u, err = neturl.Parse(url); err == nil {
				storeTemplate.name = strings.TrimPrefix(u.Path, "/")
			}
		}
		storeTemplate.err = err
	})
	if storeTemplate.err != nil {
		t.Fatal(storeTemplate.err)
	}
	db, err := openPostgres(context.Background(), srv.NewDatabaseFrom(t, storeTemplate.name))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Close() })
	return db
}

var storeTemplate struct {
	sync.Once
	name string
	err  error
}

// TestPgQuery: a query in PostgreSQL's words — its ?s numbered, not those quoted or in a
// comment, and the bare column user quoted.
func TestPgQuery(t *testing.T) {
	for _, c := range []struct{ in, want string }{
		{`SELECT id FROM users WHERE name = ? AND role IN (?, ?)`, `SELECT id FROM users WHERE name = $1 AND role IN ($2, $3)`},
		{`SELECT user, a.user, user_id, "user" FROM audit WHERE user = ?`, `SELECT "user", a.user, user_id, "user" FROM audit WHERE "user" = $1`},
		{`SELECT '?', json_extract(doc, '$.a') FROM x WHERE y = ? -- why? a user
AND z = ?`, `SELECT '?', json_extract(doc, '$.a') FROM x WHERE y = $1 -- why? a user
AND z = $2`},
		{`INSERT INTO t (users, username) VALUES (?, 'it''s ?')`, `INSERT INTO t (users, username) VALUES ($1, 'it''s ?')`},
	} {
		if got := pgQuery(c.in); got != c.want {
			t.Errorf("pgQuery(%q)\n got %q\nwant %q", c.in, got, c.want)
		}
	}
}

// FuzzPgQuery: any text is rewritten without a panic, keeps its length give or take the
// numbers and quotes added, and holds no ? outside its quotes and comments.
func FuzzPgQuery(f *testing.F) {
	f.Add(`SELECT user FROM audit WHERE id = ? AND x = '?'`)
	f.Add(`-- ?` + "\n" + `"user" ?`)
	f.Add(`'unterminated ?`)
	f.Fuzz(func(t *testing.T, q string) {
		out := pgQuery(q)
		var bare strings.Builder
		for i := 0; i < len(out); i++ {
			switch ch := out[i]; {
			case ch == '\'' || ch == '"':
				j := strings.IndexByte(out[i+1:], ch)
				if j < 0 {
					i = len(out)
				} else {
					i += j + 1
				}
			case ch == '-' && i+1 < len(out) && out[i+1] == '-':
				j := strings.IndexByte(out[i:], '\n')
				if j < 0 {
					i = len(out)
				} else {
					i += j
				}
			default:
				bare.WriteByte(ch)
			}
		}
		if strings.Contains(bare.String(), "?") {
			t.Errorf("pgQuery(%q) = %q keeps a ? outside quotes", q, out)
		}
	})
}

// TestPostgresDumpRestore: a PostgreSQL store backed up with pg_dump -Fc and restored with
// pg_restore into a new database opens there as it was: its users, audit and cases, its
// schema version (nothing to migrate), and its rules (the audit log still refuses an update).
func TestPostgresDumpRestore(t *testing.T) {
	srv := pgtest.Shared(t)
	ctx := context.Background()
	url := srv.NewDatabase(t)
	db, err := openPostgres(ctx, url)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	if _, err := db.CreateUser(ctx, "joao", "senha-do-joao-123", RoleFiscal); err != nil {
		t.Fatal(err)
	}
	p := caseProfile(t)
	c := caseAt(t, db, p, "DUMP")
	dump := filepath.Join(t.TempDir(), "monitor.dump")
	bin := pgtest.BinDir()
	if out, err := exec.Command(filepath.Join(bin, "pg_dump"), "-Fc", "-f", dump, "-d", url).CombinedOutput(); err != nil {
		t.Fatalf("pg_dump: %v\n%s", err, out)
	}
	restored := srv.NewDatabase(t)
	if out, err := exec.Command(filepath.Join(bin, "pg_restore"), "--no-owner", "-d", restored, dump).CombinedOutput(); err != nil {
		t.Fatalf("pg_restore: %v\n%s", err, out)
	}
	back, err := openPostgres(ctx, restored)
	if err != nil {
		t.Fatal(err)
	}
	defer back.Close()
	if u, err := back.UserByName(ctx, "JOAO"); err != nil || u.Role != RoleFiscal {
		t.Errorf("the user after the restore: %+v %v", u, err)
	}
	if got, err := back.CaseByID(ctx, c.ID); err != nil || got.Notice != c.Notice || len(got.Events) != len(c.Events) {
		t.Errorf("the case after the restore: %+v %v", got, err)
	}
	var version int
	if err := back.db.QueryRowContext(ctx, `SELECT max(version) FROM schema_migrations`).Scan(&version); err != nil || version != migrations[len(migrations)-1].version {
		t.Errorf("schema version %d %v", version, err)
	}
	if _, err := back.db.ExecContext(ctx, `UPDATE audit SET action = 'x'`); err == nil || !strings.Contains(err.Error(), "append-only") {
		t.Errorf("the restored audit log took an update: %v", err)
	}
	var audits int
	if err := back.db.QueryRowContext(ctx, `SELECT count(*) FROM audit`).Scan(&audits); err != nil || audits == 0 {
		t.Errorf("%d audit entries after the restore (%v)", audits, err)
	}
}
