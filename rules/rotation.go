package rules

import (
	"time"

	"github.com/paulmach/orb"

	"github.com/trenzinho/trenzinho/geofences"
)

// rotationRule flags a vehicle in service on an itinerary whose day and hour belong, by the
// rotation, to another licensee (Lei 2.277/2018 Art. 38 §1: "Somente um licenciado poderá
// trabalhar a cada dia em um mesmo local, horário e itinerário"; §2: "O rodízio, quando
// necessário, será previamente determinado pelo órgão fiscalizador"; Art. 36 §2). The rotation
// is the itineraries' schedule (geofences: each licensee's itinerary with its days and hours):
// the condition is in service, inside the corridor of another licensee's itinerary active at
// that local time, and inside none of the vehicle's own licensee's active itineraries. The value
// is 0; the detail names the other licensee's itinerary. The same act is also a
// route_deviation: by default both are one conduct (profile.ConductOf), one draft. Timing as
// route_deviation. Not evaluated without geofences or a licensee.
type rotationRule struct{}

func (rotationRule) id() string { return RuleRotationConflict }

// RuleRotationConflict is the id of the rule.
const RuleRotationConflict = "rotation_conflict"

func (rotationRule) observe(e *Engine, v *Vehicle, r *reading) {
	if r.GPS == nil || !r.Evidence || e.places == nil || v.Licensee == "" {
		return
	}
	in, known := e.InService(v, r.T)
	if !known {
		return
	}
	pt := orb.Point{r.GPS.Lon, r.GPS.Lat}
	local := r.T.In(e.profile.Location())
	_, holiday := e.profile.Holiday(local)
	other := ""
	if in {
		own := false
		// Only itineraries within their corridor count: no farther than the widest corridor.
		radius := min(max(e.profile.Route.CorridorM*4, 500), e.widestCorridorM())
		e.hits = e.places.AppendItinerariesNear(e.hits[:0], pt, radius)
		for _, h := range e.hits {
			it := h.Feature
			corridor := it.CorridorM
			if corridor <= 0 {
				corridor = e.profile.Route.CorridorM
			}
			if h.DistanceM > corridor || !it.ActiveAt(local, holiday) {
				continue
			}
			if it.Licensee == v.Licensee {
				own = true
				break
			}
			if other == "" {
				other = it.ID
			}
		}
		if own {
			other = ""
		}
	}
	p := e.profile.Route
	ev := readingEvidence(r, "gps", 0, "").at(r.GPS.Lat, r.GPS.Lon)
	d := v.detector(RuleRotationConflict)
	d.step(v, RuleRotationConflict, params{
		Confirm: seconds(p.ConfirmS), Clear: seconds(p.ClearS), MaxGap: time.Minute, MaxPending: 2048,
	}, sample{T: r.T, Cond: other != "", Lat: r.GPS.Lat, Lon: r.GPS.Lon, Evidence: ev},
		func(start time.Time) *Episode {
			ep := e.newEpisode(v, RuleRotationConflict, start, "", 0, 0, "gps")
			ep.Detail = other
			e.groundService(v, r.T, ep)
			return ep
		})
}

// widestCorridorM returns the widest corridor of the itineraries (their corridor_m, else the
// profile's); e.places must not be nil.
func (e *Engine) widestCorridorM() float64 {
	if e.corridorKnown {
		return e.widestCorridor
	}
	w := e.profile.Route.CorridorM
	for _, it := range e.places.OfKind(geofences.KindItinerary) {
		if it.CorridorM > 0 {
			w = max(w, it.CorridorM)
		}
	}
	e.widestCorridor, e.corridorKnown = w, true
	return w
}
