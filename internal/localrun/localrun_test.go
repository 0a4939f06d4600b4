package main

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/creack/pty"
)

// These tests build the real programs and run `make run`'s localrun with a temporary data
// directory: the broker, ingest, the monitor, the simulated fleet with its bridges, and a real
// InfluxDB 1.8.3 (TRENZINHO_INFLUXD, or the repository's .tools/bin/influxd).

var (
	buildOnce sync.Once
	binDir    string
	buildErr  error
)

func TestMain(m *testing.M) {
	code := m.Run()
	if binDir != "" {
		os.RemoveAll(binDir)
	}
	os.Exit(code)
}

// programs builds firmware-bridge, ingest, monitor and localrun once for the package's tests.
func programs(t *testing.T) string {
	t.Helper()
	if testing.Short() {
		t.Skip("builds and runs the whole system; skipped with -short")
	}
	buildOnce.Do(func() {
		binDir, buildErr = os.MkdirTemp("", "localrun-bin-")
		if buildErr != nil {
			return
		}
		cmd := exec.Command("go", "build", "-o", binDir+"/", "../../firmware-bridge", "../../ingest", "../../monitor", ".")
		if out, err := cmd.CombinedOutput(); err != nil {
			buildErr = fmt.Errorf("go build: %v\n%s", err, out)
		}
	})
	if buildErr != nil {
		t.Fatal(buildErr)
	}
	return binDir
}

// influxd returns the prebuilt InfluxDB 1.8.3, or skips the test when there is none.
func influxd(t *testing.T) string {
	t.Helper()
	p := os.Getenv("TRENZINHO_INFLUXD")
	if p == "" {
		p, _ = filepath.Abs("../../.tools/bin/influxd")
	}
	if _, err := os.Stat(p); err != nil {
		t.Skipf("no influxd at %s (set TRENZINHO_INFLUXD or run `make tools`)", p)
	}
	return p
}

// output collects what a run prints and waits for lines in it.
type output struct {
	mu  sync.Mutex
	buf bytes.Buffer
	grw chan struct{} // closed and replaced on every write
}

func newOutput() *output { return &output{grw: make(chan struct{})} }

func (o *output) Write(p []byte) (int, error) {
	o.mu.Lock()
	defer o.mu.Unlock()
	o.buf.Write(p)
	close(o.grw)
	o.grw = make(chan struct{})
	return len(p), nil
}

func (o *output) String() string {
	o.mu.Lock()
	defer o.mu.Unlock()
	return o.buf.String()
}

// waitFor waits until the output matches re and returns the first match's submatches.
func (o *output) waitFor(t *testing.T, re *regexp.Regexp, timeout time.Duration) []string {
	t.Helper()
	deadline := time.After(timeout)
	for {
		o.mu.Lock()
		m := re.FindStringSubmatch(o.buf.String())
		grw := o.grw
		o.mu.Unlock()
		if m != nil {
			return m
		}
		select {
		case <-grw:
		case <-deadline:
			t.Fatalf("no %q after %v; output:\n%s", re, timeout, o.String())
		}
	}
}

var (
	// The whole banner, to its last line.
	reBanner    = regexp.MustCompile(`(?s)Painel da fiscalização: (http://127\.0\.0\.1:(\d+))/.*?Ctrl-C para parar tudo`)
	rePorts     = regexp.MustCompile(`Portas: MQTT (\d+).*? · InfluxDB (\d+).*?\(RPC (\d+).*?\) · painel (\d+).*? · métricas do ingest (\d+)`)
	reLive      = regexp.MustCompile(`Frota simulada: 3 veículos ao vivo`)
	reStarted   = regexp.MustCompile(`msg=started process=(\S+) pid=(\d+)`)
	reStopped   = regexp.MustCompile(`msg="broker stopped" telemetry_batches=(\d+) vehicles=(\d+)`)
	reAllDone   = regexp.MustCompile(`msg="all stopped"`)
	reInfluxRdy = regexp.MustCompile(`InfluxDB pronto em`)
)

// childPIDs returns the processes the run says it started.
func childPIDs(out string) map[string]int {
	pids := map[string]int{}
	for _, m := range reStarted.FindAllStringSubmatch(out, -1) {
		pids[m[1]], _ = strconv.Atoi(m[2])
	}
	return pids
}

