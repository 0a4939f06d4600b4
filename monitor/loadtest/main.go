// Loadtest measures the monitor end to end: a simulated fleet publishes its telemetry to an MQTT
// broker in real time, one batch per vehicle per second with one GPS, one tachograph and one
// sound reading, and a known subset of the vehicles speeds at known times. For every speed
// episode the monitor announces on trenzinho/v1/{vehicle}/episodes, the tool measures the time
// from the publish of the batch that confirmed it to the receipt of the announcement, and it
// reports the percentiles of that latency with the monitor's CPU and memory use.
//
// The confirming batch follows from the schedule and the profile (Piúma: above 30 + 7 km/h for
// 10 s): a speeder is at 45 km/h from batch a on, so its run starts with the tachograph reading
// of batch a and is confirmed by that of batch a+10.
//
// By default it starts Mosquitto with the repository's deploy/mosquitto/mosquitto.conf on a free
// loopback port (--mqtt-url uses a running broker instead), builds the monitor (--monitor-bin
// uses a built one) and starts it with a database in a temporary directory, the Piúma geofences
// and the built-in profile. Everything it started is stopped at the end.
//
// Usage:
//
//	go run ./monitor/loadtest [flags]
package main

import (
	"cmp"
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"maps"
	"math"
	"net/http"
	"os"
	"os/signal"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	mqtt "github.com/eclipse/paho.mqtt.golang"

	"github.com/trenzinho/trenzinho/internal/testkit/harness"
	"github.com/trenzinho/trenzinho/profile"
	"github.com/trenzinho/trenzinho/wire"
)

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), syscall.SIGTERM, syscall.SIGINT)
	defer stop()
	os.Exit(run(ctx, os.Args[1:], os.Stdout, os.Stderr))
}

// options of one load test.
type options struct {
	root         string // repository root
	mqttURL      string // empty: start Mosquitto
	mqttUser     string
	mqttPassword string
	monitorBin   string // empty: build it
	vehicles     int
	speeders     int
	duration     time.Duration // of publishing
	warmup       time.Duration // before the first speeding
	period       time.Duration // of a speeder's cycle
	fast         time.Duration // speeding in each cycle
	drain        time.Duration // longest wait for episodes after the last publish
	publishers   int           // MQTT connections publishing
	keep         bool          // keep the temporary directory
	csv          string        // write each episode's latency there
}

// The speeds of the simulated fleet and the profile's confirmation (Piúma defaults, docs/profile.md).
const (
	cruiseKmh = 22.0
	fastKmh   = 45.0
	confirmS  = 10 // seconds above limit + tolerance (30 + 7 km/h) that confirm a speed episode
	soundDB   = 45.0
)

func run(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet("loadtest", flag.ContinueOnError)
	fs.SetOutput(stderr)
	var o options
	fs.StringVar(&o.root, "repo", "", "repository root (default: the directory holding go.mod above the working directory)")
	fs.StringVar(&o.mqttURL, "mqtt-url", "", "broker to use (default: start Mosquitto with deploy/mosquitto/mosquitto.conf on a free loopback port)")
	fs.StringVar(&o.mqttUser, "mqtt-user", "", "MQTT user name (with --mqtt-url)")
	fs.StringVar(&o.mqttPassword, "mqtt-password", "", "MQTT password (with --mqtt-url)")
	fs.StringVar(&o.monitorBin, "monitor-bin", "", "monitor binary (default: go build ./monitor into the temporary directory)")
	fs.IntVar(&o.vehicles, "vehicles", 2000, "vehicles of the simulated fleet, each publishing one batch a second")
	fs.IntVar(&o.speeders, "speeders", 500, "vehicles that speed: "+strconv.FormatFloat(fastKmh, 'f', -1, 64)+" km/h for --fast in every --period")
	fs.DurationVar(&o.duration, "duration", 120*time.Second, "how long the fleet publishes")
	fs.DurationVar(&o.warmup, "warmup", 15*time.Second, "publishing before the first vehicle speeds")
	fs.DurationVar(&o.period, "period", 60*time.Second, "a speeder's cycle")
	fs.DurationVar(&o.fast, "fast", 20*time.Second, "how long a speeder speeds in each cycle")
	fs.DurationVar(&o.drain, "drain", 15*time.Second, "longest wait for the last episodes after publishing ends")
	fs.IntVar(&o.publishers, "publishers", 4, "MQTT connections the fleet publishes through")
	fs.BoolVar(&o.keep, "keep", false, "keep the temporary directory (database, logs)")
	fs.StringVar(&o.csv, "csv", "", "write one line per scheduled episode to this file: vehicle, confirming batch, seconds from the start, latency in ms")
	fs.Usage = func() {
		fmt.Fprintf(fs.Output(), "Usage: loadtest [flags]\n\nPublishes a simulated fleet in real time through MQTT to the monitor and measures the latency\nfrom the publish of the batch that confirms a speed episode to the episode's announcement.\n\nFlags:\n")
		fs.PrintDefaults()
	}
	if err := fs.Parse(args); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			return 0
		}
		return 2
	}
	if err := o.check(); err != nil {
		fmt.Fprintln(stderr, "loadtest:", err)
		return 2
	}
	r, err := loadTest(ctx, o, stderr)
	if err != nil {
		fmt.Fprintln(stderr, "loadtest:", err)
		return 1
	}
	fmt.Fprint(stdout, r)
	return 0
}

