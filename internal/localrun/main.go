// Command localrun is `make run`: the whole system on one machine. It starts the embedded MQTT
// broker (mochi-mqtt), a local InfluxDB 1.8.3 with its data under .data/, a simulated fleet
// writing into pseudo-terminals, one firmware bridge per vehicle reading them through the real
// serial code, ingest and the monitor; it prints the dashboard URL and the login, and stops
// everything it started on Ctrl-C.
package main

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"net/url"
	"os"
	"os/exec"
	"os/signal"
	"path/filepath"
	"slices"
	"strconv"
	"sync"
	"syscall"
	"time"

	mochi "github.com/mochi-mqtt/server/v2"
	"github.com/mochi-mqtt/server/v2/hooks/auth"
	"github.com/mochi-mqtt/server/v2/listeners"

	"github.com/trenzinho/trenzinho/internal/demo"
)

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	if err := run(ctx); err != nil {
		slog.Error(err.Error())
		os.Exit(1)
	}
}

type options struct {
	bin, data, influxd  string
	registry            string
	vehicles            int
	demoStart           string
	mqttAddr, influxAdr string
	listen              string
	user, password      string
}

func run(ctx context.Context) error {
	var o options
	flag.StringVar(&o.bin, "bin", "bin", "directory with firmware-bridge, ingest and monitor")
	flag.StringVar(&o.data, "data", ".data", "data directory (git-ignored)")
	flag.StringVar(&o.influxd, "influxd", ".tools/bin/influxd", "influxd 1.8.3 binary")
	flag.StringVar(&o.registry, "registry", "",
		"registry copied into the data directory on the first run (empty: the demonstration's, dated from the day of the run: fictitious licensees, vehicles PIU-001…003, drivers)")
	flag.StringVar(&o.mqttAddr, "mqtt", "127.0.0.1:1883", "address of the embedded MQTT broker")
	flag.StringVar(&o.influxAdr, "influx", "127.0.0.1:8086", "address of the local InfluxDB")
	flag.Parse()
	o.listen = envOr("TRENZINHO_LISTEN", "127.0.0.1:8080")
	o.user = envOr("TRENZINHO_ADMIN_USER", "demo")
	o.password = envOr("TRENZINHO_ADMIN_PASSWORD", "trenzinho-demo")
	log := slog.New(slog.NewTextHandler(os.Stderr, &slog.HandlerOptions{Level: slog.LevelInfo}))

	for _, d := range []string{"logs", "influxdb", "sim", "bridges"} {
		if err := os.MkdirAll(filepath.Join(o.data, d), 0o755); err != nil {
			return err
		}
	}
	// 1. The embedded broker, closed last so that the bridges can flush on their way out.
	broker, err := startBroker(o.mqttAddr, log)
	if err != nil {
		return err
	}
	defer broker.Close()
	var sup supervisor
	defer sup.stopAll(log)
	mqttURL := "tcp://" + o.mqttAddr
	log.Info("embedded MQTT broker listening", "url", mqttURL)

	// 2. InfluxDB 1.8.3.
	if _, err := os.Stat(o.influxd); err != nil {
		return fmt.Errorf("%s not found: `make run` installs it (go install github.com/influxdata/influxdb/cmd/influxd@v1.8.3)", o.influxd)
	}
	influxHost, influxPort, _ := net.SplitHostPort(o.influxAdr)
	rpcPort, _ := strconv.Atoi(influxPort)
	conf := filepath.Join(o.data, "influxdb", "influxdb.conf")
	abs, _ := filepath.Abs(filepath.Join(o.data, "influxdb"))
	if err := os.WriteFile(conf, []byte(influxConfig(abs, influxHost, rpcPort+2, o.influxAdr)), 0o644); err != nil {
		return err
	}
	if err := sup.start(ctx, log, o.data, "influxd", nil, o.influxd, "-config", conf); err != nil {
		return err
	}
	influxURL := "http://" + o.influxAdr
	if err := waitInflux(ctx, influxURL); err != nil {
		return err
	}
	if err := createDatabase(influxURL, "trenzinho"); err != nil {
		return err
	}
	log.Info("InfluxDB ready", "url", influxURL, "data", abs)

	// 3. Ingest and the monitor, with a demonstration registry that the dashboard may edit (a
	// copy in the data directory, so that the example in the repository stays as it is).
	// The demonstration day (internal/demo; its scripted events are in the README).
	demoFiles, err := demo.Write(filepath.Join(o.data, "demo"), time.Now())
	if err != nil {
		return err
	}
	o.vehicles, o.demoStart = len(demoFiles.Vehicles), demoFiles.Start
	reg := filepath.Join(o.data, "registry.yaml")
	if o.registry == "" {
		if err := demoFiles.SyncRegistry(reg); err != nil {
			return err
		}
	}
	if _, err := os.Stat(reg); errors.Is(err, os.ErrNotExist) && o.registry != "" {
		b, err := os.ReadFile(o.registry)
		if err != nil {
			return fmt.Errorf("demonstration registry: %w", err)
		}
		if err := os.WriteFile(reg, b, 0o600); err != nil {
			return err
		}
	}
	common := []string{"TRENZINHO_MQTT_URL=" + mqttURL}
	server := common // ingest and the monitor
	if _, err := os.Stat(reg); err == nil {
		server = append(slices.Clip(common), "TRENZINHO_REGISTRY="+reg)
	}
	if err := sup.start(ctx, log, o.data, "ingest", append(server,
		"TRENZINHO_INFLUX_URL="+influxURL, "TRENZINHO_INFLUX_BUCKET=trenzinho/autogen",
		"TRENZINHO_METRICS_LISTEN=127.0.0.1:9101"), filepath.Join(o.bin, "ingest")); err != nil {
		return err
	}
	if err := sup.start(ctx, log, o.data, "monitor", append(server,
		"TRENZINHO_DB="+filepath.Join(o.data, "monitor.db"), "TRENZINHO_LISTEN="+o.listen,
		"TRENZINHO_PROFILE="+demoFiles.Profile, "TRENZINHO_GEOFENCES="+demoFiles.Geofences,
		"TRENZINHO_ADMIN_USER="+o.user, "TRENZINHO_ADMIN_PASSWORD="+o.password,
		"TRENZINHO_INFLUX_URL="+influxURL, "TRENZINHO_INFLUX_BUCKET=trenzinho/autogen"),
		filepath.Join(o.bin, "monitor")); err != nil {
		return err
	}

	// 4. The simulated fleet, and a bridge per vehicle on its pseudo-terminals.
	devices, err := sup.simulate(ctx, log, o)
	if err != nil {
		return err
	}
	for _, d := range devices {
		id := d["vehicle"]
		if err := sup.start(ctx, log, o.data, "bridge-"+id, common, filepath.Join(o.bin, "firmware-bridge"), "run",
			"--vehicle", id, "--state-dir", filepath.Join(o.data, "bridges", id),
			"--gps-port", d["gps"], "--tacho-port", d["tacho"], "--slm-port", d["slm"]); err != nil {
			return err
		}
	}
	if err := waitHTTP(ctx, "http://"+o.listen+"/healthz"); err != nil {
		return err
	}
	fmt.Printf("\n  Painel da fiscalização: http://%s/\n  Usuário: %s   Senha: %s\n  Logs: %s/logs/   (Ctrl-C para parar tudo)\n\n",
		o.listen, o.user, o.password, o.data)
	select {
	case <-ctx.Done():
	case err := <-sup.failed:
		return err
	}
	log.Info("stopping")
	return nil
}

