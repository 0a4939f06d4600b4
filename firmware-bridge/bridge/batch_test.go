package bridge

import (
	"context"
	"sync"
	"testing"
	"time"

	"github.com/trenzinho/trenzinho/wire"
)

func TestOpenDefaults(t *testing.T) {
	for _, tc := range []struct{ in, want int }{{0, wire.MaxReadings}, {-1, wire.MaxReadings}, {7, 7}, {wire.MaxReadings + 1, wire.MaxReadings}} {
		b := newTestBridge(t, Config{MaxReadings: tc.in})
		if b.cfg.MaxReadings != tc.want {
			t.Errorf("MaxReadings %d → %d, want %d", tc.in, b.cfg.MaxReadings, tc.want)
		}
		if b.cfg.BatchInterval != 5*time.Second || b.cfg.InFlight != 16 || b.cfg.StatusEvery != 30*time.Second {
			t.Errorf("defaults: interval %v, in flight %d, status every %v", b.cfg.BatchInterval, b.cfg.InFlight, b.cfg.StatusEvery)
		}
	}
	if _, err := Open(Config{Vehicle: "PIU 001", StateDir: t.TempDir()}); err == nil {
		t.Error("Open accepted the vehicle id \"PIU 001\"")
	}
	if _, err := Open(Config{Vehicle: "PIU-001"}); err == nil {
		t.Error("Open accepted an empty state directory")
	}
	b := newTestBridge(t, Config{GPS: &Device{}, SLM: &Device{}})
	if got := b.devs.snapshot(); len(got) != 2 || got["gps"] != wire.DeviceMissing || got["slm"] != wire.DeviceMissing {
		t.Errorf("devices before the first read: %v, want gps and slm missing", got)
	}
}

// runBatch runs the batcher until the returned stop function is called; stop returns its error.
func runBatch(b *Bridge) (stop func() error) {
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- b.batch(ctx) }()
	return sync.OnceValue(func() error { cancel(); return <-done })
}

func gpsTimes(batches []*wire.Batch) []time.Time {
	var out []time.Time
	for _, b := range batches {
		for _, g := range b.GPS {
			out = append(out, g.T.Time)
		}
	}
	return out
}

// TestBatchSplitsAtMaxReadings: a batch is closed as soon as it holds MaxReadings readings,
// without waiting for the interval; the rest waits for the interval (or the stop).
func TestBatchSplitsAtMaxReadings(t *testing.T) {
	b := newTestBridge(t, Config{MaxReadings: 5, BatchInterval: time.Hour})
	base := time.Now().Truncate(time.Second)
	for i := range 12 {
		b.readings <- gpsReading(base.Add(time.Duration(i) * time.Second))
	}
	stop := runBatch(b)
	eventually(t, "two full batches", func() bool { return b.spool.LastSeq() == 2 })
	// The last two readings are in the open batch: no third batch before the interval ends.
	eventually(t, "the twelve readings taken", func() bool { return b.batchTaken.Load() == 12 })
	if n := b.spool.LastSeq(); n != 2 {
		t.Fatalf("%d batches once the 12 readings were taken, before the interval ended; want 2", n)
	}
	if err := stop(); err != nil {
		t.Fatal(err)
	}
	batches := spooled(t, b)
	if len(batches) != 3 {
		t.Fatalf("%d batches, want 3 (5 + 5 + 2)", len(batches))
	}
	for i, bt := range batches {
		want := []int{5, 5, 2}[i]
		if bt.Readings() != want || bt.Seq != uint64(i+1) || bt.Epoch != b.Epoch() || bt.Vehicle != "TEST-001" || bt.V != wire.Version || bt.Clock != wire.ClockGPS {
			t.Errorf("batch %d: seq %d, %d readings (want %d), epoch %q, vehicle %q, v %d, clock %q", i, bt.Seq, bt.Readings(), want, bt.Epoch, bt.Vehicle, bt.V, bt.Clock)
		}
	}
	times := gpsTimes(batches)
	for i, tm := range times {
		if want := base.Add(time.Duration(i) * time.Second); !tm.Equal(want) {
			t.Errorf("reading %d at %v, want %v (order kept across batches)", i, tm, want)
		}
	}
}

