package rules

import (
	"strings"
	"testing"
	"time"

	"github.com/trenzinho/trenzinho/geofences"
	"github.com/trenzinho/trenzinho/profile"
	"github.com/trenzinho/trenzinho/wire"
)

// switchTown: licensee L1's itinerary along a parallel (every day, 09:00–23:00) with a
// demarcated boarding point on it, and nothing else.
const switchTown = `{"type":"FeatureCollection","features":[
{"type":"Feature","geometry":{"type":"LineString","coordinates":[[-40.6000,-20.8000],[-40.5800,-20.8000]]},
 "properties":{"id":"route-l1","kind":"itinerary","licensee":"L1","corridor_m":50,"days":"Mo-Su","hours":"09:00-23:00","source":"survey"}},
{"type":"Feature","geometry":{"type":"Point","coordinates":[-40.5990,-20.8000]},
 "properties":{"id":"stop-praca","kind":"boarding_point","name":"Praça Central","radius_m":30,"source":"survey"}}
]}`

// switched adds the service switch's state to every second of the batches.
func switched(bs []*wire.Batch, on bool) []*wire.Batch {
	for _, b := range bs {
		for _, g := range b.GPS {
			b.Service = append(b.Service, wire.Service{T: g.T, On: on})
		}
	}
	return bs
}

func switchRun(t *testing.T, edit func(*profile.Profile)) *run {
	t.Helper()
	set, err := geofences.Read(strings.NewReader(switchTown), "switch.geojson")
	if err != nil {
		t.Fatal(err)
	}
	p := profile.Piuma()
	if edit != nil {
		edit(p)
	}
	r := &run{e: New(p, set), episodes: map[string]Episode{}, evidence: map[string]int{}}
	r.e.vehicle("PIU-001").Licensee = "L1"
	return r
}

// Art. 23 binds the vehicle "quando em serviço": speeding with the switch off, away from any
// itinerary, is no speed episode (and no suspicion either).
func TestSpeedOutOfServiceIsNotJudged(t *testing.T) {
	r := switchRun(t, nil)
	tr := newTrip(noon) // far from the itinerary
	r.apply(t, switched(tr.batches(concat(repeat(20, 10), repeat(45, 60), repeat(20, 20))...), false), time.Second)
	if n := len(r.rule(RuleSpeed)); n != 0 {
		t.Fatalf("%d speed episodes out of service", n)
	}
	if n := len(r.rule(RuleServiceSwitchSuspect)); n != 0 {
		t.Fatalf("%d switch suspicions away from every itinerary", n)
	}
	// The same trip with the switch on is judged.
	r = switchRun(t, nil)
	tr = newTrip(noon)
	r.apply(t, switched(tr.batches(concat(repeat(20, 10), repeat(45, 60), repeat(20, 20))...), true), time.Second)
	if eps := r.rule(RuleSpeed); len(eps) != 1 || !eps[0].GroundsAuto {
		t.Fatalf("in service: %+v", eps)
	}
}

// The switch off while the vehicle stops at a boarding point of its itinerary, in its hours,
// and then runs along it: service_switch_suspect, an alert with the evidence; with is_service
// the speed rule then judges it as in service.
func TestServiceSwitchSuspect(t *testing.T) {
	for _, isService := range []bool{false, true} {
		r := switchRun(t, func(p *profile.Profile) { p.InService.SwitchSuspect.IsService = isService })
		tr := newTrip(noon)
		tr.lat, tr.lon = -20.8000, -40.5990 // at the boarding point
		r.apply(t, switched(standing(tr, 90, 0, 0), false), time.Second)
		r.apply(t, switched(tr.batches(concat(repeat(20, 10), repeat(45, 200))...), false), time.Second)
		r.apply(t, switched(tr.batches(repeat(20, 90)...), true), time.Second)
		eps := r.rule(RuleServiceSwitchSuspect)
		if len(eps) != 1 {
			t.Fatalf("is_service %v: %d suspicions, want 1", isService, len(eps))
		}
		ep := eps[0]
		if ep.GroundsAuto || ep.GroundsNote == "" || !strings.Contains(ep.Detail, "ponto de embarque") || !strings.Contains(ep.Detail, "itinerário autorizado") {
			t.Errorf("suspicion %+v", ep)
		}
		if n := len(r.rule(RuleSpeed)); (n == 1) != isService {
			t.Errorf("is_service %v: %d speed episodes", isService, n)
		}
	}
	// Outside the itinerary's hours (03:00) the same behaviour is no suspicion.
	r := switchRun(t, nil)
	tr := newTrip(time.Date(2026, 11, 27, 6, 0, 0, 0, time.UTC))
	tr.lat, tr.lon = -20.8000, -40.5990
	r.apply(t, switched(standing(tr, 90, 0, 0), false), time.Second)
	r.apply(t, switched(tr.batches(repeat(20, 200)...), false), time.Second)
	if n := len(r.rule(RuleServiceSwitchSuspect)); n != 0 {
		t.Fatalf("%d suspicions outside the itinerary's hours", n)
	}
}

// A speed measured by the GPS alone (no tachograph reading) is shown but grounds no auto: no
// INMETRO-verified instrument measured it.
func TestGPSOnlySpeedGroundsNoAuto(t *testing.T) {
	r := newRun(t)
	tr := newTrip(noon)
	tr.tacho = false
	tr.service = ptr(true)
	r.apply(t, tr.batches(concat(repeat(20, 10), repeat(45, 30), repeat(20, 20))...), time.Second)
	eps := r.rule(RuleSpeed)
	if len(eps) != 1 || eps[0].GroundsAuto || eps[0].GroundsNote != noteGPSSpeed || eps[0].Draftable() {
		t.Fatalf("gps-only speed: %+v", eps)
	}
	r = newRun(t)
	tr = newTrip(noon)
	tr.service = ptr(true)
	r.apply(t, tr.batches(concat(repeat(20, 10), repeat(45, 30), repeat(20, 20))...), time.Second)
	if eps := r.rule(RuleSpeed); len(eps) != 1 || !eps[0].GroundsAuto || eps[0].GroundsNote != "" {
		t.Fatalf("tachograph speed: %+v", eps)
	}
}
