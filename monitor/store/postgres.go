package store

import (
	"context"
	"database/sql"
	"fmt"
	"regexp"
	"strings"
	"time"
)

// PostgreSQL as the monitor's store, for an installation that outgrows one SQLite file (a
// standby monitor, many municipalities: docs/scaling.md). The schema is the same history of
// migrations (migrations.go), written for SQLite and translated step by step here:
//
//   - STRICT and WITHOUT ROWID go; INTEGER is BIGINT (the times are milliseconds), REAL is
//     DOUBLE PRECISION, BLOB is BYTEA; an INTEGER PRIMARY KEY that references no other table
//     (SQLite's rowid) is an identity column.
//   - The column user, a reserved word of PostgreSQL, is quoted.
//   - COLLATE NOCASE is the nondeterministic ICU collation nocase, and SQLite's JSON functions
//     the store uses (json_valid, json, json_type, json_extract, json_set; paths $.a.b) are
//     functions of the same names and answers over jsonb, made before the first step
//     (postgresPrelude): the store's queries read the same on both engines.
//   - An append-only trigger (BEFORE UPDATE or DELETE … RAISE(ABORT, 'why')) calls
//     trenzinho_refuse('why'), which raises the same message.
//   - What SQLite does by rebuilding a table (a temporary copy, a new table, the rows copied,
//     the old one dropped, the new one renamed) PostgreSQL does by ALTER TABLE: those
//     statements are left out, and postgresAlters says the step's ALTER. A statement that
//     copies rows (INSERT … SELECT) is left out too: a PostgreSQL database starts empty at this
//     program's schema, so that a step's data move has nothing to move.

// postgresAlters are, by step, what the steps that rebuild a table for SQLite do to it on
// PostgreSQL. An inline CHECK on a column c of table t is PostgreSQL's constraint t_c_check.
var postgresAlters = map[int]string{
	6: `
ALTER TABLE users DROP CONSTRAINT users_role_check;
ALTER TABLE users ADD CONSTRAINT users_role_check CHECK (role IN ('viewer', 'fiscal', 'supervisor', 'autoridade', 'admin'));
ALTER TABLE users ADD COLUMN full_name TEXT NOT NULL DEFAULT '';
ALTER TABLE users ADD COLUMN matricula TEXT NOT NULL DEFAULT '';
ALTER TABLE users ADD COLUMN cargo TEXT NOT NULL DEFAULT ''`,
	8: `
ALTER TABLE vehicle_state ALTER COLUMN snapshot TYPE BYTEA USING convert_to(snapshot, 'UTF8')`,
	11: `
ALTER TABLE users DROP CONSTRAINT users_role_check;
ALTER TABLE users ADD CONSTRAINT users_role_check CHECK (role IN ('viewer', 'fiscal', 'supervisor', 'autoridade', 'admin', 'licensee'));
ALTER TABLE users ADD COLUMN licensee TEXT NOT NULL DEFAULT '';
ALTER TABLE users ADD CONSTRAINT users_check CHECK ((role = 'licensee') = (licensee <> ''))`,
}

