// Package pgtest starts a throwaway PostgreSQL server for tests: Debian's PostgreSQL binaries
// (the postgresql package of make deps), a cluster initialised in a temporary directory, with
// durability off (a test's database is thrown away) and listening only on a Unix socket in
// that directory, so that parallel test binaries never meet. As root (CI), the server runs as
// the postgres system user, since PostgreSQL refuses to run as root.
package pgtest

import (
	"context"
	"database/sql"
	"fmt"
	"os"
	"os/exec"
	"os/user"
	"path/filepath"
	"slices"
	"strconv"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	_ "github.com/jackc/pgx/v5/stdlib" // database/sql driver "pgx"

	"github.com/trenzinho/trenzinho/internal/testkit/testenv"
)

// Server is a running PostgreSQL server of a test.
type Server struct {
	// Dir holds the cluster (Dir/data) and the server's socket.
	Dir string
	// Superuser is the cluster's superuser, trusted on the socket.
	Superuser string
	dbs       atomic.Int64
}

// BinDir is the directory of the newest PostgreSQL server binaries installed by Debian
// (/usr/lib/postgresql/N/bin); "" when there is none.
func BinDir() string {
	dirs, _ := filepath.Glob("/usr/lib/postgresql/*/bin")
	slices.SortFunc(dirs, func(a, b string) int { return version(a) - version(b) })
	for i := len(dirs) - 1; i >= 0; i-- {
		if _, err := os.Stat(filepath.Join(dirs[i], "initdb")); err == nil {
			return dirs[i]
		}
	}
	return ""
}

func version(binDir string) int {
	n, _ := strconv.Atoi(filepath.Base(filepath.Dir(binDir)))
	return n
}

// Start initialises and starts a PostgreSQL server for t, stopped (fast shutdown) and removed
// when t ends. Without PostgreSQL installed it is testenv.Missing (a failure under CI).
func Start(t testing.TB) *Server {
	t.Helper()
	if BinDir() == "" {
		testenv.Missing(t, "PostgreSQL server binaries (Debian postgresql) not found under /usr/lib/postgresql")
	}
	s, stop, err := start()
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(stop)
	return s
}

var shared struct {
	mu   sync.Mutex
	srv  *Server
	stop func()
}

// Shared is one server for every test of the test binary that asks, started by the first;
// the package's TestMain stops it (StopShared) after its tests.
func Shared(t testing.TB) *Server {
	t.Helper()
	shared.mu.Lock()
	defer shared.mu.Unlock()
	if shared.srv == nil {
		if BinDir() == "" {
			testenv.Missing(t, "PostgreSQL server binaries (Debian postgresql) not found under /usr/lib/postgresql")
		}
		s, stop, err := start()
		if err != nil {
			t.Fatal(err)
		}
		shared.srv, shared.stop = s, stop
	}
	return shared.srv
}

// StopShared stops the server of Shared, if one was started.
func StopShared() {
	shared.mu.Lock()
	defer shared.mu.Unlock()
	if shared.stop != nil {
		shared.stop()
		shared.srv, shared.stop = nil, nil
	}
}

// start initialises and starts a server; stop stops it and removes its directory.
func start() (s *Server, stop func(), err error) {
	bin := BinDir()
	dir, err := os.MkdirTemp("", "pgtest-")
	if err != nil {
		return nil, nil, err
	}
	defer func() {
		if err != nil {
			os.RemoveAll(dir)
		}
	}()
	s = &Server{Dir: dir, Superuser: "postgres"}
	asPostgres := os.Geteuid() == 0
	if asPostgres {
		u, err := user.Lookup("postgres")
		if err != nil {
			return nil, nil, fmt.Errorf("pgtest: running as root needs the postgres system user (Debian postgresql): %w", err)
		}
		uid, _ := strconv.Atoi(u.Uid)
		gid, _ := strconv.Atoi(u.Gid)
		if err := os.Chown(dir, uid, gid); err != nil {
			return nil, nil, err
		}
	}
	command := func(name string, args ...string) *exec.Cmd {
		path := filepath.Join(bin, name)
		if asPostgres {
			return exec.Command("runuser", append([]string{"-u", "postgres", "--", path}, args...)...)
		}
		return exec.Command(path, args...)
	}
	data := filepath.Join(dir, "data")
	if out, err := command("initdb", "-D", data, "-U", s.Superuser, "--auth=trust", "-E", "UTF8", "--locale=C.UTF-8", "--no-instructions").CombinedOutput(); err != nil {
		return nil, nil, fmt.Errorf("pgtest: initdb: %w\n%s", err, out)
	}
	logPath := filepath.Join(dir, "postgres.log")
	logFile, err := os.Create(logPath)
	if err != nil {
		return nil, nil, err
	}
	defer logFile.Close()
	serverLog := func() string { b, _ := os.ReadFile(logPath); return string(b) }
	srv := command("postgres", "-D", data, "-k", dir, "-c", "listen_addresses=", "-c", "fsync=off",
		"-c", "synchronous_commit=off", "-c", "full_page_writes=off", "-c", "max_connections=200")
	srv.Stdout, srv.Stderr = logFile, logFile
	srv.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	if err := srv.Start(); err != nil {
		return nil, nil, fmt.Errorf("pgtest: start postgres: %w", err)
	}
	exited := make(chan error, 1)
	go func() { exited <- srv.Wait() }()
	stop = func() {
		// SIGINT is PostgreSQL's fast shutdown, sent to its process group (runuser's too).
		_ = syscall.Kill(-srv.Process.Pid, syscall.SIGINT)
		select {
		case <-exited:
		case <-time.After(30 * time.Second):
			_ = syscall.Kill(-srv.Process.Pid, syscall.SIGKILL)
			<-exited
		}
		os.RemoveAll(dir)
	}
	db, err := sql.Open("pgx", s.URL("postgres"))
	if err != nil {
		stop()
		return nil, nil, err
	}
	defer db.Close()
	deadline := time.Now().Add(60 * time.Second)
	for {
		ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
		err = db.PingContext(ctx)
		cancel()
		if err == nil {
			return s, stop, nil
		}
		select {
		case e := <-exited:
			exited <- e
			stop()
			return nil, nil, fmt.Errorf("pgtest: postgres exited: %v\n%s", e, serverLog())
		default:
		}
		if time.Now().After(deadline) {
			msg := serverLog()
			stop()
			return nil, nil, fmt.Errorf("pgtest: postgres not ready in 60 s: %v\n%s", err, msg)
		}
		time.Sleep(100 * time.Millisecond)
	}
}

// URL is the connection URL of database name on the server's socket, as the superuser.
func (s *Server) URL(name string) string {
	return fmt.Sprintf("postgres://%s@/%s?host=%s&sslmode=disable", s.Superuser, name, s.Dir)
}

// NewDatabase creates an empty database of its own for t and returns its URL.
func (s *Server) NewDatabase(t testing.TB) string {
	t.Helper()
	return s.NewDatabaseFrom(t, "")
}

// NewDatabaseFrom creates a database of its own for t as a copy of the database template (none
// of whose connections may be open; "": an empty one) and returns its URL.
func (s *Server) NewDatabaseFrom(t testing.TB, template string) string {
	t.Helper()
	name := fmt.Sprintf("t%d", s.dbs.Add(1))
	db, err := sql.Open("pgx", s.URL("postgres"))
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	create := "CREATE DATABASE " + name
	if template != "" {
		create += " TEMPLATE " + template
	}
	if _, err := db.Exec(create); err != nil {
		t.Fatalf("pgtest: create database %s: %v", name, err)
	}
	return s.URL(name)
}
