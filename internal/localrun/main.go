// Command localrun is `make run`: the whole system on one machine. It starts the embedded MQTT
// broker (mochi-mqtt), ingest, the monitor with its dashboard, and a simulated fleet writing into
// pseudo-terminals with one firmware bridge per vehicle reading them through the real serial
// code, as soon as the project's own binaries exist. A local InfluxDB 1.8.3, with its data under
// .data/, is built (the first time, in the background, with its progress on screen) and started
// meanwhile: ingest subscribes at once and writes what it received when InfluxDB answers.
//
// Every port is settable (TRENZINHO_MQTT_PORT, TRENZINHO_INFLUX_PORT, TRENZINHO_INFLUX_RPC_PORT,
// TRENZINHO_LISTEN, TRENZINHO_INGEST_METRICS_PORT); a default port that is taken is replaced by a
// free one, and every process started is checked to be the one listening on its port. Ctrl-C
// stops everything in dependency order — fleet and bridges, ingest, monitor, broker, InfluxDB —
// and exits 0.
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"log/slog"
	"os"
	"os/signal"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"syscall"
	"time"

	"github.com/trenzinho/trenzinho/internal/testkit/demo"
)

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	// SIGTERM when make (or whoever started localrun) dies: it stops everything as Ctrl-C
	// does. The parent-death signal is the calling thread's: main stays on this thread to the
	// end, and the process ends with it.
	runtime.LockOSThread()
	dieWithParent()
	// Ctrl-C is for localrun alone: it stops its children in order and exits 0, and `make`,
	// which would otherwise die of the same SIGINT, sees a clean exit (terminal.go).
	restore := takeTerminal()
	err := run(ctx)
	restore()
	// Ctrl-C while starting is no failure either.
	if err != nil && !(ctx.Err() != nil && errors.Is(err, context.Canceled)) {
		slog.Error(err.Error())
		os.Exit(1)
	}
}

type options struct {
	bin, data      string
	influxd        string
	influxdInstall []string
	registry       string
	vehicles       int // the scripted trains (internal/testkit/demo)
	demo           demo.Files
	user, password string
	ports          ports
	liveTimeout    time.Duration
}

func parseOptions() (options, error) {
	var o options
	flag.StringVar(&o.bin, "bin", "bin", "directory with firmware-bridge, ingest and monitor")
	flag.StringVar(&o.data, "data", ".data", "data directory (git-ignored)")
	flag.StringVar(&o.influxd, "influxd", envOr("TRENZINHO_INFLUXD", ".tools/bin/influxd"),
		"influxd 1.8.3 binary; installed there in the background when missing (TRENZINHO_INFLUXD)")
	install := flag.String("influxd-install", "",
		"command that installs a missing influxd, run with GOBIN set to its directory (default: go install -v "+influxPackage+")")
	flag.StringVar(&o.registry, "registry", "",
		"registry copied into the data directory on the first run (empty: the demonstration's, dated from the day of the run: fictitious licensees, vehicles PIU-001…003, drivers)")
	flag.DurationVar(&o.liveTimeout, "live-timeout", 90*time.Second, "longest wait for the vehicles to show on the dashboard before the banner")
	flag.Parse()
	o.user = envOr("TRENZINHO_ADMIN_USER", "demo")
	o.password = envOr("TRENZINHO_ADMIN_PASSWORD", "trenzinho-demo")
	o.influxdInstall = strings.Fields(*install)
	if len(o.influxdInstall) == 0 {
		o.influxdInstall = []string{envOr("GO", "go"), "install", "-v", influxPackage}
	}
	var err error
	o.ports, err = portsFromEnv()
	return o, err
}

func envOr(k, def string) string {
	if v := os.Getenv(k); v != "" {
		return v
	}
	return def
}

