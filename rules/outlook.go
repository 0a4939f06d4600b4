package rules

import (
	"slices"
	"time"

	"github.com/paulmach/orb"

	"github.com/trenzinho/trenzinho/profile"
)

// This file answers, for the driver's coach in the bridge (firmware-bridge/coach), what the
// rules are about to judge: the coach runs an Engine over the vehicle's own readings and asks
// it ahead of the judgement, so that the warning and the verdict come from the same code and the
// same profile. Nothing here decides an episode.

// Holding reports whether the condition of rule held on the vehicle's last sample of it — the
// rule's own verdict on that reading, before its confirmation time opens an episode — and since
// when (the first sample of the run). peak is the run's largest value.
func (v *Vehicle) Holding(rule string) (since time.Time, peak float64, ok bool) {
	d := v.Detectors[rule]
	if d == nil || d.LastTrue.IsZero() || !d.LastTrue.Equal(d.LastSample) {
		return time.Time{}, 0, false
	}
	return d.RunStart, d.Peak, true
}

// Emitting is the sound rules' emission test at t: the L_Aeq over the profile's emission window
// at the meter, whether it reaches the emission threshold, and whether the window is full.
func (e *Engine) Emitting(v *Vehicle, t time.Time) (level float64, emits, known bool) {
	return e.emitting(v, t)
}

// Position is the vehicle's position at t, as the rules take it (a fresh fix of good quality).
func (v *Vehicle) Position(t time.Time) (lat, lon float64, ok bool) { return v.position(t) }

// Profile is the legal profile the engine judges by.
func (e *Engine) Profile() *profile.Profile { return e.profile }

// SiteNear is a sensitive site that sensitive_zone_sound would judge near a position.
type SiteNear struct {
	ID, Name, Category string
	// DistanceM is the distance to the site (to a polygon's edge); ToRadiusM how far the
	// vehicle is from entering its protected radius (0: inside).
	DistanceM, ToRadiusM float64
	// HoursKnown: the site's opening hours are on file (else it is taken as open).
	HoursKnown bool
}

// AppendOpenSites appends to dst the sites of the profile's sensitive categories whose protected
// radius (sensitive.radius_m) lies within withinM of the position and that are open at t
// (SiteOpen), nearest first. The position margin in the accused's favour is not applied: a
// warning errs towards warning.
func (e *Engine) AppendOpenSites(dst []SiteNear, lat, lon, withinM float64, t time.Time) []SiteNear {
	if e.places == nil {
		return dst
	}
	p := e.profile.Sensitive
	local := t.In(e.profile.Location())
	e.hits = e.places.AppendSensitiveWithin(e.hits[:0], orb.Point{lon, lat}, p.RadiusM+withinM)
	for _, h := range e.hits {
		if !slices.Contains(p.Categories, string(h.Feature.Category)) {
			continue
		}
		open, known := SiteOpen(e.profile, h.Feature, local)
		if !open {
			continue
		}
		dst = append(dst, SiteNear{ID: h.Feature.ID, Name: h.Feature.Name, Category: string(h.Feature.Category),
			DistanceM: h.DistanceM, ToRadiusM: max(0, h.DistanceM-p.RadiusM), HoursKnown: known})
	}
	return dst
}

// MinutesToEnd returns how many minutes remain before the end of the service window t lies in
// (the day's service hours, profile.HoursOn), and false when t lies outside them.
func MinutesToEnd(p *profile.Profile, t time.Time) (float64, bool) {
	for _, w := range serviceWindowsAround(p, t) {
		if !t.Before(w.Start) && t.Before(w.End) {
			return w.End.Sub(t).Minutes(), true
		}
	}
	return 0, false
}
