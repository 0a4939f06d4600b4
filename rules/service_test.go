package rules

import (
	"strings"
	"testing"
	"time"

	"github.com/trenzinho/trenzinho/wire"
)

// "Em serviço" is an element of Art. 23: a vehicle with no service switch and no door input
// speeding at 45 km/h on its itinerary opens a speed episode, but service was only inferred from
// its movement (it may be driving empty to a workshop): an alert, with the note, that an agent's
// verification of boarding turns into a draft. With the switch on, service is observed and the
// episode grounds an auto, stating since when the switch was on.
func TestSpeedServiceInferredFromMovement(t *testing.T) {
	speeds := concat(repeat(20, 10), repeat(45, 30), repeat(20, 20))
	on := func(tr *trip) *trip { tr.lat, tr.lon = -20.8000, -40.6000; return tr } // on route-l1
	r := switchRun(t, nil)
	r.apply(t, on(newTrip(noon)).batches(speeds...), time.Second)
	eps := r.rule(RuleSpeed)
	if len(eps) != 1 {
		t.Fatalf("%d speed episodes", len(eps))
	}
	ep := eps[0]
	if ep.GroundsAuto || !strings.Contains(ep.GroundsNote, "em serviço inferido apenas pelo movimento") || ep.Service == nil || ep.Service.How != ServiceMovement || ep.Service.Observed() {
		t.Fatalf("inferred service: grounds %v %q service %+v", ep.GroundsAuto, ep.GroundsNote, ep.Service)
	}
	if ep.Draftable() || ep.Needs != VerifyField {
		t.Errorf("draftable %v needs %q", ep.Draftable(), ep.Needs)
	}
	no, yes := false, true
	ep.Verification = &Verification{Kind: VerifyField, Boarding: &no, Note: "veículo vazio"}
	if ep.Draftable() {
		t.Error("a field verification that saw no boarding makes the episode a draft")
	}
	ep.Verification.Boarding = &yes
	if !ep.Draftable() {
		t.Error("the agent's verification of boarding does not supply the service")
	}

	r = switchRun(t, nil)
	tr := on(newTrip(noon))
	tr.service = ptr(true)
	r.apply(t, tr.batches(speeds...), time.Second)
	eps = r.rule(RuleSpeed)
	if len(eps) != 1 || !eps[0].GroundsAuto || eps[0].GroundsNote != "" {
		t.Fatalf("switch on: %+v", eps)
	}
	s := eps[0].Service
	if s == nil || s.How != ServiceSwitch || !s.Since.Equal(noon) {
		t.Fatalf("service %+v, want the switch on since %v", s, noon)
	}
	if got := s.Text(time.UTC); got != "Em serviço, constatado por: chave de serviço ligada desde 15:00." {
		t.Errorf("text %q", got)
	}
}

// A boarding observed at a boarding point (stopped there with the passenger door open)
// establishes service for the trip that follows: speeding after it grounds an auto, stating the
// stop; the same stop with the door closed is no observation.
func TestSpeedServiceObservedByBoarding(t *testing.T) {
	for _, door := range []bool{true, false} {
		r := switchRun(t, nil)
		tr := newTrip(noon)
		tr.lat, tr.lon = -20.8000, -40.5990 // at stop-praca
		stop := tr.batches(repeat(0, 30)...)
		for _, b := range stop {
			if b.Seq == 2 {
				b.Door = append(b.Door, wire.Door{T: b.GPS[0].T, Open: door})
			}
			if b.Seq == 5 {
				b.Door = append(b.Door, wire.Door{T: b.GPS[0].T, Open: false})
			}
		}
		r.apply(t, stop, time.Second)
		r.apply(t, tr.batches(concat(repeat(20, 10), repeat(45, 30), repeat(20, 20))...), time.Second)
		eps := r.rule(RuleSpeed)
		if len(eps) != 1 {
			t.Fatalf("door %v: %d speed episodes", door, len(eps))
		}
		s := eps[0].Service
		if eps[0].GroundsAuto != door || s == nil || (s.How == ServiceBoarding) != door {
			t.Fatalf("door %v: grounds %v service %+v note %q", door, eps[0].GroundsAuto, s, eps[0].GroundsNote)
		}
		if door && (s.Place != "Praça Central" || !s.Since.Equal(noon.Add(5*time.Second))) {
			t.Errorf("boarding %+v", s)
		}
	}
}