// alive returns the processes of pids that still exist, but for zombies: a process that died
// and that its new parent (init, or whatever reaps orphans here) has not reaped yet holds
// nothing.
func alive(pids map[string]int) []string {
	var left []string
	for name, pid := range pids {
		if err := syscall.Kill(pid, 0); err == nil || !errors.Is(err, syscall.ESRCH) {
			if stat, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid)); err == nil {
				if i := bytes.LastIndexByte(stat, ')'); i >= 0 && strings.HasPrefix(string(stat[i+1:]), " Z") {
					continue
				}
			}
			left = append(left, fmt.Sprintf("%s (%d)", name, pid))
		}
	}
	return left
}

// TestRunBeforeInfluxDBAndCtrlC is `make run` on a first start, in a terminal: InfluxDB is not
// installed yet, and its install (a stand-in for `go install` that prints progress and supplies
// the prebuilt influxd when the test says so) is still running when the dashboard must already
// be up with the fleet live. The dashboard's default port is held by another listener and must
// be replaced by a printed free one. Then InfluxDB appears, ingest writes what it held, and a
// Ctrl-C typed on the terminal stops everything within 5 s with `make` exiting 0 and every
// telemetry batch the broker received stored in InfluxDB.
func TestRunBeforeInfluxDBAndCtrlC(t *testing.T) {
	bin := programs(t)
	src := influxd(t)
	if _, err := exec.LookPath("make"); err != nil {
		t.Skip("make is not installed")
	}
	dir := t.TempDir()
	data := filepath.Join(dir, "data")
	release := filepath.Join(dir, "release")
	install := filepath.Join(dir, "install.sh")
	writeFile(t, install, fmt.Sprintf(`#!/bin/sh
# A stand-in for go install: a progress line a second until %[1]s exists, then the prebuilt influxd.
i=0
while [ ! -e %[1]q ]; do i=$((i+1)); echo "github.com/example/package$i" >&2; sleep 1; done
cp %[2]q "$GOBIN/influxd"
`, release, src), 0o755)
	tools := filepath.Join(dir, "tools")
	writeFile(t, filepath.Join(dir, "Makefile"), fmt.Sprintf("run:\n\t%s -bin %s -data %s -influxd %s -influxd-install %s -registry %s\n",
		filepath.Join(bin, "localrun"), bin, data, filepath.Join(tools, "influxd"), install,
		mustAbs(t, "../../registry/testdata/piuma-example.yaml")), 0o644)

	// Another process holds the dashboard's default port (when nothing else already does).
	if ln, err := net.Listen("tcp", "127.0.0.1:8080"); err == nil {
		t.Cleanup(func() { ln.Close() })
	}

	cmd := exec.Command("make", "-s", "-f", filepath.Join(dir, "Makefile"), "run")
	cmd.Dir = dir
	cmd.Env = cleanEnv()
	tty, err := pty.Start(cmd) // make leads a new session with the pty as its terminal
	if err != nil {
		t.Fatal(err)
	}
	defer tty.Close()
	out := newOutput()
	// What make printed last may still be in the terminal when it exits: the output is
	// complete once the copy has read it all (EIO when the terminal's last writer closed it).
	copied := make(chan struct{})
	go func() { io.Copy(out, tty); close(copied) }()
	exited := make(chan error, 1)
	go func() { exited <- cmd.Wait() }()
	t.Cleanup(func() {
		select {
		case <-exited:
		default:
			tty.Write([]byte{3})
			select {
			case <-exited:
			case <-time.After(10 * time.Second):
				for _, pid := range childPIDs(out.String()) {
					syscall.Kill(-pid, syscall.SIGKILL)
				}
				cmd.Process.Kill()
			}
		}
	})

	m := out.waitFor(t, reBanner, 3*time.Minute)
	dashboard, dashPort := m[1], m[2]
	text := out.String()
	if !reLive.MatchString(text) {
		t.Fatalf("banner without the fleet live:\n%s", text)
	}
	if !strings.Contains(text, "Ainda iniciando: InfluxDB (compilando") {
		t.Errorf("the banner does not say that InfluxDB is still being built:\n%s", text)
	}
	if !strings.Contains(text, "building it in the background") {
		t.Errorf("no word of the background build:\n%s", text)
	}
	if _, err := os.Stat(filepath.Join(tools, "influxd")); err == nil {
		t.Fatal("influxd was installed before the banner: the test proves nothing")
	}
	if dashPort == "8080" {
		t.Fatalf("the dashboard is on 8080, which another listener holds:\n%s", text)
	}
	if !strings.Contains(text, "painel "+dashPort+" (8080 ocupada)") {
		t.Errorf("the banner does not say that port 8080 was replaced by %s:\n%s", dashPort, text)
	}
	// The bridges pin the monitor's key: each applies the bundle the monitor publishes, and its
	// driver's coach serves its local page (the banner says where).
	if page := regexp.MustCompile(`PIU-002 (http://127\.0\.0\.1:\d+/)`).FindStringSubmatch(text); page == nil {
		t.Errorf("the banner names no coach page:\n%s", text)
	} else {
		var st struct {
			ConfigVersion uint64 `json:"config_version"`
		}
		for deadline := time.Now().Add(time.Minute); st.ConfigVersion == 0 && time.Now().Before(deadline); time.Sleep(500 * time.Millisecond) {
			if res, err := http.Get(page[1] + "state.json"); err == nil {
				json.NewDecoder(res.Body).Decode(&st)
				res.Body.Close()
			}
		}
		if st.ConfigVersion == 0 {
			t.Errorf("PIU-002's coach page at %s never showed a configuration bundle in force", page[1])
		}
	}
	// The dashboard, as an inspector sees it.
	token, err := login(dashboard, "demo", "trenzinho-demo")
	if err != nil {
		t.Fatal(err)
	}
	if n := vehiclesOnline(dashboard, token); n != 3 {
		t.Fatalf("%d vehicles online on the dashboard before InfluxDB, want 3", n)
	}

	// The build's progress, a line every few seconds: elapsed time and what is being built.
	out.waitFor(t, regexp.MustCompile(`\[InfluxDB build +\d+ s\] \d+ packages and modules so far, now: github.com/example/package\d+`), 30*time.Second)

	// Now InfluxDB is "built": ingest writes what it held since the start.
	writeFile(t, release, "", 0o644)
	influxUp(t, out, reInfluxRdy)
	ports := out.waitFor(t, rePorts, time.Second)
	influxURL := "http://127.0.0.1:" + ports[2]
	// Another writer on the machine (an ingest left by a killed run, still writing what it held
	// to the well-known port) is refused: what InfluxDB holds is what this run's broker received.
	if code := writeForeignBatch(t, influxURL); code != http.StatusUnauthorized {
		t.Errorf("a write without the run's token: status %d, want 401", code)
	}
	deadline := time.Now().Add(60 * time.Second)
	backlog := 0
	for backlog = countBatches(t, influxURL); backlog == 0; backlog = countBatches(t, influxURL) {
		if time.Now().After(deadline) {
			t.Fatalf("nothing written to InfluxDB 60 s after it answered; ingest log:\n%s", readFile(t, filepath.Join(data, "logs", "ingest.log")))
		}
		time.Sleep(time.Second)
	}
	// Batches more, after the backlog.
	for deadline = time.Now().Add(60 * time.Second); countBatches(t, influxURL) <= backlog; time.Sleep(time.Second) {
		if time.Now().After(deadline) {
			t.Fatalf("no batch stored in the 60 s after the first %d", backlog)
		}
	}

	// Ctrl-C, typed on the terminal.
	pids := childPIDs(out.String())
	for _, p := range []string{"ingest", "monitor", "simulate", "influxd", "bridge-PIU-001"} {
		if pids[p] == 0 {
			t.Fatalf("no %s among the started processes: %v", p, pids)
		}
	}
	interrupted := time.Now()
	if _, err := tty.Write([]byte{3}); err != nil {
		t.Fatal(err)
	}
	var exitErr error
	select {
	case exitErr = <-exited:
	case <-time.After(30 * time.Second):
		t.Fatalf("make run still running 30 s after Ctrl-C:\n%s", out.String())
	}
	took := time.Since(interrupted)
	select {
	case <-copied:
	case <-time.After(10 * time.Second):
		t.Errorf("the terminal still open 10 s after make exited")
	}
	if exitErr != nil {
		t.Errorf("make run after Ctrl-C: %v (want exit 0)\n%s", exitErr, out.String())
	}
	if left := alive(pids); len(left) > 0 {
		t.Errorf("still running after make run exited: %v", left)
	}
	if took > 5*time.Second {
		t.Errorf("Ctrl-C took %v to stop everything, want within 5 s", took)
	}
	t.Logf("Ctrl-C: everything stopped and make exited in %v", took.Round(time.Millisecond))
	text = out.String()
	if strings.Contains(text, "make: ***") || strings.Contains(text, "killed") {
		t.Errorf("unclean stop:\n%s", text)
	}
	if !reAllDone.MatchString(text) {
		t.Errorf("no \"all stopped\":\n%s", text)
	}
	order := []string{"process=simulate", "process=ingest", "process=monitor", `"broker stopped"`, "process=influxd"}
	last := -1
	for _, s := range order {
		i := strings.LastIndex(text, s)
		if i < last {
			t.Errorf("stop order: %s stopped before an earlier step; want %v\n%s", s, order, text[strings.Index(text, "msg=stopping"):])
		}
		last = i
	}

	// No write lost: every telemetry batch the broker received is in InfluxDB (started again
	// on the run's data directory, as the next `make run` would).
	m = reStopped.FindStringSubmatch(text)
	if m == nil {
		t.Fatalf("no broker summary:\n%s", text)
	}
	published, _ := strconv.Atoi(m[1])
	conf := filepath.Join(data, "influxdb", "influxdb.conf")
	own := regexp.MustCompile(`\[http\]\s+bind-address = "([^"]+)"`).FindStringSubmatch(readFile(t, conf))
	if own == nil {
		t.Fatalf("no HTTP address in %s", conf)
	}
	ownURL := "http://" + own[1]
	stored := withInflux(t, src, conf, ownURL, func() int { return countBatches(t, ownURL) })
	t.Logf("telemetry batches: %d received by the broker, %d stored in InfluxDB", published, stored)
	if published == 0 || stored != published {
		t.Errorf("InfluxDB holds %d batches, the broker received %d", stored, published)
	}
}

