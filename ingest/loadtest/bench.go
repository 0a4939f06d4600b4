package main

// The comparative ingest benchmark (`loadtest bench`, docs/benchmarks.md): one Mosquitto with the
// repository's configuration and one InfluxDB 1.8 on free loopback ports, and the same load
// through each contender in turn, each into its own database:
//
//   - ingest: the program, built from this repository, with its shipped defaults;
//   - telegraf: Telegraf's mqtt_consumer (QoS 1, persistent session, json_v2 parsing of the wire
//     format) and influxdb_v2 output;
//   - bare: a bare influxdb-client-go WriteAPIBlocking writer, in a child process, writing the
//     very points ingest writes (archive.AppendLines) in writes of 5,000 lines, with no MQTT and
//     no JSON: the ceiling;
//   - sink: ingest's MQTT subscription alone, acknowledging and dropping every message with no
//     write (sink.go): what the broker delivers to one subscriber, the ceiling of any consumer.
//
// Ingest contenders are named ingest or ingest-VARIANT; --env gives a variant its settings and
// --bin its own binary (two builds in alternated rounds).
//
// For each it measures, from the first publish (the first write for the bare writer) to the
// moment the last point landed: readings per second, the CPU time of the contender's process
// (/proc/PID/stat) per 1,000 readings, its peak RSS, and the CPU of the broker and of influxd
// meanwhile. Points landing are watched cheaply through influxd's own counters (/debug/vars,
// writePointsOk of the database's shards), and once they reach the expected number the
// distinct points are counted exactly with InfluxQL. A contender that stops making progress for
// --stall is recorded as stalled, with what it stored.

import (
	"bufio"
	"context"
	"debug/buildinfo"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"math"
	"net/http"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"runtime"
	"slices"
	"sort"
	"strconv"
	"strings"
	"time"

	mqtt "github.com/eclipse/paho.mqtt.golang"
	influxdb2 "github.com/influxdata/influxdb-client-go/v2"

	"github.com/trenzinho/trenzinho/ingest/archive"
	"github.com/trenzinho/trenzinho/internal/testkit/harness"
	"github.com/trenzinho/trenzinho/wire"
)

// Contenders of the benchmark.
const (
	contenderIngest   = "ingest"
	contenderTelegraf = "telegraf"
	contenderBare     = "bare"
)

// kind is the contender's program: its name up to the first "-" (ingest-nogzip is ingest).
func kind(contender string) string {
	k, _, _ := strings.Cut(contender, "-")
	return k
}

func isKind(k string) func(string) bool { return func(c string) bool { return kind(c) == k } }

// bareWriterCommand is the hidden subcommand that runs the bare writer in a child process.
const bareWriterCommand = "bare-writer"

// childEnv tells a test binary, which cannot take subcommands, to run the bare writer.
const childEnv = "TRENZINHO_LOADTEST_CHILD"

// benchPrefix starts every vehicle id of the measured load; warmUpVehicle is outside it.
const (
	benchPrefix   = "BENCH-"
	warmUpVehicle = "WARMUP-000"
)

type benchOptions struct {
	load
	speedup    float64 // × real time; 0: as fast as the broker takes the messages
	window     int     // QoS 1 publishes awaiting their PUBACK
	contenders []string
	rounds     int
	shapes     []int // --readings-per-batch: one benchmark per shape

	ingestBin, telegrafBin, mosquittoBin, influxdBin string

	timeout time.Duration // per contender, from the first publish
	stall   time.Duration // no point landing for this long: stalled
	settle  time.Duration // pause before each measurement
	dir     string
	keep    bool

	ingestCPUProfile string              // directory: ingest writes a CPU profile per round there
	env              map[string][]string // extra environment of an ingest contender, by name
	bins             map[string]string   // ingest binary of a contender, by name (default ingestBin)
	gzip             bool                // every contender compresses its write requests
	telegraf         telegrafTuning
}

// telegrafTuning are the agent and plugin settings of Telegraf that bound its throughput.
type telegrafTuning struct {
	batchSize, bufferLimit, maxUndelivered int
	flushInterval                          time.Duration
}

