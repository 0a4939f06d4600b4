package archive

import (
	"bytes"
	"context"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	influxhttp "github.com/influxdata/influxdb-client-go/v2/api/http"
	"github.com/prometheus/client_golang/prometheus"
	dto "github.com/prometheus/client_model/go"

	"github.com/trenzinho/trenzinho/wire"
)

// fakeMsg is a received message that records its acknowledgement.
type fakeMsg struct {
	topic   string
	payload []byte
	dup     bool
	acks    atomic.Int32
	order   *ackLog
	id      int
}

func (m *fakeMsg) Topic() string   { return m.topic }
func (m *fakeMsg) Payload() []byte { return m.payload }
func (m *fakeMsg) Duplicate() bool { return m.dup }
func (m *fakeMsg) Ack() {
	m.acks.Add(1)
	if m.order != nil {
		m.order.add(m.id)
	}
}

type ackLog struct {
	mu  sync.Mutex
	ids []int
}

func (l *ackLog) add(id int) { l.mu.Lock(); l.ids = append(l.ids, id); l.mu.Unlock() }
func (l *ackLog) len() int   { l.mu.Lock(); defer l.mu.Unlock(); return len(l.ids) }

// fakeWriter stores what it is given, or fails as fail says.
type fakeWriter struct {
	mu    sync.Mutex
	lines []string
	calls int
	fail  func(body string) error // nil: succeed
}

func (w *fakeWriter) WriteRecord(ctx context.Context, lines ...string) error {
	w.mu.Lock()
	w.calls++
	fail := w.fail
	w.mu.Unlock()
	body := strings.Join(lines, "\n")
	if fail != nil {
		if err := fail(body); err != nil {
			return err
		}
	}
	w.mu.Lock()
	defer w.mu.Unlock()
	w.lines = append(w.lines, strings.Split(strings.TrimSpace(body), "\n")...)
	return nil
}

func (w *fakeWriter) setFail(f func(string) error) { w.mu.Lock(); w.fail = f; w.mu.Unlock() }

func (w *fakeWriter) count(prefix string) int {
	w.mu.Lock()
	defer w.mu.Unlock()
	n := 0
	for _, l := range w.lines {
		if strings.HasPrefix(l, prefix) {
			n++
		}
	}
	return n
}

func testBatch(vehicle string, seq int) []byte {
	t0 := time.Date(2026, 11, 29, 15, 0, 0, 0, time.UTC).Add(time.Duration(seq) * 3 * time.Second)
	ts := func(i int) string { return wire.NewTime(t0.Add(time.Duration(i) * time.Second)).String() }
	return fmt.Appendf(nil, `{"v":1,"vehicle":%q,"epoch":"e-test","seq":%d,"sent_at":%q,"clock":"gps",`+
		`"gps":[{"t":%q,"lat":-20.8,"lon":-40.7,"speed_kmh":%d.5},{"t":%q,"lat":-20.8,"lon":-40.7}],`+
		`"sound":[{"t":%q,"laeq_db":65.25}]}`, vehicle, seq, ts(3), ts(0), seq%200, ts(1), ts(2))
}

func quietLog() *slog.Logger { return slog.New(slog.NewTextHandler(io.Discard, nil)) }

func gauge(t *testing.T, g prometheus.Gauge) float64 {
	t.Helper()
	var m dto.Metric
	if err := g.Write(&m); err != nil {
		t.Fatal(err)
	}
	return m.GetGauge().GetValue()
}

func counter(t *testing.T, c prometheus.Counter) float64 {
	t.Helper()
	var m dto.Metric
	if err := c.Write(&m); err != nil {
		t.Fatal(err)
	}
	return m.GetCounter().GetValue()
}

func eventually(t *testing.T, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(20 * time.Second)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out waiting for %s", what)
		}
		time.Sleep(5 * time.Millisecond)
	}
}

type harness struct {
	a      *Archiver
	m      *Metrics
	cancel context.CancelFunc
	runErr chan error
	pubMu  sync.Mutex
	pubs   []outbound
}

func start(t *testing.T, cfg Config, w Writer) *harness {
	t.Helper()
	if cfg.Limits.MaxAge == 0 {
		// testBatch's readings are of 29 November 2026: keep them within the time window
		// whatever the day the tests run.
		cfg.Limits.MaxAge = 100 * 365 * 24 * time.Hour
	}
	h := &harness{m: NewMetrics(prometheus.NewRegistry()), runErr: make(chan error, 1)}
	h.a = New(cfg, w, func(topic string, payload []byte) {
		h.pubMu.Lock()
		h.pubs = append(h.pubs, outbound{topic, payload})
		h.pubMu.Unlock()
	}, h.m, quietLog())
	ctx, cancel := context.WithCancel(context.Background())
	h.cancel = cancel
	go func() { h.runErr <- h.a.Run(ctx) }()
	t.Cleanup(func() {
		cancel()
		<-h.runErr
	})
	return h
}

