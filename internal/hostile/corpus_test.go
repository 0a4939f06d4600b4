// Package hostile replays, against the real programs (Mosquitto, InfluxDB, ingest and the
// monitor as built), what a licensee who controls the bridge, its key and its clock can send.
// Each test names the defect it reproduces.
package hostile

import (
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/trenzinho/trenzinho/internal/testkit/testenv"
	"github.com/trenzinho/trenzinho/wire"
)

// corpusCase is one payload of the shared corpus; want is what wire says of it ("" = valid).
type corpusCase struct {
	name    string
	vehicle string // the topic's vehicle (unique per case, so that outcomes can be told apart)
	topic   string // empty: the vehicle's telemetry topic
	payload string
	want    wire.Reason
}

// at formats a wire time.
func at(t time.Time) string { return wire.NewTime(t).String() }

// batchJSON is a valid batch of vehicle with one GPS and one tacho reading at t, sent at sent.
func batchJSON(vehicle, epoch string, seq string, sent, t time.Time, kmh float64) string {
	return fmt.Sprintf(`{"v":1,"vehicle":%q,"epoch":%q,"seq":%s,"sent_at":%q,"clock":"gps",`+
		`"gps":[{"t":%q,"lat":-20.8367,"lon":-40.7292,"speed_kmh":%g,"hdop":0.9,"sats":9,"fix":"3d"}],`+
		`"tacho":[{"t":%q,"speed_kmh":%g}]}`, vehicle, epoch, seq, at(sent), at(t), kmh, at(t), kmh)
}

// corpus is built relative to now: receipt times are the programs' clocks.
func corpus(now time.Time) []corpusCase {
	var cs []corpusCase
	add := func(name string, want wire.Reason, payload func(v string) string) {
		v := fmt.Sprintf("CORPUS-%02d", len(cs))
		cs = append(cs, corpusCase{name: name, vehicle: v, payload: payload(v), want: want})
	}
	same := func(d time.Duration, seq string) func(string) string {
		return func(v string) string { return batchJSON(v, "e1", seq, now.Add(d), now.Add(d), 20) }
	}
	add("valid, now", "", same(0, "1"))
	add("seq 2^63-1", "", same(0, "9223372036854775807"))
	add("seq 2^63 (defect 1)", wire.ReasonBadSeq, same(0, "9223372036854775808"))
	add("seq 2^64-1 (defect 1)", wire.ReasonBadSeq, same(0, "18446744073709551615"))
	add("9 min ahead", "", same(9*time.Minute, "1"))
	add("11 min ahead", wire.ReasonFutureTime, same(11*time.Minute, "1"))
	add("23 h ahead (defect 2)", wire.ReasonFutureTime, same(23*time.Hour, "1"))
	add("29 days old", "", same(-29*24*time.Hour, "1"))
	add("31 days old", wire.ReasonPastTime, same(-31*24*time.Hour, "1"))
	add("1970 (defect 7)", wire.ReasonBadTime, func(v string) string {
		return batchJSON(v, "e1", "1", time.Unix(0, 0), time.Unix(0, 0), 20)
	})
	add("reading in 1600 (defect 7)", wire.ReasonBadTime, func(v string) string {
		return batchJSON(v, "e1", "1", now, time.Date(1600, 1, 1, 0, 0, 0, 0, time.UTC), 20)
	})
	add("reading in 2150", wire.ReasonBadTime, func(v string) string {
		return batchJSON(v, "e1", "1", now, time.Date(2150, 1, 1, 0, 0, 0, 0, time.UTC), 20)
	})
	add("speed 300", wire.ReasonBadSpeed, func(v string) string { return batchJSON(v, "e1", "1", now, now, 300) })
	add("not JSON", wire.ReasonBadJSON, func(string) string { return `{"v":1,` })
	add("seq 0", wire.ReasonMissingSeq, same(0, "0"))
	// Defect 10: a vehicle named _quarantine, and the old quarantine topic re-read as telemetry.
	add("vehicle _quarantine", wire.ReasonBadTopic, func(string) string { return batchJSON("_quarantine", "e1", "1", now, now, 20) })
	cs[len(cs)-1].topic = "trenzinho/v1/_quarantine/telemetry"
	return cs
}