func runBench(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet("loadtest bench", flag.ContinueOnError)
	fs.SetOutput(stderr)
	var o benchOptions
	var contenders string
	fs.IntVar(&o.vehicles, "vehicles", 2000, "vehicles of the simulated fleet")
	fs.IntVar(&o.batches, "batches", 10, "batches (of 5 s) per vehicle")
	fs.IntVar(&o.gps, "gps", 10, "GPS readings per batch")
	fs.IntVar(&o.tacho, "tacho", 10, "tachograph readings per batch")
	fs.IntVar(&o.sound, "sound", 10, "sound readings per batch")
	fs.Func("readings-per-batch", "`N,M,…`: run the benchmark once per batch shape of N readings (GPS, tacho and sound in turn: 5 is 2+2+1, 30 is 10+10+10) instead of --gps, --tacho and --sound, and report each; e.g. 5,30", func(v string) error {
		shapes, err := parseShapes(v)
		o.shapes = shapes
		return err
	})
	fs.Float64Var(&o.speedup, "speedup", 0, "publish at this many times real time (one batch per vehicle per 5 s); 0: as fast as the broker takes them")
	fs.IntVar(&o.window, "window", 500, "QoS 1 publishes awaiting their PUBACK")
	fs.StringVar(&contenders, "contenders", "ingest,telegraf,bare", "contenders, in the order of the first round (later rounds rotate it)")
	fs.IntVar(&o.rounds, "rounds", 1, "rounds; each contender runs once per round, into a new database")
	fs.StringVar(&o.ingestBin, "ingest", "", "ingest binary (built from the repository when empty)")
	fs.StringVar(&o.telegrafBin, "telegraf", "", "telegraf binary (env TRENZINHO_TELEGRAF, .tools/bin, PATH when empty)")
	fs.StringVar(&o.mosquittoBin, "mosquitto", "", "mosquitto binary (env TRENZINHO_MOSQUITTO, .tools/bin, PATH, /usr/sbin when empty)")
	fs.StringVar(&o.influxdBin, "influxd", "", "InfluxDB 1.8 influxd binary (env TRENZINHO_INFLUXD, .tools/bin, PATH when empty)")
	fs.DurationVar(&o.timeout, "timeout", 10*time.Minute, "longest measurement of one contender")
	fs.DurationVar(&o.stall, "stall", 30*time.Second, "a contender that lands no point for this long after the load was sent is stalled")
	fs.DurationVar(&o.settle, "settle", 3*time.Second, "pause before each measurement, once the contender is ready")
	fs.StringVar(&o.dir, "dir", "", "working directory for the servers' data and the logs (a temporary one when empty)")
	fs.BoolVar(&o.keep, "keep", false, "keep the working directory (logs, Telegraf configuration)")
	fs.StringVar(&o.ingestCPUProfile, "ingest-cpuprofile", "", "directory where ingest writes a CPU profile of each round (ingest --cpuprofile)")
	fs.BoolVar(&o.gzip, "gzip", false, "every contender gzips its InfluxDB write requests (ingest TRENZINHO_INGEST_GZIP, Telegraf content_encoding, the bare writer's client); off: none does")
	fs.IntVar(&o.telegraf.batchSize, "telegraf-batch-size", 5000, "Telegraf agent metric_batch_size (ingest writes 5,000 lines)")
	fs.IntVar(&o.telegraf.bufferLimit, "telegraf-buffer-limit", 100000, "Telegraf agent metric_buffer_limit (must hold max-undelivered messages' readings)")
	fs.IntVar(&o.telegraf.maxUndelivered, "telegraf-max-undelivered", 1000, "Telegraf mqtt_consumer max_undelivered_messages (the broker's max_inflight_messages)")
	fs.DurationVar(&o.telegraf.flushInterval, "telegraf-flush-interval", time.Second, "Telegraf agent flush_interval (ingest: 1 s)")
	o.env = make(map[string][]string)
	o.bins = make(map[string]string)
	fs.Func("bin", "`NAME:PATH`: ingest binary of the ingest contender NAME (repeatable), to compare builds in alternated rounds: --contenders ingest,ingest-base --bin ingest-base:/tmp/ingest-base", func(v string) error {
		name, path, ok := strings.Cut(v, ":")
		if !ok || kind(name) != contenderIngest || path == "" {
			return errors.New("want NAME:PATH, NAME an ingest contender")
		}
		o.bins[name] = path
		return nil
	})
	fs.Func("env", "`NAME:KEY=VALUE`: environment of the ingest contender NAME (repeatable), to compare settings: --contenders ingest,ingest-small --env ingest-small:TRENZINHO_INGEST_BATCH_LINES=1000", func(v string) error {
		name, kv, ok := strings.Cut(v, ":")
		if !ok || !strings.Contains(kv, "=") {
			return errors.New("want NAME:KEY=VALUE")
		}
		o.env[name] = append(o.env[name], kv)
		return nil
	})
	fs.Usage = func() {
		fmt.Fprintf(fs.Output(), "Usage: loadtest bench [flags]\n\n"+
			"Starts Mosquitto (the repository's configuration) and InfluxDB 1.8 on free loopback ports and runs\n"+
			"the same load through ingest, Telegraf and a bare influxdb-client-go writer in turn; prints a\n"+
			"Markdown report (readings/s, CPU s per 1,000 readings, peak RSS, points landed).\n"+
			"Run it from within the repository.\n\nFlags:\n")
		fs.PrintDefaults()
	}
	if err := fs.Parse(args); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			return 0
		}
		return 2
	}
	o.contenders = strings.Split(contenders, ",")
	if err := o.check(); err != nil {
		fmt.Fprintln(stderr, "loadtest bench:", err)
		return 2
	}
	runs := []benchOptions{o}
	if len(o.shapes) > 0 {
		runs = runs[:0]
		for _, n := range o.shapes {
			s := o
			s.load = o.load.shaped(n)
			if o.ingestCPUProfile != "" {
				s.ingestCPUProfile = filepath.Join(o.ingestCPUProfile, fmt.Sprintf("%d-readings", n))
			}
			runs = append(runs, s)
		}
	}
	for _, o := range runs {
		if len(runs) > 1 {
			fmt.Fprintf(stdout, "### %d readings per batch\n\n", o.gps+o.tacho+o.sound)
		}
		rep, err := bench(ctx, o, stderr)
		if rep != nil {
			rep.command = "go run ./ingest/loadtest bench " + strings.Join(args, " ")
			rep.write(stdout)
		}
		if err != nil {
			fmt.Fprintln(stderr, "loadtest bench:", err)
			return 1
		}
	}
	return 0
}

// parseShapes reads the list of --readings-per-batch.
func parseShapes(v string) ([]int, error) {
	var shapes []int
	for f := range strings.SplitSeq(v, ",") {
		n, err := strconv.Atoi(strings.TrimSpace(f))
		if err != nil || n < 1 || n > wire.MaxReadings {
			return nil, fmt.Errorf("%q: want readings per batch from 1 to %d", f, wire.MaxReadings)
		}
		shapes = append(shapes, n)
	}
	return shapes, nil
}

// shaped returns the load with n readings per batch: GPS, tachograph and sound in turn.
func (l load) shaped(n int) load {
	l.gps, l.tacho, l.sound = (n+2)/3, (n+1)/3, n/3
	return l
}

func (o benchOptions) check() error {
	if o.vehicles < 1 || o.batches < 1 || o.window < 1 || o.rounds < 1 || o.gps+o.tacho+o.sound < 1 ||
		o.gps < 0 || o.tacho < 0 || o.sound < 0 || o.gps+o.tacho+o.sound > wire.MaxReadings {
		return fmt.Errorf("--vehicles, --batches, --window, --rounds must be positive and the readings per batch 1–%d", wire.MaxReadings)
	}
	if len(o.contenders) == 0 {
		return errors.New("no contender")
	}
	for _, c := range o.contenders {
		switch kind(c) {
		case contenderIngest, contenderTelegraf, contenderBare, contenderSink:
		default:
			return fmt.Errorf("unknown contender %q (ingest, telegraf, bare, sink, or one of them followed by -variant)", c)
		}
		if !regexp.MustCompile(`^[a-z0-9-]{1,20}$`).MatchString(c) {
			return fmt.Errorf("contender %q: use a-z, 0-9 and - (at most 20)", c)
		}
	}
	return nil
}

// result is the measurement of one contender in one round.
type result struct {
	contender string
	round     int
	database  string

	readings, batches         int // landed (distinct points)
	wantReadings, wantBatches int // expected; batches are 0 for Telegraf, which writes none
	written                   int64

	wall                  time.Duration // first publish → last point landed
	cpu, brokerCPU, dbCPU time.Duration
	benchCPU              time.Duration // this process: the publisher, and the sampling
	peakRSS               int64         // bytes
	load1                 float64
	complete              bool
	notes                 []string
	detail                string // extra counters of the contender
}

func (r *result) readingsPerSec() float64 {
	if r.wall <= 0 {
		return 0
	}
	return float64(r.readings) / r.wall.Seconds()
}

func per1000(d time.Duration, readings int) float64 {
	if readings == 0 {
		return 0
	}
	return d.Seconds() / (float64(readings) / 1000)
}

// report is the whole benchmark.
type benchReport struct {
	command  string
	machine  machine
	versions []string
	opts     benchOptions
	messages int
	bytes    int
	results  []*result
}

// env is what the contenders share: the servers, the load and a publisher.
type benchEnv struct {
	o        benchOptions
	root     string
	dir      string
	progress io.Writer

	broker    *harness.Mosquitto
	influxd   *harness.Influx
	brokerURL string
	influx    influxClient

	msgs []message
	base time.Time
	pub  mqtt.Client
}