// postgresPrelude is what the translated steps rely on, made (again) before they run.
const postgresPrelude = `
DO $$ BEGIN
	IF NOT EXISTS (SELECT 1 FROM pg_collation WHERE collname = 'nocase') THEN
		CREATE COLLATION nocase (provider = icu, locale = 'und-u-ks-level2', deterministic = false);
	END IF;
END $$;
CREATE OR REPLACE FUNCTION json_valid(t text) RETURNS boolean LANGUAGE plpgsql IMMUTABLE AS $$
BEGIN
	PERFORM t::jsonb;
	RETURN true;
EXCEPTION WHEN others THEN
	RETURN false;
END $$;
CREATE OR REPLACE FUNCTION sqlite_json_path(path text) RETURNS text[] LANGUAGE sql IMMUTABLE AS $$
	SELECT CASE WHEN path = '$' THEN ARRAY[]::text[] ELSE string_to_array(substr(path, 3), '.') END
$$;
CREATE OR REPLACE FUNCTION json(t text) RETURNS text LANGUAGE sql IMMUTABLE AS $$ SELECT (t::jsonb)::text $$;
CREATE OR REPLACE FUNCTION json_type(doc text, path text) RETURNS text LANGUAGE sql IMMUTABLE AS $$
	SELECT CASE jsonb_typeof(v)
		WHEN 'boolean' THEN v::text
		WHEN 'number' THEN CASE WHEN v::text ~ '^-?[0-9]+$' THEN 'integer' ELSE 'real' END
		WHEN 'string' THEN 'text'
		ELSE jsonb_typeof(v) END
	FROM (SELECT doc::jsonb #> sqlite_json_path(path) AS v) AS x
$$;
CREATE OR REPLACE FUNCTION json_extract(doc text, path text) RETURNS text LANGUAGE sql IMMUTABLE AS $$
	SELECT CASE jsonb_typeof(v) WHEN 'string' THEN v #>> '{}' WHEN 'null' THEN NULL ELSE v::text END
	FROM (SELECT doc::jsonb #> sqlite_json_path(path) AS v) AS x
$$;
CREATE OR REPLACE FUNCTION json_set(doc text, path text, val text) RETURNS text LANGUAGE sql IMMUTABLE AS $$
	SELECT jsonb_set(doc::jsonb, sqlite_json_path(path), val::jsonb)::text
$$;
CREATE OR REPLACE FUNCTION trenzinho_refuse() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
	RAISE EXCEPTION '%', TG_ARGV[0];
END $$;
CREATE TABLE IF NOT EXISTS schema_migrations (
	version    BIGINT PRIMARY KEY,
	applied_at BIGINT NOT NULL
);
`

var (
	pgComment    = regexp.MustCompile(`(?m)--[^\n]*$`)
	pgTableOpts  = regexp.MustCompile(`\)\s*STRICT\s*(,\s*WITHOUT\s+ROWID\s*)?$`)
	pgRowid      = regexp.MustCompile(`\bINTEGER\s+PRIMARY\s+KEY(\s+AUTOINCREMENT)?\b(\s+REFERENCES\b)?`)
	pgInteger    = regexp.MustCompile(`\bINTEGER\b`)
	pgReal       = regexp.MustCompile(`\bREAL\b`)
	pgBlob       = regexp.MustCompile(`\bBLOB\b`)
	pgUser       = regexp.MustCompile(`(^|[^\w".])user\b`)
	pgTrigger    = regexp.MustCompile(`(?s)^CREATE\s+TRIGGER\s+(\w+)\s+(BEFORE\s+(?:UPDATE(?:\s+OF\s+[\w\s,]+?)?|DELETE))\s+ON\s+(\w+)\s+BEGIN\s+SELECT\s+RAISE\s*\(\s*ABORT\s*,\s*'((?:[^']|'')*)'\s*\)\s*;?\s*END$`)
	pgRebuild    = regexp.MustCompile(`(?is)^(CREATE\s+TEMP\s+TABLE|INSERT\s+INTO\s+\w+\s*(\([^)]*\))?\s*SELECT|DROP\s+TABLE|ALTER\s+TABLE\s+\w+\s+RENAME\s+TO|CREATE\s+TABLE\s+\w+_new\b)`)
	pgStatements = regexp.MustCompile(`(?is)\bBEGIN\b.*?\bEND\b|'(?:[^']|'')*'|;`)
)

// postgresStatements translates a migration step written for SQLite into PostgreSQL's
// statements (the rules above).
func postgresStatements(sqlite string) ([]string, error) {
	var out []string
	for _, st := range splitStatements(pgComment.ReplaceAllString(sqlite, "")) {
		switch {
		case pgRebuild.MatchString(st):
			continue
		case strings.HasPrefix(strings.ToUpper(st), "CREATE TRIGGER"):
			m := pgTrigger.FindStringSubmatch(st)
			if m == nil {
				return nil, fmt.Errorf("store: postgres: a trigger other than an append-only refusal: %.80s", st)
			}
			out = append(out, fmt.Sprintf("CREATE TRIGGER %s %s ON %s FOR EACH ROW EXECUTE FUNCTION trenzinho_refuse('%s')",
				m[1], pgUser.ReplaceAllString(strings.Join(strings.Fields(m[2]), " "), `$1"user"`), m[3], m[4]))
			continue
		}
		st = pgTableOpts.ReplaceAllString(st, ")")
		st = pgRowid.ReplaceAllStringFunc(st, func(s string) string {
			if strings.HasSuffix(strings.ToUpper(s), "REFERENCES") {
				return "BIGINT PRIMARY KEY REFERENCES"
			}
			return "BIGINT GENERATED BY DEFAULT AS IDENTITY PRIMARY KEY"
		})
		st = pgInteger.ReplaceAllString(st, "BIGINT")
		st = pgReal.ReplaceAllString(st, "DOUBLE PRECISION")
		st = pgBlob.ReplaceAllString(st, "BYTEA")
		st = pgUser.ReplaceAllString(st, `$1"user"`)
		out = append(out, st)
	}
	return out, nil
}