func run(ctx context.Context) error {
	t0 := time.Now()
	o, err := parseOptions()
	if err != nil {
		return err
	}
	log := slog.New(slog.NewTextHandler(os.Stderr, &slog.HandlerOptions{Level: slog.LevelInfo}))
	slog.SetDefault(log)
	if o.data, err = filepath.Abs(o.data); err != nil {
		return err
	}
	for _, d := range []string{"logs", "influxdb", "sim", "bridges"} {
		if err := os.MkdirAll(filepath.Join(o.data, d), 0o755); err != nil {
			return err
		}
	}
	// The demonstration day (internal/testkit/demo; its scripted events are in the README): its
	// profile, geofences and registry, and the device time the simulator's day starts at.
	if o.demo, err = demo.Write(filepath.Join(o.data, "demo"), time.Now()); err != nil {
		return err
	}
	o.vehicles = len(o.demo.Vehicles)
	reg, err := demoRegistry(o)
	if err != nil {
		return err
	}

	r := &runner{o: o, log: log, sup: newSupervisor(o.data, log)}
	// Whatever happens from here on, everything started is stopped in dependency order.
	defer r.shutdown()

	// 1. The embedded broker: this run's own, on its own port, logging to DATA/logs/broker.log.
	brokerLog, err := os.Create(filepath.Join(o.data, "logs", "broker.log"))
	if err != nil {
		return err
	}
	defer brokerLog.Close()
	blog := slog.New(slog.NewTextHandler(brokerLog, &slog.HandlerOptions{Level: slog.LevelInfo}))
	if r.broker, err = startBroker(&r.o.ports.mqtt, blog); err != nil {
		return err
	}
	mqttURL := "tcp://" + r.o.ports.mqtt.addr()
	log.Info("embedded MQTT broker listening", "url", mqttURL)

	// 2. InfluxDB, in the background: built the first time, then started and checked.
	// Ingest and people reach it through localrun's front on the InfluxDB port, held from now
	// on: another run cannot take it meanwhile, and influxd itself listens on a private port
	// that may change when it must be started again.
	writeToken := newWriteToken()
	front, err := startInfluxFront(&r.o.ports.influx, writeToken)
	if err != nil {
		return err
	}
	r.influx = newInfluxRun(o, &r.o.ports, r.sup, front, log)
	go r.influx.run(ctx)

	// 3. Ingest, at once: it subscribes with its persistent session now and writes what it
	// receives when InfluxDB answers. The fleet waits for its subscription so that nothing is
	// published before the session exists.
	common := []string{"TRENZINHO_MQTT_URL=" + mqttURL}
	server := slices.Clip(common)
	if reg != "" {
		server = append(server, "TRENZINHO_REGISTRY="+reg)
	}
	influxURL := "http://" + r.o.ports.influx.addr()
	r.ingest, err = r.sup.startOwned(ctx, 3, []*port{&r.o.ports.ingestMetrics}, func() (*proc, error) {
		return r.sup.startWith("ingest", append(slices.Clip(server),
			"TRENZINHO_INFLUX_URL="+influxURL, "TRENZINHO_INFLUX_BUCKET=trenzinho/autogen",
			// The front takes writes from this ingest alone (influxFront).
			"TRENZINHO_INFLUX_TOKEN="+writeToken,
			"TRENZINHO_INGEST_CLIENT_ID="+ingestClientID,
			// A local run: retry soon once InfluxDB answers, and do not hold Ctrl-C for long
			// when it never did (the embedded broker's sessions end with the run anyway).
			"TRENZINHO_INGEST_RETRY_MAX=2s", "TRENZINHO_INGEST_SHUTDOWN_TIMEOUT=1s",
			"TRENZINHO_METRICS_LISTEN="+r.o.ports.ingestMetrics.addr()), nil, filepath.Join(o.bin, "ingest"))
	})
	if err != nil {
		return err
	}
	if err := r.waitSubscribed(ctx, ingestClientID, "ingest"); err != nil {
		return err
	}
	// What the previous run's ingest still held when it was stopped before InfluxDB answered.
	if n, err := r.broker.replay(r.heldPath()); err != nil {
		log.Warn("telemetry held by the previous run not published again", "path", r.heldPath(), "error", err)
	} else if n > 0 {
		log.Info("telemetry held by the previous run published again", "messages", n)
	}
	// 4. The monitor and its dashboard.
	r.monitor, err = r.sup.startOwned(ctx, 3, []*port{&r.o.ports.dashboard}, func() (*proc, error) {
		env := append(slices.Clip(server),
			"TRENZINHO_DB="+filepath.Join(o.data, "monitor.db"), "TRENZINHO_LISTEN="+r.o.ports.dashboard.addr(),
			"TRENZINHO_ADMIN_USER="+o.user, "TRENZINHO_ADMIN_PASSWORD="+o.password,
			// Citizens' complaints (/reclamacao) are matched against what ingest stored.
			"TRENZINHO_INFLUX_URL="+influxURL, "TRENZINHO_INFLUX_BUCKET=trenzinho/autogen")
		// The profile, the geofences, the short verification wait; issued autos print the
		// dashboard's own address for their public verification page.
		env = append(env, o.demo.MonitorEnv("http://"+r.o.ports.dashboard.addr())...)
		return r.sup.startWith("monitor", env, nil, filepath.Join(o.bin, "monitor"))
	})
	if err != nil {
		return err
	}
	dashboard := "http://" + r.o.ports.dashboard.addr()
	if err := waitHTTP(ctx, dashboard+"/healthz", r.monitor.done, startupTimeout); err != nil {
		return err
	}
	if err := r.waitSubscribed(ctx, monitorClientID, "monitor"); err != nil {
		return err
	}
	// The demonstration's users, one for each role of an auto's process (README).
	if token, err := login(dashboard, o.user, o.password); err != nil {
		log.Warn("demonstration users not created", "error", err)
	} else if err := demo.EnsureUsers(ctx, client, dashboard, token); err != nil {
		log.Warn("demonstration users not created", "error", err)
	}

	// 5. The simulated fleet and its bridges.
	if err := r.startFleet(ctx, common); err != nil {
		return err
	}

	live := waitVehiclesLive(ctx, dashboard, o.user, o.password, o.vehicles, o.liveTimeout)
	if ctx.Err() != nil {
		return nil
	}
	r.banner(dashboard, live, time.Since(t0))
	go r.influx.announceReady(ctx)

	select {
	case <-ctx.Done():
		log.Info("stopping")
		return nil
	case err := <-r.sup.failed:
		return err
	}
}

