package rules

import (
	"math"
	"time"

	"github.com/paulmach/orb"
)

// routeRule flags a vehicle in service outside the itinerary authorised for that day and time
// (Lei 2.277/2018 Art. 38, the itinerary the Executive establishes; a preliminary notice, Art.
// 41 I, and on repeat after it Art. 45, I, "não cumprir as determinações da Administração
// Municipal"; Art. 36 only obliges the licensee to inform the itinerary). The itineraries are its licensee's, valid on that date and active at that local time
// (their days and hours, with the profile's holidays); the condition is "in service and outside
// the corridor of every such itinerary" — which includes running when no itinerary of the
// licensee is active. It must hold for route.confirm_s and clears after route.clear_s. The value
// is the distance to the nearest authorised route (of any schedule), the limit its corridor.
// Not evaluated without geofences, a licensee (the registry) or any itinerary of the licensee.
type routeRule struct{}

func (routeRule) id() string { return RuleRouteDeviation }

// RuleRouteDeviation is the id of the rule.
const RuleRouteDeviation = "route_deviation"

const routeMaxGap = time.Minute

func (routeRule) observe(e *Engine, v *Vehicle, r *reading) {
	if r.GPS == nil || !r.Evidence || e.places == nil || v.Licensee == "" {
		return
	}
	all := e.placesOf(v.Licensee).itineraries
	if len(all) == 0 {
		return
	}
	in, known := e.InService(v, r.T)
	if !known {
		return
	}
	pt := orb.Point{r.GPS.Lon, r.GPS.Lat}
	local := r.T.In(e.profile.Location())
	_, holiday := e.profile.Holiday(local)
	active := e.active[:0]
	for _, it := range all {
		if it.ActiveAt(local, holiday) {
			active = append(active, it)
		}
	}
	e.active = active
	inside := false
	var nearest float64
	if len(active) == len(all) {
		inside, nearest = e.places.InCorridor(pt, all) // every one active: one pass answers both
	} else {
		if len(active) > 0 {
			inside, _ = e.places.InCorridor(pt, active)
		}
		_, nearest = e.places.InCorridor(pt, all)
	}
	corridor := e.profile.Route.CorridorM
	if len(all) > 0 && all[0].CorridorM > 0 {
		corridor = all[0].CorridorM
	}
	if math.IsInf(nearest, 0) {
		nearest = 0
	}
	p := e.profile.Route
	ev := readingEvidence(r, "gps", nearest, "m").at(r.GPS.Lat, r.GPS.Lon)
	d := v.detector(RuleRouteDeviation)
	d.step(v, RuleRouteDeviation, params{
		Confirm: seconds(p.ConfirmS), Clear: seconds(p.ClearS), MaxGap: routeMaxGap, MaxPending: 2048,
	}, sample{T: r.T, Cond: in && !inside, Value: nearest, Lat: r.GPS.Lat, Lon: r.GPS.Lon, Evidence: ev},
		func(start time.Time) *Episode {
			ep := e.newEpisode(v, RuleRouteDeviation, start, "m", corridor, 0, "gps")
			e.groundService(v, r.T, ep)
			return ep
		})
}
