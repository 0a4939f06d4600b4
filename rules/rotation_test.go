package rules

import (
	"strings"
	"testing"
	"time"

	"github.com/trenzinho/trenzinho/geofences"
	"github.com/trenzinho/trenzinho/profile"
)

// rotationTown: one street, L1's itinerary from Monday to Wednesday and L2's on the other days.
const rotationTown = `{"type":"FeatureCollection","features":[
{"type":"Feature","geometry":{"type":"LineString","coordinates":[[-40.7400,-20.8367],[-40.7000,-20.8367]]},
 "properties":{"id":"orla-l1","kind":"itinerary","licensee":"L1","corridor_m":50,"days":"Mo-We","hours":"09:00-23:00","source":"survey"}},
{"type":"Feature","geometry":{"type":"LineString","coordinates":[[-40.7400,-20.8367],[-40.7000,-20.8367]]},
 "properties":{"id":"orla-l2","kind":"itinerary","licensee":"L2","corridor_m":50,"days":"Th-Su","hours":"09:00-23:00","source":"survey"}}
]}`

// L1's vehicle on the street on a Friday, L2's day by the rotation: rotation_conflict; on a
// Monday, its own day, nothing.
func TestRotationConflict(t *testing.T) {
	set, err := geofences.Read(strings.NewReader(rotationTown), "rotation.geojson")
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		day  time.Time
		want int
	}{
		{noon, 1}, // Friday
		{time.Date(2026, 11, 23, 15, 0, 0, 0, time.UTC), 0}, // Monday
	} {
		r := &run{e: New(profile.Piuma(), set), episodes: map[string]Episode{}, evidence: map[string]int{}}
		r.e.vehicle("PIU-001").Licensee = "L1"
		tr := newTrip(c.day)
		tr.service = ptr(true)
		r.apply(t, tr.batches(repeat(20, 180)...), time.Second)
		eps := r.rule(RuleRotationConflict)
		if len(eps) != c.want || c.want == 1 && (eps[0].Detail != "orla-l2" || eps[0].Penalty != "Art. 47" || !eps[0].GroundsAuto) {
			t.Errorf("%s: %+v", c.day.Weekday(), eps)
		}
		if c.want == 1 && profile.Piuma().ConductOf(RuleRotationConflict) != profile.Piuma().ConductOf(RuleRouteDeviation) {
			t.Error("rotation_conflict and route_deviation are not one conduct by default")
		}
	}
}
