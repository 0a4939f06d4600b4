package judge_test

import (
	"context"
	"crypto/ed25519"
	"io"
	"log/slog"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/trenzinho/trenzinho/geofences"
	"github.com/trenzinho/trenzinho/internal/batchsig"
	"github.com/trenzinho/trenzinho/monitor/judge"
	"github.com/trenzinho/trenzinho/monitor/store"
	"github.com/trenzinho/trenzinho/profile"
	"github.com/trenzinho/trenzinho/rules"
	"github.com/trenzinho/trenzinho/wire"
)

// memStore keeps what the judge commits.
type memStore struct {
	mu      sync.Mutex
	batches []store.Batch
}

func (s *memStore) Commit(_ context.Context, _ *rules.Changes, bs []store.Batch) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.batches = append(s.batches, bs...)
	return nil
}

func (s *memStore) VehicleSnapshots(context.Context) ([][]byte, error) { return nil, nil }

func (s *memStore) Quarantine(context.Context, store.Quarantined) error { return nil }

func (s *memStore) LoggedBatch(context.Context, string, string, uint64) ([]byte, error) {
	return nil, store.ErrNotFound
}

func (s *memStore) judged() map[string][]uint64 {
	s.mu.Lock()
	defer s.mu.Unlock()
	out := map[string][]uint64{}
	for _, b := range s.batches {
		out[b.Vehicle] = append(out[b.Vehicle], b.Seq)
	}
	return out
}

type msg struct {
	topic   string
	payload []byte
	acked   chan struct{}
}

func (m *msg) Topic() string   { return m.topic }
func (m *msg) Payload() []byte { return m.payload }
func (m *msg) Ack()            { close(m.acked) }

func seedKey(b byte) ed25519.PrivateKey {
	s := make([]byte, ed25519.SeedSize)
	for i := range s {
		s[i] = b
	}
	return ed25519.NewKeyFromSeed(s)
}

// lockedWriter collects log output safely.
type lockedWriter struct {
	mu sync.Mutex
	b  strings.Builder
}

func (w *lockedWriter) Write(p []byte) (int, error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.b.Write(p)
}

func (w *lockedWriter) String() string {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.b.String()
}

