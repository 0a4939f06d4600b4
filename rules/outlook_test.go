package rules

import (
	"testing"
	"time"

	"github.com/trenzinho/trenzinho/profile"
)

func TestMinutesToEnd(t *testing.T) {
	p := profile.Piuma() // 09:00–23:00, America/Sao_Paulo
	loc := p.Location()
	for _, c := range []struct {
		at     string
		left   float64
		inside bool
	}{
		{"22:40", 20, true},
		{"22:55", 5, true},
		{"09:00", 14 * 60, true},
		{"23:00", 0, false},
		{"08:59", 0, false},
	} {
		clk := profile.MustClock(c.at)
		at := time.Date(2026, 11, 27, 0, int(clk), 0, 0, loc)
		left, inside := MinutesToEnd(p, at)
		if left != c.left || inside != c.inside {
			t.Errorf("%s: MinutesToEnd = %v, %v; want %v, %v", c.at, left, inside, c.left, c.inside)
		}
	}
}

// TestHoldingIsTheRulesVerdict: Holding says the speed rule's condition holds from the first
// reading above limit + tolerance, before the confirmation opens the episode, and no longer once
// the speed is back at the limit.
func TestHoldingIsTheRulesVerdict(t *testing.T) {
	r := newRun(t)
	tr := newTrip(noon)
	r.apply(t, tr.batches(repeat(20, 5)...), time.Second)
	v := r.e.VehicleByID(tr.vehicle)
	if _, _, ok := v.Holding(RuleSpeed); ok {
		t.Fatal("holding at 20 km/h")
	}
	r.apply(t, tr.batches(repeat(45, 5)...), time.Second)
	since, peak, ok := v.Holding(RuleSpeed)
	if !ok || peak != 45 || !since.Equal(noon.Add(5*time.Second)) {
		t.Fatalf("Holding = %v, %v, %v; want since the first 45 km/h reading", since, peak, ok)
	}
	if n := len(r.rule(RuleSpeed)); n != 0 {
		t.Fatalf("%d episodes before the confirmation", n)
	}
	r.apply(t, tr.batches(repeat(30, 5)...), time.Second)
	if _, _, ok := v.Holding(RuleSpeed); ok {
		t.Fatal("still holding at 30 km/h")
	}
}
