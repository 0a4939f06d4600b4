package archive

import (
	"context"
	"fmt"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/trenzinho/trenzinho/wire"
)

// countingWriter takes every write and counts the requests.
type countingWriter struct{ writes atomic.Int64 }

func (w *countingWriter) WriteRecord(context.Context, ...string) error {
	w.writes.Add(1)
	return nil
}

// benchMsg is a message that counts its acknowledgements.
type benchMsg struct {
	topic   string
	payload []byte
	acks    *atomic.Int64
}

func (m *benchMsg) Topic() string   { return m.topic }
func (m *benchMsg) Payload() []byte { return m.payload }
func (m *benchMsg) Duplicate() bool { return false }
func (m *benchMsg) Ack()            { m.acks.Add(1) }

// BenchmarkPipeline runs messages of 5 and 30 readings (GPS, tacho and sound in turn, every
// field known, as loadtest sends them) through the whole archiver, from Handle to the
// acknowledgement, with a writer that takes everything at once: ingest's own cost per message,
// without MQTT and InfluxDB. One op is one message; cpu-ns/reading is the CPU of the whole
// process (all goroutines, garbage collection) per reading.
func BenchmarkPipeline(b *testing.B) {
	for _, n := range []int{5, 30} {
		b.Run(fmt.Sprintf("readings=%d", n), func(b *testing.B) {
			const distinct = 2000
			now := time.Now()
			var acks atomic.Int64
			msgs := make([]*benchMsg, distinct)
			size := 0
			for i := range msgs {
				p, err := wire.Encode(benchBatch(i, n, now), nil)
				if err != nil {
					b.Fatal(err)
				}
				msgs[i] = &benchMsg{topic: wire.TelemetryTopic(fmt.Sprintf("BENCH-%04d", i%500)), payload: p, acks: &acks}
				size += len(p)
			}
			w := &countingWriter{}
			a := New(Config{}, w, nil, NewMetrics(prometheus.NewRegistry()), quietLog())
			ctx, cancel := context.WithCancel(context.Background())
			done := make(chan error, 1)
			go func() { done <- a.Run(ctx) }()
			b.SetBytes(int64(size / distinct))
			b.ReportAllocs()
			b.ResetTimer()
			cpu0 := cpuTime()
			for i := range b.N {
				a.Handle(msgs[i%distinct])
			}
			for acks.Load() < int64(b.N) {
				time.Sleep(time.Millisecond)
			}
			b.StopTimer()
			b.ReportMetric(float64((cpuTime()-cpu0).Nanoseconds())/float64(b.N*n), "cpu-ns/reading")
			cancel()
			if err := <-done; err != nil {
				b.Fatal(err)
			}
		})
	}
}

// cpuTime is the user and system CPU time of the process so far: on a loaded machine the CPU
// per reading is steadier than the wall time.
func cpuTime() time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

// benchBatch is batch i of a vehicle with n readings, ending just before now.
func benchBatch(i, n int, now time.Time) *wire.Batch {
	f := func(v float64) *float64 { return &v }
	sats := 9
	t0 := now.Add(-time.Minute)
	at := func(k int) wire.Time { return wire.NewTime(t0.Add(time.Duration(k) * 100 * time.Millisecond)) }
	b := &wire.Batch{V: 1, Vehicle: fmt.Sprintf("BENCH-%04d", i%500), Epoch: "e-bench", Seq: uint64(i + 1),
		SentAt: at(n), Clock: wire.ClockGPS}
	for k := range n {
		switch k % 3 {
		case 0:
			b.GPS = append(b.GPS, wire.GPS{T: at(k), Lat: -20.8367 - float64(k)*1e-6, Lon: -40.7292, SpeedKmh: f(32.5),
				CourseDeg: f(91.5), HDOP: f(0.9), Sats: &sats, Fix: wire.Fix3D})
		case 1:
			b.Tacho = append(b.Tacho, wire.Tacho{T: at(k), SpeedKmh: f(32.1), OdometerKm: f(10234.5 + float64(k)*0.01)})
		case 2:
			b.Sound = append(b.Sound, wire.Sound{T: at(k), LAeqDB: f(68.2), LAmaxDB: f(74.1), DurS: f(1)})
		}
	}
	return b
}

