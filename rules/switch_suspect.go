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
	seen, suspect := e.behavesInService(v, r.T)
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
			ep.Detail = seen.detail(e.profile.Location())
			ep.noGround(noteSwitchSuspect)
			return ep
		})
}

// noteSwitchSuspect is the grounds note of service_switch_suspect.
const noteSwitchSuspect = "alerta: chave de serviço desligada com comportamento de serviço; requer verificação do agente"

// serviceBehaviour is what made a vehicle behave as in service: a stop at a boarding point
// within the window (boardedAt, zero if none) or its sound system on (level at the meter).
type serviceBehaviour struct {
	boardedAt time.Time
	emits     bool
	level     float64
}

// detail states the behaviour as evidence in Portuguese; built only when an episode opens, not
// for every reading.
func (b serviceBehaviour) detail(loc *time.Location) string {
	detail := "no itinerário autorizado em seu horário"
	if !b.boardedAt.IsZero() {
		detail += "; parado em ponto de embarque às " + b.boardedAt.In(loc).Format("15:04:05")
	}
	if b.emits {
		detail += fmt.Sprintf("; som ligado (%.0f dB(A) no decibelímetro)", b.level)
	}
	return detail
}

// behavesInService reports whether the vehicle behaves as in service at t whatever its switch
// says (on an authorised itinerary in its hours, and stopped at a boarding point or with sound
// on), and what it did.
func (e *Engine) behavesInService(v *Vehicle, t time.Time) (serviceBehaviour, bool) {
	if e.places == nil || v.Licensee == "" {
		return serviceBehaviour{}, false
	}
	lat, lon, ok := v.position(t)
	if !ok {
		return serviceBehaviour{}, false
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
		return serviceBehaviour{}, false
	}
	p := e.profile.InService.SwitchSuspect
	boarded := !v.BoardingStopAt.IsZero() && t.Sub(v.BoardingStopAt) <= seconds(p.WindowS)
	level, emits, _ := e.emitting(v, t)
	if !boarded && !emits {
		return serviceBehaviour{}, false
	}
	b := serviceBehaviour{emits: emits, level: level}
	if boarded {
		b.boardedAt = v.BoardingStopAt
	}
	return b, true
}
