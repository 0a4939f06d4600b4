package rules

import (
	"strings"
	"testing"
	"time"

	"github.com/trenzinho/trenzinho/wire"
)

// doored adds the passenger door's state to every second of the batches.
func doored(bs []*wire.Batch, open bool) []*wire.Batch {
	for _, b := range bs {
		for _, g := range b.GPS {
			b.Door = append(b.Door, wire.Door{T: g.T, Open: open})
		}
	}
	return bs
}

// Art. 36 § 4º: boarding "nos pontos demarcados". The passenger door open while the vehicle
// stands in service away from every demarcated point is an episode that grounds an auto and
// names the nearest point; at a point, out of service, moving, or for less than
// boarding.door_confirm_s, nothing.
func TestBoardingOutsidePoints(t *testing.T) {
	type step struct {
		seconds int
		kmh     float64
		service bool
		door    bool
		atPoint bool
	}
	cases := []struct {
		name  string
		steps []step
		want  int
	}{
		{"door open 40 s in service away from every point", []step{{20, 0, true, false, false}, {40, 0, true, true, false}, {20, 0, true, false, false}}, 1},
		{"door open 40 s at a demarcated point", []step{{20, 0, true, false, true}, {40, 0, true, true, true}, {20, 0, true, false, true}}, 0},
		{"door open out of service", []step{{20, 0, false, false, false}, {40, 0, false, true, false}, {20, 0, false, false, false}}, 0},
		{"door open while moving", []step{{20, 15, true, false, false}, {40, 15, true, true, false}}, 0},
		{"door open 6 s, below door_confirm_s", []step{{20, 0, true, false, false}, {6, 0, true, true, false}, {20, 0, true, false, false}}, 0},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			r := switchRun(t, nil)
			tr := newTrip(noon)
			for _, s := range c.steps {
				tr.lat, tr.lon = -20.8000, -40.5900 // on the itinerary, ~940 m east of the point
				if s.atPoint {
					tr.lat, tr.lon = -20.8000, -40.5990
				}
				var bs []*wire.Batch
				if s.kmh > 0 {
					bs = tr.batches(repeat(s.kmh, s.seconds)...)
				} else {
					bs = standing(tr, s.seconds, 0, 0)
				}
				r.apply(t, doored(switched(bs, s.service), s.door), time.Second)
			}
			eps := r.rule(RuleBoardingOutsidePoints)
			if len(eps) != c.want {
				t.Fatalf("%d episodes, want %d: %+v", len(eps), c.want, eps)
			}
			if c.want == 0 {
				return
			}
			ep := eps[0]
			if !ep.GroundsAuto || ep.Article != "Art. 36, § 4º" || ep.Penalty != "Art. 47" || ep.End == nil {
				t.Errorf("episode %+v", ep)
			}
			if ep.Site == nil || ep.Site.ID != "stop-praca" || !strings.Contains(ep.Detail, "a pelo menos 93") ||
				!strings.Contains(ep.Detail, "Praça Central") {
				t.Errorf("nearest point %+v, detail %q", ep.Site, ep.Detail)
			}
			if ep.Peak < 35 || ep.Peak > 41 || ep.Unit != "s" || ep.Source != "door" {
				t.Errorf("door open %v %s (source %s), want about 40 s", ep.Peak, ep.Unit, ep.Source)
			}
		})
	}
}

// Without the door input nothing is judged: a long stop in service away from every point is
// not boarding (Art. 36 § 4º needs boarding observed).
func TestBoardingOutsidePointsNeedsTheDoorInput(t *testing.T) {
	r := switchRun(t, nil)
	tr := newTrip(noon)
	tr.lat, tr.lon = -20.8000, -40.5900
	r.apply(t, switched(standing(tr, 300, 0, 0), true), time.Second)
	if n := len(r.rule(RuleBoardingOutsidePoints)); n != 0 {
		t.Fatalf("%d episodes without a door input", n)
	}
}

// The door says boarding for boarding_sound too: stopped with loud music and the passenger door
// open where no boarding point is, the episode states the open door, not a point; with the door
// closed the same stop is no boarding.
func TestBoardingSoundWithTheDoorOpen(t *testing.T) {
	for _, open := range []bool{true, false} {
		r := switchRun(t, nil)
		tr := newTrip(noon)
		tr.lat, tr.lon = -20.8000, -40.5900
		r.apply(t, doored(switched(standing(tr, 120, 0, 85), true), open), time.Second)
		r.apply(t, doored(switched(standing(tr, 30, 20, 50), true), false), time.Second)
		eps := r.rule(RuleBoardingSound)
		if !open {
			if len(eps) != 0 {
				t.Fatalf("door closed: %d boarding_sound episodes", len(eps))
			}
			continue
		}
		if len(eps) != 1 {
			t.Fatalf("door open: %d boarding_sound episodes", len(eps))
		}
		ep := eps[0]
		if ep.Site != nil || ep.Detail != BoardingDoorOpen || ep.StoppedS < 100 || ep.Needs != VerifyMusic {
			t.Errorf("episode site %+v detail %q stopped %v needs %q", ep.Site, ep.Detail, ep.StoppedS, ep.Needs)
		}
	}
}

// A door change timed by the system clock is no evidence: the door's state becomes unknown and
// boarding outside the points is not judged until a change that is.
func TestDoorOnTheSystemClockIsUnknown(t *testing.T) {
	r := switchRun(t, nil)
	tr := newTrip(noon)
	tr.lat, tr.lon = -20.8000, -40.5900
	r.apply(t, doored(switched(standing(tr, 20, 0, 0), true), false), time.Second)
	bs := doored(switched(standing(tr, 40, 0, 0), true), true)
	for _, b := range bs {
		// The door alone on the system clock (as a bridge without a GPS time would send it).
		r.apply(t, []*wire.Batch{{V: 1, Vehicle: b.Vehicle, Epoch: "e-sys", Seq: b.Seq, SentAt: b.SentAt, Clock: wire.ClockSystem, Door: b.Door}}, time.Second)
		b.Door = nil
	}
	r.apply(t, bs, time.Second)
	if n := len(r.rule(RuleBoardingOutsidePoints)); n != 0 {
		t.Fatalf("%d episodes from a door on the system clock", n)
	}
	if v := r.e.vehicles["PIU-001"]; v.DoorOpen != nil {
		t.Fatalf("door state %v, want unknown", *v.DoorOpen)
	}
}