// TestCorpusAgreement (defects 1, 7, 10): ingest and the monitor, both running, take the same
// corpus of valid and invalid payloads; every payload must be accepted by both or refused by
// both, as package wire says.
func TestCorpusAgreement(t *testing.T) {
	bin := testenv.Build(t)
	broker := testenv.StartMosquitto(t, testenv.MosquittoOptions{})
	influx := testenv.StartInflux(t)
	sink := subscribeQuarantine(t, broker.URL())
	in := startIngest(t, bin, broker.URL(), influx)
	mon := startMonitor(t, bin, broker.URL(), "")

	now := time.Now().UTC()
	cs := corpus(now)
	pub := newPublisher(t, broker.URL(), "corpus")
	for _, c := range cs {
		topic := c.topic
		if topic == "" {
			topic = wire.TelemetryTopic(c.vehicle)
		}
		pub.publish(t, topic, []byte(c.payload))
	}
	// A last valid batch: both programs take one client's messages in order, so once it is
	// judged and stored every payload before it was handled.
	pub.publish(t, wire.TelemetryTopic("CORPUS-END"), []byte(batchJSON("CORPUS-END", "e1", "1", now, now, 20)))
	// A judged batch is in the monitor's batch log (a refused one may still show its vehicle:
	// a future_time batch gives it a clock_fault).
	judged := func(v string) bool {
		return countRows(t, mon.DB, `SELECT count(*) FROM batch_log WHERE vehicle = ?`, v) > 0
	}
	testenv.WaitFor(t, "the monitor to judge the last batch", 60*time.Second, func() bool { return judged("CORPUS-END") })
	testenv.WaitFor(t, "ingest to store the last batch", 60*time.Second, func() bool {
		return influx.Count(t, "batch", "seq", `"vehicle"='CORPUS-END'`) == 1
	})
	invalid := 0
	for _, c := range cs {
		if c.want != "" {
			invalid++
		}
	}
	testenv.WaitFor(t, "every quarantine record", 30*time.Second, func() bool { return sink.count() >= invalid })

	for _, c := range cs {
		topic := c.topic
		if topic == "" {
			topic = wire.TelemetryTopic(c.vehicle)
		}
		monitorTook := judged(c.vehicle) || (c.topic != "" && judged(strings.Split(c.topic, "/")[2]))
		stored := influx.Count(t, "batch", "seq", fmt.Sprintf(`"vehicle"='%s'`, c.vehicle)) > 0
		recs := sink.records(topic)
		ingestTook := stored && len(recs) == 0
		if monitorTook != ingestTook {
			t.Errorf("%s: the programs disagree: monitor judged %v, ingest stored %v (quarantine %+v)", c.name, monitorTook, ingestTook, recs)
		}
		if wantOK := c.want == ""; ingestTook != wantOK {
			t.Errorf("%s: ingest took it %v, wire says %q", c.name, ingestTook, c.want)
		}
		if c.want != "" && (len(recs) != 1 || recs[0].Reason != c.want) {
			t.Errorf("%s: quarantine records %+v, want one with reason %s", c.name, recs, c.want)
		}
	}
	// The monitor counts what it refused by the same reasons.
	m := mon.metrics(t)
	want := map[wire.Reason]int{}
	for _, c := range cs {
		if c.want != "" {
			want[c.want]++
		}
	}
	for r, n := range want {
		if got := m[fmt.Sprintf(`trenzinho_monitor_rejected_total{reason=%q}`, r)]; int(got) != n {
			t.Errorf("monitor rejected_total{reason=%s} = %v, want %d", r, got, n)
		}
	}
	if q := testenv.Scrape(t, in.metricsURL); int(q[`trenzinho_ingest_quarantined_total{reason="bad_seq"}`]) != want[wire.ReasonBadSeq] {
		t.Errorf("ingest quarantined_total{reason=bad_seq} = %v, want %d", q[`trenzinho_ingest_quarantined_total{reason="bad_seq"}`], want[wire.ReasonBadSeq])
	}
}
