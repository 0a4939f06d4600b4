package main

import (
	"testing"
	"time"

	"github.com/trenzinho/trenzinho/wire"
)

// The warnings of the driver's coach travel through Mosquitto and ingest into the warning
// measurement of InfluxDB, tagged by vehicle, kind, rule and site, exactly once: the same batch
// sent again by the bridge (a replay after a lost PUBACK) adds no point.
func TestWarningsStored(t *testing.T) {
	broker, db := setup(t)
	inProcess(t, ingestSettings{mqttURL: broker.URL(), influxURL: db.URL(), clientID: "ingest-warning"})
	t0 := time.Now().Add(-time.Hour).Truncate(time.Second)
	at := func(s float64) wire.Time { return wire.NewTime(t0.Add(time.Duration(s * float64(time.Second)))) }
	f := func(v float64) *float64 { return &v }
	first := &wire.Batch{V: wire.Version, Vehicle: "PIU-001", Epoch: "e-warn", Seq: 1, SentAt: at(10), Clock: wire.ClockGPS,
		Sound: []wire.Sound{{T: at(1), LAeqDB: f(74.2)}},
		Warnings: []wire.Warning{
			{T: at(1.5), Kind: wire.WarningSiteSound, Rule: "sensitive_zone_sound", Site: "Hospital São José, ala=1", DistanceM: f(290), Value: f(74.2), Limit: f(65)},
			{T: at(1.5), Kind: wire.WarningSpeedNear, Rule: "speed", Value: f(28), Limit: f(30)},
		},
	}
	second := &wire.Batch{V: wire.Version, Vehicle: "PIU-001", Epoch: "e-warn", Seq: 2, SentAt: at(12), Clock: wire.ClockGPS,
		Warnings: []wire.Warning{{T: at(11), Kind: wire.WarningHoursEnd, Rule: "hours", Value: f(5)}},
	}
	// The sentinel comes after the replay: once it is stored, the replay was handled.
	sentinel := &wire.Batch{V: wire.Version, Vehicle: "PIU-001", Epoch: "e-warn", Seq: 3, SentAt: at(14), Clock: wire.ClockGPS,
		Sound: []wire.Sound{{T: at(13), LAeqDB: f(60)}}}
	var msgs []message
	for _, b := range []*wire.Batch{first, second, first, sentinel} {
		p, err := wire.Encode(b, nil)
		if err != nil {
			t.Fatal(err)
		}
		msgs = append(msgs, message{wire.TelemetryTopic("PIU-001"), p})
	}
	newPublisher(t, broker.URL(), "pub-warning").publish(t, msgs)
	waitBatches(t, db, 3, time.Minute)
	eventually(t, 30*time.Second, "the sentinel stored", func() bool { return db.Count(t, "sound", "laeq_db", "") == 2 })

	series := db.Query(t, `SELECT "distance_m", "value", "limit", "clock" FROM "warning" WHERE "vehicle" = 'PIU-001' GROUP BY "kind", "rule", "site"`)
	if len(series) != 3 {
		t.Fatalf("warning series: %+v", series)
	}
	byKind := map[string][]any{}
	for _, s := range series {
		if len(s.Values) != 1 {
			t.Fatalf("series %v: %d points, want 1 (stored once)", s.Tags, len(s.Values))
		}
		byKind[s.Tags["kind"]] = append([]any{s.Tags["rule"], s.Tags["site"]}, s.Values[0][1:]...)
	}
	if got := byKind["site_sound"]; len(got) != 6 || got[0] != "sensitive_zone_sound" || got[1] != "Hospital São José, ala=1" ||
		got[2] != float64(290) || got[3] != 74.2 || got[4] != float64(65) || got[5] != "gps" {
		t.Errorf("site warning: %v", got)
	}
	if got := byKind["speed_near"]; len(got) != 6 || got[0] != "speed" || got[1] != "" || got[2] != nil || got[3] != float64(28) {
		t.Errorf("speed warning: %v", got)
	}
	if got := byKind["hours_end"]; len(got) != 6 || got[0] != "hours" || got[3] != float64(5) {
		t.Errorf("hours warning: %v", got)
	}
	if n := db.Count(t, "batch", "seq", ""); n != 3 {
		t.Errorf("%d batch points, want 3", n)
	}
	if s := db.Query(t, `SELECT "n_warning", "n_sound" FROM "batch" WHERE "seq" = 1`); len(s) != 1 || len(s[0].Values) != 1 ||
		s[0].Values[0][1] != float64(2) || s[0].Values[0][2] != float64(1) {
		t.Errorf("batch counts: %+v", s)
	}
}
