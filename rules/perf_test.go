package rules

import (
	"math"
	"math/rand/v2"
	"testing"
	"time"

	"github.com/trenzinho/trenzinho/profile"
	"github.com/trenzinho/trenzinho/wire"
)

// leqReference is leq as first written: every kept sample tested against the window, the
// energy of each computed afresh. leq must agree with it to the last bit.
func leqReference(sounds []SoundSample, t time.Time, windowS float64) (float64, bool) {
	var energy, covered float64
	from := t.Add(-time.Duration(windowS * float64(time.Second)))
	top := math.Inf(-1)
	for _, s := range sounds {
		if s.T.After(from) && !s.T.After(t) {
			top = max(top, s.DB)
		}
	}
	if math.IsInf(top, -1) {
		return 0, false
	}
	for _, s := range sounds {
		if s.T.After(from) && !s.T.After(t) {
			energy += s.DurS * math.Pow(10, (s.DB-top)/10)
			covered += s.DurS
		}
	}
	if covered <= 0 {
		return 0, false
	}
	return top + 10*math.Log10(energy/covered), covered >= 0.9*windowS
}

// TestLeqMatchesReference feeds a vehicle sound readings with gaps, varying durations and
// loud peaks entering and leaving the windows, and compares leq with the reference for the
// windows the rules use and for times before, at and after the last reading.
func TestLeqMatchesReference(t *testing.T) {
	e := New(profile.Piuma(), nil)
	v := &Vehicle{ID: "PIU-001"}
	rnd := rand.New(rand.NewPCG(3, 4))
	at := noon
	compared := 0
	for i := range 5000 {
		at = at.Add(time.Duration(200+rnd.IntN(1800)) * time.Millisecond)
		if rnd.IntN(50) == 0 {
			at = at.Add(time.Duration(rnd.IntN(30)) * time.Second) // a gap
		}
		db := 60 + 15*rnd.Float64()
		if rnd.IntN(20) == 0 {
			db = 95 // a peak that stays the window's top for a while
		}
		dur := []float64{1, 0.5, 0.125, 2}[rnd.IntN(4)]
		e.keepSound(v, &wire.Sound{T: wire.NewTime(at), LAeqDB: ptr(db), DurS: ptr(dur)})
		for _, w := range []float64{5, 60, 5, 60, 1, 30} {
			for _, q := range []time.Time{at, at.Add(-1500 * time.Millisecond), at.Add(time.Second)} {
				got, gotOK := v.leq(q, w)
				want, wantOK := leqReference(v.Sounds, q, w)
				if math.Float64bits(got) != math.Float64bits(want) || gotOK != wantOK {
					t.Fatalf("reading %d, window %v s at %v: leq %v %v, reference %v %v", i, w, q, got, gotOK, want, wantOK)
				}
				compared++
			}
		}
	}
	t.Logf("%d windows compared", compared)
}

// TestApplyAllocations bounds what judging costs in allocations while no rule keeps evidence:
// a vehicle cruising below the limit, quietly, in the benchmark town. Each GPS reading
// allocates its Fix (the judge's fleet view points into it); nothing else should, beyond the
// odd growth of a map or a slice.
func TestApplyAllocations(t *testing.T) {
	set, _ := benchTown(t, 1000)
	e := New(profile.Piuma(), set)
	var bs []*wire.Batch
	tr := newTrip(noon)
	tr.lat, tr.lon = benchCentre[1], benchCentre[0]
	for _, b := range tr.batches(repeat(25, 5*400)...) {
		for i := range b.GPS {
			b.Sound = append(b.Sound, wire.Sound{T: b.GPS[i].T, LAeqDB: ptr(50.0), DurS: ptr(1.0)})
		}
		bs = append(bs, b)
	}
	for _, b := range bs[:100] { // warm up: windows full, maps grown
		e.Apply(b, b.SentAt.Time)
	}
	i := 100
	allocs := testing.AllocsPerRun(200, func() {
		b := bs[i]
		i++
		e.Apply(b, b.SentAt.Time)
	})
	perGPS := allocs / float64(len(bs[0].GPS))
	t.Logf("%.2f allocations per batch of %d readings", allocs, bs[0].Readings())
	if perGPS > 1.2 {
		t.Errorf("%.2f allocations per batch of %d readings (%d GPS): more than the GPS fixes", allocs, bs[0].Readings(), len(bs[0].GPS))
	}
}