// bench runs the benchmark; the report holds what was measured even when it fails midway.
func bench(ctx context.Context, o benchOptions, progress io.Writer) (*benchReport, error) {
	root, err := harness.RepoRoot()
	if err != nil {
		return nil, fmt.Errorf("run loadtest bench from within the trenzinho repository: %w", err)
	}
	e := &benchEnv{o: o, root: root, progress: progress}
	rep := &benchReport{opts: o, machine: readMachine()}

	bins := map[string]*string{"mosquitto": &o.mosquittoBin, "influxd": &o.influxdBin}
	if slices.ContainsFunc(o.contenders, isKind(contenderTelegraf)) {
		bins["telegraf"] = &o.telegrafBin
	}
	for name, p := range bins {
		if *p == "" {
			*p = harness.LookBinary(root, "TRENZINHO_"+strings.ToUpper(name), name)
		}
		if *p == "" {
			return nil, fmt.Errorf("%s not found (flag --%s, env TRENZINHO_%s, .tools/bin or PATH)", name, name, strings.ToUpper(name))
		}
	}
	e.o = o

	e.dir = o.dir
	if e.dir == "" {
		if e.dir, err = os.MkdirTemp("", "trenzinho-bench-"); err != nil {
			return nil, err
		}
	} else if err := os.MkdirAll(e.dir, 0o755); err != nil {
		return nil, err
	}
	if o.keep {
		fmt.Fprintf(progress, "working directory %s (kept)\n", e.dir)
	} else {
		defer os.RemoveAll(e.dir)
	}
	if slices.ContainsFunc(o.contenders, isKind(contenderIngest)) && o.ingestBin == "" {
		fmt.Fprintln(progress, "building ingest")
		if err = harness.Build(ctx, root, e.dir, "./ingest"); err != nil {
			return nil, err
		}
		e.o.ingestBin = filepath.Join(e.dir, "ingest")
	}
	rep.versions = versions(e.o)

	err = e.startServers(ctx)
	defer func() {
		if e.influxd != nil {
			e.influxd.Terminate(30 * time.Second)
		}
		if e.broker != nil {
			e.broker.Terminate(10 * time.Second)
		}
	}()
	if err != nil {
		return rep, err
	}

	e.base = time.Now().Add(-time.Duration(o.batches)*batchSpan - time.Hour).Truncate(time.Second)
	var lr report
	if e.msgs, lr, err = fleet(o.load, benchPrefix, e.base); err != nil {
		return rep, err
	}
	rep.messages, rep.bytes = lr.batches, lr.bytes
	fmt.Fprintf(progress, "load: %d messages, %.1f MB, %d readings\n", lr.batches, float64(lr.bytes)/1e6, o.readings())

	opts := mqtt.NewClientOptions().AddBroker(e.brokerURL).SetClientID("bench-publisher").
		SetCleanSession(true).SetOrderMatters(false)
	e.pub = mqtt.NewClient(opts)
	if tok := e.pub.Connect(); !tok.WaitTimeout(30*time.Second) || tok.Error() != nil {
		return rep, fmt.Errorf("publisher: connect to %s: %v", e.brokerURL, tok.Error())
	}
	defer e.pub.Disconnect(250)

	var failed []string
	for round := 1; round <= o.rounds; round++ {
		order := slices.Clone(o.contenders)
		for range (round - 1) % len(order) {
			order = append(order[1:], order[0])
		}
		for _, c := range order {
			if ctx.Err() != nil {
				return rep, ctx.Err()
			}
			r, err := e.run(ctx, c, round)
			if r != nil {
				rep.results = append(rep.results, r)
				fmt.Fprintf(progress, "%s round %d: %s\n", c, round, r.summary())
			}
			if err != nil {
				return rep, fmt.Errorf("%s, round %d: %w", c, round, err)
			}
			if !r.complete && kind(c) != contenderTelegraf {
				failed = append(failed, fmt.Sprintf("%s (round %d)", c, round))
			}
		}
	}
	if len(failed) > 0 {
		return rep, fmt.Errorf("incomplete: %s", strings.Join(failed, ", "))
	}
	return rep, nil
}

func (r *result) summary() string {
	s := fmt.Sprintf("%d/%d readings, %d/%d batches in %s: %.0f readings/s, %.3f CPU s per 1,000 readings, peak RSS %.0f MB",
		r.readings, r.wantReadings, r.batches, r.wantBatches, r.wall.Round(time.Millisecond), r.readingsPerSec(),
		per1000(r.cpu, r.readings), float64(r.peakRSS)/(1<<20))
	if len(r.notes) > 0 {
		s += "; " + strings.Join(r.notes, "; ")
	}
	return s
}

func (e *benchEnv) startServers(ctx context.Context) error {
	mdir := filepath.Join(e.dir, "mosquitto")
	idir := filepath.Join(e.dir, "influxdb")
	for _, d := range []string{mdir, idir} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			return err
		}
	}
	var err error
	if e.broker, err = harness.StartMosquitto(e.root, mdir, harness.MosquittoOptions{Anonymous: true, Bin: e.o.mosquittoBin}); err != nil {
		return err
	}
	e.brokerURL = e.broker.URL()
	if e.influxd, err = harness.StartInflux(ctx, e.root, idir, e.o.influxdBin); err != nil {
		return err
	}
	e.influx = influxClient{base: e.influxd.URL(), hc: &http.Client{Timeout: time.Minute}}
	fmt.Fprintf(e.progress, "mosquitto on %s, influxd on %s\n", e.brokerURL, e.influx.base)
	return nil
}

