package sim

import (
	"math"
	"testing"
	"time"
)

// TestScriptLegs: a script stands, drives at its legs' speeds, marks its events and parks.
func TestScriptLegs(t *testing.T) {
	a := Point{-20.8410, -40.7353}
	b := along(a, Point{-20.8329, -40.7238}, 100)
	s := &Script{Start: a, IdleDB: 40, Legs: []Leg{
		{Until: 10 * time.Second, DB: 40},
		{To: b, Kmh: 36, DB: 54, Mark: "go"},
		{Stop: 5 * time.Second, DB: 54},
		{Until: 5 * time.Second, DB: 54}, // already past: nothing
	}}
	if at, ok := s.MarkAt("go"); !ok || at != 10*time.Second {
		t.Errorf("MarkAt(go) = %v, %v", at, ok)
	}
	if d := s.Duration(); d < 24*time.Second || d > 26*time.Second {
		t.Errorf("Duration %v, want 25 s (10 s, 100 m at 10 m/s, 5 s)", d)
	}
	v := &Vehicle{ID: "X", Script: s}
	t0 := time.Date(2026, 11, 30, 15, 0, 0, 0, time.UTC)
	var prev State
	for i := range 40 {
		st := v.Step(t0.Add(time.Duration(i)*time.Second), time.Second)
		moved := distance(Point{prev.Lat, prev.Lon}, Point{st.Lat, st.Lon})
		switch {
		case i < 10:
			if st.SpeedKmh != 0 || st.LAeqDB != 40 || distance(a, Point{st.Lat, st.Lon}) > 0.01 {
				t.Fatalf("%d s: %+v, want parked at the start", i, st)
			}
		case i > 10 && i < 20:
			if st.SpeedKmh != 36 || math.Abs(moved-10) > 0.1 || st.LAeqDB != 54 {
				t.Fatalf("%d s: %+v moved %v m, want 36 km/h", i, st, moved)
			}
		case i >= 21:
			if st.SpeedKmh != 0 || moved > 0.01 || distance(b, Point{st.Lat, st.Lon}) > 0.5 {
				t.Fatalf("%d s: %+v, want stopped at the end of the leg", i, st)
			}
		}
		prev = st
	}
}

// TestDemoEventsHaveTheirLegs: every scripted event names a marked leg of its vehicle.
func TestDemoEventsHaveTheirLegs(t *testing.T) {
	scripts := map[string]*Script{}
	for _, v := range Demo() {
		scripts[v.ID] = v.Script
		for _, l := range v.Script.Timeline() {
			t.Logf("%s %s", v.ID, l)
		}
	}
	for _, ev := range DemoEvents {
		if _, ok := scripts[ev.Vehicle].MarkAt(ev.Mark); !ok || len(ev.Rules) == 0 {
			t.Errorf("event %q of %s: no marked leg or no rules", ev.Mark, ev.Vehicle)
		}
	}
}
