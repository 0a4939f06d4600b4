package main

import (
	"bytes"
	"context"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/trenzinho/trenzinho/internal/testkit/testenv"
)

// TestSmallFleet runs the tool against the real Mosquitto and the built monitor with a small
// fleet and checks the counts: every batch judged, every scheduled speed episode announced,
// nothing else. Times are not asserted.
func TestSmallFleet(t *testing.T) {
	broker := testenv.StartMosquitto(t, testenv.MosquittoOptions{})
	bin := testenv.Build(t)
	o := options{
		mqttURL: broker.URL(), monitorBin: filepath.Join(bin, "monitor"),
		vehicles: 12, speeders: 4, duration: 16 * time.Second, warmup: 2 * time.Second,
		period: 30 * time.Second, fast: 12 * time.Second, drain: 15 * time.Second, publishers: 2,
	}
	if err := o.check(); err != nil {
		t.Fatal(err)
	}
	var progress bytes.Buffer
	r, err := loadTest(context.Background(), o, &progress)
	if err != nil {
		t.Fatalf("%v\n%s", err, progress.String())
	}
	t.Logf("\n%s", r)
	// Speeders 0–3 first reach 45 km/h at batches 2, 2, 3 and 4 of 16: one episode each,
	// confirmed at batches 12, 12, 13 and 14.
	if r.Expected != 4 || r.Received != 4 {
		t.Errorf("%d speed episodes scheduled, %d announced; want 4 and 4", r.Expected, r.Received)
	}
	if len(r.Unexpected) != 0 {
		t.Errorf("unexpected episodes: %v", r.Unexpected)
	}
	if want := int64(12 * 16); r.Published != want || r.Judged != want || r.PublishErrors != 0 || r.Rejected != 0 || r.Duplicates != 0 {
		t.Errorf("published %d (%d errors), judged %d, rejected %d, duplicates %d; want %d of each and no errors",
			r.Published, r.PublishErrors, r.Judged, r.Rejected, r.Duplicates, want)
	}
	if len(r.Latencies) != r.Received || r.MonitorRSS <= 0 {
		t.Errorf("report %+v", r)
	}
}

// TestScheduleConfirmingBatch checks the schedule against the profile's confirmation: the
// confirming batch is the tenth after the first above the limit, and the episode's start is the
// device time of that first batch.
func TestScheduleConfirmingBatch(t *testing.T) {
	o := options{vehicles: 100, speeders: 10, duration: 120 * time.Second, warmup: 15 * time.Second,
		period: 60 * time.Second, fast: 20 * time.Second, publishers: 1, root: "."}
	start := time.Date(2026, 11, 27, 15, 0, 0, 0, time.UTC) // noon in Piúma
	s := newSchedule(o, start)
	if s.shift != 0 {
		t.Errorf("shift %v at noon", s.shift)
	}
	// First speeding at 15, 21, …, 69 s, then every 60 s while the confirming batch (10 s
	// later) falls within the 120 s: speeders 0–5 twice, 6–9 once.
	if len(s.episodes) != 16 {
		t.Fatalf("%d episodes scheduled, want 16", len(s.episodes))
	}
	for _, ex := range s.episodes {
		if ex.confirm != ex.firstFast+confirmS || s.speedAt(ex.vehicle, ex.firstFast-1) > 37 {
			t.Errorf("%+v", ex)
		}
		for k := ex.firstFast; k <= ex.confirm; k++ {
			if s.speedAt(ex.vehicle, k) <= 37 {
				t.Errorf("vehicle %d at %v km/h in batch %d of its run", ex.vehicle, s.speedAt(ex.vehicle, k), k)
			}
		}
		if d := s.deviceTime(ex.vehicle, ex.confirm).Sub(s.deviceTime(ex.vehicle, ex.firstFast)); d != confirmS*time.Second {
			t.Errorf("confirmation after %v", d)
		}
	}
	// At 01:30 in Piúma the readings are dated within the service hours.
	s = newSchedule(o, time.Date(2026, 11, 28, 4, 30, 0, 0, time.UTC))
	if h := s.deviceTime(0, 0).In(time.FixedZone("BRT", -3*3600)).Hour(); h < 9 || h >= 23 || s.shift == 0 {
		t.Errorf("device time %v (shift %v)", s.deviceTime(0, 0), s.shift)
	}
	if !strings.HasPrefix(s.vehicleID(7), s.prefix) || len(s.vehicleID(7)) > 32 {
		t.Errorf("vehicle id %q", s.vehicleID(7))
	}
}