// run measures contender c in a round.
func (e *benchEnv) run(ctx context.Context, c string, round int) (*result, error) {
	db := fmt.Sprintf("bench_%s_r%d", strings.ReplaceAll(c, "-", "_"), round)
	r := &result{contender: c, round: round, database: db, wantReadings: e.o.readings()}
	if kind(c) != contenderTelegraf {
		r.wantBatches = e.o.vehicles * e.o.batches
	}
	if err := e.influx.exec(ctx, "CREATE DATABASE "+db); err != nil {
		return nil, err
	}
	fmt.Fprintf(e.progress, "%s round %d: starting\n", c, round)
	var (
		p        *child
		clientID string
		err      error
		sent     = make(chan error, 1) // the load was sent (published, or written by the bare writer)
		goSignal func() error
	)
	switch kind(c) {
	case contenderIngest, contenderTelegraf:
		clientID = "bench-" + c
		if kind(c) == contenderIngest {
			p, err = e.startIngest(c, db, clientID, round)
		} else {
			p, err = e.startTelegraf(db, clientID, round)
		}
		if err != nil {
			return nil, err
		}
		defer e.forgetSession(clientID)
		defer p.Terminate(30 * time.Second)
		if err := e.warmUp(ctx, p, db); err != nil {
			return nil, err
		}
		goSignal = func() error {
			go func() {
				sent <- publish(ctx, e.pub, e.msgs, e.o.speedup*float64(e.o.vehicles)/batchSpan.Seconds(), e.o.window)
			}()
			return nil
		}
	case contenderSink:
		clientID = "bench-" + c
		p, sk, err := e.startSink(c, clientID, round)
		if err != nil {
			return nil, err
		}
		defer e.forgetSession(clientID)
		defer p.Terminate(10 * time.Second)
		if err := e.warmUpSink(ctx, p, sk); err != nil {
			return nil, err
		}
		select {
		case <-ctx.Done():
			return nil, ctx.Err()
		case <-time.After(e.o.settle):
		}
		return r, e.measureSink(ctx, r, p, sk)
	case contenderBare:
		var ready chan struct{}
		p, ready, err = e.startBare(db, sent)
		if err != nil {
			return nil, err
		}
		defer p.Terminate(10 * time.Second)
		select {
		case <-ready:
		case <-p.Done():
			return nil, fmt.Errorf("bare writer exited: %s", p.tail())
		case <-time.After(time.Minute):
			return nil, errors.New("bare writer not ready after 1 min")
		}
		goSignal = func() error {
			_, err := io.WriteString(p.Stdin(), "go\n")
			return err
		}
	}

	select {
	case <-ctx.Done():
		return nil, ctx.Err()
	case <-time.After(e.o.settle):
	}
	if err := e.measure(ctx, r, p, goSignal, sent); err != nil {
		return r, err
	}
	if kind(c) == contenderIngest {
		r.detail = ingestCounters(p.metricsURL)
	}
	return r, nil
}

// snapshot is what is sampled every 100 ms during a measurement.
type snapshot struct {
	at                       time.Time
	written                  int64 // points accepted by the database's shards
	cpu, brokerCPU, influxCP time.Duration
	benchCPU                 time.Duration
}

func (e *benchEnv) snap(ctx context.Context, db string, p *child) (snapshot, error) {
	s := snapshot{}
	var err error
	if s.written, err = e.influx.pointsWritten(ctx, db); err != nil {
		return s, err
	}
	s.at = time.Now()
	s.cpu = cpu(p.Pid())
	s.brokerCPU = cpu(e.broker.Pid())
	s.influxCP = cpu(e.influxd.Pid())
	s.benchCPU = cpu(os.Getpid())
	return s, nil
}

// measure starts the load and waits until every point landed, the contender stalls or exits, or
// the timeout passes.
func (e *benchEnv) measure(ctx context.Context, r *result, p *child, start func() error, sent <-chan error) error {
	want := int64(r.wantReadings + r.wantBatches)
	s0, err := e.snap(ctx, r.database, p)
	if err != nil {
		return err
	}
	if err := start(); err != nil {
		return err
	}
	last, checked := s0, s0.written
	sentDone := false
	tick := time.NewTicker(100 * time.Millisecond)
	defer tick.Stop()
	finish := func(note string) {
		if sent != nil {
			// Still sending (a stall, a timeout): let the publisher finish before the next contender.
			select {
			case <-sent:
			case <-time.After(time.Minute):
			}
		}
		if note != "" {
			r.notes = append(r.notes, note)
		}
		r.written = last.written - s0.written
		r.wall = last.at.Sub(s0.at)
		r.cpu = last.cpu - s0.cpu
		r.brokerCPU = last.brokerCPU - s0.brokerCPU
		r.dbCPU = last.influxCP - s0.influxCP
		r.benchCPU = last.benchCPU - s0.benchCPU
		st, _ := harness.ReadStat(p.Pid())
		r.peakRSS = st.PeakRSS
		r.load1 = harness.LoadAverage()[0]
	}
	for {
		select {
		case <-ctx.Done():
			return ctx.Err()
		case err := <-sent:
			sentDone, sent = true, nil
			if err != nil {
				r.notes = append(r.notes, "sending failed: "+err.Error())
			}
		case <-tick.C:
		}
		s, err := e.snap(ctx, r.database, p)
		if err != nil {
			return err
		}
		if s.written > last.written {
			last = s
		}
		if s.written-s0.written >= want && s.written > checked {
			checked = s.written
			c, err := e.influx.count(ctx, r.database)
			if err != nil {
				return err
			}
			r.readings, r.batches = c.readings(), c.batch
			if r.readings >= r.wantReadings && r.batches >= r.wantBatches {
				r.complete = r.readings == r.wantReadings && r.batches == r.wantBatches
				note := ""
				if !r.complete {
					note = "more points than sent"
				}
				finish(note)
				if dup := r.written - int64(r.readings+r.batches); dup > 0 {
					r.notes = append(r.notes, fmt.Sprintf("%d points written twice", dup))
				}
				return nil
			}
		}
		var note string
		switch {
		case !p.Running():
			note = "exited: " + p.tail()
		case sentDone && time.Since(last.at) > e.o.stall:
			note = fmt.Sprintf("stalled: no point landed for %s", e.o.stall)
		case time.Since(s0.at) > e.o.timeout:
			note = fmt.Sprintf("timeout after %s", e.o.timeout)
		}
		if note != "" {
			c, err := e.influx.count(ctx, r.database)
			if err != nil {
				return err
			}
			r.readings, r.batches = c.readings(), c.batch
			finish(note)
			return nil
		}
	}
}

// cpu is the CPU time of a process so far (0 when unknown).
func cpu(pid int) time.Duration {
	st, _ := harness.ReadStat(pid)
	return st.CPU
}

// warmUp publishes a small batch of another vehicle until the contender stores it: then it is
// connected, subscribed (its persistent session exists) and writing.
func (e *benchEnv) warmUp(ctx context.Context, p *child, db string) error {
	b := makeBatch(load{vehicles: 1, batches: 1, gps: 1, tacho: 1, sound: 1}, "WARMUP-", e.base, 0, 1)
	if b.Vehicle != warmUpVehicle {
		return fmt.Errorf("warm-up vehicle %q", b.Vehicle)
	}
	payload, err := wire.Encode(b, nil)
	if err != nil {
		return err
	}
	deadline := time.Now().Add(2 * time.Minute)
	for {
		tok := e.pub.Publish(wire.TelemetryTopic(b.Vehicle), 1, false, payload)
		if !tok.WaitTimeout(10*time.Second) || tok.Error() != nil {
			return fmt.Errorf("warm-up publish: %v", tok.Error())
		}
		for range 30 {
			n, err := e.influx.pointsWritten(ctx, db)
			if err != nil {
				return err
			}
			if n > 0 {
				return nil
			}
			if !p.Running() {
				return fmt.Errorf("%s exited: %s", p.Name, p.tail())
			}
			select {
			case <-ctx.Done():
				return ctx.Err()
			case <-time.After(100 * time.Millisecond):
			}
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("%s stored nothing of the warm-up batch in 2 min: %s", p.Name, p.tail())
		}
	}
}

