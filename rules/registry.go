package rules

import (
	"time"

	"github.com/trenzinho/trenzinho/registry"
)

// FromRegistry is the lookup Engine.SetRegistry takes for a registry store: each vehicle's
// licensee, r₁ and expired documents, read from the store's current version on every batch —
// so an edit through the API (registry.Store.PutVehicle, …) applies from the next batch on,
// without a restart and without touching the engine from another goroutine.
func FromRegistry(s *registry.Store) func(vehicle string) (Registration, bool) {
	return func(id string) (Registration, bool) {
		v, ok := s.Vehicle(id)
		if !ok {
			return Registration{}, false
		}
		return Registration{
			Licensee:     v.Licensee,
			LicenseeOn:   v.LicenseeOn,
			DriverByCard: s.DriverByCard,
			SuspendedOn: func(licensee string, day registry.Date) (registry.Period, bool) {
				l, ok := s.Licensee(licensee)
				if !ok {
					return registry.Period{}, false
				}
				return l.SuspendedOn(day)
			},
			UninspectedOn:     v.UninspectedOn,
			InspectionOverdue: v.InspectionOverdue,
			MeterDistanceM:    v.MeterDistanceM,
			Expired:           func(card string, at time.Time) []registry.Expiry { return s.ExpiredFor(id, card, at) },
		}, true
	}
}
