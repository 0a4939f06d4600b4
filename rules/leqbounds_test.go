package rules

import (
	"encoding/json"
	"math"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/paulmach/orb"
	"github.com/paulmach/orb/geojson"

	"github.com/trenzinho/trenzinho/geofences"
	"github.com/trenzinho/trenzinho/profile"
	"github.com/trenzinho/trenzinho/wire"
)

// TestLeqBoundsHoldLeq feeds a vehicle sound readings — steady music, loud bursts that leave
// the window, near silence, gaps, durations of every kind including irregular ones — and
// checks, for every window the rules use and times at and around the last reading, that
// whenever leqBounds answers, its interval holds leq's value and its full is leq's.
func TestLeqBoundsHoldLeq(t *testing.T) {
	e := New(profile.Piuma(), nil)
	v := &Vehicle{ID: "PIU-001"}
	rnd := rand.New(rand.NewPCG(5, 6))
	at := noon
	answered, asked, narrow, whole := 0, 0, 0, 0
	var widest float64
	for i := range 20000 {
		at = at.Add(time.Duration(250+rnd.IntN(1500)) * time.Millisecond)
		if rnd.IntN(200) == 0 {
			at = at.Add(time.Duration(rnd.IntN(90)) * time.Second) // a gap, sometimes longer than the window
		}
		var db float64
		switch phase := (i / 500) % 4; {
		case phase == 0:
			db = 73 + 3*math.Sin(float64(i)/50) + rnd.NormFloat64()
		case phase == 1:
			db = 62.5 + 1e-9*float64(rnd.IntN(3)-1) // steady: sums of equal terms
		case phase == 2 && rnd.IntN(30) == 0:
			db = 120 + 10*rnd.Float64() // bursts that dominate the window, then leave it
		case phase == 2:
			db = 35 + 5*rnd.Float64()
		default:
			db = -40 + 230*rnd.Float64() // the whole regular range and beyond
		}
		dur := []float64{1, 1, 1, 0.5, 0.125, 2, 1.7, 0.3, 0.01, 10}[rnd.IntN(10)]
		if rnd.IntN(300) == 0 {
			dur = []float64{0.005, 20}[rnd.IntN(2)] // irregular: leqBounds declines while it is in the window
		}
		e.keepSound(v, &wire.Sound{T: wire.NewTime(at), LAeqDB: ptr(db), DurS: ptr(dur)})
		for _, w := range []float64{60, 5} {
			for k, q := range []time.Time{at, at.Add(-1500 * time.Millisecond), at.Add(time.Second)} {
				asked++
				if w == 60 && k == 0 {
					whole++ // noise_limit's question: the window is the whole of Sounds
				}
				lo, hi, full, ok := v.leqBounds(q, w)
				if !ok {
					continue
				}
				answered++
				want, wantFull := v.leqOf(q, w)
				if full != wantFull || !(lo <= want && want <= hi) {
					t.Fatalf("reading %d, window %v s at %v: bounds [%v, %v] full %v; leq %v full %v",
						i, w, q, lo, hi, full, want, wantFull)
				}
				widest = max(widest, hi-lo)
				if hi-lo < 1e-6 {
					narrow++
				}
			}
		}
	}
	t.Logf("%d of %d windows bounded; noise_limit's window asked %d times (%d bounds narrower than 1e-6 dB, the widest %.3g dB)",
		answered, asked, whole, narrow, widest)
	if answered < whole/4 || narrow < answered/2 {
		t.Errorf("leqBounds answered %d windows, %d narrowly: the stream does not exercise it", answered, narrow)
	}
}