func (o *options) check() error {
	switch {
	case o.vehicles < 1 || o.speeders < 0 || o.speeders > o.vehicles:
		return errors.New("--vehicles must be positive and --speeders between 0 and --vehicles")
	case o.publishers < 1:
		return errors.New("--publishers must be positive")
	case o.fast < (confirmS+2)*time.Second:
		return fmt.Errorf("--fast must be at least %d s (confirmation takes %d s)", confirmS+2, confirmS)
	case o.period < o.fast+(confirmS+2)*time.Second:
		return fmt.Errorf("--period must exceed --fast by at least %d s (an episode closes after %d s below the limit)", confirmS+2, confirmS)
	case o.warmup < time.Second || o.duration < o.warmup+(confirmS+2)*time.Second:
		return fmt.Errorf("--warmup must be at least 1 s and --duration at least --warmup + %d s", confirmS+2)
	}
	if o.root == "" {
		root, err := harness.RepoRoot()
		if err != nil {
			return fmt.Errorf("%w: give --repo", err)
		}
		o.root = root
	}
	return nil
}

// expected is one speed episode the schedule makes.
type expected struct {
	vehicle   int
	firstFast int          // batch index of the first reading above the limit: the episode's start
	confirm   int          // batch index of the reading that confirms it
	pub       atomic.Int64 // unix nanoseconds of the confirming batch's publish
	recv      atomic.Int64 // unix nanoseconds of the announcement's receipt (first)
}

// schedule is the whole run: which vehicle publishes which batch when, at what speed.
type schedule struct {
	o        options
	prefix   string
	epoch    string
	start    time.Time     // wall clock of batch 0 (vehicle 0)
	shift    time.Duration // device clock = wall clock − shift
	batches  int           // per vehicle
	speeding [][]bool      // by vehicle, by batch (nil for vehicles that never speed)
	episodes []*expected
	byStart  map[string]*expected // by vehicle id and episode start (device time)
	byBatch  map[[2]int]*expected // by vehicle and confirming batch
}

func newSchedule(o options, start time.Time) *schedule {
	id := make([]byte, 3)
	rand.Read(id)
	s := &schedule{o: o, prefix: "LT" + hex.EncodeToString(id) + "-", epoch: "e-load-" + hex.EncodeToString(id),
		batches: int(o.duration / time.Second), speeding: make([][]bool, o.vehicles), byBatch: map[[2]int]*expected{}}
	s.setStart(start)
	if o.speeders == 0 {
		return s
	}
	// Speeders are spread over the fleet and their first speeding over a spread that lets every
	// one of them confirm an episode before the end.
	spread := min(o.period, o.duration-o.warmup-(confirmS+1)*time.Second)
	for j := range o.speeders {
		v := j * o.vehicles / o.speeders
		sp := make([]bool, s.batches)
		s.speeding[v] = sp
		first := int((o.warmup + spread*time.Duration(j)/time.Duration(o.speeders)) / time.Second)
		for a := first; a < s.batches; a += int(o.period / time.Second) {
			for k := a; k < min(a+int(o.fast/time.Second), s.batches); k++ {
				sp[k] = true
			}
			if a+confirmS < s.batches {
				ex := &expected{vehicle: v, firstFast: a, confirm: a + confirmS}
				s.episodes = append(s.episodes, ex)
				s.byBatch[[2]int{v, a + confirmS}] = ex
			}
		}
	}
	s.setStart(start)
	return s
}

