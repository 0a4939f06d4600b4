package rules

import (
	"time"
)

// speedRule flags speed above the limit in service (Lei 2.277/2018 Art. 23; fined by Art. 46, X).
//
// Art. 23 binds the vehicle "quando em serviço": out of service (Engine.InService false, or
// unknown) a speed is not judged at all — speeding out of service is the traffic authority's,
// under the CTB, not this law's. A vehicle whose service switch is off but that behaves as in
// service raises service_switch_suspect instead (switch_suspect.go). Only the tachograph's
// speed grounds an auto: a GPS-only episode is an alert (grounds_auto false).
//
// The tachograph is the legal instrument (Art. 22 III, 23): while its output is fresh, its speed
// is judged and GPS speed is not. Without a tachograph, GPS speed is judged, but only samples that
// passed the evidence checks (Engine.gpsEvidence): a fix that is not estimated, an HDOP within
// the profile's bound, and a speed consistent with the distance and time from the previous
// accepted fix. The condition is speed > limit + tolerance, strictly; it must hold for confirm_s
// and the episode closes after clear_s at or below it.
type speedRule struct{}

func (speedRule) id() string { return RuleSpeed }

// RuleSpeed is the id of the rule.
const RuleSpeed = "speed"

// speedMaxGap is the longest silence of the speed source that does not break a run.
const speedMaxGap = 5 * time.Second

func (speedRule) observe(e *Engine, v *Vehicle, r *reading) {
	p := e.profile.Speed
	kmh, source, ok := speedOf(v, r)
	if !ok {
		return
	}
	in, known := e.InService(v, r.T)
	if !known {
		return
	}
	threshold := p.LimitKmh + p.ToleranceKmh
	lat, lon, ev := speedEvidence(v, r, source, kmh)
	d := v.detector(RuleSpeed)
	d.step(v, RuleSpeed, params{
		Confirm:    seconds(p.ConfirmS),
		Clear:      seconds(p.ClearS),
		MaxGap:     speedMaxGap,
		MaxPending: 4096,
	}, sample{T: r.T, Cond: in && kmh > threshold, Value: kmh, Lat: lat, Lon: lon, Evidence: ev},
		func(start time.Time) *Episode {
			ep := e.newEpisode(v, RuleSpeed, start, "km/h", p.LimitKmh, p.ToleranceKmh, source)
			if source != "tacho" {
				// Art. 23 names the tachograph; a GPS receiver is no INMETRO-verified speed
				// meter.
				ep.noGround(noteGPSSpeed)
			}
			e.groundService(v, r.T, ep)
			return ep
		})
}

// speedOf is the speed a reading gives the speed rules: the tachograph's (the legal
// instrument), or while the tachograph's output is not fresh a GPS speed that passed the
// evidence checks; ok false when the reading gives none.
func speedOf(v *Vehicle, r *reading) (kmh float64, source string, ok bool) {
	switch {
	case r.Tacho != nil && r.Tacho.SpeedKmh != nil:
		return *r.Tacho.SpeedKmh, "tacho", true
	case r.GPS != nil && r.GPS.SpeedKmh != nil && !v.tachoPresent(r.T) && r.Evidence:
		return *r.GPS.SpeedKmh, "gps", true
	}
	return 0, "", false
}

// speedEvidence is the position of a speed reading (the vehicle's, when fresh) and its evidence.
func speedEvidence(v *Vehicle, r *reading, source string, kmh float64) (lat, lon float64, ev evidence) {
	lat, lon, _ = v.position(r.T)
	ev = readingEvidence(r, source, kmh, "km/h")
	if r.GPS != nil {
		ev = ev.at(r.GPS.Lat, r.GPS.Lon)
	} else if lat != 0 || lon != 0 {
		ev = ev.at(lat, lon)
	}
	return lat, lon, ev
}

func seconds(s float64) time.Duration { return time.Duration(s * float64(time.Second)) }

// noteGPSSpeed is the grounds note of a speed measured by the GPS alone.
const noteGPSSpeed = "velocidade medida apenas pelo GPS, sem leitura do tacógrafo (instrumento aferido pelo INMETRO)"
