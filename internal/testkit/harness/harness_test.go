package harness

import (
	"bufio"
	"context"
	"io"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"
)

func TestRepoRoot(t *testing.T) {
	root, err := RepoRoot()
	if err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(filepath.Join(root, "internal", "testkit", "harness", "harness.go")); err != nil {
		t.Errorf("root %s: %v", root, err)
	}
}

func TestLookBinary(t *testing.T) {
	t.Setenv("TRENZINHO_SH", "/custom/sh")
	if got := LookBinary(t.TempDir(), "TRENZINHO_SH", "sh"); got != "/custom/sh" {
		t.Errorf("environment: %q", got)
	}
	root := t.TempDir()
	local := filepath.Join(root, ".tools", "bin", "sh")
	if err := os.MkdirAll(filepath.Dir(local), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(local, nil, 0o755); err != nil {
		t.Fatal(err)
	}
	if got := LookBinary(root, "TRENZINHO_UNSET_SH", "sh"); got != local {
		t.Errorf(".tools/bin: %q, want %q", got, local)
	}
	if got := LookBinary(t.TempDir(), "TRENZINHO_UNSET_SH", "sh"); got == "" || got == local {
		t.Errorf("PATH: %q", got)
	}
	if got := LookBinary(root, "TRENZINHO_UNSET", "no-such-program-anywhere"); got != "" {
		t.Errorf("a missing program: %q", got)
	}
}

// TestProcess runs a shell that echoes its input: pipes, the log of its standard error, a stop
// by closing standard input, a restart, a kill, and what /proc says of it.
func TestProcess(t *testing.T) {
	log := filepath.Join(t.TempDir(), "cat.log")
	p, err := Start(Command{Name: "echo", LogFile: log, Pipes: true,
		Argv: []string{"/bin/sh", "-c", `echo started >&2; while read l; do echo "got $l"; done; echo bye >&2`}})
	if err != nil {
		t.Fatal(err)
	}
	defer p.Kill()
	if _, err := io.WriteString(p.Stdin(), "one\n"); err != nil {
		t.Fatal(err)
	}
	line, err := bufio.NewReader(p.Stdout()).ReadString('\n')
	if err != nil || line != "got one\n" {
		t.Fatalf("read %q, %v", line, err)
	}
	st, err := ReadStat(p.Pid())
	if err != nil || st.RSS <= 0 || st.PeakRSS < st.RSS {
		t.Errorf("stat of the child: %+v, %v", st, err)
	}
	p.Terminate(10 * time.Second) // closes standard input: the loop ends, the shell says bye
	if p.Running() {
		t.Error("running after Terminate")
	}
	if got := p.Log(); got != "started\nbye\n" {
		t.Errorf("log %q", got)
	}
	if err := p.Start(); err != nil {
		t.Fatal(err)
	}
	if !p.Running() {
		t.Error("not running after a restart")
	}
	for deadline := time.Now().Add(10 * time.Second); strings.Count(p.Log(), "started") < 2; {
		if time.Now().After(deadline) {
			t.Fatalf("the restarted shell wrote nothing: %q", p.Log())
		}
		time.Sleep(10 * time.Millisecond)
	}
	p.Kill()
	if p.Running() || p.Pid() != 0 {
		t.Error("running after Kill")
	}
	if got, log := p.Tail(4), p.Log(); !strings.HasPrefix(log, "started\nbye\nstarted\n") || got != "…"+strings.TrimSpace(log[len(log)-4:]) {
		t.Errorf("after a restart, log %q, tail %q", log, got)
	}
}

func TestReadStatCountsCPU(t *testing.T) {
	before, err := ReadStat(os.Getpid())
	if err != nil {
		t.Fatal(err)
	}
	deadline := time.Now().Add(20 * time.Second)
	x := 0
	for {
		for i := range 1 << 20 {
			x ^= i
		}
		after, err := ReadStat(os.Getpid())
		if err != nil {
			t.Fatal(err)
		}
		if after.CPU > before.CPU {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("no CPU time counted in 20 s of work (%d)", x)
		}
	}
	if l := LoadAverage(); l[0] < 0 || MemTotal() <= 0 {
		t.Errorf("load %v, memory %d", l, MemTotal())
	}
}

func TestParseMetrics(t *testing.T) {
	m, err := ParseMetrics(strings.NewReader("# HELP x y\n# TYPE x counter\nx{a=\"b c\"} 3\ny 1.5e+06\nz_bucket{le=\"+Inf\"} 7\n"))
	if err != nil {
		t.Fatal(err)
	}
	if m[`x{a="b c"}`] != 3 || m["y"] != 1.5e6 || m[`z_bucket{le="+Inf"}`] != 7 || len(m) != 3 {
		t.Errorf("%v", m)
	}
	if _, err := ParseMetrics(strings.NewReader("novalue\n")); err == nil {
		t.Error("a line without a value parsed")
	}
}

func TestWaitHTTPNoticesAnExit(t *testing.T) {
	p, err := Start(Command{Name: "true", LogFile: filepath.Join(t.TempDir(), "true.log"), Argv: []string{"/bin/true"}})
	if err != nil {
		t.Fatal(err)
	}
	port, err := FreePort()
	if err != nil {
		t.Fatal(err)
	}
	err = WaitHTTP(context.Background(), p, "http://127.0.0.1:"+strconv.Itoa(port)+"/", 200, time.Minute)
	if err == nil || !strings.Contains(err.Error(), "exited") {
		t.Errorf("WaitHTTP on an exited process: %v", err)
	}
}