// setStart sets the wall clock of batch 0, on which the device times and so the episodes'
// starts depend.
func (s *schedule) setStart(start time.Time) {
	s.start = start
	// Keep the device clock within the service hours (09:00–23:00 in Piúma) so that the hours
	// rule stays silent: at night the readings are dated some whole hours earlier.
	s.shift = 0
	if h := start.In(profile.Piuma().Location()).Hour(); h < 10 || h >= 22 {
		s.shift = time.Duration((h-12+24)%24) * time.Hour
	}
	s.byStart = make(map[string]*expected, len(s.episodes))
	for _, ex := range s.episodes {
		s.byStart[s.vehicleID(ex.vehicle)+" "+wire.NewTime(s.deviceTime(ex.vehicle, ex.firstFast)).String()] = ex
	}
}

func (s *schedule) vehicleID(v int) string { return fmt.Sprintf("%s%04d", s.prefix, v) }

// offset spreads the vehicles' publishes evenly over each second.
func (s *schedule) offset(v int) time.Duration {
	return time.Duration(v*1000/s.o.vehicles) * time.Millisecond
}

// due is when batch k of vehicle v is published (wall clock).
func (s *schedule) due(v, k int) time.Time {
	return s.start.Add(time.Duration(k)*time.Second + s.offset(v))
}

// deviceTime is the time of the readings of batch k of vehicle v.
func (s *schedule) deviceTime(v, k int) time.Time {
	return s.due(v, k).Add(-s.shift).Truncate(time.Millisecond)
}

func (s *schedule) speedAt(v, k int) float64 {
	if sp := s.speeding[v]; sp != nil && k >= 0 && k < len(sp) && sp[k] {
		return fastKmh
	}
	return cruiseKmh
}

// vehicleState is where a simulated vehicle is.
type vehicleState struct {
	lat, lon float64
}

// batch builds batch k of vehicle v and moves the vehicle east by what its mean speed over the
// last second covers (so that the speed the GPS reports agrees with its positions).
func (s *schedule) batch(v, k int, st *vehicleState) *wire.Batch {
	kmh := s.speedAt(v, k)
	st.lon += (kmh + s.speedAt(v, k-1)) / 2 / 3.6 / (111320 * math.Cos(st.lat*math.Pi/180))
	t := wire.NewTime(s.deviceTime(v, k))
	course, hdop, sats, odo := 90.0, 0.9, 9, 10000+float64(k)*kmh/3600
	return &wire.Batch{V: wire.Version, Vehicle: s.vehicleID(v), Epoch: s.epoch, Seq: uint64(k + 1), SentAt: t, Clock: wire.ClockGPS,
		GPS:   []wire.GPS{{T: t, Lat: st.lat, Lon: st.lon, SpeedKmh: &kmh, CourseDeg: &course, HDOP: &hdop, Sats: &sats, Fix: wire.Fix3D}},
		Tacho: []wire.Tacho{{T: t, SpeedKmh: &kmh, OdometerKm: &odo, Card: "0000000086H101"}},
		Sound: []wire.Sound{{T: t, LAeqDB: ptr(soundDB), LAmaxDB: ptr(soundDB + 5), DurS: ptr(1.0)}},
	}
}

func ptr[T any](v T) *T { return &v }