func (h *harness) stop(t *testing.T) error {
	t.Helper()
	h.cancel()
	select {
	case err := <-h.runErr:
		h.runErr <- err // for Cleanup
		return err
	case <-time.After(30 * time.Second):
		t.Fatal("Run did not return")
		return nil
	}
}

func msgs(n int, log *ackLog) []*fakeMsg {
	out := make([]*fakeMsg, n)
	for i := range out {
		v := fmt.Sprintf("V-%02d", i%10)
		out[i] = &fakeMsg{topic: wire.TelemetryTopic(v), payload: testBatch(v, i/10+1), order: log, id: i}
	}
	return out
}

func TestAckOnlyAfterWriteInOrder(t *testing.T) {
	release := make(chan struct{})
	var blocked atomic.Bool
	w := &fakeWriter{fail: func(string) error {
		blocked.Store(true)
		<-release
		return nil
	}}
	h := start(t, Config{BatchLines: 1 << 20, BatchMessages: 50, FlushInterval: time.Hour}, w)
	log := &ackLog{}
	in := msgs(100, log)
	for _, m := range in {
		h.a.Handle(m)
	}
	eventually(t, "the first write", blocked.Load)
	time.Sleep(20 * time.Millisecond)
	if n := log.len(); n != 0 {
		t.Fatalf("%d messages acknowledged before their write returned", n)
	}
	close(release)
	eventually(t, "all acks", func() bool { return log.len() == 100 })
	for i, id := range log.ids {
		if id != i {
			t.Fatalf("ack %d is message %d: not in arrival order", i, id)
		}
	}
	for _, m := range in {
		if m.acks.Load() != 1 {
			t.Fatalf("message %d acknowledged %d times", m.id, m.acks.Load())
		}
	}
	if got := w.count("gps,"); got != 200 {
		t.Errorf("gps points %d, want 200", got)
	}
	if got := w.count("batch,"); got != 100 {
		t.Errorf("batch points %d, want 100", got)
	}
	if g := gauge(t, h.m.inFlight); g != 0 {
		t.Errorf("in flight %v after all acks", g)
	}
}

// TestOutageBoundsMemoryAndResumes: while InfluxDB fails, nothing is acknowledged, Handle stops
// at twice MaxInFlight messages, and everything is written and acknowledged once it is back.
// TestConcurrentWritesAckInOrder: with two writes in flight, a later write that succeeds first
// waits for the earlier one before its messages are acknowledged.
func TestConcurrentWritesAckInOrder(t *testing.T) {
	release := make(chan struct{})
	var calls atomic.Int32
	w := &fakeWriter{fail: func(body string) error {
		calls.Add(1)
		// The write of the first 50 messages hangs; the second returns at once.
		if strings.Contains(body, `batch,vehicle=V-00 epoch="e-test",seq=1i,`) {
			select {
			case <-release:
			case <-time.After(30 * time.Second):
			}
		}
		return nil
	}}
	h := start(t, Config{BatchLines: 1 << 20, BatchMessages: 50, FlushInterval: time.Hour, WriteConcurrency: 2}, w)
	log := &ackLog{}
	in := msgs(100, log)
	for _, m := range in {
		h.a.Handle(m)
	}
	eventually(t, "the second write while the first is in flight", func() bool { return calls.Load() == 2 })
	eventually(t, "the second write's points", func() bool { return w.count("batch,") == 50 })
	time.Sleep(20 * time.Millisecond)
	if n := log.len(); n != 0 {
		t.Fatalf("%d messages acknowledged while the first write is in flight", n)
	}
	close(release)
	eventually(t, "all acks", func() bool { return log.len() == 100 })
	for i, id := range log.ids {
		if id != i {
			t.Fatalf("ack %d is message %d: not in arrival order", i, id)
		}
	}
	if got := w.count("batch,"); got != 100 {
		t.Errorf("batch points %d, want 100", got)
	}
	if err := h.stop(t); err != nil {
		t.Fatal(err)
	}
}