// TestTwoRunsSideBySide starts two runs at once, as two clones would: both come up, each on its
// own ports with its own InfluxDB, and each stops on SIGINT to its process group with exit 0.
func TestTwoRunsSideBySide(t *testing.T) {
	bin := programs(t)
	src := influxd(t)
	var runs [2]*localrun
	var datas [2]string
	for i := range runs {
		datas[i] = filepath.Join(t.TempDir(), "data")
		runs[i] = startLocalrun(t, bin, datas[i], "-influxd", src)
	}
	seen := map[string]int{}
	for i, r := range runs {
		r.out.waitFor(t, reBanner, 3*time.Minute)
		if !reLive.MatchString(r.out.String()) {
			t.Errorf("run %d: the fleet is not live:\n%s", i, r.out.String())
		}
		ports := r.out.waitFor(t, rePorts, time.Second)[1:]
		for _, p := range ports {
			if j, ok := seen[p]; ok {
				t.Errorf("port %s used by run %d and run %d", p, j, i)
			}
			seen[p] = i
		}
		influxUp(t, r.out, regexp.MustCompile(`msg="InfluxDB ready"`))
		// Each run's InfluxDB is its own: its data directory is this run's.
		if !strings.Contains(r.out.String(), "data="+filepath.Join(datas[i], "influxdb")) {
			t.Errorf("run %d: InfluxDB ready with another data directory:\n%s", i, r.out.String())
		}
		if err := waitHTTP(context.Background(), "http://127.0.0.1:"+ports[3]+"/healthz", nil, 10*time.Second); err != nil {
			t.Errorf("run %d: %v", i, err)
		}
	}
	for _, r := range runs {
		r.interrupt(t)
	}
}

