package rules

import (
	"strings"
	"testing"
	"time"
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
