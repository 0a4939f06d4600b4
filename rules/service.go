package rules

import (
	"cmp"
	"fmt"
	"time"

	"github.com/paulmach/orb"
	"github.com/trenzinho/trenzinho/wire"
)

// How the monitor established that a vehicle was in service (ServiceBasis.How). Only the
// first two are observations: the service switch on, and a boarding observed at a boarding
// point (stopped there with the passenger door open). The others are inferences: an episode
// whose service was inferred is an alert (grounds_auto false), since "em serviço" is an element
// of the articles that bind the vehicle "quando em serviço" (Art. 23, 29) and a vehicle moves
// empty to a workshop, to refuel or to the inspection.
const (
	ServiceSwitch   = "switch"   // the service switch on, since Since
	ServiceBoarding = "boarding" // stopped with the door open at boarding point Place, at Since
	// ServiceMovement: moving outside the licensee's garage (or anywhere, no garage on file).
	ServiceMovement = "movement"
	// ServiceStopAtPoint: stopped at a boarding point, the door not observed open.
	ServiceStopAtPoint = "stop_at_point"
	// ServiceBehaviour: the switch off, but the vehicle behaves as in service
	// (in_service.switch_suspect.is_service).
	ServiceBehaviour = "behaviour"
)

// ServiceBasis says how the monitor established that the vehicle was in service when an
// episode of a rule that needs it opened: what the auto states of that element.
type ServiceBasis struct {
	How   string    `json:"how"`
	Since wire.Time `json:"since,omitzero"`
	Place string    `json:"place,omitempty"`
}

// Observed reports whether service was observed (the switch, or a boarding at a point), not
// inferred.
func (s *ServiceBasis) Observed() bool {
	return s != nil && (s.How == ServiceSwitch || s.How == ServiceBoarding)
}

// noteServiceInferred is the grounds note of an episode whose service was inferred.
const noteServiceInferred = "em serviço inferido apenas pelo movimento (sem chave de serviço ligada, embarque observado em ponto ou verificação do agente)"

// groundService records on an episode of a rule that binds the vehicle in service how its
// service was established at t; service not observed makes the episode an alert that the
// agent's field verification of boarding (VerifyField with Boarding true) can turn into a draft.
func (e *Engine) groundService(v *Vehicle, t time.Time, ep *Episode) {
	b := e.serviceBasis(v, t)
	ep.Service = &b
	if !b.Observed() {
		ep.needs(VerifyField, noteServiceInferred)
	}
}

// serviceBasis is how the vehicle's service at t is established (InService true).
func (e *Engine) serviceBasis(v *Vehicle, t time.Time) ServiceBasis {
	if e.svc.judging && e.svc.known && e.svc.v == v && e.svc.t.Equal(t) && e.svc.basis.How != "" {
		return e.svc.basis
	}
	_, _, b := e.inService(v, t)
	return b
}

// noteBoarding records a boarding observed at t: the vehicle stopped with the passenger door
// open inside a demarcated boarding point.
func (e *Engine) noteBoarding(v *Vehicle, t time.Time) {
	if e.places == nil || v.DoorOpen == nil || !*v.DoorOpen || v.StoppedSince.IsZero() {
		return
	}
	lat, lon, ok := v.position(t)
	if !ok {
		return
	}
	if h, at := e.boardingPointAt(v, orb.Point{lon, lat}); at {
		// The boarding is stated at the moment it began: the door opened during the stop.
		at := v.DoorOpenedAt
		if at.IsZero() || at.Before(v.StoppedSince) {
			at = v.StoppedSince
		}
		v.BoardedAt, v.BoardedPlace = at, cmp.Or(h.Feature.Name, h.Feature.ID)
	}
}

// boarded reports the boarding observed at a point that still establishes service at t.
func (e *Engine) boarded(v *Vehicle, t time.Time) (ServiceBasis, bool) {
	if v.BoardedAt.IsZero() || t.Before(v.BoardedAt) || t.Sub(v.BoardedAt) > seconds(e.profile.InService.BoardingHoldsS) {
		return ServiceBasis{}, false
	}
	return ServiceBasis{How: ServiceBoarding, Since: wire.NewTime(v.BoardedAt), Place: v.BoardedPlace}, true
}

// Text states, in Portuguese for an auto's facts (times in loc), how the vehicle's service was
// established: "Em serviço, constatado por: chave de serviço ligada desde 19:02.".
func (s *ServiceBasis) Text(loc *time.Location) string {
	at := func() string { return s.Since.In(loc).Format("15:04") }
	switch s.How {
	case ServiceSwitch:
		if s.Since.IsZero() {
			return "Em serviço, constatado por: chave de serviço ligada."
		}
		return "Em serviço, constatado por: chave de serviço ligada desde " + at() + "."
	case ServiceBoarding:
		return fmt.Sprintf("Em serviço, constatado por: parada com porta aberta no ponto %s às %s.", s.Place, at())
	case ServiceStopAtPoint:
		return "Em serviço não constatado: inferido da parada em ponto de embarque, sem porta aberta registrada."
	case ServiceBehaviour:
		return "Em serviço não constatado: inferido do comportamento do veículo, com a chave de serviço desligada."
	}
	return "Em serviço não constatado: inferido apenas pelo movimento."
}
