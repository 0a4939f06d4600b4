//go:build unix

package judge_test

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"strconv"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/trenzinho/trenzinho/geofences"
	"github.com/trenzinho/trenzinho/monitor/judge"
	"github.com/trenzinho/trenzinho/monitor/store"
	"github.com/trenzinho/trenzinho/profile"
	"github.com/trenzinho/trenzinho/rules"
	"github.com/trenzinho/trenzinho/wire"
)

// benchMsg is a message whose acknowledgement is counted.
type benchMsg struct {
	topic   string
	payload []byte
	acked   *atomic.Int64
}

func (m *benchMsg) Topic() string   { return m.topic }
func (m *benchMsg) Payload() []byte { return m.payload }
func (m *benchMsg) Ack()            { m.acked.Add(1) }

// timedStore records the CPU time of every commit, and apart that of the commits that carry
// events (an episode opened or closed): the announcement waits for those.
type timedStore struct {
	*store.DB
	mu     sync.Mutex
	times  []time.Duration
	events []time.Duration
}

func (s *timedStore) Commit(ctx context.Context, c *rules.Changes, batches []store.Batch) error {
	return s.timed(ctx, s.DB.Commit, c, batches)
}

func (s *timedStore) CommitUnsynced(ctx context.Context, c *rules.Changes, batches []store.Batch) error {
	return s.timed(ctx, s.DB.CommitUnsynced, c, batches)
}

func (s *timedStore) timed(ctx context.Context, commit func(context.Context, *rules.Changes, []store.Batch) error, c *rules.Changes, batches []store.Batch) error {
	// The CPU time of the commit's own thread: on a machine shared with other work the wall
	// time mostly measures the wait for a core. The pure-Go SQLite runs on the calling
	// goroutine, locked to its thread for the call.
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	start := threadCPU()
	err := commit(ctx, c, batches)
	d := threadCPU() - start
	s.mu.Lock()
	s.times = append(s.times, d)
	if len(c.Events) > 0 {
		s.events = append(s.events, d)
	}
	s.mu.Unlock()
	return err
}