// demoRegistry copies the demonstration registry into the data directory on the first run, so
// that the dashboard may edit it while the example in the repository stays as it is. It returns
// the copy's path, or "" when there is none.
func demoRegistry(o options) (string, error) {
	reg := filepath.Join(o.data, "registry.yaml")
	if o.registry == "" {
		// The demonstration's own, whose dates follow the day of the run (an edited copy is kept).
		if err := o.demo.SyncRegistry(reg); err != nil {
			return "", err
		}
	}
	if _, err := os.Stat(reg); errors.Is(err, os.ErrNotExist) && o.registry != "" {
		b, err := os.ReadFile(o.registry)
		if err != nil {
			return "", fmt.Errorf("demonstration registry: %w", err)
		}
		if err := os.WriteFile(reg, b, 0o600); err != nil {
			return "", err
		}
	}
	if _, err := os.Stat(reg); err != nil {
		return "", nil
	}
	return reg, nil
}

const (
	ingestClientID  = "trenzinho-ingest-localrun"
	monitorClientID = "trenzinho-monitor" // the monitor's default TRENZINHO_MONITOR_CLIENT_ID
)

// runner holds what one run started.
type runner struct {
	o       options
	log     *slog.Logger
	sup     *supervisor
	broker  *broker
	influx  *influxRun
	ingest  *proc
	monitor *proc
	fleet   []*proc // the simulator and the bridges
	// coachPages are the bridges' coach status pages, "VEHICLE URL", for the banner.
	coachPages []string
}

