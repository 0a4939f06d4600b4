package hostile

import (
	"context"
	"database/sql"
	"fmt"
	"path/filepath"
	"sync/atomic"
	"testing"
	"time"

	_ "modernc.org/sqlite"

	"github.com/trenzinho/trenzinho/internal/testkit/testenv"
	"github.com/trenzinho/trenzinho/monitor/store"
	"github.com/trenzinho/trenzinho/wire"
)

// poisonDB makes a monitor database whose batch log refuses the batches of every vehicle named
// POISON-…: a real SQLite constraint (a trigger's RAISE(ABORT)), the kind of permanent refusal a
// batch the store cannot hold meets (defect 1 was a seq ≥ 2^63; wire refuses that now).
func poisonDB(t *testing.T) string {
	t.Helper()
	path := filepath.Join(t.TempDir(), "monitor.db")
	db, err := store.Open(context.Background(), path)
	if err != nil {
		t.Fatal(err)
	}
	db.Close()
	raw, err := sql.Open("sqlite", path)
	if err != nil {
		t.Fatal(err)
	}
	defer raw.Close()
	if _, err := raw.Exec(`CREATE TRIGGER poison BEFORE INSERT ON batch_log WHEN NEW.vehicle LIKE 'POISON-%'
BEGIN SELECT RAISE(ABORT, 'poisoned batch'); END`); err != nil {
		t.Fatal(err)
	}
	return path
}

func countRows(t *testing.T, path, q string, args ...any) int {
	t.Helper()
	raw, err := sql.Open("sqlite", path+"?mode=ro")
	if err != nil {
		t.Fatal(err)
	}
	defer raw.Close()
	var n int
	if err := raw.QueryRow(q, args...).Scan(&n); err != nil {
		t.Fatal(err)
	}
	return n
}

// TestPoisonChaos (defect 1, "a batch that cannot be stored"): batches the database refuses,
// interleaved with 10,000 good ones: every good one is judged and logged, /healthz stays green
// throughout, every poisoned one is quarantined (with its error, counted). Then SIGTERM with
// poison in flight ends the monitor within 5 s, and after a restart the redelivered poison is
// quarantined again instead of hanging the monitor.
func TestPoisonChaos(t *testing.T) {
	good, vehicles, poisonEvery := 10_000, 50, 500
	if testing.Short() {
		good, poisonEvery = 2_000, 100
	}
	bin := testenv.Build(t)
	broker := testenv.StartMosquitto(t, testenv.MosquittoOptions{})
	db := poisonDB(t)
	mon := startMonitor(t, bin, broker.URL(), db)

	var unhealthy, probes atomic.Int64
	stop := make(chan struct{})
	probed := make(chan struct{})
	go func() {
		defer close(probed)
		for {
			select {
			case <-stop:
				return
			case <-time.After(100 * time.Millisecond):
			}
			probes.Add(1)
			if !mon.healthy() {
				unhealthy.Add(1)
			}
		}
	}()

	pub := newPublisher(t, broker.URL(), "chaos")
	now := time.Now().UTC()
	perVehicle := good / vehicles
	poison := 0
	for i := range good {
		v, seq := fmt.Sprintf("GOOD-%02d", i%vehicles), i/vehicles+1
		ts := now.Add(-time.Duration(perVehicle-seq) * time.Second)
		pub.publish(t, wire.TelemetryTopic(v), []byte(batchJSON(v, "e1", fmt.Sprint(seq), ts, ts, 20)))
		if i%poisonEvery == poisonEvery/2 {
			p := fmt.Sprintf("POISON-%03d", poison)
			poison++
			pub.publish(t, wire.TelemetryTopic(p), []byte(batchJSON(p, "e1", "1", now, now, 20)))
		}
	}
	testenv.WaitFor(t, "every good batch logged", 5*time.Minute, func() bool {
		return countRows(t, db, `SELECT count(*) FROM batch_log WHERE vehicle LIKE 'GOOD-%'`) == good
	})
	testenv.WaitFor(t, "every poisoned batch quarantined", time.Minute, func() bool {
		return int(mon.metrics(t)[`trenzinho_monitor_quarantined_total{reason="unstorable"}`]) == poison
	})
	close(stop)
	<-probed
	if n := unhealthy.Load(); n > 0 {
		t.Errorf("/healthz failed %d of %d probes", n, probes.Load())
	}
	if n := countRows(t, db, `SELECT count(*) FROM quarantine WHERE reason = 'unstorable' AND detail LIKE '%poisoned batch%'`); n != poison {
		t.Errorf("%d quarantine records with the error, want %d", n, poison)
	}
	if n := countRows(t, db, `SELECT count(*) FROM batch_log WHERE vehicle LIKE 'POISON-%'`); n != 0 {
		t.Errorf("%d poisoned batches logged", n)
	}
	if !mon.Running() {
		t.Fatalf("the monitor exited:\n%s", mon.Log())
	}

	// SIGTERM with poison in flight.
	for i := range 20 {
		p := fmt.Sprintf("POISON-LATE-%02d", i)
		pub.publish(t, wire.TelemetryTopic(p), []byte(batchJSON(p, "e1", "1", now, now, 20)))
	}
	start := time.Now()
	mon.Stop()
	if d := time.Since(start); d > 5*time.Second {
		t.Errorf("SIGTERM with poison in flight took %s to end the monitor, want < 5s", d)
	}

	// A restart on the same database and session: whatever was redelivered is judged or
	// quarantined, and the monitor serves.
	again := startMonitor(t, bin, broker.URL(), db)
	testenv.WaitFor(t, "the late poison quarantined", time.Minute, func() bool {
		return countRows(t, db, `SELECT count(*) FROM quarantine WHERE vehicle LIKE 'POISON-LATE-%'`) >= 20
	})
	if !again.healthy() {
		t.Errorf("/healthz not green after the restart")
	}
}