// threadCPU is the user and system CPU time of the calling thread.
func threadCPU() time.Duration {
	var ru syscall.Rusage
	if syscall.Getrusage(1 /* RUSAGE_THREAD */, &ru) != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

// tail returns the median and the 99th percentile of the commits' times since the last call,
// of all and of those that carried events.
func (s *timedStore) tail() (p50, p99, ev50, ev99 time.Duration) {
	s.mu.Lock()
	t, e := s.times, s.events
	s.times, s.events = nil, nil
	s.mu.Unlock()
	q := func(t []time.Duration) (p50, p99 time.Duration) {
		if len(t) == 0 {
			return 0, 0
		}
		slices.Sort(t)
		return t[len(t)/2], t[len(t)*99/100]
	}
	p50, p99 = q(t)
	ev50, ev99 = q(e)
	return p50, p99, ev50, ev99
}

// BenchmarkJudgeCommit measures what the monitor spends per judged batch under the load of
// `go run ./monitor/loadtest` without the broker: 2,000 vehicles in Piúma (its geofences, the
// built-in profile), each batch one GPS, one tachograph and one sound reading a second apart,
// judged by the judge's loop and committed to a real SQLite database every 100 batches (what
// 2,000 batches a second make in the judge's 50 ms). One op is one batch, from decoding to its
// acknowledgement after the commit; cpu-µs/batch is the CPU time the process used per batch
// (the number to compare on a machine shared with other work). Run it with -benchtime of a few
// thousand batches, for example:
//
//	go test -run '^$' -bench JudgeCommit -benchtime 20000x ./monitor/judge/
//
// BENCH_CHECKPOINT_EVERY=1s checkpoints beside the commits on a timer (store.(*DB).Checkpoint),
// BENCH_CHECKPOINT_PAGES=5000 once the WAL holds that many pages (store.(*DB).CheckpointAt, the
// monitor's default); without either, SQLite checkpoints inside the commit that fills 10,000.
func BenchmarkJudgeCommit(b *testing.B) {
	const vehicles = 2000
	set, err := geofences.Load(filepath.Join("..", "..", "geofences", "piuma"))
	if err != nil {
		b.Fatal(err)
	}
	db, err := store.Open(context.Background(), filepath.Join(b.TempDir(), "monitor.db"))
	if err != nil {
		b.Fatal(err)
	}
	defer db.Close()
	if d := os.Getenv("BENCH_CHECKPOINT_EVERY"); d != "" {
		every, err := time.ParseDuration(d)
		if err != nil {
			b.Fatal(err)
		}
		cctx, stop := context.WithCancel(context.Background())
		defer stop()
		go db.Checkpoint(cctx, every)
	}
	if p := os.Getenv("BENCH_CHECKPOINT_PAGES"); p != "" {
		pages, err := strconv.Atoi(p)
		if err != nil {
			b.Fatal(err)
		}
		cctx, stop := context.WithCancel(context.Background())
		defer stop()
		go db.CheckpointAt(cctx, pages, 100*time.Millisecond)
	}
	ts := &timedStore{DB: db}
	// Noon in Piúma, a weekday: inside the service hours.
	start := time.Date(2026, 11, 25, 15, 0, 0, 0, time.UTC)
	var clock atomic.Int64
	clock.Store(start.UnixNano())
	j := judge.New(judge.Config{
		Engine: rules.New(profile.Piuma(), set), Store: ts,
		Logger:       slog.New(slog.NewTextHandler(io.Discard, nil)),
		FlushEvery:   time.Hour, // commits every FlushBatches, as under load
		FlushBatches: 100,
		Now:          func() time.Time { return time.Unix(0, clock.Load()) },
	})
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- j.Run(ctx) }()

	// The batches of the first rounds, made beforehand: each vehicle drives east at 22 km/h
	// (speeding at 45 for 20 s of every 60, one in four).
	type pos struct{ lat, lon float64 }
	states := make([]pos, vehicles)
	for v := range states {
		states[v] = pos{-20.8367 + float64(v%50)*0.0008, -40.7292 + float64(v/50)*0.0004}
	}
	next := func(v, k int) *benchMsg {
		kmh := 22.0
		if v%4 == 0 && (k+v)%60 < 20 {
			kmh = 45
		}
		st := &states[v]
		st.lon += kmh / 3.6 / (111320 * 0.935)
		t := wire.NewTime(start.Add(time.Duration(k)*time.Second + time.Duration(v)*time.Millisecond/2))
		course, hdop, sats, odo, db := 90.0, 0.9, 9, 10000+float64(k)*kmh/3600, 45.0
		id := fmt.Sprintf("BENCH-%04d", v)
		bt := &wire.Batch{V: wire.Version, Vehicle: id, Epoch: "e-bench", Seq: uint64(k + 1), SentAt: t, Clock: wire.ClockGPS,
			GPS:   []wire.GPS{{T: t, Lat: st.lat, Lon: st.lon, SpeedKmh: &kmh, CourseDeg: &course, HDOP: &hdop, Sats: &sats, Fix: wire.Fix3D}},
			Tacho: []wire.Tacho{{T: t, SpeedKmh: &kmh, OdometerKm: &odo, Card: "0000000086H101"}},
			Sound: []wire.Sound{{T: t, LAeqDB: &db, DurS: ptr(1.0)}},
		}
		p, err := wire.Encode(bt, nil)
		if err != nil {
			b.Fatal(err)
		}
		return &benchMsg{topic: wire.TelemetryTopic(id), payload: p}
	}
	var acked atomic.Int64
	var pool []*benchMsg
	round := 0
	refill := func() {
		pool = pool[:0]
		for range 10 {
			for v := range vehicles {
				m := next(v, round)
				m.acked = &acked
				pool = append(pool, m)
			}
			round++
		}
	}
	// Warm up: a minute of the fleet, so that the sound windows are full and the database
	// holds every vehicle.
	sent := 0
	send := func(m *benchMsg) {
		clock.Store(start.Add(time.Duration(sent/vehicles)*time.Second + 500*time.Millisecond).UnixNano())
		j.Handle(ctx, m)
		sent++
	}
	for range 6 {
		refill()
		for _, m := range pool {
			send(m)
		}
	}
	wait := func(n int) {
		for acked.Load() < int64(n) {
			time.Sleep(time.Millisecond)
		}
	}
	wait(sent - sent%100)
	ts.tail()
	refill()
	cpu0 := cpuTime()
	i := 0
	for b.Loop() {
		if i == len(pool) {
			b.StopTimer()
			wait(sent - sent%100)
			c := cpuTime()
			refill()
			cpu0 += cpuTime() - c
			b.StartTimer()
			i = 0
		}
		send(pool[i])
		i++
	}
	wait(sent - sent%100)
	cpu := cpuTime() - cpu0
	b.ReportMetric(float64(cpu.Microseconds())/float64(b.N), "cpu-µs/batch")
	p50, p99, ev50, ev99 := ts.tail()
	b.ReportMetric(float64(p50.Microseconds())/1000, "commit-cpu-p50-ms")
	b.ReportMetric(float64(p99.Microseconds())/1000, "commit-cpu-p99-ms")
	b.ReportMetric(float64(ev50.Microseconds())/1000, "event-commit-cpu-p50-ms")
	b.ReportMetric(float64(ev99.Microseconds())/1000, "event-commit-cpu-p99-ms")
	cancel()
	if err := <-done; err != nil {
		b.Fatal(err)
	}
}

func ptr[T any](v T) *T { return &v }

func cpuTime() time.Duration {
	var ru syscall.Rusage
	if syscall.Getrusage(syscall.RUSAGE_SELF, &ru) != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}