// waitSubscribed waits until the client id has subscribed on the embedded broker.
func (r *runner) waitSubscribed(ctx context.Context, clientID, what string) error {
	select {
	case <-r.broker.subscribed(clientID):
		return nil
	case <-ctx.Done():
		return ctx.Err()
	case err := <-r.sup.failed:
		return err
	case <-time.After(60 * time.Second):
		return fmt.Errorf("%s did not subscribe on the broker within 60 s; see %s", what, filepath.Join(r.o.data, "logs", what+".log"))
	}
}

func (r *runner) banner(dashboard string, live bool, took time.Duration) {
	p := r.o.ports
	var b strings.Builder
	fmt.Fprintf(&b, "\n  Painel da fiscalização: %s/\n  Usuário: %s   Senha: %s\n", dashboard, r.o.user, r.o.password)
	fmt.Fprintf(&b, "  Portas: MQTT %s · InfluxDB %s (RPC %s) · painel %s · métricas do ingest %s\n",
		p.mqtt.describe(), p.influx.describe(), p.influxRPC.describe(), p.dashboard.describe(), p.ingestMetrics.describe())
	if live {
		fmt.Fprintf(&b, "  Frota simulada: %d veículos ao vivo (pronto em %.0f s)\n", r.o.vehicles, took.Seconds())
	} else {
		fmt.Fprintf(&b, "  Frota simulada: %d veículos iniciados, ainda não vistos no painel (veja %s/logs/)\n", r.o.vehicles, r.o.data)
	}
	if st := r.influx.status(); st != "" {
		fmt.Fprintf(&b, "  Ainda iniciando: InfluxDB (%s); o ingest guarda as leituras e as grava quando ele responder\n", st)
	}
	if len(r.coachPages) > 0 {
		fmt.Fprintf(&b, "  Alertas ao condutor (página local de cada ponte): %s\n", strings.Join(r.coachPages, " · "))
	}
	fmt.Fprintf(&b, "  Logs: %s/logs/   (Ctrl-C para parar tudo)\n\n", r.o.data)
	fmt.Print(b.String())
}

// heldPath is where a run stopped before InfluxDB answered keeps the telemetry ingest held.
func (r *runner) heldPath() string { return filepath.Join(r.o.data, "unwritten-telemetry.jsonl") }

// shutdown stops what was started in dependency order: the fleet and the bridges (their
// spools keep what they could not send), ingest once it has acknowledged what the broker gave
// it (after its last write), the monitor, the broker, InfluxDB. Each step waits a bounded time
// and then kills, so that the whole stop stays within 5 s.
func (r *runner) shutdown() {
	start := time.Now()
	r.sup.stopping.Store(true)
	r.sup.stop(r.fleet, 1500*time.Millisecond)
	if r.broker != nil && r.ingest != nil && r.influx.ready() {
		r.broker.drain(ingestClientID, time.Second)
	}
	if r.ingest != nil {
		r.sup.stop([]*proc{r.ingest}, 1500*time.Millisecond)
	}
	if r.monitor != nil {
		r.sup.stop([]*proc{r.monitor}, time.Second)
	}
	if r.broker != nil && r.ingest != nil {
		// What ingest could not write (InfluxDB never answered, or not in time) is kept for the
		// next run: the embedded broker's sessions end with this one.
		if n, err := r.broker.saveUnacknowledged(ingestClientID, r.heldPath()); err != nil {
			r.log.Error("telemetry not written to InfluxDB is lost", "error", err)
		} else if n > 0 {
			r.log.Info("telemetry not written to InfluxDB: telemetry kept for the next run", "messages", n, "path", r.heldPath())
		}
	}
	if r.broker != nil {
		n, vehicles := r.broker.telemetry()
		r.broker.close()
		r.log.Info("broker stopped", "telemetry_batches", n, "vehicles", vehicles)
	}
	if r.influx != nil {
		r.influx.stop(time.Second)
	}
	r.sup.stop(r.sup.remaining(), 500*time.Millisecond)
	r.log.Info("all stopped", "took", time.Since(start).Round(time.Millisecond))
}
