package rules

import (
	"testing"
	"time"

	"github.com/trenzinho/trenzinho/profile"
)

func TestMinutesOutside(t *testing.T) {
	p := profile.Piuma()
	loc := p.Location()
	cases := []struct {
		clock string
		want  float64
	}{
		{"08:30", 30}, {"09:00", 0}, {"22:59", 0}, {"23:00", 0}, {"23:01", 1}, {"23:20", 20}, {"00:30", 90}, {"05:00", 240},
	}
	for _, c := range cases {
		tm, _ := time.ParseInLocation("2006-01-02 15:04", "2026-11-27 "+c.clock, loc)
		if got := MinutesOutside(p, tm); got != c.want {
			t.Errorf("%s: %v minutes outside, want %v", c.clock, got, c.want)
		}
	}
}

func TestHours(t *testing.T) {
	p := profile.Piuma()
	loc := p.Location()
	at := func(s string) time.Time {
		tm, err := time.ParseInLocation("2006-01-02 15:04:05", "2026-11-27 "+s, loc)
		if err != nil {
			t.Fatal(err)
		}
		return tm
	}
	cases := []struct {
		name      string
		start     string
		seconds   int
		want      int
		wantStart string
	}{
		{"stops at 22:59", "22:30:00", 29 * 60, 0, ""},
		{"stops at 23:01, within the grace", "22:30:00", 31 * 60, 0, ""},
		{"stops at 23:19, within the grace", "22:30:00", 49 * 60, 0, ""},
		{"runs until 23:25", "22:30:00", 55 * 60, 1, "23:20:01"},
		{"starts at 08:45, within the grace", "08:45:00", 30 * 60, 0, ""},
		{"starts at 08:30", "08:30:00", 30 * 60, 1, "08:30:00"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			r := newRun(t)
			tr := newTrip(at(c.start))
			tr.tacho = false
			r.apply(t, tr.batches(repeat(20, c.seconds)...), time.Second)
			// Then the vehicle is parked in its garage (stopped), long enough to clear.
			r.apply(t, tr.batches(repeat(0, 400)...), time.Second)
			eps := r.rule("hours")
			if len(eps) != c.want {
				t.Fatalf("%d hours episodes, want %d: %+v", len(eps), c.want, eps)
			}
			if c.want == 1 {
				if !eps[0].Start.Equal(at(c.wantStart)) {
					t.Errorf("start %v, want %s", eps[0].Start.In(loc), c.wantStart)
				}
				if eps[0].Article != "Art. 29" || eps[0].Penalty != "Art. 47" {
					t.Errorf("legal mapping %s / %s", eps[0].Article, eps[0].Penalty)
				}
			}
		})
	}
}
