package rules

import (
	"fmt"
	"time"

	"github.com/paulmach/orb"
)

// switchSuspectRule raises an alert when the service switch says "out of service" while the
// vehicle behaves as in service: inside the corridor of an itinerary of its licensee that is
// active at that day and hour, and either it stood at a demarcated boarding point within
// in_service.switch_suspect.window_s or its sound system emits (as sensitive_zone_sound
// measures emission). The switch is the licensee's own device (Art. 23 binds the vehicle
// "quando em serviço"): the alert gives the agent the evidence, and with
// in_service.switch_suspect.is_service the other rules take that behaviour as service
// (Engine.InService). Never an infraction by itself. Not evaluated without a wired switch,
// geofences, a licensee or a position.
type switchSuspectRule struct{}

func (switchSuspectRule) id() string { return RuleServiceSwitchSuspect }

// RuleServiceSwitchSuspect is the id of the rule.
const RuleServiceSwitchSuspect = "service_switch_suspect"

const switchSuspectMaxGap = 5 * time.Minute

func (switchSuspectRule) observe(e *Engine, v *Vehicle, r *reading) {
	if r.Tacho == nil && (r.GPS == nil || !r.Evidence) && r.Sound == nil {
		return
	}
	if e.places == nil || v.Licensee == "" || v.ServiceOn == nil {
		return
	}
	lat, lon, ok := v.position(r.T)
	if !ok {
		return
	}
	detail, suspect := e.behavesInService(v, r.T)
	cond := !*v.ServiceOn && suspect
	p := e.profile.InService.SwitchSuspect
	var ev evidence
	d := v.detector(RuleServiceSwitchSuspect)
	if cond && (d.LastTrue.IsZero() || r.T.Sub(d.LastTrue) >= hoursEvidenceStep) {
		ev = readingEvidence(r, kindOf(r), 0, "").at(lat, lon)
	}
	d.step(v, RuleServiceSwitchSuspect, params{
		Confirm: seconds(p.ConfirmS), Clear: time.Minute, MaxGap: switchSuspectMaxGap, MaxPending: 256,
	}, sample{T: r.T, Cond: cond, Lat: lat, Lon: lon, Evidence: ev},
		func(start time.Time) *Episode {
			ep := e.newEpisode(v, RuleServiceSwitchSuspect, start, "", 0, 0, "gps")
			ep.Detail = detail
			ep.noGround(noteSwitchSuspect)
			return ep
		})
}

// noteSwitchSuspect is the grounds note of service_switch_suspect.
const noteSwitchSuspect = "alerta: chave de serviço desligada com comportamento de serviço; requer verificação do agente"

// behavesInService reports whether the vehicle behaves as in service at t whatever its switch
// says, and the evidence in Portuguese ("itinerário X ativo; parada em ponto de embarque …").
func (e *Engine) behavesInService(v *Vehicle, t time.Time) (string, bool) {
	if e.places == nil || v.Licensee == "" {
		return "", false
	}
	lat, lon, ok := v.position(t)
	if !ok {
		return "", false
	}
	if !v.StoppedSince.IsZero() && e.atBoardingPoint(v, t) {
		v.BoardingStopAt = t
	}
	local := t.In(e.profile.Location())
	_, holiday := e.profile.Holiday(local)
	its := e.placesOf(v.Licensee).itineraries
	in := false
	for i, it := range its {
		if it.ActiveAt(local, holiday) {
			if in, _ = e.places.InCorridor(orb.Point{lon, lat}, its[i:i+1]); in {
				break
			}
		}
	}
	if !in {
		return "", false
	}
	p := e.profile.InService.SwitchSuspect
	boarded := !v.BoardingStopAt.IsZero() && t.Sub(v.BoardingStopAt) <= seconds(p.WindowS)
	level, emits, _ := e.emitting(v, t)
	if !boarded && !emits {
		return "", false
	}
	detail := "no itinerário autorizado em seu horário"
	if boarded {
		detail += fmt.Sprintf("; parado em ponto de embarque às %s", v.BoardingStopAt.In(e.profile.Location()).Format("15:04:05"))
	}
	if emits {
		detail += fmt.Sprintf("; som ligado (%.0f dB(A) no decibelímetro)", level)
	}
	return detail, true
}