// report is the outcome of a run.
type report struct {
	Vehicles, Speeders   int
	Duration             time.Duration
	Shift                time.Duration
	Published            int64
	PublishErrors        int64
	LagP99, LagMax       time.Duration // publish behind schedule
	Judged, Rejected     int64         // by the monitor's metrics (the probe batches excluded)
	Duplicates           int64
	Expected, Received   int
	Unexpected           map[string]int // episode opens the schedule does not explain, by rule
	Latencies            []time.Duration
	P50, P95, P99, Max   time.Duration
	CommitCount          int64
	CommitMean           time.Duration
	CommitP50, CommitP99 time.Duration // upper bounds of the histogram buckets
	MonitorCPU           float64       // cores, while publishing
	MonitorRSS, PeakRSS  int64         // bytes: largest sample while publishing; VmHWM at the end
	BrokerCPU            float64       // cores, while publishing (when the tool started the broker)
	BrokerRSS            int64
	ToolCPU              float64
	LoadAvg              string
}

func (r *report) String() string {
	var b strings.Builder
	ms := func(d time.Duration) string { return strconv.FormatFloat(float64(d)/1e6, 'f', 1, 64) }
	fmt.Fprintf(&b, "fleet: %d vehicles × 1 batch/s (1 GPS, 1 tachograph, 1 sound reading) for %s; %d speeders\n",
		r.Vehicles, r.Duration, r.Speeders)
	if r.Shift != 0 {
		fmt.Fprintf(&b, "device clock: %s behind the wall clock (kept within the service hours)\n", r.Shift)
	}
	fmt.Fprintf(&b, "published: %d batches (%.0f/s), %d errors; behind schedule p99 %s ms, max %s ms\n",
		r.Published, float64(r.Published)/r.Duration.Seconds(), r.PublishErrors, ms(r.LagP99), ms(r.LagMax))
	fmt.Fprintf(&b, "monitor judged: %d batches, %d rejected, %d duplicates; %d commits, mean %s ms, p50 ≤ %s ms, p99 ≤ %s ms\n",
		r.Judged, r.Rejected, r.Duplicates, r.CommitCount, ms(r.CommitMean), ms(r.CommitP50), ms(r.CommitP99))
	unexpected := 0
	for _, n := range r.Unexpected {
		unexpected += n
	}
	fmt.Fprintf(&b, "speed episodes: %d expected, %d announced, %d missing; %d unexpected episode opens %v\n",
		r.Expected, r.Received, r.Expected-r.Received, unexpected, r.Unexpected)
	fmt.Fprintf(&b, "latency publish → episode open (ms): p50 %s  p95 %s  p99 %s  max %s  (n=%d)\n",
		ms(r.P50), ms(r.P95), ms(r.P99), ms(r.Max), len(r.Latencies))
	fmt.Fprintf(&b, "monitor: CPU %.2f cores; RSS %.0f MB (largest while publishing), peak %.0f MB\n",
		r.MonitorCPU, float64(r.MonitorRSS)/1e6, float64(r.PeakRSS)/1e6)
	if r.BrokerRSS > 0 {
		fmt.Fprintf(&b, "mosquitto: CPU %.2f cores; RSS %.0f MB\n", r.BrokerCPU, float64(r.BrokerRSS)/1e6)
	}
	fmt.Fprintf(&b, "loadtest: CPU %.2f cores; load average at the end: %s\n", r.ToolCPU, r.LoadAvg)
	return b.String()
}

// percentile returns the nearest-rank p-th percentile of sorted ds.
func percentile(ds []time.Duration, p float64) time.Duration {
	if len(ds) == 0 {
		return 0
	}
	i := int(math.Ceil(p/100*float64(len(ds)))) - 1
	return ds[max(0, min(i, len(ds)-1))]
}

