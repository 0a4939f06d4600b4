package rules

import (
	"strings"
	"testing"
	"time"

	"github.com/trenzinho/trenzinho/wire"
)

// Stopped 120 s with loud music where no boarding point is: no boarding_sound episode (a stop
// is no observed boarding); at a demarcated point the episode names the point and the stop,
// and waits for the agent to confirm the music.
func TestBoardingSoundOnlyAtDemarcatedPoints(t *testing.T) {
	r := newPlacesRun(t, "")
	tr := newTrip(localTime(t, "2026-11-26 15:00:00"))
	tr.lat, tr.lon = -20.9000, -40.9000
	r.apply(t, standing(tr, 120, 0, 85), time.Second)
	r.apply(t, standing(tr, 30, 20, 50), time.Second)
	if n := len(r.rule(RuleBoardingSound)); n != 0 {
		t.Fatalf("%d boarding episodes from a stop away from every boarding point", n)
	}

	r = newPlacesRun(t, "")
	tr = newTrip(localTime(t, "2026-11-26 15:00:00"))
	tr.lat, tr.lon = -20.8000, -40.5000 // stop-1
	r.apply(t, standing(tr, 94, 0, 80), time.Second)
	r.apply(t, standing(tr, 30, 20, 50), time.Second)
	eps := r.rule(RuleBoardingSound)
	if len(eps) != 1 {
		t.Fatalf("%d boarding episodes at a boarding point", len(eps))
	}
	ep := eps[0]
	if ep.Site == nil || ep.Site.ID != "stop-1" || ep.Site.Kind != "boarding_point" || ep.StoppedS < 90 || ep.StoppedS > 95 {
		t.Errorf("boarding point %+v, stopped %v s", ep.Site, ep.StoppedS)
	}
	if ep.GroundsAuto || ep.Needs != VerifyMusic || !strings.Contains(ep.GroundsNote, "música") {
		t.Errorf("grounds %v needs %q note %q", ep.GroundsAuto, ep.Needs, ep.GroundsNote)
	}
}

// A short stop at a boarding point (20 s, under the profile's boarding.dwell_s of 60) with loud
// sound and no door input is no observed boarding: the episode is shown but lacks two grounds
// (the boarding and the music), so no one verification makes it a draft. The door input open, or
// a stop of the dwell, is boarding observed: only the music is then missing.
func TestBoardingSoundNeedsTheDwellOrTheDoor(t *testing.T) {
	r := newPlacesRun(t, "")
	if r.e.profile.Boarding.DwellS != 60 {
		t.Fatalf("dwell %v s", r.e.profile.Boarding.DwellS)
	}
	tr := newTrip(localTime(t, "2026-11-26 15:00:00"))
	tr.lat, tr.lon = -20.8000, -40.5000 // stop-1
	r.apply(t, standing(tr, 20, 0, 80), time.Second)
	r.apply(t, standing(tr, 30, 20, 50), time.Second)
	eps := r.rule(RuleBoardingSound)
	if len(eps) != 1 {
		t.Fatalf("%d boarding episodes", len(eps))
	}
	ep := eps[0]
	if ep.GroundsAuto || ep.Needs != "" || !strings.Contains(ep.GroundsNote, "embarque não observado") || ep.StoppedS >= 60 {
		t.Fatalf("a 20 s stop: grounds %v needs %q note %q stopped %v", ep.GroundsAuto, ep.Needs, ep.GroundsNote, ep.StoppedS)
	}
	yes := true
	ep.Verification = &Verification{Kind: VerifyMusic}
	if ep.Draftable() {
		t.Error("the music confirmed makes a boarding that was not observed a draft")
	}
	ep.Verification = &Verification{Kind: VerifyField, Boarding: &yes}
	if ep.Draftable() {
		t.Error("the boarding verified makes music that was not confirmed a draft")
	}

	// The same 20 s stop with the passenger door open.
	r = newPlacesRun(t, "")
	tr = newTrip(localTime(t, "2026-11-26 15:00:00"))
	tr.lat, tr.lon = -20.8000, -40.5000
	bs := standing(tr, 20, 0, 80)
	bs[0].Door = append(bs[0].Door, wire.Door{T: bs[0].GPS[0].T, Open: true})
	r.apply(t, bs, time.Second)
	r.apply(t, standing(tr, 30, 20, 50), time.Second)
	eps = r.rule(RuleBoardingSound)
	if len(eps) != 1 || eps[0].Detail != BoardingDoorOpen || eps[0].Needs != VerifyMusic || strings.Contains(eps[0].GroundsNote, "embarque não observado") {
		t.Fatalf("a 20 s stop with the door open: %+v", eps)
	}
}