// TestBatchFlushesOnInterval: every interval the open batch is closed; an interval without
// readings makes no batch; readings without a time of their own are timed on the GPS time base.
func TestBatchFlushesOnInterval(t *testing.T) {
	b := newTestBridge(t, Config{BatchInterval: 20 * time.Millisecond})
	received := time.Now()
	gpsTime := time.Date(2026, 11, 29, 15, 0, 0, 0, time.UTC) // the Pi's clock is wrong
	if received.Sub(gpsTime).Abs() < time.Hour {
		gpsTime = gpsTime.Add(-48 * time.Hour)
	}
	fix := gpsReading(gpsTime)
	fix.received = received
	b.readings <- fix
	b.readings <- reading{Tacho: &wire.Tacho{SpeedKmh: ptr(20.0)}, needsTime: true, received: received.Add(2 * time.Second)}
	tachoT := wire.NewTime(gpsTime.Add(time.Hour))
	b.readings <- reading{Tacho: &wire.Tacho{T: tachoT, SpeedKmh: ptr(21.0)}, received: received.Add(3 * time.Second)}
	stop := runBatch(b)
	defer stop()
	eventually(t, "the first batch", func() bool { return b.spool.LastSeq() >= 1 })
	ticks := b.batchTicks.Load() // perhaps before the end of the interval that closed the first batch
	eventually(t, "ten intervals without readings", func() bool { return b.batchTicks.Load() >= ticks+11 })
	if n := b.spool.LastSeq(); n != 1 {
		t.Fatalf("%d batches after ten empty intervals, want 1", n)
	}
	b.readings <- reading{Tacho: &wire.Tacho{SpeedKmh: ptr(22.0)}, needsTime: true, received: received.Add(4 * time.Second)}
	eventually(t, "the second batch", func() bool { return b.spool.LastSeq() == 2 })
	if err := stop(); err != nil {
		t.Fatal(err)
	}
	batches := spooled(t, b)
	if len(batches) != 2 || len(batches[0].GPS) != 1 || len(batches[0].Tacho) != 2 || len(batches[1].Tacho) != 1 {
		t.Fatalf("batches: %+v", batches)
	}
	if got, want := batches[0].Tacho[0].T.Time, gpsTime.Add(2*time.Second); !got.Equal(want) {
		t.Errorf("tacho reading without time, received 2 s after the fix: t = %v, want %v", got, want)
	}
	if got := batches[0].Tacho[1].T; !got.Equal(tachoT.Time) {
		t.Errorf("tacho reading with its own time: t = %v, want %v", got, tachoT)
	}
	if got, want := batches[1].Tacho[0].T.Time, gpsTime.Add(4*time.Second); !got.Equal(want) {
		t.Errorf("second batch: t = %v, want %v", got, want)
	}
	for _, bt := range batches {
		if bt.Clock != wire.ClockGPS {
			t.Errorf("batch %d: clock %q, want gps", bt.Seq, bt.Clock)
		}
	}
}

// TestBatchFlushOnCancel: when the batcher stops it takes every reading already handed over,
// still splitting at MaxReadings, and closes the open batch.
func TestBatchFlushOnCancel(t *testing.T) {
	for _, tc := range []struct {
		max  int
		want []int
	}{{5, []int{5, 5, 2}}, {0, []int{12}}} {
		b := newTestBridge(t, Config{MaxReadings: tc.max, BatchInterval: time.Hour})
		base := time.Now().Truncate(time.Second)
		for i := range 12 {
			b.readings <- gpsReading(base.Add(time.Duration(i) * time.Second))
		}
		ctx, cancel := context.WithCancel(context.Background())
		cancel() // stopped before it even looked at the channel
		if err := b.batch(ctx); err != nil {
			t.Fatal(err)
		}
		batches := spooled(t, b)
		var got []int
		for _, bt := range batches {
			got = append(got, bt.Readings())
		}
		if len(got) != len(tc.want) {
			t.Fatalf("MaxReadings %d: batches of %v readings, want %v", tc.max, got, tc.want)
		}
		for i := range got {
			if got[i] != tc.want[i] {
				t.Fatalf("MaxReadings %d: batches of %v readings, want %v", tc.max, got, tc.want)
			}
		}
		if n := len(gpsTimes(batches)); n != 12 {
			t.Errorf("%d readings spooled, want 12", n)
		}
	}
}

// TestBatchClockSource: a batch without a recent fix says where its times came from.
func TestBatchClockSource(t *testing.T) {
	for _, rtc := range []bool{false, true} {
		b := newTestBridge(t, Config{RTC: rtc, BatchInterval: time.Hour})
		now := time.Now()
		b.readings <- reading{Tacho: &wire.Tacho{T: wire.NewTime(now), SpeedKmh: ptr(20.0)}, received: now}
		ctx, cancel := context.WithCancel(context.Background())
		cancel()
		if err := b.batch(ctx); err != nil {
			t.Fatal(err)
		}
		want := wire.ClockSystem
		if rtc {
			want = wire.ClockRTC
		}
		batches := spooled(t, b)
		if len(batches) != 1 || batches[0].Clock != want {
			t.Errorf("RTC %v: batches %+v, want one with clock %q", rtc, batches, want)
		}
	}
}