func loadTest(ctx context.Context, o options, progress io.Writer) (*report, error) {
	dir, err := os.MkdirTemp("", "trenzinho-loadtest-")
	if err != nil {
		return nil, err
	}
	if o.keep {
		fmt.Fprintln(progress, "temporary directory:", dir)
	} else {
		defer os.RemoveAll(dir)
	}
	var procs []*harness.Process
	defer func() {
		for _, p := range slices.Backward(procs) {
			p.Terminate(15 * time.Second)
		}
	}()
	var broker *harness.Process
	if o.mqttURL == "" {
		bdir := filepath.Join(dir, "mosquitto")
		if err := os.MkdirAll(bdir, 0o755); err != nil {
			return nil, err
		}
		m, err := harness.StartMosquitto(o.root, bdir, harness.MosquittoOptions{})
		if err != nil {
			return nil, fmt.Errorf("%w: install it or give --mqtt-url", err)
		}
		broker, o.mqttURL = m.Process, m.URL()
		procs = append(procs, broker)
	}
	if o.monitorBin == "" {
		fmt.Fprintln(progress, "building the monitor…")
		o.monitorBin = filepath.Join(dir, "bin", "monitor")
		if err := harness.Build(ctx, o.root, filepath.Dir(o.monitorBin), "./monitor"); err != nil {
			return nil, err
		}
	}
	mon, base, err := startMonitor(ctx, o, dir)
	if err != nil {
		return nil, err
	}
	procs = append(procs, mon)

	s := newSchedule(o, time.Now())
	rec := newReceiver(s)
	sub, err := connect(o, s.prefix+"sub", func(c mqtt.Client) {
		c.Subscribe("trenzinho/v1/+/episodes", 1, rec.handle)
	})
	if err != nil {
		return nil, err
	}
	defer sub.Disconnect(250)
	var pubs []mqtt.Client
	for i := range o.publishers {
		c, err := connect(o, fmt.Sprintf("%spub%d", s.prefix, i), nil)
		if err != nil {
			return nil, err
		}
		defer c.Disconnect(250)
		pubs = append(pubs, c)
	}
	probes, err := probe(ctx, pubs[0], s, base)
	if err != nil {
		return nil, fmt.Errorf("%w\n%s", err, tail(mon))
	}

	fmt.Fprintf(progress, "publishing %d vehicles for %s (%d speed episodes scheduled)…\n", o.vehicles, o.duration, len(s.episodes))
	rec.start(time.Now().Add(500 * time.Millisecond).Truncate(100 * time.Millisecond))
	time.Sleep(time.Until(s.start))
	monStart, _ := harness.ReadStat(mon.Pid())
	var brokerStart harness.Stat
	if broker != nil {
		brokerStart, _ = harness.ReadStat(broker.Pid())
	}
	selfStart, _ := harness.ReadStat(os.Getpid())
	wallStart := time.Now()
	var maxRSS atomic.Int64
	sampleCtx, stopSampling := context.WithCancel(ctx)
	go func() {
		t := time.NewTicker(time.Second)
		defer t.Stop()
		for {
			select {
			case <-sampleCtx.Done():
				return
			case <-t.C:
				if st, err := harness.ReadStat(mon.Pid()); err == nil && st.RSS > maxRSS.Load() {
					maxRSS.Store(st.RSS)
				}
			}
		}
	}()
	pr := publishAll(ctx, s, pubs)
	stopSampling()
	wall := time.Since(wallStart)
	monEnd, err := harness.ReadStat(mon.Pid())
	if err != nil {
		return nil, fmt.Errorf("the monitor is gone: %v\n%s", err, tail(mon))
	}
	r := &report{Vehicles: o.vehicles, Speeders: o.speeders, Duration: o.duration, Shift: s.shift,
		Published: pr.published, PublishErrors: pr.errors, LagP99: pr.lagP99, LagMax: pr.lagMax,
		Expected: len(s.episodes), MonitorRSS: maxRSS.Load(), PeakRSS: monEnd.PeakRSS}
	r.MonitorCPU = (monEnd.CPU - monStart.CPU).Seconds() / wall.Seconds()
	if broker != nil {
		if st, err := harness.ReadStat(broker.Pid()); err == nil {
			r.BrokerCPU, r.BrokerRSS = (st.CPU-brokerStart.CPU).Seconds()/wall.Seconds(), st.RSS
		}
	}
	if st, err := harness.ReadStat(os.Getpid()); err == nil {
		r.ToolCPU = (st.CPU - selfStart.CPU).Seconds() / wall.Seconds()
	}
	if ctx.Err() != nil {
		return nil, ctx.Err()
	}

	// The last confirming batches were published just now: wait for their announcements.
	fmt.Fprintf(progress, "published %d batches; waiting for the last episodes…\n", pr.published)
	deadline := time.Now().Add(o.drain)
	for rec.count() < len(s.episodes) && time.Now().Before(deadline) && ctx.Err() == nil {
		time.Sleep(100 * time.Millisecond)
	}
	time.Sleep(time.Second) // episodes the schedule does not explain would show up now
	m, err := harness.Scrape(base + "/metrics")
	if err != nil {
		return nil, err
	}
	r.Judged = int64(m[`trenzinho_monitor_batches_total{outcome="judged"}`]) - probes
	r.Rejected = int64(m[`trenzinho_monitor_batches_total{outcome="rejected"}`])
	r.Duplicates = int64(m[`trenzinho_monitor_batches_total{outcome="duplicate"}`])
	r.CommitCount = int64(m["trenzinho_monitor_commit_seconds_count"])
	if r.CommitCount > 0 {
		r.CommitMean = time.Duration(m["trenzinho_monitor_commit_seconds_sum"] / float64(r.CommitCount) * 1e9)
		r.CommitP50 = histogramQuantile(m, "trenzinho_monitor_commit_seconds", 0.5)
		r.CommitP99 = histogramQuantile(m, "trenzinho_monitor_commit_seconds", 0.99)
	}
	r.Unexpected = rec.unexpectedCounts()
	for _, ex := range s.episodes {
		if got := ex.recv.Load(); got != 0 {
			r.Latencies = append(r.Latencies, time.Duration(got-ex.pub.Load()))
		}
	}
	r.Received = len(r.Latencies)
	if o.csv != "" {
		if err := writeCSV(o.csv, s); err != nil {
			return nil, err
		}
	}
	slices.Sort(r.Latencies)
	r.P50, r.P95, r.P99 = percentile(r.Latencies, 50), percentile(r.Latencies, 95), percentile(r.Latencies, 99)
	if len(r.Latencies) > 0 {
		r.Max = r.Latencies[len(r.Latencies)-1]
	}
	l := harness.LoadAverage()
	r.LoadAvg = fmt.Sprintf("%.2f %.2f %.2f", l[0], l[1], l[2])
	return r, nil
}

