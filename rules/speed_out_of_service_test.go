package rules

import (
	"strings"
	"testing"
	"time"
)

// Speeding with the service switch off is no speed episode (Art. 23: "quando em serviço") but an
// operational alert under its own rule id, which never grounds an auto nor becomes a draft; the
// same trip in service is speed and not the alert.
func TestSpeedOutOfService(t *testing.T) {
	trip := concat(repeat(20, 10), repeat(45, 60), repeat(20, 20))
	r := switchRun(t, nil)
	tr := newTrip(noon) // far from the itinerary
	r.apply(t, switched(tr.batches(trip...), false), time.Second)
	if n := len(r.rule(RuleSpeed)); n != 0 {
		t.Fatalf("%d speed episodes out of service", n)
	}
	eps := r.rule(RuleSpeedOutOfService)
	if len(eps) != 1 {
		t.Fatalf("%d speed_out_of_service episodes, want 1", len(eps))
	}
	ep := eps[0]
	if ep.GroundsAuto || ep.Draftable() || ep.Needs != "" || !strings.Contains(ep.GroundsNote, "CTB") ||
		ep.Peak != 45 || ep.Source != "tacho" || ep.Penalty != "—" {
		t.Errorf("alert %+v", ep)
	}

	r = switchRun(t, nil)
	tr = newTrip(noon)
	r.apply(t, switched(tr.batches(trip...), true), time.Second)
	if n := len(r.rule(RuleSpeedOutOfService)); n != 0 {
		t.Fatalf("in service: %d speed_out_of_service episodes", n)
	}
	if n := len(r.rule(RuleSpeed)); n != 1 {
		t.Fatalf("in service: %d speed episodes", n)
	}
}

// A profile that marked the alert an infraction still gets no auto from it: speed out of service
// is not this law's.
func TestSpeedOutOfServiceNeverGroundsAnAuto(t *testing.T) {
	r := switchRun(t, nil)
	m := r.e.profile.Rules[RuleSpeedOutOfService]
	m.Infraction, m.Penalty, m.FineUFMP = true, "Art. 46, X", 400
	r.e.profile.Rules[RuleSpeedOutOfService] = m
	tr := newTrip(noon)
	r.apply(t, switched(tr.batches(concat(repeat(20, 10), repeat(45, 60), repeat(20, 20))...), false), time.Second)
	if eps := r.rule(RuleSpeedOutOfService); len(eps) != 1 || eps[0].GroundsAuto || eps[0].Draftable() {
		t.Fatalf("alert %+v", eps)
	}
}
