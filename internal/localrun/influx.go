package main

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/trenzinho/trenzinho/internal/testkit/harness"
)

// influxPackage is what `go install` builds when influxd is missing.
const influxPackage = "github.com/influxdata/influxdb/cmd/influxd@v1.8.3"

// progressEvery is how often the background build says how far it is.
const progressEvery = 5 * time.Second

// influxRun brings up this run's InfluxDB in the background: it installs influxd when it is
// missing (printing its progress), starts it on the run's ports with its data in DATA/influxdb,
// and checks that the server answering is this process.
type influxRun struct {
	o     options
	ports *ports
	sup   *supervisor
	log   *slog.Logger

	mu        sync.Mutex
	phase     string        // "building", "starting", "ready", "failed: …"
	since     time.Time     // start of the phase
	build     *exec.Cmd     // the install command while it runs
	buildDone chan struct{} // closed when it has exited
	proc      *proc
	closed    bool // stop was called: start nothing more
	front     *influxFront
	readyCh   chan struct{}
}

func newInfluxRun(o options, ps *ports, sup *supervisor, front *influxFront, log *slog.Logger) *influxRun {
	return &influxRun{o: o, ports: ps, sup: sup, front: front, log: log, phase: "starting", since: time.Now(), readyCh: make(chan struct{})}
}

func (in *influxRun) setPhase(p string) {
	in.mu.Lock()
	defer in.mu.Unlock()
	in.phase, in.since = p, time.Now()
}

// status says what InfluxDB is still doing, in Portuguese for the banner, or "" when it is ready.
func (in *influxRun) status() string {
	in.mu.Lock()
	defer in.mu.Unlock()
	secs := int(time.Since(in.since).Seconds())
	switch {
	case in.phase == "ready":
		return ""
	case in.phase == "building":
		return fmt.Sprintf("compilando o InfluxDB 1.8.3 há %d s, só na primeira vez", secs)
	case strings.HasPrefix(in.phase, "failed"):
		return "não iniciou: " + strings.TrimPrefix(in.phase, "failed: ") + "; veja " + filepath.Join(in.o.data, "logs", "influxd.log")
	}
	return fmt.Sprintf("iniciando há %d s", secs)
}

func (in *influxRun) ready() bool {
	select {
	case <-in.readyCh:
		return true
	default:
		return false
	}
}

// announceReady prints a line when InfluxDB becomes ready after the banner.
func (in *influxRun) announceReady(ctx context.Context) {
	if in.ready() {
		return
	}
	select {
	case <-in.readyCh:
		fmt.Printf("\n  InfluxDB pronto em %s: o ingest grava agora as leituras que guardava.\n\n", "http://"+in.ports.influx.addr())
	case <-ctx.Done():
	}
}

func (in *influxRun) run(ctx context.Context) {
	if err := in.bringUp(ctx); err != nil {
		if ctx.Err() == nil {
			in.log.Error("InfluxDB did not start; ingest keeps the readings unacknowledged and retries", "error", err)
			in.setPhase("failed: " + err.Error())
		}
	}
}

func (in *influxRun) bringUp(ctx context.Context) error {
	if _, err := os.Stat(in.o.influxd); errors.Is(err, os.ErrNotExist) {
		in.setPhase("building")
		if err := in.install(ctx); err != nil {
			return err
		}
	}
	in.setPhase("starting")
	dir := filepath.Join(in.o.data, "influxdb")
	conf := filepath.Join(dir, "influxdb.conf")
	// The server that answers must be this process, with this run's data directory: the ports
	// were free a moment ago, but another process may have taken one since; then influxd
	// starts again on other ports (its HTTP port is private, behind the front).
	p, err := in.sup.startOwned(ctx, 3, []*port{&in.ports.influxd, &in.ports.influxRPC}, func() (*proc, error) {
		if err := os.WriteFile(conf, []byte(harness.InfluxConfig(dir, in.ports.influxRPC.addr(), in.ports.influxd.addr())), 0o644); err != nil {
			return nil, err
		}
		in.mu.Lock()
		defer in.mu.Unlock()
		if in.closed { // stopping: start nothing new
			return nil, context.Canceled
		}
		p, err := in.sup.startWith("influxd", nil, nil, in.o.influxd, "-config", conf)
		in.proc = p
		return p, err
	})
	if err != nil {
		return err
	}
	if err := waitHTTP(ctx, "http://"+in.ports.influxd.addr()+"/ping", p.done, startupTimeout); err != nil {
		return err
	}
	in.front.connect(in.ports.influxd.addr())
	in.setPhase("ready")
	close(in.readyCh)
	in.log.Info("InfluxDB ready", "url", "http://"+in.ports.influx.addr(), "data", dir)
	return nil
}