// forgetSession ends the persistent session of a stopped contender, so that the broker does not
// queue the next contender's load for it.
func (e *benchEnv) forgetSession(clientID string) {
	c := mqtt.NewClient(mqtt.NewClientOptions().AddBroker(e.brokerURL).SetClientID(clientID).SetCleanSession(true))
	if tok := c.Connect(); tok.WaitTimeout(10*time.Second) && tok.Error() == nil {
		c.Disconnect(100)
	}
}

func (e *benchEnv) startIngest(name, db, clientID string, round int) (*child, error) {
	port, err := harness.FreePort()
	if err != nil {
		return nil, err
	}
	metrics := fmt.Sprintf("127.0.0.1:%d", port)
	bin := e.o.ingestBin
	if b, ok := e.o.bins[name]; ok {
		bin = b
	}
	argv := []string{bin}
	if e.o.ingestCPUProfile != "" {
		if err := os.MkdirAll(e.o.ingestCPUProfile, 0o755); err != nil {
			return nil, err
		}
		argv = append(argv, "--cpuprofile", filepath.Join(e.o.ingestCPUProfile, fmt.Sprintf("%s-r%d.pprof", name, round)))
	}
	p, err := startChild(harness.Command{Name: name, LogFile: filepath.Join(e.dir, fmt.Sprintf("%s-r%d.log", name, round)), Argv: argv,
		Env: append([]string{
			"TRENZINHO_MQTT_URL=" + e.brokerURL,
			"TRENZINHO_MQTT_USER=", "TRENZINHO_MQTT_PASSWORD=",
			"TRENZINHO_INFLUX_URL=" + e.influx.base,
			"TRENZINHO_INFLUX_TOKEN=", "TRENZINHO_INFLUX_ORG=",
			"TRENZINHO_INFLUX_BUCKET=" + db,
			"TRENZINHO_INGEST_CLIENT_ID=" + clientID,
			"TRENZINHO_INGEST_SHARE_GROUP=",
			"TRENZINHO_METRICS_LISTEN=" + metrics,
			"TRENZINHO_LOG_LEVEL=info",
			"TRENZINHO_INGEST_GZIP=" + strconv.FormatBool(e.o.gzip),
		}, e.o.env[name]...)})
	if err != nil {
		return nil, err
	}
	p.metricsURL = "http://" + metrics + "/metrics"
	return p, nil
}

// telegrafConfig is the Telegraf configuration of the benchmark: QoS 1, a persistent session
// with a fixed client id, json_v2 parsing of the gps, tacho and sound arrays of the wire format
// into measurements of those names with the tag vehicle, the field clock and the time of "t",
// written to InfluxDB 1.8 through its v2 API. Only the tuning comes from the flags.
func telegrafConfig(brokerURL, influxURL, db, clientID string, t telegrafTuning, gzip bool) string {
	var b strings.Builder
	fmt.Fprintf(&b, `# Generated by loadtest bench (ingest/loadtest/bench.go).
[agent]
  metric_batch_size = %d
  metric_buffer_limit = %d
  flush_interval = %q
  flush_jitter = "0s"
  omit_hostname = true

[[inputs.mqtt_consumer]]
  servers = [%q]
  topics = ["trenzinho/v1/+/telemetry"]
  topic_tag = ""
  qos = 1
  persistent_session = true
  client_id = %q
  max_undelivered_messages = %d
  data_format = "json_v2"
`, t.batchSize, t.bufferLimit, t.flushInterval.String(), brokerURL, clientID, t.maxUndelivered)
	for _, kind := range []struct {
		name  string
		types string
	}{
		{"gps", "\n    [inputs.mqtt_consumer.json_v2.object.fields]\n      sats = \"int\""},
		{"tacho", ""},
		{"sound", ""},
	} {
		fmt.Fprintf(&b, `
  [[inputs.mqtt_consumer.json_v2]]
    measurement_name = %q
    [[inputs.mqtt_consumer.json_v2.tag]]
      path = "vehicle"
    [[inputs.mqtt_consumer.json_v2.field]]
      path = "clock"
      type = "string"
    [[inputs.mqtt_consumer.json_v2.object]]
      path = %q
      optional = true
      timestamp_key = "t"
      timestamp_format = "2006-01-02T15:04:05Z07:00"
      timestamp_timezone = "UTC"%s
`, kind.name, kind.name, kind.types)
	}
	encoding := "identity"
	if gzip {
		encoding = "gzip"
	}
	fmt.Fprintf(&b, `
[[outputs.influxdb_v2]]
  urls = [%q]
  token = ""
  organization = ""
  bucket = %q
  content_encoding = %q
`, influxURL, db+"/autogen", encoding)
	return b.String()
}

func (e *benchEnv) startTelegraf(db, clientID string, round int) (*child, error) {
	path := filepath.Join(e.dir, fmt.Sprintf("telegraf-r%d.conf", round))
	conf := telegrafConfig(e.brokerURL, e.influx.base, db, clientID, e.o.telegraf, e.o.gzip)
	if err := os.WriteFile(path, []byte(conf), 0o644); err != nil {
		return nil, err
	}
	return startChild(harness.Command{Name: "telegraf", LogFile: filepath.Join(e.dir, fmt.Sprintf("telegraf-r%d.log", round)),
		Argv: []string{e.o.telegrafBin, "--config", path}})
}

// startBare starts the bare writer; ready is closed once it is connected and waits for "go".
// sent receives nil once it wrote everything.
func (e *benchEnv) startBare(db string, sent chan<- error) (*child, chan struct{}, error) {
	self, err := os.Executable()
	if err != nil {
		return nil, nil, err
	}
	argv := []string{self, bareWriterCommand,
		"--influx-url", e.influx.base, "--bucket", db + "/autogen", "--prefix", benchPrefix,
		"--base", e.base.Format(time.RFC3339Nano), "--gzip=" + strconv.FormatBool(e.o.gzip),
		"--vehicles", strconv.Itoa(e.o.vehicles), "--batches", strconv.Itoa(e.o.batches),
		"--gps", strconv.Itoa(e.o.gps), "--tacho", strconv.Itoa(e.o.tacho), "--sound", strconv.Itoa(e.o.sound)}
	ready := make(chan struct{})
	p, err := startChild(harness.Command{Name: "bare", LogFile: filepath.Join(e.dir, "bare.log"), Argv: argv,
		Env: []string{childEnv + "=" + bareWriterCommand}, Pipes: true})
	if err != nil {
		return nil, nil, err
	}
	go func() {
		sc := bufio.NewScanner(p.Stdout())
		readyClosed := false
		for sc.Scan() {
			switch line := sc.Text(); {
			case line == "ready" && !readyClosed:
				close(ready)
				readyClosed = true
			case strings.HasPrefix(line, "done"):
				sent <- nil
			case strings.HasPrefix(line, "error"):
				sent <- errors.New(line)
			}
		}
	}()
	return p, ready, nil
}