// splitStatements splits SQL at its semicolons, not at those inside a quoted string or a
// trigger's BEGIN … END.
func splitStatements(s string) []string {
	var out []string
	start := 0
	for _, loc := range pgStatements.FindAllStringIndex(s, -1) {
		if s[loc[0]:loc[1]] != ";" {
			continue
		}
		if st := strings.TrimSpace(s[start:loc[0]]); st != "" {
			out = append(out, st)
		}
		start = loc[1]
	}
	if st := strings.TrimSpace(s[start:]); st != "" {
		out = append(out, st)
	}
	return out
}

// migratePostgres brings the PostgreSQL database db to the schema's latest version: the
// prelude, then each step not applied yet, translated, in its own transaction with its row in
// schema_migrations. An advisory lock held by each transaction (postgresTx) serialises
// monitors that start together on one database.
func migratePostgres(ctx context.Context, db *sql.DB, now func() time.Time) error {
	if err := postgresTx(ctx, db, func(tx *sql.Tx) error {
		_, err := tx.ExecContext(ctx, postgresPrelude)
		return err
	}); err != nil {
		return fmt.Errorf("store: postgres: prelude: %w", err)
	}
	for _, m := range migrations {
		stmts, err := postgresStatements(m.sql)
		if err != nil {
			return fmt.Errorf("store: postgres: migration %d: %w", m.version, err)
		}
		stmts = append(stmts, splitStatements(postgresAlters[m.version])...)
		err = postgresTx(ctx, db, func(tx *sql.Tx) error {
			var done int
			if err := tx.QueryRowContext(ctx, `SELECT count(*) FROM schema_migrations WHERE version = $1`, m.version).Scan(&done); err != nil {
				return err
			}
			if done > 0 {
				return nil
			}
			for _, st := range stmts {
				if _, err := tx.ExecContext(ctx, st); err != nil {
					return fmt.Errorf("%w\n%s", err, st)
				}
			}
			_, err := tx.ExecContext(ctx, `INSERT INTO schema_migrations (version, applied_at) VALUES ($1, $2)`, m.version, millis(now()))
			return err
		})
		if err != nil {
			return fmt.Errorf("store: postgres: migration %d: %w", m.version, err)
		}
	}
	return nil
}

// postgresTx runs fn in a transaction that holds the schema's advisory lock: one monitor at a
// time changes the schema.
func postgresTx(ctx context.Context, db *sql.DB, fn func(tx *sql.Tx) error) error {
	tx, err := db.BeginTx(ctx, nil)
	if err != nil {
		return err
	}
	defer tx.Rollback()
	if _, err := tx.ExecContext(ctx, `SELECT pg_advisory_xact_lock(7277)`); err != nil {
		return err
	}
	if err := fn(tx); err != nil {
		return err
	}
	return tx.Commit()
}

// IsURL reports whether dsn names a PostgreSQL database (postgres://… or postgresql://…)
// rather than a SQLite file.
func IsURL(dsn string) bool {
	return strings.HasPrefix(dsn, "postgres://") || strings.HasPrefix(dsn, "postgresql://")
}

// openPostgres opens the store on the PostgreSQL database at url and brings its schema to the
// latest version.
func openPostgres(ctx context.Context, url string) (*DB, error) {
	sqldb, err := openPG(url)
	if err != nil {
		return nil, fmt.Errorf("store: open postgres: %w", err)
	}
	db := &DB{db: sqldb, now: time.Now, postgres: true}
	if err := sqldb.PingContext(ctx); err != nil {
		sqldb.Close()
		return nil, fmt.Errorf("store: open postgres: %w", err)
	}
	if err := migratePostgres(ctx, sqldb, func() time.Time { return db.now() }); err != nil {
		sqldb.Close()
		return nil, err
	}
	return db, nil
}
