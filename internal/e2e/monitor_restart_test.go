package e2e

import (
	"path/filepath"
	"testing"
	"time"

	"github.com/trenzinho/trenzinho/internal/testkit/testenv"
	"github.com/trenzinho/trenzinho/rules"
)

// TestMonitorKilledMidEpisode: the monitor is killed with SIGKILL while a speed episode is open
// and started again on the same database. The broker redelivers what the monitor had not
// acknowledged, the restored engine recognises what it had judged: exactly one episode, opened
// once, closed with the right start and duration.
func TestMonitorKilledMidEpisode(t *testing.T) {
	bin := testenv.Build(t)
	broker := testenv.StartMosquitto(t, testenv.MosquittoOptions{})
	dbDir := t.TempDir()
	mon := startMonitorAt(t, bin, broker.URL(), filepath.Join(dbDir, "monitor.db"))

	start := "2026-11-27T15:00:00Z"
	sim := startSimulation(t, bin, "--vehicles=1", "--prefix=KILL", "--scenario=20:10,45:40,20:30", "--duration=80s", "--speed-up=2", "--start="+start)
	// A subscriber of its own sees what the broker receives, and so queues for the monitor's
	// session while the monitor is down.
	sink := subscribe(t, broker.URL(), "e2e-KILL-001", false, "KILL-001")
	startBridge(t, bin, broker.URL(), "KILL-001", sim.devices["KILL-001"])

	// Wait for the episode to open, then kill the monitor.
	deadline := time.Now().Add(2 * time.Minute)
	for time.Now().Before(deadline) && len(mon.client.episodes(t, "vehicle=KILL-001&rule=speed&open=true")) == 0 {
		time.Sleep(200 * time.Millisecond)
	}
	if len(mon.client.episodes(t, "vehicle=KILL-001&rule=speed&open=true")) != 1 {
		t.Fatal("the speed episode did not open")
	}
	mon.Kill()
	// Batches keep arriving at the broker for the monitor's session: three of them.
	killedAt := sink.maxSeq()
	testenv.WaitFor(t, "three batches while the monitor is down", time.Minute, func() bool { return sink.maxSeq() >= killedAt+3 })
	if err := mon.Start(); err != nil {
		t.Fatal(err)
	}
	mon.login(t)

	var got []rules.Episode
	deadline = time.Now().Add(3 * time.Minute)
	for time.Now().Before(deadline) {
		got = mon.client.episodes(t, "vehicle=KILL-001&rule=speed")
		if len(got) == 1 && got[0].End != nil {
			break
		}
		time.Sleep(time.Second)
	}
	if len(got) != 1 || got[0].End == nil {
		t.Fatalf("%d speed episodes after the restart (want 1, closed): %+v", len(got), got)
	}
	ep := got[0]
	wantStart, _ := time.Parse(time.RFC3339, "2026-11-27T15:00:10Z")
	if d := ep.Start.Sub(wantStart); d < -time.Second || d > time.Second || ep.DurationS < 39 || ep.DurationS > 41 || *ep.Closed != rules.ClosedCleared {
		t.Errorf("episode from %v for %v s (%s); want from %v for 40 s, cleared", ep.Start, ep.DurationS, *ep.Closed, wantStart)
	}
	var detail rules.Episode
	mon.client.get(t, "/api/v1/episodes/"+ep.ID, &detail)
	// One tachograph reading a second over the limit, none twice (redelivery adds nothing).
	seen := map[string]bool{}
	over := 0
	for _, r := range detail.Readings {
		k := r.Kind + r.T.String()
		if seen[k] {
			t.Errorf("evidence reading %s twice", k)
		}
		seen[k] = true
		if r.Kind == "tacho" && r.Value > 37 {
			over++
		}
	}
	if over < 39 || over > 41 {
		t.Errorf("%d tachograph readings over the limit in the evidence, want 40", over)
	}
}
