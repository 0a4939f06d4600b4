package rules

import (
	"cmp"
	"fmt"
	"time"

	"github.com/paulmach/orb"

	"github.com/trenzinho/trenzinho/profile"
)

// boardingOutsideRule flags boarding outside the demarcated points (Lei 2.277/2018 Art. 36 § 4º:
// "O embarque e desembarque de passageiros … será feito … nos pontos demarcados, salvo para
// proteção da integridade física da pessoa usuária do transporte"; not listed in Art. 45 or 46,
// so fined by Art. 47 in Piúma's profile). It needs the passenger door input (wire "door"):
// the door open while the vehicle is stopped (below boarding.stopped_kmh) and in service
// (Engine.InService) at a position outside every demarcated boarding point and outside its
// licensee's garages. Judged in the accused's favour: a point counts as reached when the
// distance to it is within its radius plus the position margin (the profile's, as for
// sensitive sites), so a stop at the edge of a point is never outside it. The condition must
// hold boarding.door_confirm_s; it clears after boarding.door_clear_s. The episode states
// what was observed: how long the door stood open (Peak, s), where, and the nearest point
// (Detail); the Art. 36 § 4º exception is for the licensee's defence, and the draft says so.
// Not evaluated without the door input, geofences, a position, or a known service state.
type boardingOutsideRule struct{}

func (boardingOutsideRule) id() string { return RuleBoardingOutsidePoints }

// RuleBoardingOutsidePoints is the id of the rule.
const RuleBoardingOutsidePoints = "boarding_outside_points"

// boardingOutsideMaxGap is the longest silence of the inputs that does not break a run.
const boardingOutsideMaxGap = 30 * time.Second

// nearestPointSearchM bounds the search for the nearest boarding point the facts name.
const nearestPointSearchM = 2000

func (boardingOutsideRule) observe(e *Engine, v *Vehicle, r *reading) {
	if r.Door == nil && r.Tacho == nil && (r.GPS == nil || !r.Evidence) {
		return
	}
	if v.DoorOpen == nil || e.places == nil {
		return
	}
	d := v.detector(RuleBoardingOutsidePoints)
	open := *v.DoorOpen && !v.StoppedSince.IsZero()
	if !open && d.EpisodeID == "" && d.RunStart.IsZero() {
		return // the usual case: nothing open, nothing to look up
	}
	lat, lon, havePos := v.position(r.T)
	if !havePos && v.Fix != nil && !v.StoppedSince.IsZero() {
		lat, lon, havePos = v.Fix.Lat, v.Fix.Lon, true // stopped: the last position still holds
	}
	if !havePos {
		return
	}
	var near *Site
	cond := false
	if open {
		in, known := e.InService(v, r.T)
		if !known {
			return
		}
		if in && !e.inGarage(v, r.T) {
			var at bool
			near, at = e.nearestBoardingPoint(v, r.T, lat, lon)
			cond = !at
		}
	}
	p := e.profile.Boarding
	var openS float64
	if !v.DoorOpenedAt.IsZero() {
		openS = r.T.Sub(v.DoorOpenedAt).Seconds()
	}
	ev := readingEvidence(r, kindOf(r), openS, "s").at(lat, lon)
	d.step(v, RuleBoardingOutsidePoints, params{
		Confirm:    seconds(cmp.Or(p.DoorConfirmS, profile.DefaultDoorConfirmS)),
		Clear:      seconds(cmp.Or(p.DoorClearS, profile.DefaultDoorClearS)),
		MaxGap:     boardingOutsideMaxGap,
		MaxPending: 600,
	}, sample{T: r.T, Cond: cond, Value: openS, Lat: lat, Lon: lon, Evidence: ev},
		func(start time.Time) *Episode {
			ep := e.newEpisode(v, RuleBoardingOutsidePoints, start, "s", 0, 0, "door")
			ep.Site = near
			ep.Detail = outsideDetail(near)
			return ep
		})
}

// nearestBoardingPoint returns the nearest boarding point within nearestPointSearchM (nil: none)
// and whether the position is at one, in the accused's favour: within its radius plus the
// position margin.
func (e *Engine) nearestBoardingPoint(v *Vehicle, t time.Time, lat, lon float64) (*Site, bool) {
	margin := e.profile.MarginM(v.hdop(t))
	hits := e.places.BoardingPointsWithin(orb.Point{lon, lat}, nearestPointSearchM+margin)
	var near *Site
	for i, h := range hits {
		if h.DistanceM <= h.Feature.RadiusM+margin {
			return siteOf(h.Feature, h.DistanceM), true
		}
		if i == 0 {
			near = siteOf(h.Feature, h.DistanceM)
			near.MarginM = margin
		}
	}
	return near, false
}

// outsideDetail states where the door opened, as observed: the nearest boarding point and the
// least distance from it (the measured distance less the margin for position error).
func outsideDetail(near *Site) string {
	if near == nil {
		return fmt.Sprintf("nenhum ponto de embarque demarcado a menos de %d m", nearestPointSearchM)
	}
	return fmt.Sprintf("a pelo menos %.0f m do ponto de embarque demarcado mais próximo (\"%s\")",
		max(0, near.DistanceM-near.MarginM), cmp.Or(near.Name, near.ID))
}