// TestNoiseFastPathSameEpisodes runs the same vehicles through two engines, one judging
// noise_limit from leqBounds where it decides and one computing every level, and requires the
// same output after every batch. The levels hover at the limit — exactly on it, a rounding
// error away, a little above and below — so that both the interval's decisions and its
// fallbacks are exercised; runs start and stop and peaks are set and approached.
func TestNoiseFastPathSameEpisodes(t *testing.T) {
	fc := geojson.NewFeatureCollection()
	zone := geojson.NewFeature(orb.Polygon{{{-41, -21.2}, {-40, -21.2}, {-40, -20.5}, {-41, -20.5}, {-41, -21.2}}})
	zone.Properties = geojson.Properties{"id": "zone-1", "kind": "nbr_zone", "area": "strict_residential", "source": "survey"}
	fc.Append(zone)
	set, err := geofences.NewSet(geofences.File{Name: "zone", Collection: fc})
	if err != nil {
		t.Fatal(err)
	}
	p := profile.Piuma()
	// The meter level whose receptor estimate is the day limit plus the tolerance.
	limit := p.Noise.Areas["strict_residential"].Day + p.Noise.ToleranceDB
	edge := limit - ReceptorLevel(0, p.Noise.R1M, p.Noise.R2M)
	fast, exact := New(p, set), New(p, set)
	exact.exactLeq = true
	rnd := rand.New(rand.NewPCG(8, 9))
	opened := 0
	offsets := []float64{0, 0, 1e-14, -1e-14, 1e-9, -1e-9, 1e-6, -1e-6, 0.3, -0.3, 2, -2, 6, -6}
	for k := range 4 {
		tr := newTrip(noon)
		tr.vehicle = "PIU-00" + string(rune('1'+k))
		level, left := edge, 0
		for _, b := range tr.batches(repeat(5, 3600)...) {
			for i := range b.GPS {
				if left--; left <= 0 {
					level, left = edge+offsets[rnd.IntN(len(offsets))], 5+rnd.IntN(120)
				}
				db := level
				if rnd.IntN(4) == 0 {
					db += rnd.NormFloat64() // some scatter
				}
				dur := []float64{1, 1, 1, 1, 1, 1, 1, 0.5, 1.25, 0.9}[rnd.IntN(10)]
				if rnd.IntN(400) == 0 {
					continue // a missing second
				}
				b.Sound = append(b.Sound, wire.Sound{T: b.GPS[i].T, LAeqDB: ptr(db), DurS: ptr(dur)})
			}
			rf, re := fast.Apply(b, b.SentAt.Time), exact.Apply(b, b.SentAt.Time)
			if rf != re {
				t.Fatalf("%s seq %d: %+v and %+v", b.Vehicle, b.Seq, rf, re)
			}
			if b.Seq%10 == 0 {
				opened += compareDrains(t, fast, exact)
			}
		}
	}
	opened += compareDrains(t, fast, exact)
	t.Logf("%d noise_limit episodes; levels: %d judged from the bounds, %d computed (the engine computing all: %d)",
		opened, fast.leqBounded, fast.leqComputed, exact.leqComputed)
	if opened < 10 {
		t.Errorf("%d noise_limit episodes: the stream does not cross the limit", opened)
	}
	if fast.leqBounded == 0 || fast.leqComputed == 0 {
		t.Errorf("the stream does not exercise both ways: %d bounded, %d computed", fast.leqBounded, fast.leqComputed)
	}
}

// compareDrains drains both engines, fails unless their changes are the same, and returns how
// many noise_limit episodes opened.
func compareDrains(t *testing.T, a, b *Engine) int {
	t.Helper()
	opened := 0
	js := func(e *Engine) string {
		c, err := e.Drain()
		if err != nil {
			t.Fatal(err)
		}
		slices.SortFunc(c.Episodes, func(x, y Episode) int { return strings.Compare(x.ID, y.ID) })
		out, err := json.Marshal(c)
		if err != nil {
			t.Fatal(err)
		}
		if e == a {
			for _, ev := range c.Events {
				if ev.Kind == EventOpen && ev.Episode.Rule == RuleNoiseLimit {
					opened++
				}
			}
		}
		return string(out)
	}
	if ja, jb := js(a), js(b); ja != jb {
		t.Fatalf("the engines' changes differ:\n%s\n%s", ja, jb)
	}
	return opened
}
