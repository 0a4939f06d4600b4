package judge_test

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"path/filepath"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/trenzinho/trenzinho/geofences"
	"github.com/trenzinho/trenzinho/monitor/judge"
	"github.com/trenzinho/trenzinho/monitor/store"
	"github.com/trenzinho/trenzinho/profile"
	"github.com/trenzinho/trenzinho/rules"
	"github.com/trenzinho/trenzinho/wire"
)

// killableStore is the real database until kill: from then on nothing reaches the file, as
// after a SIGKILL.
type killableStore struct {
	*store.DB
	dead atomic.Bool
}

var errKilled = errors.New("the process was killed")

func (s *killableStore) Commit(ctx context.Context, c *rules.Changes, bs []store.Batch) error {
	if s.dead.Load() {
		return errKilled
	}
	return s.DB.Commit(ctx, c, bs)
}

func (s *killableStore) CommitUnsynced(ctx context.Context, c *rules.Changes, bs []store.Batch) error {
	if s.dead.Load() {
		return errKilled
	}
	return s.DB.CommitUnsynced(ctx, c, bs)
}

func (s *killableStore) Quarantine(ctx context.Context, q store.Quarantined) error {
	if s.dead.Load() {
		return errKilled
	}
	return s.DB.Quarantine(ctx, q)
}

// crashFleet is the telemetry of a small fleet, one batch a second each for rounds seconds:
// vehicle 0 speeds at 45 km/h from second 5 to second 29, the others keep to 22.
func crashFleet(t *testing.T, vehicles, rounds int, start time.Time) []*countedMsg {
	t.Helper()
	type pos struct{ lat, lon float64 }
	states := make([]pos, vehicles)
	for v := range states {
		states[v] = pos{-20.8367 + float64(v)*0.0008, -40.7292}
	}
	var out []*countedMsg
	for k := range rounds {
		for v := range vehicles {
			kmh := 22.0
			if v == 0 && k >= 5 && k < 30 {
				kmh = 45
			}
			st := &states[v]
			st.lon += kmh / 3.6 / (111320 * 0.935)
			at := wire.NewTime(start.Add(time.Duration(k)*time.Second + time.Duration(v)*time.Millisecond))
			course, hdop, sats, odo, db := 90.0, 0.9, 9, 10000+float64(k)*kmh/3600, 45.0
			id := fmt.Sprintf("CRASH-%02d", v)
			p, err := wire.Encode(&wire.Batch{V: wire.Version, Vehicle: id, Epoch: "e1", Seq: uint64(k + 1), SentAt: at, Clock: wire.ClockGPS,
				GPS:   []wire.GPS{{T: at, Lat: st.lat, Lon: st.lon, SpeedKmh: &kmh, CourseDeg: &course, HDOP: &hdop, Sats: &sats, Fix: wire.Fix3D}},
				Tacho: []wire.Tacho{{T: at, SpeedKmh: &kmh, OdometerKm: &odo, Card: "0000000086H101"}},
				Sound: []wire.Sound{{T: at, LAeqDB: &db, DurS: ptr(1.0)}},
			}, nil)
			if err != nil {
				t.Fatal(err)
			}
			out = append(out, &countedMsg{topic: wire.TelemetryTopic(id), payload: p, vehicle: id, seq: uint64(k + 1)})
		}
	}
	return out
}

// countedMsg is a message that counts its acknowledgements.
type countedMsg struct {
	topic   string
	payload []byte
	vehicle string
	seq     uint64
	acks    atomic.Int32
}

func (m *countedMsg) Topic() string   { return m.topic }
func (m *countedMsg) Payload() []byte { return m.payload }
func (m *countedMsg) Ack()            { m.acks.Add(1) }

// announced counts the episode events the judge published, by kind.
type announced struct {
	mu     sync.Mutex
	events map[string]int
}

func (a *announced) add(kind string) {
	a.mu.Lock()
	defer a.mu.Unlock()
	if a.events == nil {
		a.events = map[string]int{}
	}
	a.events[kind]++
}

// runJudge judges msgs on a judge over st, restored from it, and stops it: onPublish sees every
// episode event published; the judge's error is returned.
func runJudge(t *testing.T, st judge.Store, msgs []*countedMsg, now func() time.Time, flushEvery time.Duration, onPublish func(ev string)) error {
	t.Helper()
	set, err := geofences.Load(filepath.Join("..", "..", "geofences", "piuma"))
	if err != nil {
		t.Fatal(err)
	}
	j := judge.New(judge.Config{
		Engine: rules.New(profile.Piuma(), set), Store: st, Metrics: prometheus.NewRegistry(),
		Logger:     slog.New(slog.NewTextHandler(io.Discard, nil)),
		FlushEvery: flushEvery, FlushBatches: 10_000, Now: now,
		Publish: func(_ string, payload []byte) {
			var e rules.Episode
			if err := json.Unmarshal(payload, &e); err != nil {
				t.Errorf("episode event %s: %v", payload, err)
				return
			}
			kind := e.Rule + " open"
			if e.End != nil {
				kind = e.Rule + " closed"
			}
			onPublish(kind)
		},
	})
	if err := j.Restore(context.Background()); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- j.Run(ctx) }()
	for _, m := range msgs {
		j.Handle(ctx, m)
	}
	// Everything handed over is judged before the loop sees the cancellation only if it has
	// drained its queue: wait for that (its commits show it) with a generous bound.
	deadline := time.Now().Add(time.Minute)
	for time.Now().Before(deadline) && len(msgs) > 0 {
		if st, ok := st.(*killableStore); ok && st.dead.Load() {
			break
		}
		if msgs[len(msgs)-1].acks.Load() > 0 {
			break
		}
		time.Sleep(10 * time.Millisecond)
	}
	cancel()
	select {
	case err := <-done:
		return err
	case <-time.After(time.Minute):
		t.Fatal("the judge did not stop")
		return nil
	}
}