// writeCSV writes one line per scheduled episode: its vehicle, its confirming batch, when that
// batch was published (seconds from the start) and the latency in milliseconds (empty when the
// announcement never came).
func writeCSV(path string, s *schedule) error {
	var b strings.Builder
	b.WriteString("vehicle,confirming_batch,published_s,latency_ms\n")
	for _, ex := range s.episodes {
		pub, recv := ex.pub.Load(), ex.recv.Load()
		lat := ""
		if recv != 0 {
			lat = strconv.FormatFloat(float64(recv-pub)/1e6, 'f', 1, 64)
		}
		fmt.Fprintf(&b, "%s,%d,%.3f,%s\n", s.vehicleID(ex.vehicle), ex.confirm, time.Unix(0, pub).Sub(s.start).Seconds(), lat)
	}
	return os.WriteFile(path, []byte(b.String()), 0o644)
}

// histogramQuantile returns the upper bound of the bucket of a Prometheus histogram that holds
// its q-quantile.
func histogramQuantile(m map[string]float64, name string, q float64) time.Duration {
	type bucket struct{ le, n float64 }
	var bs []bucket
	prefix := name + `_bucket{le="`
	for k, v := range m {
		if le, ok := strings.CutPrefix(k, prefix); ok {
			if x, err := strconv.ParseFloat(strings.TrimSuffix(le, `"}`), 64); err == nil {
				bs = append(bs, bucket{x, v})
			}
		}
	}
	slices.SortFunc(bs, func(a, b bucket) int { return cmp.Compare(a.le, b.le) })
	if len(bs) == 0 {
		return 0
	}
	total := bs[len(bs)-1].n
	for _, b := range bs {
		if b.n >= q*total {
			if math.IsInf(b.le, 1) {
				return time.Duration(math.MaxInt64)
			}
			return time.Duration(b.le * 1e9)
		}
	}
	return 0
}

