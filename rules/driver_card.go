package rules

import (
	"time"
)

// driverCardRule flags a vehicle in service driven with a tachograph card of a driver the
// registry does not know, or of a driver registered for another licensee (Lei 2.277/2018 Art.
// 19: "Todos os prestadores de serviço licenciados, os condutores dos veículos, seus auxiliares
// e os veículos utilizados para prestação do serviço deverão ser cadastrados no órgão
// responsável por conceder a licença como condição mínima para prestação do serviço"; fined as
// the profile maps rules.driver_unregistered — Piúma: Art. 47). The card is the tachograph's
// (fresh within cardFresh); without a card nothing is judged (only a card proves who drove).
// Detail: "nao_cadastrado" or "outro_licenciado". Confirmation document_expired.confirm_s,
// clearing document_expired.clear_s (the same in-service presence). Not evaluated without a
// registry or a licensee.
type driverCardRule struct{}

func (driverCardRule) id() string { return RuleDriverUnregistered }

// RuleDriverUnregistered is the id of the rule.
const RuleDriverUnregistered = "driver_unregistered"

// Details of driver_unregistered.
const (
	DriverNotRegistered    = "nao_cadastrado"
	DriverOtherLicensee    = "outro_licenciado"
	driverEvidenceInterval = 30 * time.Second
)

func (driverCardRule) observe(e *Engine, v *Vehicle, r *reading) {
	detail := ""
	cond, judged := driverStep(e, v, r, func(card string) bool {
		d, ok := v.driverByCard(card)
		switch {
		case !ok:
			detail = DriverNotRegistered
		case d.Licensee != v.Licensee:
			detail = DriverOtherLicensee
		}
		return detail != ""
	})
	if !judged {
		return
	}
	stepInService(e, v, r, RuleDriverUnregistered, cond, func(ep *Episode) { ep.Detail = detail })
}

// driverStep judges a driver condition on a reading: in service with a fresh card. judged is
// false when the reading is not judged at all.
func driverStep(e *Engine, v *Vehicle, r *reading, bad func(card string) bool) (cond, judged bool) {
	if v.driverByCard == nil || v.Licensee == "" {
		return false, false
	}
	if r.Tacho == nil && (r.GPS == nil || !r.Evidence) && r.Service == nil {
		return false, false
	}
	in, known := e.InService(v, r.T)
	if !known {
		return false, false
	}
	card := ""
	if v.Card != "" && absDur(r.T.Sub(v.CardT)) <= cardFresh {
		card = v.Card
	}
	return in && card != "" && bad(card), true
}

// stepInService feeds the detector of a rule whose condition holds while the vehicle is in service (the driver, suspension and inspection rules).
func stepInService(e *Engine, v *Vehicle, r *reading, rule string, cond bool, fill func(*Episode)) {
	p := e.profile.DocumentExpired
	lat, lon, _ := v.position(r.T)
	d := v.detector(rule)
	var ev evidence
	if cond && (d.LastTrue.IsZero() || r.T.Sub(d.LastTrue) >= driverEvidenceInterval || d.EpisodeID == "" && len(d.Pending) == 0) {
		ev = readingEvidence(r, kindOf(r), 0, "")
		if lat != 0 || lon != 0 {
			ev = ev.at(lat, lon)
		}
	}
	d.step(v, rule, params{Confirm: seconds(p.ConfirmS), Clear: seconds(p.ClearS), MaxGap: hoursMaxGap, MaxPending: 256},
		sample{T: r.T, Cond: cond, Lat: lat, Lon: lon, Evidence: ev},
		func(start time.Time) *Episode {
			_, source, ok := v.SpeedAt(r.T)
			if !ok {
				source = "clock"
			}
			ep := e.newEpisode(v, rule, start, "", 0, 0, source)
			if rule != RuleUninspectedCirculating {
				// Art. 32 § 3º bars the vehicle from "trafegar", in service or not: its
				// movement is the element, observed.
				e.groundService(v, r.T, ep)
			}
			fill(ep)
			return ep
		})
}
