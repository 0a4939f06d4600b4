package judge_test

import (
	"context"
	"crypto/ed25519"
	"crypto/rand"
	"fmt"
	"path/filepath"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/trenzinho/trenzinho/geofences"
	"github.com/trenzinho/trenzinho/monitor/drafts"
	"github.com/trenzinho/trenzinho/monitor/judge"
	"github.com/trenzinho/trenzinho/monitor/store"
	"github.com/trenzinho/trenzinho/profile"
	"github.com/trenzinho/trenzinho/rules"
	"github.com/trenzinho/trenzinho/wire"
)

// slowDraftStore is the monitor's SQLite store under a drafter that takes as long as the test
// wants: its first look for episodes to draft waits until release is closed (or the run ends),
// as a draft reading hours of evidence would.
type slowDraftStore struct {
	*store.DB
	entered chan struct{}
	release chan struct{}
}

func (s *slowDraftStore) UndraftedEpisodes(ctx context.Context, kinds []drafts.Kind) ([]drafts.Pending, error) {
	select {
	case <-s.entered:
	default:
		close(s.entered)
		select {
		case <-s.release:
		case <-ctx.Done():
			return nil, ctx.Err()
		}
	}
	return s.DB.UndraftedEpisodes(ctx, kinds)
}

// TestJudgingGoesOnWhileDrafting: while the drafter is making a draft, however long that takes,
// the judge goes on judging and committing every vehicle's batches. (With the drafter on the
// judging loop, none of the batches below was acknowledged until the draft was done.)
func TestJudgingGoesOnWhileDrafting(t *testing.T) {
	set, err := geofences.Sample()
	if err != nil {
		t.Fatal(err)
	}
	db, err := store.Open(context.Background(), filepath.Join(t.TempDir(), "m.db"))
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	slow := &slowDraftStore{DB: db, entered: make(chan struct{}), release: make(chan struct{})}
	defer close(slow.release)
	_, key, _ := ed25519.GenerateKey(rand.Reader)
	p := profile.Piuma()
	j := judge.New(judge.Config{
		Engine: rules.New(p, set), Store: db, Metrics: prometheus.NewRegistry(),
		FlushEvery: time.Hour, FlushBatches: 1, DraftEvery: time.Millisecond,
		Drafter: drafts.NewDrafter(drafts.Config{Store: slow, Profile: p, ProfileYAML: profile.PiumaYAML(), Key: key, Software: "test"}),
	})
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- j.Run(ctx) }()
	defer func() {
		cancel()
		if err := <-done; err != nil {
			t.Errorf("run: %v", err)
		}
	}()

	select { // the first housekeeping tick starts the drafter, which now takes its time
	case <-slow.entered:
	case <-time.After(30 * time.Second):
		t.Fatal("the drafter never ran")
	}
	const n = 20
	msgs := make([]*msg, n)
	now := time.Now().UTC()
	for i := range msgs {
		v := fmt.Sprintf("PIU-%03d", i%3+1)
		at := wire.NewTime(now.Add(time.Duration(i-n) * time.Second))
		kmh := 12.0
		payload, err := wire.Encode(&wire.Batch{V: wire.Version, Vehicle: v, Epoch: "e1", Seq: uint64(i + 1), SentAt: at, Clock: wire.ClockGPS,
			GPS: []wire.GPS{{T: at, Lat: -20.8367, Lon: -40.7292, SpeedKmh: &kmh, Fix: wire.Fix3D}}}, nil)
		if err != nil {
			t.Fatal(err)
		}
		msgs[i] = &msg{topic: wire.TelemetryTopic(v), payload: payload, acked: make(chan struct{})}
	}
	go func() { // as the broker's client does: Handle blocks while the loop is behind
		for _, m := range msgs {
			j.Handle(ctx, m)
		}
	}()
	deadline := time.After(30 * time.Second)
	for i, m := range msgs {
		select {
		case <-m.acked:
		case <-deadline:
			t.Fatalf("%d of %d batches judged and acknowledged while a draft was being made", i, n)
		}
	}
}
