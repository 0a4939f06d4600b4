package rules

import (
	"fmt"
	"strconv"
	"time"

	"github.com/paulmach/orb"
)

// boardingRule flags sound emitted during boarding and alighting (Lei 2.277/2018 Art. 28, final
// part, "quando em operação de embarque e desembarque de passageiros"; fined by Art. 45, VII):
// the vehicle emits (as in sensitive_zone_sound) while stopped (below boarding.stopped_kmh)
// inside a demarcated boarding point — Art. 36 §4 puts boarding "nos pontos demarcados" — or
// with the passenger door open (the door input, wire "door": an open door is observed
// boarding wherever it happens; boarding outside the points is also boarding_outside_points).
// A stop anywhere else with the door closed or not wired (a traffic light, a jam) is no
// observed boarding, however long. The episode names the boarding point (Episode.Site, nil
// when only the door said boarding), says whether the door was open (Detail
// BoardingDoorOpen) and how long the vehicle had stood there (Episode.StoppedS), which is what
// the auto states; never a motive not observed. Confirmation
// and clearing as sensitive_zone_sound. Sound not confirmed as music by the agent is an alert
// until confirmed (sensitive.unconfirmed_sound_penalty). Without geofences, a speed, a position
// or a full emission window, the reading is not judged.
type boardingRule struct{}

func (boardingRule) id() string { return RuleBoardingSound }

// RuleBoardingSound is the id of the rule.
const RuleBoardingSound = "boarding_sound"

func (boardingRule) observe(e *Engine, v *Vehicle, r *reading) {
	if r.Sound == nil || r.Sound.LAeqDB == nil || e.places == nil {
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
	lat, lon, havePos := v.position(r.T)
	if !havePos && v.Fix != nil && !v.StoppedSince.IsZero() {
		lat, lon, havePos = v.Fix.Lat, v.Fix.Lon, true // stopped: the last position still holds
	}
	stopped := !v.StoppedSince.IsZero()
	var point *Site
	if stopped && havePos {
		if h, at := e.boardingPointAt(v, orb.Point{lon, lat}); at {
			point = siteOf(h.Feature, h.DistanceM)
		}
	}
	door := stopped && v.DoorOpen != nil && *v.DoorOpen
	d := v.detector(RuleBoardingSound)
	d.step(v, RuleBoardingSound, params{
		Confirm: seconds(p.Sensitive.ConfirmS), Clear: seconds(p.Sensitive.ClearS), MaxGap: soundMaxGap, MaxPending: 600,
	}, sample{T: r.T, Cond: emits && (point != nil || door), Value: level, Lat: lat, Lon: lon, Evidence: soundEvidence(r, *r.Sound.LAeqDB, lat, lon, havePos)},
		func(start time.Time) *Episode {
			ep := e.newEpisode(v, RuleBoardingSound, start, "dB(A)", p.Sensitive.EmissionDB, 0, soundSource)
			ep.Site = point
			e.groundBoarding(ep)
			return ep
		})
	if ep := v.episode(d.EpisodeID); ep != nil && ep.End == nil && (point != nil || door) {
		if door {
			ep.Detail = BoardingDoorOpen
		}
		if point != nil && (ep.Site == nil || ep.Site.ID == point.ID) {
			ep.Site = point
		}
		if point == nil || ep.Site.ID == point.ID {
			ep.StoppedS = max(ep.StoppedS, r.T.Sub(v.StoppedSince).Seconds())
		}
		e.groundBoarding(ep)
	}
}

// groundBoarding judges a boarding_sound episode's grounds from what it observed so far. Art. 28
// names the "operação de embarque e desembarque de passageiros": a stop at a point is boarding
// observed only when the passenger door input said open, or the vehicle stood there for the
// profile's boarding.dwell_s (a short stop is a traffic halt at a point on the road, not a
// boarding). Otherwise the episode is an alert that the agent's field verification of
// boarding (VerifyField, boarding true) supplies, when it lacks nothing else.
func (e *Engine) groundBoarding(ep *Episode) {
	ep.grounded()
	if !e.profile.Rules[RuleBoardingSound].Infraction {
		ep.noGround(noteAlertOnly)
	}
	if ep.Detail != BoardingDoorOpen && ep.StoppedS < e.profile.Boarding.DwellS {
		ep.needs(VerifyField, fmt.Sprintf("embarque não observado: parada de %s s no ponto, menos que os %s s do perfil (boarding.dwell_s), sem porta aberta registrada",
			strconv.FormatFloat(ep.StoppedS, 'f', 0, 64), strconv.FormatFloat(e.profile.Boarding.DwellS, 'f', 0, 64)))
	}
	e.groundSound(ep)
}

// BoardingDoorOpen is the Detail of a boarding_sound episode during which the passenger door
// input said the door was open.
const BoardingDoorOpen = "door_open"

// groundSound applies the profile's policy for sound not confirmed as music by the agent
// (Art. 45, VII fines "executar músicas … com altura do som acima do permitido"; a meter cannot
// tell music from an engine or passengers): by default the episode is an alert that the agent's
// confirmation (VerifyMusic) turns into a draft; a profile that names a penalty for unconfirmed
// sound cites it instead.
func (e *Engine) groundSound(ep *Episode) {
	if pen := e.profile.Sensitive.UnconfirmedSoundPenalty; pen != "" {
		ep.Penalty = pen
		return
	}
	ep.needs(VerifyMusic, noteMusic)
}

// noteMusic is the grounds note of sound the agent has not confirmed as music.
const noteMusic = "som não confirmado como música pelo agente (Art. 45, VII: \"executar músicas\"); registrar a verificação"