// slowWriter takes each write after a fixed delay, as InfluxDB would, and sums the time during
// which at least one write was in progress.
type slowWriter struct {
	delay time.Duration

	mu       sync.Mutex
	inFlight int
	since    time.Time
	busy     time.Duration
}

func (w *slowWriter) WriteRecord(context.Context, ...string) error {
	w.mu.Lock()
	if w.inFlight == 0 {
		w.since = time.Now()
	}
	w.inFlight++
	w.mu.Unlock()
	time.Sleep(w.delay)
	w.mu.Lock()
	if w.inFlight--; w.inFlight == 0 {
		w.busy += time.Since(w.since)
	}
	w.mu.Unlock()
	return nil
}

// windowMsg is a benchMsg whose acknowledgement frees a slot of the broker's window.
type windowMsg struct {
	*benchMsg
	window chan struct{}
}

func (m windowMsg) Ack() { m.benchMsg.Ack(); <-m.window }

// BenchmarkWriterIdle measures how much of the wall time the writer waits between writes when
// InfluxDB takes a fixed time per write and the broker sends at most its window of 1,000
// unacknowledged messages (max_inflight_messages): writer-idle-% is 100 × (1 − time with a write in
// progress ÷ wall time), the structural gap that keeps ingest below the bare writer
// (docs/benchmarks.md, "Ingest vs Telegraf vs bare writer"). The write takes 100 ms, far more than
// the pipeline's CPU per write even on a loaded machine, so the figure is the pipeline's shape, not
// the machine's load: on a quiet machine it would be what separates ingest from the bare writer.
func BenchmarkWriterIdle(b *testing.B) {
	for _, n := range []int{5, 30} {
		for _, conc := range []int{1, 2} {
			b.Run(fmt.Sprintf("readings=%d/writes=%d", n, conc), func(b *testing.B) {
				const distinct = 2000
				now := time.Now()
				var acks atomic.Int64
				window := make(chan struct{}, 1000)
				msgs := make([]windowMsg, distinct)
				for i := range msgs {
					p, err := wire.Encode(benchBatch(i, n, now), nil)
					if err != nil {
						b.Fatal(err)
					}
					msgs[i] = windowMsg{&benchMsg{topic: wire.TelemetryTopic(fmt.Sprintf("BENCH-%04d", i%500)), payload: p, acks: &acks}, window}
				}
				w := &slowWriter{delay: 100 * time.Millisecond}
				a := New(Config{WriteConcurrency: conc}, w, nil, NewMetrics(prometheus.NewRegistry()), quietLog())
				ctx, cancel := context.WithCancel(context.Background())
				done := make(chan error, 1)
				go func() { done <- a.Run(ctx) }()
				// Whole writes only: a last partial write would wait for FlushInterval (1 s)
				// and count as idle. A message is n readings and the batch's own point.
				per := min(1000/(conc+1), (5000+n)/(n+1))
				total := (b.N + per - 1) / per * per
				b.ResetTimer()
				start := time.Now()
				for i := range total {
					window <- struct{}{}
					a.Handle(msgs[i%distinct])
				}
				for acks.Load() < int64(total) {
					time.Sleep(100 * time.Microsecond)
				}
				b.StopTimer()
				wall := time.Since(start)
				w.mu.Lock()
				busy := w.busy
				w.mu.Unlock()
				b.ReportMetric(100*(1-float64(busy)/float64(wall)), "writer-idle-%")
				cancel()
				if err := <-done; err != nil {
					b.Fatal(err)
				}
			})
		}
	}
}
