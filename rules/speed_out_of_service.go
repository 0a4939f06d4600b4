package rules

import (
	"time"
)

// speedOutOfServiceRule is an operational alert, never an infraction of Lei 2.277/2018: a
// vehicle out of service moving faster than the speed rule's limit. Art. 23 binds the vehicle
// only "quando em serviço" ("O veículo … quando em serviço, deverá trafegar em velocidade máxima
// de 30km/h"); out of service its speed is the traffic authority's, under the Código de Trânsito
// Brasileiro (CTB), not the municipality's under this law. The dashboard shows it so that the
// inspector knows, and may tell the traffic authority; its episodes never ground an auto
// (grounds_auto false whatever the profile says) and never become drafts. It is judged exactly
// as speed is (the same source, limit, tolerance and timing) when Engine.InService says out of
// service, so that one speed run is either speed or speed_out_of_service, never both; unknown
// service is neither.
type speedOutOfServiceRule struct{}

func (speedOutOfServiceRule) id() string { return RuleSpeedOutOfService }

// RuleSpeedOutOfService is the id of the rule.
const RuleSpeedOutOfService = "speed_out_of_service"

func (speedOutOfServiceRule) observe(e *Engine, v *Vehicle, r *reading) {
	p := e.profile.Speed
	kmh, source, ok := speedOf(v, r)
	if !ok {
		return
	}
	in, known := e.InService(v, r.T)
	if !known {
		return
	}
	lat, lon, ev := speedEvidence(v, r, source, kmh)
	d := v.detector(RuleSpeedOutOfService)
	d.step(v, RuleSpeedOutOfService, params{
		Confirm:    seconds(p.ConfirmS),
		Clear:      seconds(p.ClearS),
		MaxGap:     speedMaxGap,
		MaxPending: 4096,
	}, sample{T: r.T, Cond: !in && kmh > p.LimitKmh+p.ToleranceKmh, Value: kmh, Lat: lat, Lon: lon, Evidence: ev},
		func(start time.Time) *Episode {
			ep := e.newEpisode(v, RuleSpeedOutOfService, start, "km/h", p.LimitKmh, p.ToleranceKmh, source)
			ep.noGround(noteOutOfService)
			return ep
		})
}

// noteOutOfService is the grounds note of speed_out_of_service.
const noteOutOfService = "alerta operacional: veículo fora de serviço; o Art. 23 vale \"quando em serviço\" — velocidade fora de serviço é da competência do órgão de trânsito (CTB), não desta lei"