func TestOutageBoundsMemoryAndResumes(t *testing.T) {
	w := &fakeWriter{}
	down := func(string) error { return &influxhttp.Error{StatusCode: 503, Message: "down"} }
	w.setFail(down)
	h := start(t, Config{MaxInFlight: 40, FlushInterval: 10 * time.Millisecond, RetryMin: time.Millisecond, RetryMax: 5 * time.Millisecond}, w)
	log := &ackLog{}
	in := msgs(100, log)
	var handled atomic.Int32
	go func() {
		for _, m := range in {
			h.a.Handle(m)
			handled.Add(1)
		}
	}()
	eventually(t, "the in-flight bound", func() bool { return gauge(t, h.m.inFlight) == 80 })
	eventually(t, "retries", func() bool { return counter(t, h.m.writes.WithLabelValues("retry")) >= 5 })
	if n := handled.Load(); n != 80 {
		t.Fatalf("Handle took %d messages with 2×40 in flight allowed", n)
	}
	if log.len() != 0 {
		t.Fatal("acknowledged while InfluxDB is down")
	}
	w.setFail(nil)
	eventually(t, "all acks", func() bool { return log.len() == 100 })
	for _, m := range in {
		if m.acks.Load() != 1 {
			t.Fatalf("message %d acknowledged %d times", m.id, m.acks.Load())
		}
	}
	if got := w.count("batch,"); got != 100 {
		t.Errorf("batch points %d, want 100", got)
	}
	if gauge(t, h.m.influxUp) != 1 {
		t.Error("influx_up not 1 after recovery")
	}
}

func TestMalformedIsQuarantinedAndAcked(t *testing.T) {
	w := &fakeWriter{}
	h := start(t, Config{FlushInterval: 10 * time.Millisecond}, w)
	good := msgs(20, nil)
	bad := []*fakeMsg{
		{topic: wire.TelemetryTopic("V-00"), payload: []byte("{not json")},
		{topic: wire.TelemetryTopic("V-01"), payload: []byte("\xff\xfe")},
		{topic: wire.TelemetryTopic("V-02"), payload: testBatch("V-03", 1)},
		{topic: wire.TelemetryTopic("V-04"), payload: make([]byte, wire.MaxPayloadBytes+1)},
	}
	reasons := []wire.Reason{wire.ReasonBadJSON, wire.ReasonNotUTF8, wire.ReasonTopicMismatch, wire.ReasonTooLarge}
	for i, m := range good {
		h.a.Handle(m)
		if i < len(bad) {
			h.a.Handle(bad[i])
		}
	}
	eventually(t, "all acks", func() bool {
		for _, m := range append(good, bad...) {
			if m.acks.Load() != 1 {
				return false
			}
		}
		return true
	})
	if got := w.count("batch,"); got != 20 {
		t.Errorf("batch points %d, want 20", got)
	}
	for _, r := range reasons {
		if got := w.count("quarantine,reason=" + string(r) + ","); got != 1 {
			t.Errorf("quarantine %s: %d points", r, got)
		}
		if got := counter(t, h.m.quarantined.WithLabelValues(string(r))); got != 1 {
			t.Errorf("quarantined_total{%s} = %v", r, got)
		}
	}
	h.pubMu.Lock()
	defer h.pubMu.Unlock()
	if len(h.pubs) != len(bad) {
		t.Fatalf("%d quarantine records published, want %d", len(h.pubs), len(bad))
	}
	for i, p := range h.pubs {
		var q wire.Quarantine
		if err := json.Unmarshal(p.payload, &q); err != nil {
			t.Fatal(err)
		}
		v, _, _ := wire.VehicleFromTopic(bad[i].topic)
		if p.topic != wire.QuarantineTopic(v) || q.Reason != reasons[i] || q.Topic != bad[i].topic || q.ReceivedAt.IsZero() {
			t.Errorf("published %s %+v", p.topic, q)
		}
		if reasons[i] == wire.ReasonTooLarge && (!q.Truncated || len(q.PayloadB64) != base64.StdEncoding.EncodedLen(wire.QuarantineCut)) {
			t.Errorf("too large: truncated %v, %d base64 bytes", q.Truncated, len(q.PayloadB64))
		}
	}
}

// TestRefusedMessageIsIsolated: when InfluxDB refuses a write (400), the messages are split
// until the refused one is found; it is quarantined, the rest written, all acknowledged.
func TestRefusedMessageIsIsolated(t *testing.T) {
	poison := `"seq":13,`
	w := &fakeWriter{}
	w.setFail(func(body string) error {
		if strings.Contains(body, `seq=13i`) {
			return &influxhttp.Error{StatusCode: 400, Code: "invalid", Message: "partial write: points beyond retention policy"}
		}
		return nil
	})
	h := start(t, Config{BatchMessages: 100, FlushInterval: 10 * time.Millisecond}, w)
	in := msgs(100, nil)
	for _, m := range in {
		h.a.Handle(m)
	}
	eventually(t, "all acks", func() bool {
		for _, m := range in {
			if m.acks.Load() != 1 {
				return false
			}
		}
		return true
	})
	var refused int
	for _, m := range in {
		if strings.Contains(string(m.payload), poison) {
			refused++
		}
	}
	if got := w.count("batch,"); got != 100-refused {
		t.Errorf("batch points %d, want %d", got, 100-refused)
	}
	if got := w.count("quarantine,reason=bad_value,"); got != refused {
		t.Errorf("quarantined %d, want %d", got, refused)
	}
}

