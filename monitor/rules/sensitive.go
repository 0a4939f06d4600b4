package rules

import (
	"slices"
	"time"

	"github.com/paulmach/orb"

	"github.com/trenzinho/trenzinho/geofences"
)

// sensitiveZoneRule flags sound emitted within the profile's radius (200 m) of hospitals and
// health units, schools, libraries, public offices and churches while they are open
// (Lei 2.277/2018 Art. 28; fined by Art. 45, VII).
//
// On each sound reading: the vehicle emits when the L_Aeq over sensitive.emission_window_s (5 s)
// at the meter is at or above sensitive.emission_threshold_db (70 dB(A)); Art. 28 forbids the
// emission itself, so no receptor estimate is needed. The site is the nearest one of the
// profile's categories within the radius — measured to a polygon's edge — that is open at that
// local time (its opening_hours, with the profile's holidays; none means always open). The
// condition must hold for sensitive.confirm_s and clears after sensitive.clear_s. Without
// geofences, a position or a full emission window, the reading is not judged.
type sensitiveZoneRule struct{}

func (sensitiveZoneRule) id() string { return RuleSensitiveZoneSound }

// RuleSensitiveZoneSound is the id of the rule.
const RuleSensitiveZoneSound = "sensitive_zone_sound"

// soundMaxGap is the longest silence of the meter that does not break a sound run.
const soundMaxGap = 10 * time.Second

func (sensitiveZoneRule) observe(e *Engine, v *Vehicle, r *reading) {
	if r.Sound == nil || r.Sound.LAeqDB == nil || e.places == nil {
		return
	}
	lat, lon, ok := v.position(r.T)
	if !ok {
		return
	}
	level, emits, known := e.emitting(v, r.T)
	if !known {
		return
	}
	p := e.profile.Sensitive
	site, dist, found := e.openSensitiveSite(lat, lon, r.T)
	cond := emits && found
	d := v.detector(RuleSensitiveZoneSound)
	d.step(v, RuleSensitiveZoneSound, params{
		Confirm: seconds(p.ConfirmS), Clear: seconds(p.ClearS), MaxGap: soundMaxGap, MaxPending: 600,
	}, sample{T: r.T, Cond: cond, Value: level, Lat: lat, Lon: lon, Evidence: soundEvidence(r, *r.Sound.LAeqDB, lat, lon, true)},
		func(start time.Time) *Episode {
			ep := e.newEpisode(v, RuleSensitiveZoneSound, start, "dB(A)", p.EmissionDB, 0, soundSource)
			ep.Site = siteOf(site, dist)
			return ep
		})
	// While open, the episode names the nearest open site the vehicle passed.
	if ep := v.episode(d.EpisodeID); ep != nil && ep.End == nil && cond && (ep.Site == nil || dist < ep.Site.DistanceM) {
		ep.Site = siteOf(site, dist)
	}
}

// openSensitiveSite returns the nearest site of the profile's categories within its radius that
// is open at t.
func (e *Engine) openSensitiveSite(lat, lon float64, t time.Time) (*geofences.Feature, float64, bool) {
	p := e.profile.Sensitive
	local := t.In(e.profile.Location())
	isHoliday := func(day time.Time) bool { _, ok := e.profile.Holiday(day); return ok }
	e.hits = e.places.AppendSensitiveWithin(e.hits[:0], orb.Point{lon, lat}, p.RadiusM)
	for _, h := range e.hits {
		if !slices.Contains(p.Categories, string(h.Feature.Category)) {
			continue
		}
		if h.Feature.OpeningHours != nil && !h.Feature.OpeningHours.OpenAt(local, isHoliday) {
			continue
		}
		return h.Feature, h.DistanceM, true
	}
	return nil, 0, false
}

func siteOf(f *geofences.Feature, dist float64) *Site {
	if f == nil {
		return nil
	}
	return &Site{ID: f.ID, Kind: string(f.Kind), Name: f.Name, Category: string(f.Category), DistanceM: dist,
		Verified: f.Verified(), Source: f.Source, OpeningHours: openingHoursText(f.OpeningHours)}
}

func openingHoursText(o *geofences.OpeningHours) string {
	if o == nil {
		return ""
	}
	return o.String()
}