// probe publishes batches of a probe vehicle until the monitor has judged one: then it is
// subscribed. It returns how many it judged.
func probe(ctx context.Context, c mqtt.Client, s *schedule, base string) (int64, error) {
	deadline := time.Now().Add(60 * time.Second)
	for seq := uint64(1); ; seq++ {
		t := wire.NewTime(time.Now().Add(-s.shift))
		b := &wire.Batch{V: wire.Version, Vehicle: s.prefix + "probe", Epoch: s.epoch, Seq: seq, SentAt: t, Clock: wire.ClockGPS,
			Tacho: []wire.Tacho{{T: t, SpeedKmh: ptr(0.0)}}}
		p, err := wire.Encode(b, nil)
		if err != nil {
			return 0, err
		}
		c.Publish(wire.TelemetryTopic(b.Vehicle), 1, false, p).Wait()
		time.Sleep(250 * time.Millisecond)
		if m, err := harness.Scrape(base + "/metrics"); err == nil {
			if n := int64(m[`trenzinho_monitor_batches_total{outcome="judged"}`]); n > 0 {
				return n, nil
			}
		}
		if time.Now().After(deadline) {
			return 0, errors.New("the monitor judged none of the probe batches in 60 s")
		}
		if ctx.Err() != nil {
			return 0, ctx.Err()
		}
	}
}

type publishResult struct {
	published, errors int64
	lagP99, lagMax    time.Duration
}

// publishAll publishes every batch of the schedule on time: vehicle v through connection
// v mod len(pubs), batch k at s.due(v, k).
func publishAll(ctx context.Context, s *schedule, pubs []mqtt.Client) publishResult {
	var res publishResult
	var mu sync.Mutex
	var lags []time.Duration
	var wg sync.WaitGroup
	for i, c := range pubs {
		wg.Go(func() {
			var mine []int
			for v := i; v < s.o.vehicles; v += len(pubs) {
				mine = append(mine, v)
			}
			states := make([]vehicleState, len(mine))
			for j, v := range mine {
				states[j] = vehicleState{lat: -20.8367 + float64(v%50)*0.0008, lon: -40.7292 + float64(v/50)*0.0004}
			}
			tokens := make(chan mqtt.Token, 4096)
			var errs atomic.Int64
			done := make(chan struct{})
			go func() {
				defer close(done)
				for tok := range tokens {
					if !tok.WaitTimeout(time.Minute) || tok.Error() != nil {
						errs.Add(1)
					}
				}
			}()
			myLags := make([]time.Duration, 0, s.batches*len(mine))
			var n int64
		loop:
			for k := range s.batches {
				for j, v := range mine {
					due := s.due(v, k)
					if d := time.Until(due); d > 0 {
						select {
						case <-ctx.Done():
							break loop
						case <-time.After(d):
						}
					}
					p, err := wire.Encode(s.batch(v, k, &states[j]), nil)
					if err != nil {
						errs.Add(1)
						continue
					}
					now := time.Now()
					if ex := s.byBatch[[2]int{v, k}]; ex != nil {
						ex.pub.Store(now.UnixNano())
					}
					tokens <- c.Publish(wire.TelemetryTopic(s.vehicleID(v)), 1, false, p)
					myLags = append(myLags, now.Sub(due))
					n++
				}
			}
			close(tokens)
			<-done
			mu.Lock()
			res.published += n
			res.errors += errs.Load()
			lags = append(lags, myLags...)
			mu.Unlock()
		})
	}
	wg.Wait()
	slices.Sort(lags)
	res.lagP99 = percentile(lags, 99)
	if len(lags) > 0 {
		res.lagMax = lags[len(lags)-1]
	}
	return res
}

// receiver records the episode announcements.
type receiver struct {
	mu         sync.Mutex
	s          *schedule
	received   int
	unexpected map[string]int
}

func newReceiver(s *schedule) *receiver { return &receiver{s: s, unexpected: map[string]int{}} }

// start sets the schedule's start and forgets what was received so far.
func (r *receiver) start(t time.Time) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.s.setStart(t)
	r.received, r.unexpected = 0, map[string]int{}
}

