package hostile

import (
	"fmt"
	"testing"
	"time"

	"github.com/trenzinho/trenzinho/internal/testkit/testenv"
	"github.com/trenzinho/trenzinho/rules"
	"github.com/trenzinho/trenzinho/wire"
)

// TestConflictingReplay (defect 8): the same (vehicle, epoch, seq) with speed 10, then 99.
// Before, the monitor kept 10 and InfluxDB 99, silently. Now both keep the first and quarantine
// the second as conflict, and the monitor opens a telemetry_conflict episode; after a monitor
// restart (its replay cache empty) a third version is still caught, from its batch log.
func TestConflictingReplay(t *testing.T) {
	bin := testenv.Build(t)
	broker := testenv.StartMosquitto(t, testenv.MosquittoOptions{})
	influx := testenv.StartInflux(t)
	sink := subscribeQuarantine(t, broker.URL())
	in := startIngest(t, bin, broker.URL(), influx)
	mon := startMonitor(t, bin, broker.URL(), "")
	pub := newPublisher(t, broker.URL(), "conflict")
	const v = "TAMPER-001"
	now := time.Now().UTC().Truncate(time.Second)
	first := batchJSON(v, "e1", "7", now, now, 10)
	pub.publish(t, wire.TelemetryTopic(v), []byte(first))
	pub.publish(t, wire.TelemetryTopic(v), []byte(first)) // a plain redelivery: no conflict
	pub.publish(t, wire.TelemetryTopic(v), []byte(batchJSON(v, "e1", "7", now, now, 99)))

	testenv.WaitFor(t, "ingest's conflict record", time.Minute, func() bool { return len(sink.records(wire.TelemetryTopic(v))) >= 1 })
	testenv.WaitFor(t, "the monitor's conflict", time.Minute, func() bool {
		return mon.metrics(t)[`trenzinho_monitor_quarantined_total{reason="conflict"}`] == 1
	})
	recs := sink.records(wire.TelemetryTopic(v))
	if len(recs) != 1 || recs[0].Reason != wire.ReasonConflict {
		t.Errorf("ingest quarantine records %+v, want one conflict", recs)
	}
	s := influx.Query(t, fmt.Sprintf(`SELECT "speed_kmh" FROM "gps" WHERE "vehicle"='%s'`, v))
	if len(s) != 1 || len(s[0].Values) != 1 || s[0].Values[0][1] != 10.0 {
		t.Errorf("InfluxDB holds %+v, want the first batch's speed 10 only", s)
	}
	if q := testenv.Scrape(t, in.metricsURL); q[`trenzinho_ingest_quarantined_total{reason="conflict"}`] != 1 {
		t.Errorf("ingest quarantined_total{conflict} = %v", q[`trenzinho_ingest_quarantined_total{reason="conflict"}`])
	}
	var eps struct{ Items []rules.Episode }
	mon.get(t, "/api/v1/episodes?vehicle="+v+"&rule=telemetry_conflict", &eps)
	if len(eps.Items) != 1 || eps.Items[0].End != nil || eps.Items[0].Peak != 1 {
		t.Errorf("telemetry_conflict episodes %+v, want one open, one batch", eps.Items)
	}
	if n := countRows(t, mon.DB, `SELECT count(*) FROM quarantine WHERE reason = 'conflict' AND vehicle = ?`, v); n != 1 {
		t.Errorf("%d conflict records in the monitor's quarantine, want 1", n)
	}
	if n := countRows(t, mon.DB, `SELECT count(*) FROM batch_log WHERE vehicle = ? AND instr(payload, '"speed_kmh":10') > 0`, v); n != 1 {
		t.Errorf("the batch log does not hold the first batch")
	}

	// A restart empties the replay cache: the batch log still tells a third version apart.
	mon.Stop()
	mon = startMonitor(t, bin, broker.URL(), mon.DB)
	pub.publish(t, wire.TelemetryTopic(v), []byte(batchJSON(v, "e1", "7", now, now, 55)))
	testenv.WaitFor(t, "the conflict after the restart", time.Minute, func() bool {
		return countRows(t, mon.DB, `SELECT count(*) FROM quarantine WHERE reason = 'conflict' AND vehicle = ?`, v) == 2
	})
	// The episode counts the conflict when the judge next commits, a moment after the
	// quarantine record.
	for deadline := time.Now().Add(30 * time.Second); ; time.Sleep(100 * time.Millisecond) {
		mon.get(t, "/api/v1/episodes?vehicle="+v+"&rule=telemetry_conflict", &eps)
		if len(eps.Items) != 1 || eps.Items[0].Peak >= 2 || time.Now().After(deadline) {
			break
		}
	}
	if len(eps.Items) != 1 || eps.Items[0].Peak != 2 {
		t.Errorf("telemetry_conflict episodes %+v, want one, two batches", eps.Items)
	}
}
