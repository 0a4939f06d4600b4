package hostile

import (
	"fmt"
	"os"
	"path/filepath"
	"testing"
	"time"

	mqtt "github.com/eclipse/paho.mqtt.golang"

	"github.com/trenzinho/trenzinho/internal/testkit/testenv"
	"github.com/trenzinho/trenzinho/wire"
)

// fileSize is the size of the SQLite database with its WAL.
func fileSize(path string) int64 {
	var n int64
	for _, p := range []string{path, path + "-wal"} {
		if fi, err := os.Stat(p); err == nil {
			n += fi.Size()
		}
	}
	return n
}

// TestUnknownVehiclesBounded (defect 6): with a registry, 100,000 made-up vehicle ids, one valid
// batch each, and a status from 10,000 of them. Before, the monitor went from 21 MB to 406 MB
// RSS, SQLite to 100 MB, /api/v1/vehicles to 16.7 MB and /metrics to 200,000 series. Now each is
// rejected as unknown_vehicle and leaves nothing behind: RSS and the database grow by less than
// 5 MB (docs/benchmarks.md), the fleet and the metric series do not grow at all.
func TestUnknownVehiclesBounded(t *testing.T) {
	n, statuses := 100_000, 10_000
	if testing.Short() {
		n, statuses = 10_000, 1_000
	}
	bin := testenv.Build(t)
	broker := testenv.StartMosquitto(t, testenv.MosquittoOptions{})
	example, err := os.ReadFile(filepath.Join(testenv.RepoRoot(t), "registry", "testdata", "piuma-example.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	reg := filepath.Join(t.TempDir(), "registry.yaml")
	if err := os.WriteFile(reg, example, 0o600); err != nil {
		t.Fatal(err)
	}
	mon := startMonitor(t, bin, broker.URL(), "", "TRENZINHO_REGISTRY="+reg)
	pub := newPublisher(t, broker.URL(), "unknown")
	now := time.Now().UTC().Truncate(time.Second)
	pub.publish(t, wire.TelemetryTopic("PIU-001"), []byte(batchJSON("PIU-001", "e1", "1", now, now, 20)))
	testenv.WaitFor(t, "the registered vehicle judged", time.Minute, func() bool { return mon.vehicles(t)["PIU-001"] })
	const commits = "trenzinho_monitor_commit_seconds_count"
	testenv.WaitFor(t, "its batch committed", time.Minute, func() bool { return mon.metrics(t)[commits] >= 1 })
	before := mon.metrics(t)
	rss0, db0 := before["process_resident_memory_bytes"], fileSize(mon.DB)
	series0 := len(before)

	// Publish with a window of unacknowledged messages, as a busy fleet would.
	var toks []mqtt.Token
	flush := func() {
		for _, tok := range toks {
			if !tok.WaitTimeout(30*time.Second) || tok.Error() != nil {
				t.Fatalf("publish: %v", tok.Error())
			}
		}
		toks = toks[:0]
	}
	start := time.Now()
	for i := range n {
		v := fmt.Sprintf("FAKE-%06d", i)
		toks = append(toks, pub.c.Publish(wire.TelemetryTopic(v), 1, false, batchJSON(v, "e1", "1", now, now, 20)))
		if i < statuses {
			toks = append(toks, pub.c.Publish(wire.StatusTopic(v), 1, false,
				`{"online":true,"version":"9.9","devices":{"gps":"ok"},"spool_depth":3}`))
		}
		if len(toks) >= 500 {
			flush()
		}
	}
	flush()
	testenv.WaitFor(t, "every unknown message rejected", 5*time.Minute, func() bool {
		return int(mon.metrics(t)[`trenzinho_monitor_rejected_total{reason="unknown_vehicle"}`]) == n+statuses
	})
	elapsed := time.Since(start)
	// One more batch of the registered vehicle, after all the others: once it is judged and a
	// commit has followed the first one (the rejected messages commit nothing), whatever the
	// unknown vehicles left behind is in the database.
	later := now.Add(time.Second)
	pub.publish(t, wire.TelemetryTopic("PIU-001"), []byte(batchJSON("PIU-001", "e1", "2", later, later, 20)))
	testenv.WaitFor(t, "the registered vehicle's second batch judged and committed", time.Minute, func() bool {
		m := mon.metrics(t)
		return m[`trenzinho_monitor_batches_total{outcome="judged"}`] >= 2 && m[commits] > before[commits]
	})
	after := mon.metrics(t)
	rss1, db1 := after["process_resident_memory_bytes"], fileSize(mon.DB)
	t.Logf("%d unknown vehicles (+%d statuses) in %s: RSS %.1f → %.1f MB (%+.1f), database %.2f → %.2f MB (%+.2f), metric series %d → %d",
		n, statuses, elapsed.Round(time.Second), rss0/1e6, rss1/1e6, (rss1-rss0)/1e6, float64(db0)/1e6, float64(db1)/1e6,
		float64(db1-db0)/1e6, series0, len(after))
	if d := rss1 - rss0; d > 5e6 {
		t.Errorf("RSS grew by %.1f MB, want < 5 MB", d/1e6)
	}
	if d := db1 - db0; d > 5e6 {
		t.Errorf("the database grew by %.2f MB, want < 5 MB", float64(d)/1e6)
	}
	if fleet := mon.vehicles(t); len(fleet) != 1 {
		t.Errorf("the fleet lists %d vehicles, want the registered one", len(fleet))
	}
	for k := range after {
		if _, ok := before[k]; !ok && series(map[string]float64{k: 0}, "trenzinho_monitor_vehicle") > 0 {
			t.Errorf("new per-vehicle series %s", k)
		}
	}
}
