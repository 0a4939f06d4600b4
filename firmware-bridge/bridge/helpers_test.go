package bridge

import (
	"io"
	"log/slog"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/trenzinho/trenzinho/firmware-bridge/spool"
	"github.com/trenzinho/trenzinho/wire"
)

// testLogger logs to the test until it ends; later lines (a goroutine still winding down) are
// dropped rather than reported after the test completed.
func testLogger(t *testing.T) *slog.Logger {
	w := &testWriter{t: t}
	t.Cleanup(func() {
		w.mu.Lock()
		w.done = true
		w.mu.Unlock()
	})
	return slog.New(slog.NewTextHandler(w, &slog.HandlerOptions{Level: slog.LevelDebug}))
}

type testWriter struct {
	mu   sync.Mutex
	t    *testing.T
	done bool
}

func (w *testWriter) Write(p []byte) (int, error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	if !w.done {
		w.t.Log(strings.TrimRight(string(p), "\n"))
	}
	return len(p), nil
}

var _ io.Writer = (*testWriter)(nil)

func ptr[T any](v T) *T { return &v }

// gpsReading is a position epoch received at its own time.
func gpsReading(t time.Time) reading {
	g := wire.GPS{T: wire.NewTime(t), Lat: -20.8367, Lon: -40.7292, SpeedKmh: ptr(12.3), Fix: wire.Fix3D}
	return reading{GPS: &g, received: t}
}

// newTestBridge opens a bridge on a fresh state directory.
func newTestBridge(t *testing.T, cfg Config) *Bridge {
	t.Helper()
	if cfg.Vehicle == "" {
		cfg.Vehicle = "TEST-001"
	}
	if cfg.StateDir == "" {
		cfg.StateDir = t.TempDir()
	}
	if cfg.Logger == nil {
		cfg.Logger = testLogger(t)
	}
	b, err := Open(cfg)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { b.spool.Close() })
	return b
}

// decodeRecords decodes spooled batches with the wire format's own validation.
func decodeRecords(t *testing.T, vehicle string, recs []spool.Record) []*wire.Batch {
	t.Helper()
	var out []*wire.Batch
	for _, r := range recs {
		b, err := wire.Decode(wire.TelemetryTopic(vehicle), r.Payload, time.Now())
		if err != nil {
			t.Fatalf("spooled batch %d does not decode: %v\n%s", r.Seq, err, r.Payload)
		}
		if b.Seq != r.Seq {
			t.Errorf("spool record %d holds a batch with seq %d", r.Seq, b.Seq)
		}
		out = append(out, b)
	}
	return out
}

// spooled returns every batch in b's spool.
func spooled(t *testing.T, b *Bridge) []*wire.Batch {
	t.Helper()
	recs, err := b.spool.Pending(0, 1<<20)
	if err != nil {
		t.Fatal(err)
	}
	return decodeRecords(t, b.cfg.Vehicle, recs)
}

// eventually polls cond every 10 ms until it holds or the (generous) deadline passes.
func eventually(t *testing.T, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(20 * time.Second)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out waiting for %s", what)
		}
		time.Sleep(10 * time.Millisecond)
	}
}
