package pgtest_test

import (
	"database/sql"
	"os/exec"
	"strings"
	"testing"

	"github.com/trenzinho/trenzinho/internal/testkit/pgtest"
)

// TestServer: a real PostgreSQL starts, answers on its socket, gives each test a database of
// its own, and is gone when the test ends.
func TestServer(t *testing.T) {
	var dir string
	t.Run("run", func(t *testing.T) {
		s := pgtest.Start(t)
		dir = s.Dir
		a, b := s.NewDatabase(t), s.NewDatabase(t)
		if a == b {
			t.Fatalf("one database for two tests: %s", a)
		}
		da, err := sql.Open("pgx", a)
		if err != nil {
			t.Fatal(err)
		}
		defer da.Close()
		var v string
		if err := da.QueryRow(`SELECT version()`).Scan(&v); err != nil || !strings.HasPrefix(v, "PostgreSQL ") {
			t.Fatalf("version: %q %v", v, err)
		}
		if _, err := da.Exec(`CREATE TABLE x (n integer); INSERT INTO x VALUES (7)`); err != nil {
			t.Fatal(err)
		}
		db, err := sql.Open("pgx", b)
		if err != nil {
			t.Fatal(err)
		}
		defer db.Close()
		if _, err := db.Exec(`SELECT n FROM x`); err == nil {
			t.Error("the other database sees the first one's table")
		}
		var n int
		if err := da.QueryRow(`SELECT n FROM x`).Scan(&n); err != nil || n != 7 {
			t.Errorf("read back %d %v", n, err)
		}
	})
	// The server stopped with the test: no postgres process has the directory any more.
	if dir == "" {
		t.Fatal("no server")
	}
	if out, _ := exec.Command("pgrep", "-f", "postgres -D "+dir).Output(); len(strings.TrimSpace(string(out))) > 0 {
		t.Errorf("postgres still runs after the test: %s", out)
	}
}
