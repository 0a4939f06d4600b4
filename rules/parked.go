package rules

import (
	"time"

	"github.com/paulmach/orb"
)

// parkedRule flags a vehicle left parked on a public road: stationary for parked.min_minutes
// (30 min) outside its licensee's garage, outside the days and hours its licensee is authorised
// to serve (its itineraries; Art. 29's service hours when it has none). Lei 2.277/2018 Art. 13,
// sole paragraph ("Constitui infração administrativa punível com a cassação da licença, manter
// o veículo utilizado para prestação do serviço estacionado em via pública, fora dos dias e
// horários da prestação do serviço"): cassação is a recommendation to the agent, never
// automatic; the profile may fine it under Art. 47 ("As demais infrações não listadas nos artigos
// 45 e 46 …"). "Outside the garage" is not "via pública": the episode grounds an auto only where
// a public_road geofence says the place is a public road (it names it as its site); elsewhere it
// is an alert.
//
// The Pi loses power when the engine stops, so a parked vehicle is usually silent: the rule is
// judged on its readings and, once it has sent nothing for the gap timeout, from its last fix,
// advancing its device time by the receive clock (Engine.Tick). Not evaluated without
// geofences, a licensee (the registry) or a garage of the licensee.
type parkedRule struct{}

func (parkedRule) id() string { return RuleParkedPublicRoad }

// RuleParkedPublicRoad is the id of the rule.
const RuleParkedPublicRoad = "parked_public_road"

func (parkedRule) observe(e *Engine, v *Vehicle, r *reading) {
	if r.Tacho == nil && (r.GPS == nil || !r.Evidence) {
		return
	}
	parkedStep(e, v, r.T, r)
}

// tick judges a silent vehicle from its last fix at device time t.
func (parkedRule) tick(e *Engine, v *Vehicle, t time.Time) { parkedStep(e, v, t, nil) }

// parkedMaxGap: silence is what parked vehicles do; it never breaks the run.
const parkedMaxGap = 30 * 24 * time.Hour

func parkedStep(e *Engine, v *Vehicle, t time.Time, r *reading) {
	if e.places == nil || v.Licensee == "" || v.Fix == nil || len(e.placesOf(v.Licensee).garages) == 0 {
		return
	}
	p := e.profile.Parked
	pt := orb.Point{v.Fix.Lon, v.Fix.Lat}
	stopped := !v.StoppedSince.IsZero()
	if r != nil {
		// The run of readings the vehicle sent while parked: a silence longer than
		// parkedReadGap starts another.
		if !stopped {
			v.ParkedReadFrom = time.Time{}
		} else if v.ParkedReadFrom.IsZero() || t.Sub(v.ParkedReadT) > parkedReadGap {
			v.ParkedReadFrom = t
		}
		v.ParkedReadT = t
	}
	var minutes float64
	if stopped {
		minutes = t.Sub(v.StoppedSince).Minutes()
	}
	cond := stopped && minutes >= p.MinMinutes && !e.garageAt(v, pt) && !e.authorised(v, t)
	var ev evidence
	if r != nil && r.GPS != nil {
		ev = readingEvidence(r, "gps", minutes, "min").at(r.GPS.Lat, r.GPS.Lon)
	}
	d := v.detector(RuleParkedPublicRoad)
	if ev.ok && d.EpisodeID != "" && d.LastTrue.After(t.Add(-time.Minute)) {
		ev = evidence{} // one reading a minute is evidence enough of standing still
	}
	d.step(v, RuleParkedPublicRoad, params{Confirm: 0, Clear: time.Minute, MaxGap: parkedMaxGap, MaxPending: 16},
		sample{T: t, Cond: cond, Value: minutes, Lat: v.Fix.Lat, Lon: v.Fix.Lon, Evidence: ev},
		func(start time.Time) *Episode {
			ep := e.newEpisode(v, RuleParkedPublicRoad, start, "min", p.MinMinutes, 0, "gps")
			if road, ok := e.places.PublicRoadAt(pt); ok {
				ep.Site = siteOf(road, 0)
			}
			e.groundParked(v, ep)
			return ep
		})
	if ep := v.episode(d.EpisodeID); ep != nil && ep.End == nil && r != nil && cond {
		e.groundParked(v, ep)
	}
}

// parkedReadGap: a silence longer than this between two readings of a parked vehicle breaks
// the span its readings observed.
const parkedReadGap = 5 * time.Minute

// groundParked judges a parked_public_road episode's grounds. "Estacionado em via pública" is
// observed only by readings: the silence of a vehicle whose Pi lost power shows the episode,
// never fines it. The episode grounds an auto once one run of readings while parked there
// covered parked.min_minutes (Episode.ObservedS); otherwise it is an alert that the agent's
// field verification at the place supplies.
func (e *Engine) groundParked(v *Vehicle, ep *Episode) {
	if !v.ParkedReadFrom.IsZero() {
		from := v.ParkedReadFrom
		if from.Before(v.StoppedSince) {
			from = v.StoppedSince
		}
		ep.ObservedS = max(ep.ObservedS, v.ParkedReadT.Sub(from).Seconds())
	}
	ep.grounded()
	if !e.profile.Rules[RuleParkedPublicRoad].Infraction {
		ep.noGround(noteAlertOnly)
	}
	if ep.Site == nil {
		ep.noGround(noteNotPublicRoad)
	}
	if ep.ObservedS < e.profile.Parked.MinMinutes*60 {
		ep.needs(VerifyField, noteParkedSilent)
	}
}

// noteParkedSilent is the grounds note of a parked episode observed mostly by silence.
const noteParkedSilent = "estacionamento constatado por leituras por menos que o mínimo do perfil (parked.min_minutes): o período sem dados do veículo não é constatação"

// authorised reports whether the vehicle's licensee may serve at t: an itinerary of the
// licensee active then, or — when it has none on file — Art. 29's service hours.
func (e *Engine) authorised(v *Vehicle, t time.Time) bool {
	local := t.In(e.profile.Location())
	its := e.placesOf(v.Licensee).itineraries
	if len(its) == 0 {
		return MinutesOutside(e.profile, t) == 0
	}
	_, holiday := e.profile.Holiday(local)
	for _, it := range its {
		if it.ActiveAt(local, holiday) {
			return true
		}
	}
	return false
}

// noteNotPublicRoad is the grounds note of a vehicle parked where no public_road geofence is.
const noteNotPublicRoad = "local não identificado como via pública (sem geofence public_road): estacionado fora da garagem"