// runBareWriter is the bare writer's child process: it connects, says "ready", waits for "go" on
// standard input, writes the whole load (WriteAPIBlocking, 5,000 lines per write, one write at a
// time), says "done" and waits for standard input to close.
func runBareWriter(ctx context.Context, args []string, stdin io.Reader, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet("loadtest "+bareWriterCommand, flag.ContinueOnError)
	fs.SetOutput(stderr)
	var (
		l                 load
		influxURL, bucket string
		prefix, baseS     string
		lines             int
		gzip              bool
	)
	fs.StringVar(&influxURL, "influx-url", "", "InfluxDB URL")
	fs.StringVar(&bucket, "bucket", "", "bucket (db/rp)")
	fs.StringVar(&prefix, "prefix", benchPrefix, "vehicle id prefix")
	fs.StringVar(&baseS, "base", "", "time of the load (RFC 3339)")
	fs.IntVar(&l.vehicles, "vehicles", 1, "")
	fs.IntVar(&l.batches, "batches", 1, "")
	fs.IntVar(&l.gps, "gps", 1, "")
	fs.IntVar(&l.tacho, "tacho", 1, "")
	fs.IntVar(&l.sound, "sound", 1, "")
	fs.IntVar(&lines, "lines", 5000, "lines per write")
	fs.BoolVar(&gzip, "gzip", false, "gzip the requests")
	if err := fs.Parse(args); err != nil {
		return 2
	}
	base, err := time.Parse(time.RFC3339Nano, baseS)
	if err != nil || influxURL == "" || bucket == "" {
		fmt.Fprintln(stderr, "bare-writer: --influx-url, --bucket and --base are required")
		return 2
	}
	client := influxdb2.NewClientWithOptions(influxURL, "",
		influxdb2.DefaultOptions().SetPrecision(time.Nanosecond).SetUseGZip(gzip))
	defer client.Close()
	if ok, err := client.Ping(ctx); !ok {
		fmt.Fprintln(stderr, "bare-writer: ping:", err)
		return 1
	}
	w := client.WriteAPIBlocking("", bucket)
	in := bufio.NewScanner(stdin)
	fmt.Fprintln(stdout, "ready")
	if !in.Scan() || in.Text() != "go" {
		return 1
	}
	start := time.Now()
	buf := make([]byte, 0, 2<<20)
	n, total := 0, 0
	flush := func() error {
		if n == 0 {
			return nil
		}
		if err := w.WriteRecord(ctx, string(buf)); err != nil {
			return err
		}
		total += n
		buf, n = buf[:0], 0
		return nil
	}
	for s := 1; s <= l.batches; s++ {
		for v := range l.vehicles {
			var k int
			buf, k, err = archive.AppendLines(buf, makeBatch(l, prefix, base, v, s), time.Now(), 0)
			if err == nil && n+k >= lines {
				n += k
				err = flush()
			} else {
				n += k
			}
			if err != nil {
				fmt.Fprintln(stdout, "error", err)
				fmt.Fprintln(stderr, "bare-writer:", err)
				return 1
			}
		}
	}
	if err := flush(); err != nil {
		fmt.Fprintln(stdout, "error", err)
		return 1
	}
	fmt.Fprintf(stdout, "done %d points in %s\n", total, time.Since(start))
	io.Copy(io.Discard, stdin) // stay measurable until the parent closes our input
	return 0
}

// ingestCounters reads a few of ingest's metrics: what it received, redelivered and how it wrote.
func ingestCounters(metricsURL string) string {
	resp, err := http.Get(metricsURL)
	if err != nil {
		return ""
	}
	defer resp.Body.Close()
	want := map[string]string{
		"trenzinho_ingest_messages_total":               "messages",
		"trenzinho_ingest_messages_redelivered_total":   "redelivered",
		`trenzinho_ingest_writes_total{result="ok"}`:    "writes",
		`trenzinho_ingest_writes_total{result="retry"}`: "retried writes",
		"trenzinho_ingest_write_duration_seconds_sum":   "s writing",
		"trenzinho_ingest_quarantined_total":            "quarantined",
	}
	var parts []string
	sc := bufio.NewScanner(resp.Body)
	sc.Buffer(make([]byte, 64<<10), 1<<20)
	for sc.Scan() {
		name, value, ok := strings.Cut(sc.Text(), " ")
		if label, found := want[name]; ok && found {
			if v, err := strconv.ParseFloat(value, 64); err == nil {
				prec := 0
				if v != math.Trunc(v) {
					prec = 2
				}
				parts = append(parts, strconv.FormatFloat(v, 'f', prec, 64)+" "+label)
			}
		}
	}
	return strings.Join(parts, ", ")
}

// --- InfluxDB

type influxClient struct {
	base string
	hc   *http.Client
}

func (c influxClient) exec(ctx context.Context, stmt string) error {
	_, err := c.query(ctx, "", stmt)
	return err
}

type stmtResult struct {
	Error  string `json:"error"`
	Series []struct {
		Name   string  `json:"name"`
		Values [][]any `json:"values"`
	} `json:"series"`
}

// query runs InfluxQL statements (POST /query) and returns their results.
func (c influxClient) query(ctx context.Context, db, q string) ([]stmtResult, error) {
	form := url.Values{"q": {q}}
	if db != "" {
		form.Set("db", db)
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, c.base+"/query", strings.NewReader(form.Encode()))
	if err != nil {
		return nil, err
	}
	req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	resp, err := c.hc.Do(req)
	if err != nil {
		return nil, err
	}
	defer resp.Body.Close()
	var r struct {
		Results []stmtResult `json:"results"`
		Error   string       `json:"error"`
	}
	if err := json.NewDecoder(resp.Body).Decode(&r); err != nil {
		return nil, fmt.Errorf("InfluxQL %q: %s: %w", q, resp.Status, err)
	}
	if r.Error != "" {
		return nil, fmt.Errorf("InfluxQL %q: %s", q, r.Error)
	}
	for _, s := range r.Results {
		if s.Error != "" {
			return nil, fmt.Errorf("InfluxQL %q: %s", q, s.Error)
		}
	}
	return r.Results, nil
}

// pointsWritten is the sum of writePointsOk of the shards of db: every point accepted, points
// written again included. It is an in-memory counter of influxd, cheap to read often.
func (c influxClient) pointsWritten(ctx context.Context, db string) (int64, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, c.base+"/debug/vars", nil)
	if err != nil {
		return 0, err
	}
	resp, err := c.hc.Do(req)
	if err != nil {
		return 0, err
	}
	defer resp.Body.Close()
	var vars map[string]json.RawMessage
	if err := json.NewDecoder(resp.Body).Decode(&vars); err != nil {
		return 0, fmt.Errorf("influxd /debug/vars: %w", err)
	}
	var n int64
	for k, raw := range vars {
		if !strings.HasPrefix(k, "shard:") {
			continue
		}
		var s struct {
			Tags   map[string]string `json:"tags"`
			Values map[string]int64  `json:"values"`
		}
		if err := json.Unmarshal(raw, &s); err == nil && s.Tags["database"] == db {
			n += s.Values["writePointsOk"]
		}
	}
	return n, nil
}

