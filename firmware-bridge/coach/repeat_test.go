package coach

import (
	"testing"
	"time"

	"github.com/trenzinho/trenzinho/configbundle"
	"github.com/trenzinho/trenzinho/wire"
)

// fridayMorning is 10:00 in Piúma on a Friday: the school and the hospital are open.
var fridayMorning = time.Date(2026, 11, 27, 13, 0, 0, 0, time.UTC)

// perReading splits per-second batches into one batch per reading, in the order a bridge
// hands them to its coach (bridge.coachBatch): the GPS fix, the tachograph, the meter.
func perReading(bs []*wire.Batch) []*wire.Batch {
	var out []*wire.Batch
	for _, b := range bs {
		for i := range b.GPS {
			out = append(out, &wire.Batch{GPS: b.GPS[i : i+1]})
		}
		for i := range b.Tacho {
			out = append(out, &wire.Batch{Tacho: b.Tacho[i : i+1]})
		}
		for i := range b.Sound {
			out = append(out, &wire.Batch{Sound: b.Sound[i : i+1]})
		}
	}
	return out
}

// TestContinuousConditionRepeatsAtRepeat drives slowly past the open hospital and towards the
// open school with the sound loud, one GPS, tachograph and meter reading a second handed to
// the coach one by one as the bridge does, at 1x: each site is warned once when it comes
// within the lead distance and then again every Repeat while the condition holds, never more
// often.
func TestContinuousConditionRepeatsAtRepeat(t *testing.T) {
	cb := signedBundle(t, testBundle(3, configbundle.Warnings{LeadDistanceM: 300}))
	const secs = 20 * 60
	bs, east := stream{start: fridayMorning, steps: steps(secs, 5, 80)}.batches()
	ws, _ := collect(t, cb, perReading(bs))
	for _, site := range []string{"s-hospital", "s-escola"} {
		var at []time.Time
		for _, w := range ofKind(ws, KindSiteSound) {
			if w.Site == site {
				at = append(at, w.T)
			}
		}
		if len(at) == 0 {
			t.Fatalf("%s: no warning in %d s at 5 km/h and 80 dB(A); warnings %+v", site, secs, ws)
		}
		// How long the condition held: the seconds whose position is within the lead
		// distance of the site's protected radius (the streams's own geometry).
		first := int(at[0].Sub(fridayMorning) / time.Second)
		held := 0
		for i := first; i < secs; i++ {
			if siteAt(site, east[i]) <= 200+300 {
				held++
			}
		}
		want := 1 + (held-1)/int(Repeat/time.Second)
		for i := 1; i < len(at); i++ {
			if gap := at[i].Sub(at[i-1]); gap != Repeat {
				t.Errorf("%s: warning %d came %v after the previous one, want every %v", site, i+1, gap, Repeat)
			}
		}
		if len(at) != want {
			t.Errorf("%s: %d warnings over the %d s the condition held, want %d (once, then every %v)", site, len(at), held, want, Repeat)
		}
		t.Logf("%s: %d warnings over %d s", site, len(at), held)
	}
}

// siteAt is the distance from the stream's street position x to a site of the test town.
func siteAt(site string, x float64) float64 {
	if site == "s-escola" {
		return hospitalAt(x - 1000)
	}
	return hospitalAt(x)
}

// siteWarnings returns the times of the site_sound warnings of site.
func siteWarnings(ws []Warning, site string) []time.Time {
	var at []time.Time
	for _, w := range ofKind(ws, KindSiteSound) {
		if w.Site == site {
			at = append(at, w.T)
		}
	}
	return at
}

// TestSparseFixesDoNotRearm: the same drive with the GPS fixing only once every 25 s (a
// receiver losing the sky; the meter still reads every second). Between fixes the position is
// unknown, which is not the condition being absent: the hospital is warned once and then once
// per Repeat at the first fix after it, never at every fix (before, each fix was more than
// rearm after the previous one and warned anew: every 25 s).
func TestSparseFixesDoNotRearm(t *testing.T) {
	cb := signedBundle(t, testBundle(3, configbundle.Warnings{LeadDistanceM: 300}))
	const secs, every = 20 * 60, 25
	bs, _ := stream{start: fridayMorning, steps: steps(secs, 5, 80)}.batches()
	for i := range bs {
		if i%every != 0 {
			bs[i].GPS = nil
		}
	}
	ws, _ := collect(t, cb, perReading(bs))
	at := siteWarnings(ws, "s-hospital")
	if len(at) < 2 {
		t.Fatalf("%d hospital warnings, want one and its repeats; warnings %+v", len(at), ws)
	}
	for i := 1; i < len(at); i++ {
		if gap := at[i].Sub(at[i-1]); gap < Repeat || gap >= Repeat+every*time.Second {
			t.Errorf("warning %d came %v after the previous one, want at the first fix after %v", i+1, gap, Repeat)
		}
	}
	held := at[len(at)-1].Sub(at[0])
	if max := int(held/Repeat) + 1; len(at) > max {
		t.Errorf("%d warnings in %v, at most %d (once, then every %v)", len(at), held, max, Repeat)
	}
	t.Logf("%d hospital warnings with a fix every %d s", len(at), every)
}

// TestAbsenceRearms: a condition judged absent for rearm is new when it returns, a shorter
// dip is not. Stopped in front of the open hospital with the sound loud, the driver turns it
// down for a while and then up again.
func TestAbsenceRearms(t *testing.T) {
	for _, c := range []struct {
		quiet int // seconds at 60 dB(A)
		anew  bool
	}{{5, false}, {30, true}} {
		cb := signedBundle(t, testBundle(3, configbundle.Warnings{LeadDistanceM: 300}))
		// To 50 m before the hospital at 18 km/h, quiet; then stopped there.
		bs, _ := stream{start: fridayMorning, steps: join(steps(facing, 18, 60), steps(20, 0, 80), steps(c.quiet, 0, 60), steps(20, 0, 80))}.batches()
		ws, _ := collect(t, cb, perReading(bs))
		at := siteWarnings(ws, "s-hospital")
		if want := map[bool]int{false: 1, true: 2}[c.anew]; len(at) != want {
			t.Errorf("%d s quiet: %d warnings %v, want %d", c.quiet, len(at), at, want)
		}
	}
}

// facing is how many seconds at 18 km/h (5 m/s) take the stream to 50 m before the hospital.
const facing = 950 / 5