// install runs the install command with GOBIN set to influxd's directory, printing one
// progress line every few seconds: elapsed time, how many packages were built, the last one.
func (in *influxRun) install(ctx context.Context) error {
	bin, err := filepath.Abs(filepath.Dir(in.o.influxd))
	if err != nil {
		return err
	}
	if err := os.MkdirAll(bin, 0o755); err != nil {
		return err
	}
	logPath := filepath.Join(in.o.data, "logs", "influxd-build.log")
	logf, err := os.Create(logPath)
	if err != nil {
		return err
	}
	defer logf.Close()
	cmd := exec.Command(in.o.influxdInstall[0], in.o.influxdInstall[1:]...)
	cmd.Env = append(os.Environ(), "GOBIN="+bin)
	// Its own process group, which stop ends as a whole. If localrun dies instead, the install
	// command dies with it (childAttr); what it spawned itself (compilers, a linker) is left to
	// finish its one step and exit: it holds no port, and `go install` writes influxd at
	// once or not at all.
	cmd.SysProcAttr = childAttr()
	out, err := cmd.StderrPipe()
	if err != nil {
		return err
	}
	cmd.Stdout = logf
	in.mu.Lock()
	if in.closed {
		in.mu.Unlock()
		return context.Canceled
	}
	err = in.sup.start(cmd)
	buildDone := make(chan struct{})
	if err == nil {
		in.build, in.buildDone = cmd, buildDone
	}
	in.mu.Unlock()
	if err != nil {
		return fmt.Errorf("installing influxd (%s): %w", strings.Join(in.o.influxdInstall, " "), err)
	}
	fmt.Fprintf(os.Stderr, "  InfluxDB 1.8.3 is not in %s yet: building it in the background (%s), first time only; the rest starts now\n",
		bin, strings.Join(in.o.influxdInstall, " "))
	var mu sync.Mutex
	lines, last := 0, ""
	scanned := make(chan struct{})
	go func() {
		defer close(scanned)
		sc := bufio.NewScanner(out)
		for sc.Scan() {
			fmt.Fprintln(logf, sc.Text())
			mu.Lock()
			lines++
			last = sc.Text()
			mu.Unlock()
		}
	}()
	start := time.Now()
	tick := time.NewTicker(progressEvery)
	defer tick.Stop()
	for waiting := true; waiting; {
		select {
		case <-scanned:
			waiting = false
		case <-tick.C:
			mu.Lock()
			what := strings.TrimPrefix(last, "go: ")
			n := lines
			mu.Unlock()
			if n == 0 { // go prints a line per module downloaded and per package compiled
				what = "resolving modules or linking " + influxPackage + " (nothing to compile: cached)"
			}
			fmt.Fprintf(os.Stderr, "  [InfluxDB build %3.0f s] %d packages and modules so far, now: %s\n", time.Since(start).Seconds(), n, what)
		}
	}
	err = cmd.Wait()
	close(buildDone)
	in.mu.Lock()
	in.build = nil
	in.mu.Unlock()
	if err != nil {
		return fmt.Errorf("installing influxd failed (%v); see %s", err, logPath)
	}
	if _, err := os.Stat(in.o.influxd); err != nil {
		return fmt.Errorf("the install command did not produce %s; see %s", in.o.influxd, logPath)
	}
	fmt.Fprintf(os.Stderr, "  [InfluxDB build %3.0f s] done: %s\n", time.Since(start).Seconds(), in.o.influxd)
	return nil
}

// stop stops the build, if it still runs, the front and InfluxDB.
func (in *influxRun) stop(timeout time.Duration) {
	in.front.close()
	in.mu.Lock()
	in.closed = true
	build, buildDone, p := in.build, in.buildDone, in.proc
	in.mu.Unlock()
	if build != nil {
		_ = syscall.Kill(-build.Process.Pid, syscall.SIGTERM)
		select {
		case <-buildDone:
		case <-time.After(timeout):
			_ = syscall.Kill(-build.Process.Pid, syscall.SIGKILL)
			<-buildDone
		}
		in.log.Info("InfluxDB build interrupted; the next run starts it again")
	}
	if p != nil {
		in.sup.stop([]*proc{p}, timeout)
	}
}