// TestKilledBetweenEventAndGroupCommit: an episode's event is committed ahead of the rest of its
// group (the vehicles it concerns, with their batches), and the monitor dies right after
// announcing it, before the group's commit. Started again on the same database and given every
// message again (none was acknowledged, so the broker redelivers them all), it ends with the
// same episodes as a monitor that never died, announced once, and with every judged batch in
// the batch log exactly once, verbatim.
func TestKilledBetweenEventAndGroupCommit(t *testing.T) {
	const vehicles, rounds = 6, 45
	start := time.Date(2026, 11, 25, 15, 0, 0, 0, time.UTC) // noon in Piúma, a weekday
	clock := func() time.Time { return start.Add(rounds * time.Second) }

	// The reference: a monitor that never dies.
	refDB, err := store.Open(context.Background(), filepath.Join(t.TempDir(), "ref.db"))
	if err != nil {
		t.Fatal(err)
	}
	defer refDB.Close()
	var refEvents announced
	if err := runJudge(t, refDB, crashFleet(t, vehicles, rounds, start), clock, 50*time.Millisecond, func(k string) { refEvents.add(k) }); err != nil {
		t.Fatal(err)
	}
	if refEvents.events["speed open"] != 1 || refEvents.events["speed closed"] != 1 {
		t.Fatalf("reference run announced %v, want one speed episode opened and closed", refEvents.events)
	}

	// The monitor killed right after its first event commit: no group commit happens before
	// (FlushEvery an hour), so the other vehicles' batches and snapshots are still held.
	path := filepath.Join(t.TempDir(), "monitor.db")
	db, err := store.Open(context.Background(), path)
	if err != nil {
		t.Fatal(err)
	}
	killed := &killableStore{DB: db}
	msgs := crashFleet(t, vehicles, rounds, start)
	var events announced
	err = runJudge(t, killed, msgs, clock, time.Hour, func(k string) {
		events.add(k)
		killed.dead.Store(true)
	})
	if !errors.Is(err, errKilled) {
		t.Fatalf("the killed judge returned %v, want its failed commit", err)
	}
	if !killed.dead.Load() {
		t.Fatal("no episode was announced before the kill")
	}
	for _, m := range msgs {
		if n := m.acks.Load(); n != 0 {
			t.Fatalf("%s seq %d acknowledged before its group's commit", m.vehicle, m.seq)
		}
	}
	db.Close()

	// Started again: the broker redelivers every unacknowledged message.
	db, err = store.Open(context.Background(), path)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	if err := runJudge(t, db, msgs, clock, 50*time.Millisecond, func(k string) { events.add(k) }); err != nil {
		t.Fatal(err)
	}
	for _, m := range msgs {
		if n := m.acks.Load(); n != 1 {
			t.Errorf("%s seq %d acknowledged %d times after the restart, want once", m.vehicle, m.seq, n)
		}
		logged, err := db.LoggedBatch(context.Background(), m.vehicle, "e1", m.seq)
		if err != nil {
			t.Errorf("%s seq %d not in the batch log: %v", m.vehicle, m.seq, err)
		} else if !bytes.Equal(logged, m.payload) {
			t.Errorf("%s seq %d logged with other bytes", m.vehicle, m.seq)
		}
	}
	if events.events["speed open"] != 1 || events.events["speed closed"] != 1 {
		t.Errorf("announced %v across the kill, want the episode opened once and closed once", events.events)
	}
	want := episodesOf(t, refDB)
	got := episodesOf(t, db)
	if len(got) != len(want) {
		t.Fatalf("%d episodes after the restart, want %d as without the kill:\n%v\n%v", len(got), len(want), got, want)
	}
	for i := range want {
		if got[i] != want[i] {
			t.Errorf("episode %d after the restart:\n%+v\nwithout the kill:\n%+v", i, got[i], want[i])
		}
	}
	for _, d := range []*store.DB{refDB, db} {
		snaps, err := d.VehicleSnapshots(context.Background())
		if err != nil {
			t.Fatal(err)
		}
		if len(snaps) != vehicles {
			t.Errorf("%d vehicle snapshots, want %d", len(snaps), vehicles)
		}
	}
}

// episodeFacts is what an episode states, without what depends on the time of receipt.
type episodeFacts struct {
	ID, Vehicle, Rule string
	Start, End        string
	Peak              float64
	Evidence          int
}

func episodesOf(t *testing.T, db *store.DB) []episodeFacts {
	t.Helper()
	eps, _, err := db.Episodes(context.Background(), store.EpisodeFilter{}, store.MaxLimit, "")
	if err != nil {
		t.Fatal(err)
	}
	var out []episodeFacts
	for _, e := range eps {
		f := episodeFacts{ID: e.ID, Vehicle: e.Vehicle, Rule: e.Rule, Start: e.Start.String(), Peak: e.Peak, Evidence: e.Evidence}
		if e.End != nil {
			f.End = e.End.String()
		}
		out = append(out, f)
	}
	return out
}
