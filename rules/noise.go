package rules

import (
	"math"
	"time"

	"github.com/paulmach/orb"

	"github.com/trenzinho/trenzinho/profile"
)

// noiseRule flags a sound level, estimated at the receptor, above the NBR 10151 limit of the
// area type and period (Lei 2.277/2018 Art. 27; fined by Art. 45, VII).
//
// The meter on the vehicle measures near the source. On each sound reading, the L_Aeq over
// noise.window_s (60 s) at the meter, L₁, gives the level at the receptor (the façade across
// the sidewalk) by point-source spreading, L₂ = L₁ − 20·log10(r₂/r₁), with r₁ the meter's
// distance to the loudspeaker (registry, else noise.r1_m) and r₂ noise.r2_m. The limit is the
// area type's (the NBR zone at the vehicle's position, else noise.default_area) for the period:
// night from noise.night_start to noise.day_start, extended to noise.rest_day_night_end on a
// Sunday or holiday morning. The condition is L₂ > limit + noise.meter_tolerance_db and must
// hold for noise.confirm_s. The value is an estimate and the episode says so.
//
// The estimate is an indício, not an NBR 10151 measurement (no residual-sound correction, no
// measurement position): the episode never grounds an auto by itself (grounds_auto false). The
// agent's NBR 10151 measurement recorded on the episode (VerifyNBR10151) is its missing ground;
// the draft then cites that measurement. Outside every NBR zone the area type is unknown and
// the rule is not evaluated, unless the profile names noise.default_area (with its reason).
type noiseRule struct{}

func (noiseRule) id() string { return RuleNoiseLimit }

// RuleNoiseLimit is the id of the rule.
const RuleNoiseLimit = "noise_limit"

func (noiseRule) observe(e *Engine, v *Vehicle, r *reading) {
	if r.Sound == nil || r.Sound.LAeqDB == nil {
		return
	}
	lat, lon, havePos := v.position(r.T)
	if !havePos {
		return
	}
	p := e.profile.Noise
	area := p.DefaultArea
	if e.places != nil {
		if z, ok := e.zoneAt(v, orb.Point{lon, lat}); ok {
			if _, known := p.Areas[z.Area]; known {
				area = z.Area
			}
		}
	}
	if area == "" {
		return // no zone, no default: the limit of the place is unknown
	}
	r1 := p.R1M
	if v.R1M > 0 {
		r1 = v.R1M
	}
	// The level over the window: bounded by the running sums when that decides (leqbounds.go),
	// else computed.
	lo, hi, full, bounded := v.leqBounds(r.T, p.WindowS)
	if e.exactLeq {
		bounded = false
	}
	if bounded && !full {
		return
	}
	var l2 float64
	if !bounded {
		l1, ok := v.leq(r.T, p.WindowS)
		if !ok {
			return
		}
		l2 = ReceptorLevel(l1, r1, p.R2M)
	}
	limit := AreaLimit(e.profile, area, r.T)
	d := v.detector(RuleNoiseLimit)
	prm := params{Confirm: seconds(p.ConfirmS), Clear: seconds(p.ClearS), MaxGap: soundMaxGap, MaxPending: 600}
	if bounded {
		// ReceptorLevel is monotonic, so the receptor level lies in [l2lo, l2hi]. The interval
		// stands for it where every value in it judges alike: all at or below the limit (the
		// value of a false sample is not used), or all above it without reaching the run's
		// peak (the value is only compared with the peak). Otherwise the level is computed.
		l2lo, l2hi := ReceptorLevel(lo, r1, p.R2M), ReceptorLevel(hi, r1, p.R2M)
		switch {
		case l2hi <= limit+p.ToleranceDB:
			l2 = l2hi
			e.leqBounded++
		case l2lo > limit+p.ToleranceDB && !d.peakMayChange(r.T, prm, l2hi):
			l2 = l2hi
			e.leqBounded++
		default:
			l1, _ := v.leq(r.T, p.WindowS) // full, as leqBounds said
			l2 = ReceptorLevel(l1, r1, p.R2M)
			e.leqComputed++
		}
	} else {
		e.leqComputed++
	}
	d.step(v, RuleNoiseLimit, prm,
		sample{T: r.T, Cond: l2 > limit+p.ToleranceDB, Value: l2, Lat: lat, Lon: lon, Evidence: soundEvidence(r, *r.Sound.LAeqDB, lat, lon, true)},
		func(start time.Time) *Episode {
			ep := e.newEpisode(v, RuleNoiseLimit, start, "dB(A)", limit, p.ToleranceDB, soundSource)
			ep.Area = ptr(area)
			ep.Estimate = true
			ep.R1M = r1
			ep.needs(VerifyNBR10151, noteEstimate)
			return ep
		})
}

// ReceptorLevel estimates the level at distance r2 from the level L1 at distance r1 of a point
// source: L2 = L1 − 20·log10(r2/r1).
func ReceptorLevel(l1, r1, r2 float64) float64 { return l1 - 20*math.Log10(r2/r1) }

// AreaLimit returns the limit of an area type at t: its night value from night_start to
// day_start (to rest_day_night_end when the morning is a Sunday or holiday), its day value
// otherwise.
func AreaLimit(p *profile.Profile, area string, t time.Time) float64 {
	a := p.Noise.Areas[area]
	if Night(p, t) {
		return a.Night
	}
	return a.Day
}

// Night reports whether t falls in the profile's night period.
func Night(p *profile.Profile, t time.Time) bool {
	lt := t.In(p.Location())
	h, mi, _ := lt.Clock()
	m := profile.Clock(h*60 + mi)
	dayStart := profile.MustClock(p.Noise.DayStart)
	nightStart := profile.MustClock(p.Noise.NightStart)
	if p.Noise.RestDayNightEnd != "" && p.RestDay(lt) {
		dayStart = max(dayStart, profile.MustClock(p.Noise.RestDayNightEnd))
	}
	if dayStart <= nightStart {
		return m < dayStart || m >= nightStart
	}
	return m >= nightStart && m < dayStart
}

// noteEstimate is the grounds note of noise_limit.
const noteEstimate = "indício: nível estimado no receptor, não medição conforme a NBR 10151; registrar a medição do agente"