// TestForgedBatchNotJudged: with signatures required, only the batches signed with the vehicle's
// registered key reach the rules engine; forged, tampered, unsigned and unknown-key batches are
// acknowledged, counted by reason and logged once per vehicle per minute. Without the
// requirement, unsigned batches are judged and forged ones still are not.
func TestForgedBatchNotJudged(t *testing.T) {
	good, forger := seedKey(1), seedKey(2)
	keys := func(vehicle string) (string, ed25519.PublicKey, bool) {
		if vehicle == "PIU-001" {
			return "PIU-001-k1", good.Public().(ed25519.PublicKey), true
		}
		return "", nil, false
	}
	now := time.Now().UTC().Truncate(time.Second)
	payload := func(vehicle string, seq uint64, kid string, k ed25519.PrivateKey) []byte {
		at := now.Add(-time.Hour + time.Duration(seq)*5*time.Second)
		speed := 45.5 // well above the limit: judged batches make a vehicle and, sustained, an episode
		b := &wire.Batch{V: wire.Version, Vehicle: vehicle, Epoch: "e-1", Seq: seq, SentAt: wire.NewTime(at), Clock: wire.ClockGPS, Kid: kid,
			GPS: []wire.GPS{{T: wire.NewTime(at), Lat: -20.8367, Lon: -40.7292, SpeedKmh: &speed, Fix: wire.Fix3D}}}
		p, err := wire.Encode(b, k)
		if err != nil {
			t.Fatal(err)
		}
		return p
	}
	tampered := func(p []byte) []byte {
		return []byte(strings.Replace(string(p), `"speed_kmh":45.5`, `"speed_kmh":25.5`, 1))
	}

	for _, tc := range []struct {
		name     string
		required bool
		want     map[string][]uint64
		rejected map[wire.Reason]float64
	}{
		{"required", true, map[string][]uint64{"PIU-001": {1, 6}}, map[wire.Reason]float64{
			wire.ReasonSignatureFailed: 2, wire.ReasonUnsigned: 2, wire.ReasonUnknownKey: 2}},
		// Not required: the batch signed with another kid (seq 5) is judged, unverified.
		{"not required", false, map[string][]uint64{"PIU-001": {1, 4, 5, 6}, "PIU-002": {1, 2}}, map[wire.Reason]float64{
			wire.ReasonSignatureFailed: 2, wire.ReasonUnsigned: 0, wire.ReasonUnknownKey: 0}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			set, err := geofences.Sample()
			if err != nil {
				t.Fatal(err)
			}
			st := &memStore{}
			reg := prometheus.NewRegistry()
			var logs lockedWriter
			j := judge.New(judge.Config{
				Engine: rules.New(profile.Piuma(), set), Store: st, Metrics: reg, Logger: testLogger(&logs),
				FlushEvery: 10 * time.Millisecond, Now: func() time.Time { return now },
				Signatures: batchsig.Policy{Required: tc.required, Keys: keys},
			})
			ctx, cancel := context.WithCancel(context.Background())
			done := make(chan error, 1)
			go func() { done <- j.Run(ctx) }()
			msgs := []*msg{
				{topic: wire.TelemetryTopic("PIU-001"), payload: payload("PIU-001", 1, "PIU-001-k1", good)},
				{topic: wire.TelemetryTopic("PIU-001"), payload: payload("PIU-001", 2, "PIU-001-k1", forger)},
				{topic: wire.TelemetryTopic("PIU-001"), payload: tampered(payload("PIU-001", 3, "PIU-001-k1", good))},
				{topic: wire.TelemetryTopic("PIU-001"), payload: payload("PIU-001", 4, "", nil)},
				{topic: wire.TelemetryTopic("PIU-001"), payload: payload("PIU-001", 5, "PIU-001-k0", good)},
				{topic: wire.TelemetryTopic("PIU-001"), payload: payload("PIU-001", 6, "PIU-001-k1", good)},
				{topic: wire.TelemetryTopic("PIU-002"), payload: payload("PIU-002", 1, "PIU-002-k1", forger)}, // no key registered
				{topic: wire.TelemetryTopic("PIU-002"), payload: payload("PIU-002", 2, "", nil)},
			}
			for _, m := range msgs {
				m.acked = make(chan struct{})
				j.Handle(ctx, m)
			}
			for i, m := range msgs {
				select {
				case <-m.acked:
				case <-time.After(10 * time.Second):
					t.Fatalf("message %d not acknowledged", i)
				}
			}
			cancel()
			if err := <-done; err != nil {
				t.Fatal(err)
			}

			got := st.judged()
			if len(got) != len(tc.want) {
				t.Errorf("judged %v, want %v", got, tc.want)
			}
			for v, seqs := range tc.want {
				if !equal(got[v], seqs) {
					t.Errorf("%s: judged seqs %v, want %v", v, got[v], seqs)
				}
			}
			for r, n := range tc.rejected {
				if v := rejected(t, reg, r); v != n {
					t.Errorf("rejected_total{%s} = %v, want %v", r, v, n)
				}
			}
			vehicles, _ := j.Vehicles(context.Background())
			for _, v := range vehicles {
				if _, ok := tc.want[v.ID]; !ok {
					t.Errorf("vehicle %s is in the fleet from refused batches only", v.ID)
				}
			}
			// One log line per vehicle per minute, however many batches were refused.
			if n := strings.Count(logs.String(), `vehicle=PIU-001`); n != 1 {
				t.Errorf("%d log lines for PIU-001's refused batches, want 1:\n%s", n, logs.String())
			}
		})
	}
}

func equal(a, b []uint64) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return true
}

// rejected reads trenzinho_monitor_rejected_total{reason} from reg.
func rejected(t *testing.T, reg *prometheus.Registry, r wire.Reason) float64 {
	t.Helper()
	mfs, err := reg.Gather()
	if err != nil {
		t.Fatal(err)
	}
	for _, mf := range mfs {
		if mf.GetName() != "trenzinho_monitor_rejected_total" {
			continue
		}
		for _, m := range mf.GetMetric() {
			for _, l := range m.GetLabel() {
				if l.GetName() == "reason" && l.GetValue() == string(r) {
					return m.GetCounter().GetValue()
				}
			}
		}
	}
	return 0
}

func testLogger(w io.Writer) *slog.Logger {
	return slog.New(slog.NewTextHandler(w, &slog.HandlerOptions{Level: slog.LevelInfo}))
}
