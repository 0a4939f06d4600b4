package rules

import (
	"math"
	"time"
)

// telemetryRule flags a tachograph whose D8 output is silent or contradicts the GPS while the
// vehicle moves (Lei 2.277/2018 Art. 22 III and 23: the tachograph is the legal instrument).
// On each GPS reading that passed the evidence checks and shows at least
// telemetry_fault.gps_min_kmh (10 km/h): "silent" when the tachograph sent nothing for
// telemetry_fault.tacho_silent_s (60 s), "contradicts_gps" when its fresh speed differs from the
// GPS's by more than telemetry_fault.max_disagree_kmh. Confirmation telemetry_fault.confirm_s.
// Only for vehicles whose tachograph has reported at least once or whose bridge lists one
// (status devices); GPS or meter silence is an operational alert shown on the fleet page, not an
// episode. The value is the GPS speed, the limit gps_min_kmh.
type telemetryRule struct{}

func (telemetryRule) id() string { return RuleTelemetryFault }

// RuleTelemetryFault is the id of the rule.
const RuleTelemetryFault = "telemetry_fault"

func (telemetryRule) observe(e *Engine, v *Vehicle, r *reading) {
	if r.GPS == nil || !r.Quality || r.GPS.SpeedKmh == nil {
		return
	}
	fitted := !v.TachoT.IsZero()
	if v.Status != nil {
		if _, ok := v.Status.Devices["tacho"]; ok {
			fitted = true
		}
	}
	if !fitted {
		return
	}
	p := e.profile.TelemetryFault
	gps := *r.GPS.SpeedKmh
	detail := ""
	switch {
	case v.TachoT.IsZero() || r.T.Sub(v.TachoT) >= seconds(p.TachoSilentS):
		detail = "silent"
	case v.tachoPresent(r.T) && math.Abs(*v.TachoKmh-gps) > p.MaxDisagreeKmh:
		detail = "contradicts_gps"
	}
	cond := gps >= p.GPSMinKmh && detail != ""
	ev := readingEvidence(r, "gps", gps, "km/h").at(r.GPS.Lat, r.GPS.Lon)
	d := v.detector(RuleTelemetryFault)
	d.step(v, RuleTelemetryFault, params{
		Confirm: seconds(p.ConfirmS), Clear: seconds(p.ConfirmS), MaxGap: speedMaxGap, MaxPending: 1024,
	}, sample{T: r.T, Cond: cond, Value: gps, Lat: r.GPS.Lat, Lon: r.GPS.Lon, Evidence: ev},
		func(start time.Time) *Episode {
			ep := e.newEpisode(v, RuleTelemetryFault, start, "km/h", p.GPSMinKmh, 0, "gps")
			ep.Detail = detail
			return ep
		})
}
