// Package testenv starts the real components that integration tests talk to — Mosquitto with the
// repository's configuration, InfluxDB 1.8.3 — on free loopback ports, and builds the project's
// programs. Everything it starts is stopped by t.Cleanup. It is a thin testing.TB layer over
// internal/testkit/harness, which the load tests use directly.
//
// A missing component fails the test when CI is set in the environment and skips it otherwise,
// so that `go test ./...` works on a machine without them while CI cannot pass by skipping.
package testenv

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"sync"
	"testing"
	"time"

	"github.com/trenzinho/trenzinho/internal/testkit/harness"
)

// RepoRoot returns the directory holding go.mod.
func RepoRoot(t testing.TB) string {
	t.Helper()
	root, err := harness.RepoRoot()
	if err != nil {
		t.Fatal("testenv:", err)
	}
	return root
}

// Missing fails (in CI) or skips (elsewhere) a test that needs an absent component.
func Missing(t testing.TB, format string, args ...any) {
	t.Helper()
	msg := fmt.Sprintf(format, args...)
	if os.Getenv("CI") != "" {
		t.Fatalf("testenv: %s (required in CI; `make test` installs it)", msg)
	}
	t.Skipf("testenv: %s; run `make test` to install it", msg)
}

// FreePort returns a TCP port on 127.0.0.1 that was free a moment ago.
func FreePort(t testing.TB) int {
	t.Helper()
	p, err := harness.FreePort()
	if err != nil {
		t.Fatal(err)
	}
	return p
}

// WaitTCP waits until addr accepts connections or the timeout passes.
func WaitTCP(addr string, timeout time.Duration) error { return harness.WaitTCP(addr, timeout) }

// WaitFor polls cond every 50 ms until it holds; it fails the test after timeout, which is only
// a generous bound on a broken run, never a measurement.
func WaitFor(t testing.TB, what string, timeout time.Duration, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(timeout)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out after %v waiting for %s", timeout, what)
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// Process is a child process that the test controls: stop, kill, start again with the same
// command line. Its combined output goes to a log file that is printed when the test fails.
type Process = harness.Process

// StartProcess starts argv (argv[0] a path) with the given extra environment.
func StartProcess(t testing.TB, name string, env []string, argv ...string) *Process {
	t.Helper()
	p, err := harness.Start(harness.Command{Name: name, LogFile: filepath.Join(t.TempDir(), name+".log"), Argv: argv, Env: env})
	if err != nil {
		t.Fatal(err)
	}
	cleanup(t, p)
	return p
}

// cleanup kills p when the test ends and prints its log's tail when the test failed.
func cleanup(t testing.TB, p *Process) {
	t.Cleanup(func() {
		p.Kill()
		if t.Failed() || testing.Verbose() {
			t.Logf("--- %s log (tail) ---\n%s", p.Name, p.Tail(16<<10))
		}
	})
}

// Scrape reads the metrics a program serves at url: "name{labels}" → value.
func Scrape(t testing.TB, url string) map[string]float64 {
	t.Helper()
	m, err := harness.Scrape(url)
	if err != nil {
		t.Fatal(err)
	}
	return m
}

var (
	buildOnce sync.Once
	buildDir  string
	buildErr  error
)

// Build builds the project's programs (firmware-bridge, ingest, monitor) once per test binary and
// returns the directory holding them.
func Build(t testing.TB) string {
	t.Helper()
	root := RepoRoot(t)
	buildOnce.Do(func() {
		buildDir, buildErr = os.MkdirTemp("", "trenzinho-bin-")
		if buildErr == nil {
			buildErr = harness.Build(context.Background(), root, buildDir, "./firmware-bridge", "./ingest", "./monitor")
		}
	})
	if buildErr != nil {
		t.Fatal(buildErr)
	}
	return buildDir
}

var (
	fakeClockOnce sync.Once
	fakeClockDir  string
	fakeClockErr  error
)

// BuildFakeClock builds, once per test binary, a monitor with the fakeclock build tag, whose
// clock TRENZINHO_FAKE_NOW sets (monitor/clock.go), and returns the directory holding it. The
// other programs are Build's.
func BuildFakeClock(t testing.TB) string {
	t.Helper()
	root := RepoRoot(t)
	fakeClockOnce.Do(func() {
		fakeClockDir, fakeClockErr = os.MkdirTemp("", "trenzinho-fakeclock-")
		if fakeClockErr == nil {
			fakeClockErr = harness.Build(context.Background(), root, fakeClockDir, "-tags=fakeclock", "./monitor")
		}
	})
	if fakeClockErr != nil {
		t.Fatal(fakeClockErr)
	}
	return fakeClockDir
}

// need fails or skips the test on a missing program and fails it on any other error.
func need(t testing.TB, err error) {
	t.Helper()
	if errors.Is(err, harness.ErrMissing) {
		Missing(t, "%v", err)
	}
	if err != nil {
		t.Fatal(err)
	}
}
