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

// A profile with service until 22 h on weekdays (service_hours.by_day): the same late trip is
// outside the hours on a Friday and within them on a Saturday.
func TestHoursByDay(t *testing.T) {
	p := profile.Piuma()
	p.ServiceHours.ByDay = []profile.DayHours{{Days: []string{"mo", "tu", "we", "th", "fr"}, Start: "09:00", End: "22:00"}}
	loc := p.Location()
	for _, c := range []struct {
		at   string
		want float64
	}{
		{"2026-11-27 21:59", 0}, {"2026-11-27 22:30", 30}, // Friday
		{"2026-11-28 00:30", 150},                         // Saturday night: Friday's 22:00 is nearer than Saturday's 09:00
		{"2026-11-28 22:30", 0}, {"2026-11-28 23:30", 30}, // Saturday: the general 23:00
		{"2026-11-30 08:00", 60}, // Monday morning
	} {
		tm, _ := time.ParseInLocation("2006-01-02 15:04", c.at, loc)
		if got := MinutesOutside(p, tm); got != c.want {
			t.Errorf("%s: %v minutes outside, want %v", c.at, got, c.want)
		}
	}
	if left, in := MinutesToEnd(p, time.Date(2026, 11, 27, 21, 40, 0, 0, loc)); !in || left != 20 {
		t.Errorf("Friday 21:40: %v minutes to the end (inside %v), want 20", left, in)
	}

	for _, c := range []struct {
		day  string
		want int
	}{{"2026-11-27", 1}, {"2026-11-28", 0}} {
		r := &run{e: New(p, nil), episodes: map[string]Episode{}, evidence: map[string]int{}}
		start, _ := time.ParseInLocation("2006-01-02 15:04", c.day+" 21:30", loc)
		tr := newTrip(start)
		tr.tacho = false
		r.apply(t, tr.batches(repeat(20, 55*60)...), time.Second) // until 22:25
		r.apply(t, tr.batches(repeat(0, 400)...), time.Second)
		if eps := r.rule("hours"); len(eps) != c.want {
			t.Errorf("%s 21:30–22:25: %d hours episodes, want %d", c.day, len(eps), c.want)
		} else if c.want == 1 && !eps[0].Start.Equal(time.Date(2026, 11, 27, 22, 20, 1, 0, loc)) {
			t.Errorf("the episode starts at %v, want 22:20:01 (22:00 and the 20 min grace)", eps[0].Start.In(loc))
		}
	}
}

// TestHoursCacheAgrees walks a week minute by minute, by_day hours included, and compares the
// vehicle's cached service windows with the windows computed afresh; a change of profile
// (another pointer) is not answered from the cache.
func TestHoursCacheAgrees(t *testing.T) {
	p := profile.Piuma()
	p.ServiceHours.ByDay = []profile.DayHours{{Days: []string{"mo", "tu", "we", "th", "fr"}, Start: "09:00", End: "22:00"}, {Days: []string{"sa"}, Start: "10:00", End: "01:00"}}
	var c hoursCache
	start := time.Date(2026, 11, 23, 0, 0, 0, 0, p.Location())
	for m := 0; m < 7*24*60; m++ {
		at := start.Add(time.Duration(m)*time.Minute + 17*time.Second)
		if got, want := minutesOutside(c.windows(p, at), at), MinutesOutside(p, at); got != want {
			t.Fatalf("%s: cached %v minutes outside, want %v", at, got, want)
		}
	}
	q := profile.Piuma()
	at := time.Date(2026, 11, 28, 23, 30, 0, 0, p.Location())
	if got, want := minutesOutside(c.windows(q, at), at), MinutesOutside(q, at); got != want || got == minutesOutside(c.windows(p, at), at) {
		t.Errorf("another profile: %v minutes outside, want %v (the first profile's answer differs)", got, want)
	}
}

// BenchmarkHoursWindows compares the service windows placed afresh at every reading with the
// vehicle's cache, for a day's readings at 3 Hz.
func BenchmarkHoursWindows(b *testing.B) {
	p := profile.Piuma()
	start := time.Date(2026, 11, 27, 9, 0, 0, 0, p.Location())
	b.Run("fresh", func(b *testing.B) {
		i := 0
		for b.Loop() {
			MinutesOutside(p, start.Add(time.Duration(i%(14*3600*3))*time.Second/3))
			i++
		}
	})
	b.Run("cached", func(b *testing.B) {
		var c hoursCache
		i := 0
		for b.Loop() {
			at := start.Add(time.Duration(i%(14*3600*3)) * time.Second / 3)
			minutesOutside(c.windows(p, at), at)
			i++
		}
	})
}
