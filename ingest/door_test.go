package main

import (
	"testing"
	"time"

	"github.com/trenzinho/trenzinho/wire"
)

// The service switch and the passenger door travel through Mosquitto and ingest into their own
// measurements of InfluxDB: one point per change, with its state and clock.
func TestServiceAndDoorStored(t *testing.T) {
	broker, db := setup(t)
	inProcess(t, ingestSettings{mqttURL: broker.URL(), influxURL: db.URL(), clientID: "ingest-door"})
	t0 := time.Now().Add(-time.Hour).Truncate(time.Second)
	at := func(s float64) wire.Time { return wire.NewTime(t0.Add(time.Duration(s * float64(time.Second)))) }
	b := &wire.Batch{V: wire.Version, Vehicle: "PIU-001", Epoch: "e-door", Seq: 1, SentAt: at(10), Clock: wire.ClockGPS,
		Service: []wire.Service{{T: at(0), On: true}},
		Door:    []wire.Door{{T: at(2), Open: true}, {T: at(6.5), Open: false}, {T: at(8), Open: true}},
	}
	p, err := wire.Encode(b, nil)
	if err != nil {
		t.Fatal(err)
	}
	newPublisher(t, broker.URL(), "pub-door").publish(t, []message{{wire.TelemetryTopic("PIU-001"), p}})
	waitBatches(t, db, 1, time.Minute)
	series := db.Query(t, `SELECT "open", "clock" FROM "door" WHERE "vehicle" = 'PIU-001'`)
	if len(series) != 1 || len(series[0].Values) != 3 {
		t.Fatalf("door points: %+v", series)
	}
	for i, want := range []bool{true, false, true} {
		if row := series[0].Values[i]; row[1] != want || row[2] != "gps" {
			t.Errorf("door point %d: %v, want open=%v clock=gps", i, row, want)
		}
	}
	if n := db.Count(t, "service", "on", ""); n != 1 {
		t.Errorf("%d service points, want 1", n)
	}
	if s := db.Query(t, `SELECT "n_door", "n_service" FROM "batch"`); len(s) != 1 || len(s[0].Values) != 1 ||
		s[0].Values[0][1] != float64(3) || s[0].Values[0][2] != float64(1) {
		t.Errorf("batch counts: %+v", s)
	}
}