// counts are the distinct points of the measured load in a database.
type counts struct{ gps, tacho, sound, batch int }

func (c counts) readings() int { return c.gps + c.tacho + c.sound }

// count counts the points of the load's vehicles (not the warm-up's) in db.
func (c influxClient) count(ctx context.Context, db string) (counts, error) {
	where := fmt.Sprintf(`WHERE "vehicle" =~ /^%s/`, benchPrefix)
	q := strings.Join([]string{
		`SELECT count("lat") FROM "gps" ` + where,
		`SELECT count("speed_kmh") FROM "tacho" ` + where,
		`SELECT count("laeq_db") FROM "sound" ` + where,
		`SELECT count("seq") FROM "batch" ` + where,
	}, "; ")
	res, err := c.query(ctx, db, q)
	if err != nil {
		return counts{}, err
	}
	var n [4]int
	for i := range min(len(res), 4) {
		if s := res[i].Series; len(s) > 0 && len(s[0].Values) > 0 && len(s[0].Values[0]) > 1 {
			if v, ok := s[0].Values[0][1].(float64); ok {
				n[i] = int(v)
			}
		}
	}
	return counts{n[0], n[1], n[2], n[3]}, nil
}

// --- processes

// child is a process of the benchmark.
type child struct {
	*harness.Process
	metricsURL string
}

// startChild starts c with a new log.
func startChild(c harness.Command) (*child, error) {
	if err := os.Remove(c.LogFile); err != nil && !errors.Is(err, os.ErrNotExist) {
		return nil, err
	}
	p, err := harness.Start(c)
	if err != nil {
		return nil, err
	}
	return &child{Process: p}, nil
}

// tail is the end of the child's log.
func (c *child) tail() string { return c.Tail(2000) }

// --- the machine and the report

type machine struct {
	cpus     int
	model    string
	memTotal int64 // bytes
	load     [3]float64
	goVer    string
}

func readMachine() machine {
	m := machine{cpus: runtime.NumCPU(), goVer: runtime.Version(), load: harness.LoadAverage()}
	m.memTotal = harness.MemTotal()
	if b, err := os.ReadFile("/proc/cpuinfo"); err == nil {
		for line := range strings.Lines(string(b)) {
			if k, v, ok := strings.Cut(line, ":"); ok && strings.TrimSpace(k) == "model name" {
				m.model = strings.TrimSpace(v)
				break
			}
		}
	}
	return m
}

// versions names the programs measured, from their Go build information when they have it.
func versions(o benchOptions) []string {
	var v []string
	add := func(name, path string) {
		if path == "" {
			return
		}
		if bi, err := buildinfo.ReadFile(path); err == nil {
			ver := bi.Main.Version
			if ver == "" || ver == "(devel)" {
				ver = "this repository"
			}
			v = append(v, fmt.Sprintf("%s %s (%s)", name, ver, bi.GoVersion))
			return
		}
		out, _ := exec.Command(path, "-h").CombinedOutput()
		first, _, _ := strings.Cut(string(out), "\n")
		v = append(v, fmt.Sprintf("%s (%s)", name, strings.TrimSpace(first)))
	}
	add("ingest", o.ingestBin)
	var names []string
	for name := range o.bins {
		names = append(names, name)
	}
	sort.Strings(names)
	for _, name := range names {
		add(name+" ("+o.bins[name]+")", o.bins[name])
	}
	add("telegraf", o.telegrafBin)
	add("influxd", o.influxdBin)
	add("mosquitto", o.mosquittoBin)
	return v
}

func (rep *benchReport) write(w io.Writer) {
	m := rep.machine
	o := rep.opts
	fmt.Fprintf(w, "Machine: %d × %s, %.1f GiB, %s/%s, %s; load average at start %.2f %.2f %.2f\n\n",
		m.cpus, m.model, float64(m.memTotal)/(1<<30), runtime.GOOS, runtime.GOARCH, m.goVer, m.load[0], m.load[1], m.load[2])
	if rep.command != "" {
		fmt.Fprintf(w, "Command: `%s`\n\n", rep.command)
	}
	if len(rep.versions) > 0 {
		fmt.Fprintf(w, "Programs: %s\n\n", strings.Join(rep.versions, "; "))
	}
	pace := "as fast as the broker takes them"
	if o.speedup > 0 {
		pace = fmt.Sprintf("at %g× real time", o.speedup)
	}
	fmt.Fprintf(w, "Load: %d vehicles × %d batches = %d messages (%.1f MB), %d GPS + %d tacho + %d sound readings per batch = %d readings; published %s, QoS 1, %d in flight\n\n",
		o.vehicles, o.batches, rep.messages, float64(rep.bytes)/1e6, o.gps, o.tacho, o.sound, o.readings(), pace, o.window)
	compression := "uncompressed"
	if o.gzip {
		compression = "gzip"
	}
	fmt.Fprintf(w, "Settings: write requests %s for every contender; ingest with its defaults", compression)
	var names []string
	for name := range o.env {
		names = append(names, name)
	}
	sort.Strings(names)
	for _, name := range names {
		fmt.Fprintf(w, ", %s with %s", name, strings.Join(o.env[name], " "))
	}
	if slices.ContainsFunc(o.contenders, isKind(contenderTelegraf)) {
		t := o.telegraf
		fmt.Fprintf(w, "; Telegraf metric_batch_size %d, metric_buffer_limit %d, max_undelivered_messages %d, flush_interval %s",
			t.batchSize, t.bufferLimit, t.maxUndelivered, t.flushInterval)
	}
	fmt.Fprint(w, "\n\n")
	fmt.Fprintln(w, "| contender | round | readings/s | CPU s / 1,000 readings | peak RSS | readings landed / expected | batch points | wall | broker CPU s / 1,000 | influxd CPU s / 1,000 | publisher CPU s / 1,000 | load avg (1 min) | notes |")
	fmt.Fprintln(w, "|---|---|---|---|---|---|---|---|---|---|---|---|---|")
	for _, r := range rep.results {
		batches := "—"
		if r.wantBatches > 0 {
			batches = thousands(int64(r.batches)) + " / " + thousands(int64(r.wantBatches))
		}
		notes := strings.Join(r.notes, "; ")
		if r.detail != "" {
			notes = strings.TrimPrefix(notes+"; "+r.detail, "; ")
		}
		fmt.Fprintf(w, "| %s | %d | %s | %.4f | %.0f MB | %s / %s | %s | %s | %.4f | %.4f | %.4f | %.2f | %s |\n",
			r.contender, r.round, thousands(int64(r.readingsPerSec()+0.5)), per1000(r.cpu, r.readings), float64(r.peakRSS)/(1<<20),
			thousands(int64(r.readings)), thousands(int64(r.wantReadings)), batches, r.wall.Round(time.Millisecond),
			per1000(r.brokerCPU, r.readings), per1000(r.dbCPU, r.readings), per1000(r.benchCPU, r.readings), r.load1, notes)
	}
	fmt.Fprintln(w)
	rep.writeMedians(w)
	rep.writeTargets(w)
}