func envOr(k, def string) string {
	if v := os.Getenv(k); v != "" {
		return v
	}
	return def
}

// startBroker starts mochi-mqtt with anonymous access on a loopback address.
func startBroker(addr string, log *slog.Logger) (*mochi.Server, error) {
	caps := mochi.NewDefaultServerCapabilities()
	caps.MaximumClientWritesPending = 64 * 1024
	caps.MaximumSessionExpiryInterval = 7 * 24 * 3600
	caps.MaximumPacketSize = 1 << 20
	s := mochi.New(&mochi.Options{Capabilities: caps, Logger: log.With("component", "broker"), InlineClient: false})
	if err := s.AddHook(new(auth.AllowHook), nil); err != nil {
		return nil, err
	}
	if err := s.AddListener(listeners.NewTCP(listeners.Config{ID: "tcp", Address: addr})); err != nil {
		return nil, fmt.Errorf("MQTT broker on %s: %w", addr, err)
	}
	if err := s.Serve(); err != nil {
		return nil, err
	}
	return s, nil
}

func influxConfig(dir, host string, rpcPort int, httpAddr string) string {
	return fmt.Sprintf(`reporting-disabled = true
bind-address = "%s:%d"
[meta]
  dir = %q
[data]
  dir = %q
  wal-dir = %q
  query-log-enabled = false
[http]
  bind-address = %q
  flux-enabled = true
  log-enabled = false
[logging]
  level = "warn"
[monitor]
  store-enabled = false
`, host, rpcPort, filepath.Join(dir, "meta"), filepath.Join(dir, "data"), filepath.Join(dir, "wal"), httpAddr)
}