func TestShutdownFlushes(t *testing.T) {
	w := &fakeWriter{}
	h := start(t, Config{BatchLines: 1 << 20, FlushInterval: time.Hour}, w)
	in := msgs(30, nil)
	for _, m := range in {
		h.a.Handle(m)
	}
	if err := h.stop(t); err != nil {
		t.Fatal(err)
	}
	for _, m := range in {
		if m.acks.Load() != 1 {
			t.Fatalf("message %d not acknowledged at shutdown", m.id)
		}
	}
	if got := w.count("batch,"); got != 30 {
		t.Errorf("batch points %d, want 30", got)
	}
	late := &fakeMsg{topic: wire.TelemetryTopic("V-01"), payload: testBatch("V-01", 99)}
	h.a.Handle(late)
	if late.acks.Load() != 0 {
		t.Error("a message taken after shutdown was acknowledged")
	}
}

func TestShutdownWithInfluxDownLeavesUnacked(t *testing.T) {
	w := &fakeWriter{}
	w.setFail(func(string) error { return errors.New("connection refused") })
	h := start(t, Config{FlushInterval: time.Millisecond, RetryMin: time.Millisecond, ShutdownTimeout: 100 * time.Millisecond}, w)
	in := msgs(10, nil)
	for _, m := range in {
		h.a.Handle(m)
	}
	eventually(t, "retries", func() bool { return counter(t, h.m.writes.WithLabelValues("retry")) >= 2 })
	err := h.stop(t)
	if err == nil || !strings.Contains(err.Error(), "10 messages left unacknowledged") {
		t.Fatalf("Run = %v, want 10 messages left unacknowledged", err)
	}
	for _, m := range in {
		if m.acks.Load() != 0 {
			t.Fatal("acknowledged a message that was never written")
		}
	}
	if g := gauge(t, h.m.inFlight); g != 0 {
		t.Errorf("in flight %v after shutdown", g)
	}
}

func TestReasonLogOncePerMinute(t *testing.T) {
	r := &reasonLog{every: time.Minute, last: map[wire.Reason]reasonState{}}
	t0 := time.Now()
	if ok, _ := r.allow(wire.ReasonBadJSON, t0); !ok {
		t.Fatal("first not logged")
	}
	for i := range 5 {
		if ok, _ := r.allow(wire.ReasonBadJSON, t0.Add(time.Duration(i)*time.Second)); ok {
			t.Fatal("logged twice within a minute")
		}
	}
	if ok, _ := r.allow(wire.ReasonNotUTF8, t0); !ok {
		t.Fatal("another reason not logged")
	}
	if ok, n := r.allow(wire.ReasonBadJSON, t0.Add(time.Minute)); !ok || n != 5 {
		t.Fatalf("after a minute: ok %v suppressed %d, want true 5", ok, n)
	}
}

// TestUnknownVehicleAndConflictQuarantined: with a registry (Config.Known), a batch of a vehicle
// it does not list is quarantined as unknown_vehicle without a vehicle tag; a batch with the
// identity of one stored before and other bytes is quarantined as conflict and never written
// over the first; a plain redelivery is stored again (idempotent points).
func TestUnknownVehicleAndConflictQuarantined(t *testing.T) {
	w := &fakeWriter{}
	h := start(t, Config{FlushInterval: 10 * time.Millisecond, Known: func(v string) bool { return v != "FAKE-1" }}, w)
	first := testBatch("V-01", 7)
	changed := bytes.Replace(first, []byte(`"seq":7`), []byte(`"seq":7 `), 1) // other bytes, same identity
	if bytes.Equal(first, changed) {
		t.Fatal("the test batch has no \"seq\":7")
	}
	ms := []*fakeMsg{
		{topic: wire.TelemetryTopic("V-01"), payload: first},
		{topic: wire.TelemetryTopic("V-01"), payload: first},
		{topic: wire.TelemetryTopic("V-01"), payload: changed},
		{topic: wire.TelemetryTopic("FAKE-1"), payload: testBatch("FAKE-1", 1)},
	}
	for _, m := range ms {
		h.a.Handle(m)
		eventually(t, "ack", func() bool { return m.acks.Load() == 1 })
	}
	if got := w.count("batch,"); got != 2 {
		t.Errorf("batch points %d, want 2 (the first and its redelivery)", got)
	}
	for _, r := range []wire.Reason{wire.ReasonConflict, wire.ReasonUnknownVehicle} {
		if got := counter(t, h.m.quarantined.WithLabelValues(string(r))); got != 1 {
			t.Errorf("quarantined_total{%s} = %v", r, got)
		}
	}
	if got := w.count("quarantine,reason=unknown_vehicle "); got != 1 {
		t.Errorf("%d unknown_vehicle records without a vehicle tag, want 1", got)
	}
}