// writeForeignBatch writes a batch point to influxURL without the run's token, as an ingest of
// another run would, and returns the status.
func writeForeignBatch(t *testing.T, influxURL string) int {
	t.Helper()
	line := fmt.Sprintf("batch,vehicle=PIU-001 epoch=\"stale\",seq=1i %d", time.Now().UnixNano())
	resp, err := http.Post(influxURL+"/write?db=trenzinho", "text/plain", strings.NewReader(line))
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	return resp.StatusCode
}

// ingestHolds returns the messages ingest holds unacknowledged, from its metrics (0 when they
// do not answer).
func ingestHolds(metricsURL string) int {
	resp, err := http.Get(metricsURL)
	if err != nil {
		return 0
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(io.LimitReader(resp.Body, 1<<20))
	m := regexp.MustCompile(`(?m)^trenzinho_ingest_in_flight_messages (\S+)$`).FindSubmatch(b)
	if m == nil {
		return 0
	}
	n, _ := strconv.ParseFloat(string(m[1]), 64)
	return int(n)
}

// countBatches returns the number of points in the batch measurement (one per telemetry batch
// stored), 0 while there is no database yet.
func countBatches(t *testing.T, influxURL string) int {
	t.Helper()
	resp, err := http.PostForm(influxURL+"/query", url.Values{"db": {"trenzinho"}, "q": {"SELECT count(seq) FROM batch"}})
	if err != nil {
		return 0
	}
	defer resp.Body.Close()
	var r struct {
		Results []struct {
			Series []struct {
				Values [][]any `json:"values"`
			} `json:"series"`
		} `json:"results"`
	}
	dec := json.NewDecoder(resp.Body)
	dec.UseNumber()
	if err := dec.Decode(&r); err != nil || len(r.Results) == 0 || len(r.Results[0].Series) == 0 ||
		len(r.Results[0].Series[0].Values) == 0 || len(r.Results[0].Series[0].Values[0]) < 2 {
		return 0
	}
	n, _ := r.Results[0].Series[0].Values[0][1].(json.Number)
	i, _ := strconv.Atoi(n.String())
	return i
}

// influxUp waits until the run's output says that its InfluxDB is ready (re), or that it did
// not start: localrun waits for influxd as long as it lives and answers (startupTimeout), so
// the test waits as long, and fails at once on localrun's own verdict.
func influxUp(t *testing.T, out *output, re *regexp.Regexp) {
	t.Helper()
	failed := `InfluxDB did not start`
	m := out.waitFor(t, regexp.MustCompile(re.String()+"|"+failed), startupTimeout+time.Minute)
	if m[0] == failed {
		t.Fatalf("InfluxDB did not start:\n%s", out.String())
	}
}

// withInflux starts influxd with conf, calls f once it answers at influxURL, and stops it.
func withInflux(t *testing.T, influxd, conf, influxURL string, f func() int) int {
	t.Helper()
	cmd := exec.Command(influxd, "-config", conf)
	var log bytes.Buffer
	cmd.Stdout, cmd.Stderr = &log, &log
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	exited := make(chan struct{})
	go func() { cmd.Wait(); close(exited) }()
	defer func() {
		cmd.Process.Signal(syscall.SIGTERM)
		<-exited
	}()
	// influxd spends tens of seconds of CPU initialising Flux before it listens on a loaded
	// machine: it is waited for while it lives (and fails the test at once when it exits).
	if err := waitHTTP(context.Background(), influxURL+"/ping", exited, startupTimeout); err != nil {
		t.Fatalf("%v\n%s", err, log.String())
	}
	return f()
}

// cleanEnv is the test's environment without the settings localrun reads, so that it runs on
// its defaults.
func cleanEnv() []string {
	var env []string
	for _, kv := range os.Environ() {
		k, _, _ := strings.Cut(kv, "=")
		if strings.HasPrefix(k, "TRENZINHO_") || k == "MAKEFLAGS" || k == "MFLAGS" || k == "MAKELEVEL" {
			continue
		}
		env = append(env, kv)
	}
	return env
}

func writeFile(t *testing.T, path, content string, mode os.FileMode) {
	t.Helper()
	if err := os.WriteFile(path, []byte(content), mode); err != nil {
		t.Fatal(err)
	}
}

func readFile(t *testing.T, path string) string {
	t.Helper()
	b, _ := os.ReadFile(path)
	return string(b)
}

func mustAbs(t *testing.T, p string) string {
	t.Helper()
	a, err := filepath.Abs(p)
	if err != nil {
		t.Fatal(err)
	}
	return a
}

// TestCtrlCBeforeInfluxDB: a run stopped before InfluxDB ever answered (still building) keeps
// what ingest held, and the next run on the same data directory publishes it again: nothing the
// broker received is lost across the two runs.
func TestCtrlCBeforeInfluxDB(t *testing.T) {
	bin := programs(t)
	src := influxd(t)
	dir := t.TempDir()
	data := filepath.Join(dir, "data")
	never := filepath.Join(dir, "install.sh")
	writeFile(t, never, "#!/bin/sh\n# an install that never ends\nwhile true; do echo github.com/example/package >&2; sleep 1; done\n", 0o755)

	first := startLocalrun(t, bin, data, "-influxd", filepath.Join(dir, "tools", "influxd"), "-influxd-install", never)
	first.out.waitFor(t, reBanner, 3*time.Minute)
	// A few batches held by ingest, as its metrics say.
	metrics := "http://127.0.0.1:" + first.out.waitFor(t, rePorts, time.Second)[5] + "/metrics"
	for deadline := time.Now().Add(60 * time.Second); ingestHolds(metrics) < 3; time.Sleep(500 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatalf("ingest holds %d messages 60 s after the banner, want 3", ingestHolds(metrics))
		}
	}
	kept := first.interrupt(t)
	m := regexp.MustCompile(`telemetry kept for the next run" messages=(\d+)`).FindStringSubmatch(kept)
	if m == nil {
		t.Fatalf("nothing kept at the stop:\n%s", kept)
	}
	n, _ := strconv.Atoi(m[1])
	if b := reStopped.FindStringSubmatch(kept); b == nil || b[1] != m[1] {
		t.Errorf("kept %d messages; the broker received %v batches", n, b)
	}

	second := startLocalrun(t, bin, data, "-influxd", src)
	second.out.waitFor(t, regexp.MustCompile(fmt.Sprintf(`published again" messages=%d\b`, n)), 3*time.Minute)
	second.out.waitFor(t, reBanner, 3*time.Minute)
	influxUp(t, second.out, regexp.MustCompile(`msg="InfluxDB ready"`))
	ports := second.out.waitFor(t, rePorts, time.Second)
	front := "http://127.0.0.1:" + ports[2]
	deadline := time.Now().Add(60 * time.Second)
	for countBatches(t, front) < n {
		if time.Now().After(deadline) {
			t.Fatalf("the %d kept batches not written within 60 s of InfluxDB answering", n)
		}
		time.Sleep(time.Second)
	}
	text := second.interrupt(t)
	b := reStopped.FindStringSubmatch(text)
	if b == nil {
		t.Fatalf("no broker summary:\n%s", text)
	}
	published, _ := strconv.Atoi(b[1]) // the kept batches, published again, and the new ones
	conf := filepath.Join(data, "influxdb", "influxdb.conf")
	own := regexp.MustCompile(`\[http\]\s+bind-address = "([^"]+)"`).FindStringSubmatch(readFile(t, conf))
	if own == nil {
		t.Fatalf("no HTTP address in %s", conf)
	}
	stored := withInflux(t, src, conf, "http://"+own[1], func() int { return countBatches(t, "http://"+own[1]) })
	t.Logf("%d batches kept by the first run; %d received by the second run's broker, %d stored", n, published, stored)
	if stored != published || published <= n {
		t.Errorf("InfluxDB holds %d batches; the second run's broker received %d (%d of them kept by the first run)", stored, published, n)
	}
}

