package judge_test

import (
	"context"
	"fmt"
	"sync"
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

// refusingStore refuses every batch for good (as a database constraint does), takes the
// engine's changes alone, and at that moment lets stop happen: the monitor's SIGTERM arriving
// between the two steps of a refused commit. Like SQLite, it fails a call whose context has
// ended.
type refusingStore struct {
	memStore
	stop        func()
	mu          sync.Mutex
	quarantined []string
}

func (s *refusingStore) Commit(ctx context.Context, c *rules.Changes, bs []store.Batch) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	if len(bs) > 0 {
		return fmt.Errorf("batch %s: %w", bs[0].Vehicle, store.ErrRefused)
	}
	s.stop()
	return nil
}

func (s *refusingStore) Quarantine(ctx context.Context, q store.Quarantined) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	s.quarantined = append(s.quarantined, q.Vehicle)
	return nil
}

// TestRefusedBatchesRecordedWhileStopping: once the engine's changes of a refused commit are
// stored (its cursors past the batches), every batch gets its quarantine record even though
// the monitor is stopping; otherwise the broker's redelivery after a restart would be taken for
// batches already judged and acknowledged with no record at all.
func TestRefusedBatchesRecordedWhileStopping(t *testing.T) {
	set, err := geofences.Sample()
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	st := &refusingStore{stop: cancel}
	now := time.Now().UTC().Truncate(time.Second)
	j := judge.New(judge.Config{
		Engine: rules.New(profile.Piuma(), set), Store: st, Metrics: prometheus.NewRegistry(),
		FlushEvery: time.Hour, FlushBatches: 3, Now: func() time.Time { return now },
	})
	msgs := make([]*msg, 3)
	for i := range msgs {
		v := fmt.Sprintf("POISON-%d", i)
		at := wire.NewTime(now.Add(-time.Minute))
		p, err := wire.Encode(&wire.Batch{V: wire.Version, Vehicle: v, Epoch: "e1", Seq: 1, SentAt: at, Clock: wire.ClockGPS,
			GPS: []wire.GPS{{T: at, Lat: -20.8367, Lon: -40.7292, Fix: wire.Fix3D}}}, nil)
		if err != nil {
			t.Fatal(err)
		}
		msgs[i] = &msg{topic: wire.TelemetryTopic(v), payload: p, acked: make(chan struct{})}
		j.Handle(ctx, msgs[i])
	}
	done := make(chan error, 1)
	go func() { done <- j.Run(ctx) }()
	select {
	case <-done:
	case <-time.After(30 * time.Second):
		t.Fatal("the judge did not stop")
	}
	st.mu.Lock()
	defer st.mu.Unlock()
	if len(st.quarantined) != len(msgs) {
		t.Errorf("quarantined %v while stopping, want all %d refused batches", st.quarantined, len(msgs))
	}
}
