// Package testenv starts the real components that integration tests talk to — Mosquitto with the
// repository's configuration, InfluxDB 1.8.3 — on free loopback ports, and builds the project's
// programs. Everything it starts is stopped by t.Cleanup.
//
// A missing component fails the test when CI is set in the environment and skips it otherwise,
// so that `go test ./...` works on a machine without them while CI cannot pass by skipping.
package testenv

import (
	"bytes"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"
)

// RepoRoot returns the directory holding go.mod.
func RepoRoot(t testing.TB) string {
	t.Helper()
	dir, err := os.Getwd()
	if err != nil {
		t.Fatal(err)
	}
	for {
		if _, err := os.Stat(filepath.Join(dir, "go.mod")); err == nil {
			return dir
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			t.Fatal("testenv: go.mod not found above the working directory")
		}
		dir = parent
	}
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
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port
}

// WaitTCP waits until addr accepts connections or the timeout passes.
func WaitTCP(addr string, timeout time.Duration) error {
	deadline := time.Now().Add(timeout)
	for {
		c, err := net.DialTimeout("tcp", addr, time.Second)
		if err == nil {
			c.Close()
			return nil
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("%s not accepting connections after %s: %w", addr, timeout, err)
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// Process is a child process that the test controls: stop, kill, start again with the same
// command line. Its combined output goes to a log file that is printed when the test fails.
type Process struct {
	t    testing.TB
	name string
	argv []string
	env  []string
	dir  string
	log  string

	mu   sync.Mutex
	cmd  *exec.Cmd
	done chan struct{}
}

// StartProcess starts argv (argv[0] a path) with the given extra environment.
func StartProcess(t testing.TB, name string, env []string, argv ...string) *Process {
	t.Helper()
	logDir := t.TempDir()
	p := &Process{t: t, name: name, argv: argv, env: env, log: filepath.Join(logDir, name+".log")}
	if err := p.Start(); err != nil {
		t.Fatalf("start %s: %v", name, err)
	}
	t.Cleanup(func() {
		p.Kill()
		if t.Failed() || testing.Verbose() {
			b, _ := os.ReadFile(p.log)
			if len(b) > 16<<10 {
				b = b[len(b)-16<<10:]
			}
			t.Logf("--- %s log (tail) ---\n%s", name, b)
		}
	})
	return p
}

// Start starts the process (again).
func (p *Process) Start() error {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.cmd != nil {
		return fmt.Errorf("%s already running", p.name)
	}
	f, err := os.OpenFile(p.log, os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o644)
	if err != nil {
		return err
	}
	cmd := exec.Command(p.argv[0], p.argv[1:]...)
	cmd.Env = append(os.Environ(), p.env...)
	cmd.Dir = p.dir
	cmd.Stdout, cmd.Stderr = f, f
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	if err := cmd.Start(); err != nil {
		f.Close()
		return err
	}
	done := make(chan struct{})
	go func() { cmd.Wait(); f.Close(); close(done) }()
	p.cmd, p.done = cmd, done
	return nil
}

func (p *Process) signal(sig syscall.Signal, wait time.Duration) {
	p.mu.Lock()
	cmd, done := p.cmd, p.done
	p.cmd = nil
	p.mu.Unlock()
	if cmd == nil {
		return
	}
	syscall.Kill(-cmd.Process.Pid, sig)
	select {
	case <-done:
	case <-time.After(wait):
		syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL)
		<-done
	}
}

// Stop sends SIGTERM and waits for the process to exit (SIGKILL after 30 s).
func (p *Process) Stop() { p.signal(syscall.SIGTERM, 30*time.Second) }

// Kill sends SIGKILL to the process group and waits.
func (p *Process) Kill() { p.signal(syscall.SIGKILL, 10*time.Second) }

// Running reports whether the process was started and has not exited.
func (p *Process) Running() bool {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.cmd == nil {
		return false
	}
	select {
	case <-p.done:
		return false
	default:
		return true
	}
}

// Log returns what the process printed so far.
func (p *Process) Log() string {
	b, _ := os.ReadFile(p.log)
	return string(b)
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
		if buildErr != nil {
			return
		}
		cmd := exec.Command("go", "build", "-o", buildDir+"/", "./firmware-bridge", "./ingest", "./monitor")
		cmd.Dir = root
		var out bytes.Buffer
		cmd.Stdout, cmd.Stderr = &out, &out
		if err := cmd.Run(); err != nil {
			buildErr = fmt.Errorf("go build: %v\n%s", err, out.String())
		}
	})
	if buildErr != nil {
		t.Fatal(buildErr)
	}
	return buildDir
}

// lookBinary finds a program: an environment override, the project's .tools/bin, then PATH.
func lookBinary(t testing.TB, env, name string) string {
	if p := os.Getenv(env); p != "" {
		return p
	}
	local := filepath.Join(RepoRoot(t), ".tools", "bin", name)
	if _, err := os.Stat(local); err == nil {
		return local
	}
	if p, err := exec.LookPath(name); err == nil {
		return p
	}
	for _, d := range []string{"/usr/sbin", "/usr/local/sbin"} {
		if _, err := os.Stat(filepath.Join(d, name)); err == nil {
			return filepath.Join(d, name)
		}
	}
	return ""
}

func isRoot() bool { return os.Getuid() == 0 }

func trimLog(s string) string {
	if len(s) > 4096 {
		return "…" + s[len(s)-4096:]
	}
	return strings.TrimSpace(s)
}
