package whatif

import (
	"cmp"
	"slices"
	"time"

	"github.com/trenzinho/trenzinho/profile"
)

// Coverage is what the archive holds of the period: a gap is no compliance, and the report
// states it beside every number.
type Coverage struct {
	Vehicles []VehicleCoverage // by vehicle id
	// Gaps are the silences of a vehicle of at least GapMin that overlap the profile's service
	// hours (a vehicle silent all night is parked, not missing), longest first.
	Gaps   []Gap
	GapMin time.Duration
}

// VehicleCoverage is one vehicle's archive in the period.
type VehicleCoverage struct {
	Vehicle string
	// Unknown: not in the registry of either side, so judged by neither (as the live judge
	// refuses it).
	Unknown  bool
	Batches  int
	Readings int
	// Missing are readings batches carried that the archive lacks (two of one time are one
	// point); Orphans readings the archive holds that no batch of the period claims.
	Missing, Orphans int
	First, Last      time.Time // of the batches' readings
	// HoursWithData counts the clock hours (local) with at least one batch.
	HoursWithData int
	hours         map[int64]bool
	silences      []Gap
}

// Gap is a silence of a vehicle.
type Gap struct {
	Vehicle  string
	From, To time.Time
}

// Duration is the gap's length.
func (g Gap) Duration() time.Duration { return g.To.Sub(g.From) }

// DefaultGapMin is the shortest silence the coverage lists: ten minutes, five times the gap
// timeout of Piúma's profile.
const DefaultGapMin = 10 * time.Minute

func (c *VehicleCoverage) add(b rebuilt, prevSent time.Time) {
	c.Batches++
	c.Readings += b.Readings()
	c.Missing += b.missing
	first := batchStart(b)
	if c.First.IsZero() || first.Before(c.First) {
		c.First = first
	}
	c.Last = later(c.Last, b.SentAt.Time)
	if c.hours == nil {
		c.hours = map[int64]bool{}
	}
	c.hours[b.SentAt.Unix()/3600] = true
	if !prevSent.IsZero() && first.Sub(prevSent) >= DefaultGapMin {
		c.silences = append(c.silences, Gap{Vehicle: c.Vehicle, From: prevSent, To: first})
	}
}

// batchStart is the time of a batch's first reading (its send time when it has none).
func batchStart(b rebuilt) time.Time {
	t := b.SentAt.Time
	for _, x := range []time.Time{first(b.GPS, func(g int) time.Time { return b.GPS[g].T.Time }),
		first(b.Tacho, func(g int) time.Time { return b.Tacho[g].T.Time }),
		first(b.Sound, func(g int) time.Time { return b.Sound[g].T.Time })} {
		if !x.IsZero() && x.Before(t) {
			t = x
		}
	}
	return t
}

func first[T any](s []T, t func(int) time.Time) time.Time {
	if len(s) == 0 {
		return time.Time{}
	}
	return t(0)
}

// finish sums the hours and keeps the gaps within the service hours of p.
func (c *Coverage) finish(p *profile.Profile, from, to time.Time) {
	c.GapMin = DefaultGapMin
	slices.SortFunc(c.Vehicles, func(a, b VehicleCoverage) int { return cmp.Compare(a.Vehicle, b.Vehicle) })
	for k := range c.Vehicles {
		v := &c.Vehicles[k]
		v.HoursWithData = len(v.hours)
		// The silence before the first batch and after the last, within the period, are gaps
		// too.
		if v.Batches == 0 {
			v.silences = append(v.silences, Gap{Vehicle: v.Vehicle, From: from, To: to})
		} else {
			if v.First.Sub(from) >= DefaultGapMin {
				v.silences = append(v.silences, Gap{Vehicle: v.Vehicle, From: from, To: v.First})
			}
			if to.Sub(v.Last) >= DefaultGapMin {
				v.silences = append(v.silences, Gap{Vehicle: v.Vehicle, From: v.Last, To: to})
			}
		}
		for _, g := range v.silences {
			for _, s := range inServiceHours(p, g) {
				if s.Duration() >= DefaultGapMin {
					c.Gaps = append(c.Gaps, s)
				}
			}
		}
		v.hours, v.silences = nil, nil
	}
	slices.SortFunc(c.Gaps, func(a, b Gap) int {
		return cmp.Or(cmp.Compare(b.Duration(), a.Duration()), cmp.Compare(a.Vehicle, b.Vehicle), a.From.Compare(b.From))
	})
}

// inServiceHours cuts a silence to the parts of it within the profile's service hours, day by
// day (local time).
func inServiceHours(p *profile.Profile, g Gap) []Gap {
	loc := p.Location()
	var out []Gap
	f := g.From.In(loc)
	// From the day before: its window may run past midnight into the gap's first day.
	for day := time.Date(f.Year(), f.Month(), f.Day()-1, 0, 0, 0, 0, loc); day.Before(g.To); day = day.AddDate(0, 0, 1) {
		w := p.ServiceWindowOf(day)
		a, b := w.Start, w.End
		if a.Before(g.From) {
			a = g.From
		}
		if b.After(g.To) {
			b = g.To
		}
		if a.Before(b) {
			out = append(out, Gap{Vehicle: g.Vehicle, From: a.UTC(), To: b.UTC()})
		}
	}
	return out
}

// Totals sums the coverage of every vehicle.
func (c *Coverage) Totals() VehicleCoverage {
	var t VehicleCoverage
	for _, v := range c.Vehicles {
		t.Batches += v.Batches
		t.Readings += v.Readings
		t.Missing += v.Missing
		t.Orphans += v.Orphans
		t.HoursWithData += v.HoursWithData
	}
	return t
}

// GapHours is the total length of the gaps in hours.
func (c *Coverage) GapHours() float64 {
	var d time.Duration
	for _, g := range c.Gaps {
		d += g.Duration()
	}
	return d.Hours()
}