func (r *receiver) handle(_ mqtt.Client, m mqtt.Message) {
	now := time.Now().UnixNano()
	var ep struct {
		Vehicle string          `json:"vehicle"`
		Rule    string          `json:"rule"`
		Start   wire.Time       `json:"start"`
		End     json.RawMessage `json:"end"`
	}
	if err := json.Unmarshal(m.Payload(), &ep); err != nil {
		return
	}
	if len(ep.End) > 0 && string(ep.End) != "null" {
		return // a close
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	if !strings.HasPrefix(ep.Vehicle, r.s.prefix) || strings.HasSuffix(ep.Vehicle, "probe") {
		r.unexpected[ep.Rule+" (other vehicle)"]++
		return
	}
	ex := r.s.byStart[ep.Vehicle+" "+ep.Start.String()]
	if ep.Rule != "speed" || ex == nil {
		r.unexpected[ep.Rule]++
		return
	}
	if ex.recv.CompareAndSwap(0, now) {
		r.received++
	}
}

func (r *receiver) count() int {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.received
}

func (r *receiver) unexpectedCounts() map[string]int {
	r.mu.Lock()
	defer r.mu.Unlock()
	return maps.Clone(r.unexpected)
}

func connect(o options, id string, onConnect func(mqtt.Client)) (mqtt.Client, error) {
	opts := mqtt.NewClientOptions().AddBroker(o.mqttURL).SetClientID(id).SetUsername(o.mqttUser).SetPassword(o.mqttPassword).
		SetCleanSession(true).SetOrderMatters(false).SetAutoReconnect(true).SetMaxReconnectInterval(time.Second)
	if onConnect != nil {
		opts.SetOnConnectHandler(func(c mqtt.Client) { onConnect(c) })
	}
	c := mqtt.NewClient(opts)
	if tok := c.Connect(); !tok.WaitTimeout(30*time.Second) || tok.Error() != nil {
		return nil, fmt.Errorf("connect to %s: %v", o.mqttURL, tok.Error())
	}
	return c, nil
}

// tail returns the end of a process's log.
func tail(p *harness.Process) string {
	return fmt.Sprintf("--- %s log (tail) ---\n%s", p.Name, p.Tail(4096))
}

// startMonitor starts the monitor and waits until its HTTP server answers; it returns the
// server's base URL.
func startMonitor(ctx context.Context, o options, dir string) (*harness.Process, string, error) {
	port, err := harness.FreePort()
	if err != nil {
		return nil, "", err
	}
	pw := make([]byte, 12)
	rand.Read(pw)
	env := []string{
		"TRENZINHO_MQTT_URL=" + o.mqttURL,
		"TRENZINHO_MQTT_USER=" + o.mqttUser,
		"TRENZINHO_MQTT_PASSWORD=" + o.mqttPassword,
		"TRENZINHO_DB=" + filepath.Join(dir, "data", "monitor.db"),
		fmt.Sprintf("TRENZINHO_LISTEN=127.0.0.1:%d", port),
		"TRENZINHO_ADMIN_USER=loadtest",
		"TRENZINHO_ADMIN_PASSWORD=" + hex.EncodeToString(pw),
		"TRENZINHO_GEOFENCES=" + filepath.Join(o.root, "geofences", "piuma"),
		"TRENZINHO_MONITOR_CLIENT_ID=trenzinho-loadtest-monitor-" + filepath.Base(dir),
	}
	p, err := harness.Start(harness.Command{Name: "monitor", LogFile: filepath.Join(dir, "monitor.log"), Env: env, Argv: []string{o.monitorBin}})
	if err != nil {
		return nil, "", err
	}
	base := fmt.Sprintf("http://127.0.0.1:%d", port)
	if err := harness.WaitHTTP(ctx, p, base+"/healthz", http.StatusOK, 60*time.Second); err != nil {
		p.Terminate(15 * time.Second)
		return nil, "", fmt.Errorf("the monitor is not serving: %w\n%s", err, tail(p))
	}
	return p, base, nil
}