func waitInflux(ctx context.Context, base string) error {
	return waitHTTP(ctx, base+"/ping")
}

func waitHTTP(ctx context.Context, u string) error {
	deadline := time.Now().Add(90 * time.Second)
	for {
		resp, err := http.Get(u)
		if err == nil {
			resp.Body.Close()
			if resp.StatusCode < 300 {
				return nil
			}
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("%s not ready: %v", u, err)
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(200 * time.Millisecond):
		}
	}
}

func createDatabase(base, name string) error {
	resp, err := http.PostForm(base+"/query", url.Values{"q": {"CREATE DATABASE " + name}})
	if err != nil {
		return err
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return fmt.Errorf("CREATE DATABASE: %s", resp.Status)
	}
	return nil
}

// supervisor starts the child processes, each in its own process group with its output in
// .data/logs/NAME.log, and stops them all in reverse order.
type supervisor struct {
	mu     sync.Mutex
	procs  []*exec.Cmd
	names  []string
	done   []chan struct{}
	failed chan error
}

func (s *supervisor) start(ctx context.Context, log *slog.Logger, data, name string, env []string, argv ...string) error {
	if s.failed == nil {
		s.failed = make(chan error, 16)
	}
	f, err := os.Create(filepath.Join(data, "logs", name+".log"))
	if err != nil {
		return err
	}
	cmd := exec.Command(argv[0], argv[1:]...)
	cmd.Env = append(os.Environ(), env...)
	cmd.Stdout, cmd.Stderr = f, f
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	if err := cmd.Start(); err != nil {
		f.Close()
		return fmt.Errorf("start %s: %w", name, err)
	}
	done := make(chan struct{})
	s.mu.Lock()
	s.procs = append(s.procs, cmd)
	s.names = append(s.names, name)
	s.done = append(s.done, done)
	s.mu.Unlock()
	go func() {
		err := cmd.Wait()
		f.Close()
		close(done)
		if ctx.Err() == nil {
			s.failed <- fmt.Errorf("%s exited (%v); see %s", name, err, f.Name())
		}
	}()
	log.Info("started", "process", name, "pid", cmd.Process.Pid)
	return nil
}

func (s *supervisor) simulate(ctx context.Context, log *slog.Logger, o options) ([]map[string]string, error) {
	cmd := exec.Command(filepath.Join(o.bin, "firmware-bridge"), "simulate",
		"--scenario", "demo", "--start", o.demoStart, "--dir", filepath.Join(o.data, "sim"))
	out, err := cmd.StdoutPipe()
	if err != nil {
		return nil, err
	}
	logf, err := os.Create(filepath.Join(o.data, "logs", "simulate.log"))
	if err != nil {
		return nil, err
	}
	cmd.Stderr = logf
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	if err := cmd.Start(); err != nil {
		return nil, err
	}
	done := make(chan struct{})
	s.mu.Lock()
	s.procs = append(s.procs, cmd)
	s.names = append(s.names, "simulate")
	s.done = append(s.done, done)
	s.mu.Unlock()
	go func() { cmd.Wait(); close(done) }()
	sc := bufio.NewScanner(out)
	var devs []map[string]string
	for len(devs) < o.vehicles && sc.Scan() {
		var d map[string]string
		if err := json.Unmarshal(sc.Bytes(), &d); err != nil {
			return nil, fmt.Errorf("simulate: %q: %w", sc.Text(), err)
		}
		devs = append(devs, d)
	}
	if len(devs) < o.vehicles {
		return nil, errors.New("simulate did not start; see .data/logs/simulate.log")
	}
	go func() {
		for sc.Scan() {
		}
	}()
	log.Info("simulated fleet playing", "vehicles", o.vehicles)
	return devs, nil
}

func (s *supervisor) stopAll(log *slog.Logger) {
	s.mu.Lock()
	defer s.mu.Unlock()
	// Signal every process first, then wait: they stop in parallel.
	for i := len(s.procs) - 1; i >= 0; i-- {
		_ = syscall.Kill(-s.procs[i].Process.Pid, syscall.SIGTERM)
	}
	for i := len(s.procs) - 1; i >= 0; i-- {
		select {
		case <-s.done[i]:
		case <-time.After(15 * time.Second):
			_ = syscall.Kill(-s.procs[i].Process.Pid, syscall.SIGKILL)
			<-s.done[i]
		}
		log.Info("stopped", "process", s.names[i])
	}
}
