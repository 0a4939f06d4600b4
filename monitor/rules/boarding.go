package rules

import (
	"time"
)

// boardingRule flags sound emitted during boarding and alighting (Lei 2.277/2018 Art. 28, final
// part; fined by Art. 45, VII): the vehicle emits (as in sensitive_zone_sound) while stopped
// (below boarding.stopped_kmh) at a boarding point, or stopped anywhere for boarding.dwell_s
// (60 s) or more — a stop that long is taken as boarding wherever it happens. Confirmation and
// clearing as sensitive_zone_sound. Without a speed or a full emission window, the reading is
// not judged; without geofences only the dwell criterion applies.
type boardingRule struct{}

func (boardingRule) id() string { return RuleBoardingSound }

// RuleBoardingSound is the id of the rule.
const RuleBoardingSound = "boarding_sound"

func (boardingRule) observe(e *Engine, v *Vehicle, r *reading) {
	if r.Sound == nil || r.Sound.LAeqDB == nil {
		return
	}
	if _, _, ok := v.SpeedAt(r.T); !ok {
		return
	}
	level, emits, known := e.emitting(v, r.T)
	if !known {
		return
	}
	p := e.profile
	stopped := !v.StoppedSince.IsZero()
	boarding := stopped && (e.atBoardingPoint(v, r.T) || r.T.Sub(v.StoppedSince) >= seconds(p.Boarding.DwellS))
	lat, lon, havePos := v.position(r.T)
	if !havePos && v.LastGPS != nil {
		lat, lon = v.LastGPS.Lat, v.LastGPS.Lon // stopped: the last position still holds
	}
	d := v.detector(RuleBoardingSound)
	d.step(v, RuleBoardingSound, params{
		Confirm: seconds(p.Sensitive.ConfirmS), Clear: seconds(p.Sensitive.ClearS), MaxGap: soundMaxGap, MaxPending: 600,
	}, sample{T: r.T, Cond: emits && boarding, Value: level, Lat: lat, Lon: lon, Evidence: soundEvidence(r, *r.Sound.LAeqDB, lat, lon, havePos)},
		func(start time.Time) *Episode {
			return e.newEpisode(v, RuleBoardingSound, start, "dB(A)", p.Sensitive.EmissionDB, 0, soundSource)
		})
}