// writeMedians lists each contender's medians, as a share of the bare writer's rate (what
// InfluxDB takes with no MQTT) and of the sink's (what the broker delivers with no write).
func (rep *benchReport) writeMedians(w io.Writer) {
	if rep.opts.rounds < 2 && !slices.ContainsFunc(rep.opts.contenders, isKind(contenderSink)) {
		return
	}
	br, _, _ := rep.median(contenderBare)
	sr, _, _ := rep.median(contenderSink)
	share := func(rate, of float64) string {
		if of <= 0 {
			return "—"
		}
		return fmt.Sprintf("%.0f%%", 100*rate/of)
	}
	fmt.Fprintln(w, "| contender | complete rounds | median readings/s | median CPU s / 1,000 readings | of the bare writer | of the sink |")
	fmt.Fprintln(w, "|---|---|---|---|---|---|")
	for _, c := range rep.opts.contenders {
		rate, cpu, n := rep.median(c)
		fmt.Fprintf(w, "| %s | %d | %s | %.4f | %s | %s |\n", c, n, thousands(int64(rate+0.5)), cpu, share(rate, br), share(rate, sr))
	}
	fmt.Fprintln(w)
}

// median of a contender's complete rounds: readings/s and CPU s per 1,000 readings.
func (rep *benchReport) median(c string) (rate, cpu float64, n int) {
	var rates, cpus []float64
	for _, r := range rep.results {
		if r.contender == c && r.complete {
			rates = append(rates, r.readingsPerSec())
			cpus = append(cpus, per1000(r.cpu, r.readings))
		}
	}
	if len(rates) == 0 {
		return 0, 0, 0
	}
	sort.Float64s(rates)
	sort.Float64s(cpus)
	mid := func(v []float64) float64 {
		if len(v)%2 == 1 {
			return v[len(v)/2]
		}
		return (v[len(v)/2-1] + v[len(v)/2]) / 2
	}
	return mid(rates), mid(cpus), len(rates)
}

// The targets (docs/benchmarks.md, "Ingest vs Telegraf vs bare writer"): against Telegraf, a
// multiple of its readings/s and a fraction of its CPU per reading, stricter for batches of 30
// readings and more, where the cost per message weighs less; and a share of the bare writer's
// readings/s.
const (
	smallBatch          = 30  // readings per batch below which the small-batch targets apply
	smallRateVsTelegraf = 1.2 // × Telegraf's readings/s, batches of fewer than smallBatch readings
	smallCPUVsTelegraf  = 0.5 // × Telegraf's CPU per reading
	rateVsTelegraf      = 2.0
	cpuVsTelegraf       = 1.0 / 3
	shareOfBare         = 0.9 // × the bare writer's readings/s
)

// writeTargets says whether the targets are met. On a shared machine the conditions drift
// between rounds, so besides the medians of the complete rounds it gives the ratios within each
// round, where the contenders ran minutes apart at most.
func (rep *benchReport) writeTargets(w io.Writer) {
	ir, ic, in := rep.median(contenderIngest)
	if in == 0 {
		return
	}
	yes := func(ok bool) string {
		if ok {
			return "met"
		}
		return "NOT met"
	}
	wantRate, wantCPU := rateVsTelegraf, cpuVsTelegraf
	if o := rep.opts; o.gps+o.tacho+o.sound < smallBatch {
		wantRate, wantCPU = smallRateVsTelegraf, smallCPUVsTelegraf
	}
	fmt.Fprintf(w, "Targets (medians of complete rounds; ratios ingest ÷ other within each round):\n\n")
	if tr, tc, tn := rep.median(contenderTelegraf); tn > 0 {
		fmt.Fprintf(w, "- throughput ≥ %.1f× Telegraf's: %s (ingest %s readings/s, Telegraf %s: ×%.2f; per round %s)\n",
			wantRate, yes(ir >= wantRate*tr), thousands(int64(ir)), thousands(int64(tr)), ir/tr,
			rep.ratios(contenderTelegraf, func(r *result) float64 { return r.readingsPerSec() }))
		fmt.Fprintf(w, "- CPU per reading ≤ %.2f× Telegraf's: %s (ingest %.4f, Telegraf %.4f CPU s per 1,000 readings: ×%.2f; per round %s)\n",
			wantCPU, yes(ic <= wantCPU*tc), ic, tc, ic/tc, rep.ratios(contenderTelegraf, func(r *result) float64 { return per1000(r.cpu, r.readings) }))
	} else if slices.ContainsFunc(rep.opts.contenders, isKind(contenderTelegraf)) {
		fmt.Fprintf(w, "- Telegraf: no complete round (see the notes)\n")
	}
	if br, _, bn := rep.median(contenderBare); bn > 0 {
		fmt.Fprintf(w, "- ≥ %.0f%% of the bare writer's throughput: %s (%.0f%%: ingest %s, bare writer %s readings/s; per round %s)\n",
			100*shareOfBare, yes(ir >= shareOfBare*br), 100*ir/br, thousands(int64(ir)), thousands(int64(br)),
			rep.ratios(contenderBare, func(r *result) float64 { return r.readingsPerSec() }))
	}
	fmt.Fprintln(w)
}

// ratios lists, per round where both completed, ingest's value over other's.
func (rep *benchReport) ratios(other string, value func(*result) float64) string {
	var out []string
	for round := 1; round <= rep.opts.rounds; round++ {
		var a, b *result
		for _, r := range rep.results {
			if r.round == round && r.complete {
				switch r.contender {
				case contenderIngest:
					a = r
				case other:
					b = r
				}
			}
		}
		if a != nil && b != nil && value(b) > 0 {
			out = append(out, fmt.Sprintf("×%.2f", value(a)/value(b)))
		}
	}
	if len(out) == 0 {
		return "—"
	}
	return strings.Join(out, ", ")
}

func thousands(n int64) string {
	s := strconv.FormatInt(n, 10)
	neg := strings.HasPrefix(s, "-")
	s = strings.TrimPrefix(s, "-")
	var b strings.Builder
	for i, c := range s {
		if i > 0 && (len(s)-i)%3 == 0 {
			b.WriteByte(',')
		}
		b.WriteRune(c)
	}
	if neg {
		return "-" + b.String()
	}
	return b.String()
}