// localrun is a run started by startLocalrun.
type localrun struct {
	cmd    *exec.Cmd
	out    *output
	exited chan error
}

// startLocalrun starts localrun in its own process group with data and args.
func startLocalrun(t *testing.T, bin, data string, args ...string) *localrun {
	t.Helper()
	cmd := exec.Command(filepath.Join(bin, "localrun"), append([]string{"-bin", bin, "-data", data,
		"-registry", mustAbs(t, "../../registry/testdata/piuma-example.yaml")}, args...)...)
	cmd.Env = cleanEnv()
	out := newOutput()
	cmd.Stdout, cmd.Stderr = out, out
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	r := &localrun{cmd: cmd, out: out, exited: make(chan error, 1)}
	go func() { r.exited <- cmd.Wait() }()
	t.Cleanup(func() {
		syscall.Kill(-cmd.Process.Pid, syscall.SIGINT)
		select {
		case <-r.exited:
		case <-time.After(10 * time.Second):
			for _, pid := range childPIDs(out.String()) {
				syscall.Kill(-pid, syscall.SIGKILL)
			}
			cmd.Process.Kill()
		}
	})
	return r
}

// interrupt sends SIGINT to the run's process group, as a terminal does, and checks that it
// exits 0 within 5 s with none of its processes left. It returns the run's output.
func (r *localrun) interrupt(t *testing.T) string {
	t.Helper()
	pids := childPIDs(r.out.String())
	start := time.Now()
	syscall.Kill(-r.cmd.Process.Pid, syscall.SIGINT)
	select {
	case err := <-r.exited:
		if err != nil {
			t.Errorf("exit after SIGINT: %v (want 0)\n%s", err, r.out.String())
		}
	case <-time.After(30 * time.Second):
		t.Fatalf("still running 30 s after SIGINT:\n%s", r.out.String())
	}
	if took := time.Since(start); took > 5*time.Second {
		t.Errorf("took %v to stop, want within 5 s", took)
	}
	if left := alive(pids); len(left) > 0 {
		t.Errorf("still running after the run exited: %v", left)
	}
	r.exited <- nil // for the cleanup
	return r.out.String()
}

// TestKilledRunLeavesNothing: `make run` killed without a chance to stop in order leaves no
// process behind holding its ports. Killed with SIGKILL, localrun's children die with it (their
// parent-death signal); `make` killed, localrun stops as on Ctrl-C (its own parent-death
// signal), and its children with it.
func TestKilledRunLeavesNothing(t *testing.T) {
	bin := programs(t)
	src := influxd(t)
	if _, err := exec.LookPath("make"); err != nil {
		t.Skip("make is not installed")
	}
	for _, victim := range []string{"localrun", "make"} {
		t.Run("kill "+victim, func(t *testing.T) {
			dir := t.TempDir()
			writeFile(t, filepath.Join(dir, "Makefile"), fmt.Sprintf("run:\n\t%s -bin %s -data %s -influxd %s -registry %s\n",
				filepath.Join(bin, "localrun"), bin, filepath.Join(dir, "data"), src,
				mustAbs(t, "../../registry/testdata/piuma-example.yaml")), 0o644)
			cmd := exec.Command("make", "-s", "-f", filepath.Join(dir, "Makefile"), "run")
			cmd.Dir = dir
			cmd.Env = cleanEnv()
			out := newOutput()
			cmd.Stdout, cmd.Stderr = out, out
			cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
			if err := cmd.Start(); err != nil {
				t.Fatal(err)
			}
			exited := make(chan struct{})
			go func() { cmd.Wait(); close(exited) }()
			var pids map[string]int
			t.Cleanup(func() {
				for _, pid := range pids {
					syscall.Kill(-pid, syscall.SIGKILL)
					syscall.Kill(pid, syscall.SIGKILL)
				}
				syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL)
				<-exited
			})
			out.waitFor(t, reBanner, 3*time.Minute)
			influxUp(t, out, regexp.MustCompile(`msg="InfluxDB ready"`))
			pids = childPIDs(out.String())
			for _, p := range []string{"ingest", "monitor", "simulate", "influxd", "bridge-PIU-001"} {
				if pids[p] == 0 {
					t.Fatalf("no %s among the started processes: %v", p, pids)
				}
			}
			lr := childOf(cmd.Process.Pid)
			if lr == 0 {
				t.Fatalf("make (%d) has no child", cmd.Process.Pid)
			}
			pids["localrun"] = lr
			kill := map[string]int{"localrun": lr, "make": cmd.Process.Pid}[victim]
			if err := syscall.Kill(kill, syscall.SIGKILL); err != nil {
				t.Fatal(err)
			}
			deadline := time.Now().Add(5 * time.Second)
			left := alive(pids)
			for ; len(left) > 0 && time.Now().Before(deadline); left = alive(pids) {
				time.Sleep(50 * time.Millisecond)
			}
			if len(left) > 0 {
				t.Errorf("5 s after %s was killed, still running: %v\n%s", victim, left, out.String())
			}
		})
	}
}

// childOf returns a child process of pid, from /proc (0: none).
func childOf(pid int) int {
	dirs, _ := os.ReadDir("/proc")
	for _, d := range dirs {
		child, err := strconv.Atoi(d.Name())
		if err != nil {
			continue
		}
		stat, err := os.ReadFile(filepath.Join("/proc", d.Name(), "stat"))
		if err != nil {
			continue
		}
		// pid (comm) state ppid …; comm may hold spaces and parentheses.
		i := bytes.LastIndexByte(stat, ')')
		if i < 0 {
			continue
		}
		fs := strings.Fields(string(stat[i+1:]))
		if len(fs) > 1 && fs[1] == strconv.Itoa(pid) {
			return child
		}
	}
	return 0
}
