package rules

import (
	"time"

	"github.com/trenzinho/trenzinho/profile"
)

// hoursRule flags a vehicle in service outside the authorised hours (Lei 2.277/2018 Art. 29:
// 09h–23h; fined by Art. 47), after the profile's grace period for going to and from the garage.
//
// A reading is a violation when the vehicle is in service (Engine.InService) and the local time
// lies more than grace_min outside [start, end). The episode's value is how many minutes outside
// the window the vehicle was (its peak the largest), and its limit is the grace. It needs to know
// whether the vehicle is in service: without a speed or a service switch it is not evaluated.
type hoursRule struct{}

func (hoursRule) id() string { return RuleHours }

// RuleHours is the id of the rule.
const RuleHours = "hours"

const (
	hoursMaxGap       = 5 * time.Minute
	hoursClear        = 5 * time.Minute // short stops do not end an episode
	hoursEvidenceStep = 30 * time.Second
)

func (hoursRule) observe(e *Engine, v *Vehicle, r *reading) {
	if r.Tacho == nil && (r.GPS == nil || !r.Evidence) && r.Service == nil {
		return
	}
	in, known := e.InService(v, r.T)
	if !known {
		return
	}
	p := e.profile.ServiceHours
	outside := MinutesOutside(e.profile, r.T)
	cond := in && outside > p.GraceM
	lat, lon, _ := v.position(r.T)
	d := v.detector(RuleHours)
	var ev evidence
	if cond && (d.LastTrue.IsZero() || r.T.Sub(d.LastTrue) >= hoursEvidenceStep || d.EpisodeID == "" && len(d.Pending) == 0) {
		ev = readingEvidence(r, kindOf(r), outside, "min")
		if lat != 0 || lon != 0 {
			ev = ev.at(lat, lon)
		}
	}
	d.step(v, RuleHours, params{
		Confirm:    seconds(p.ConfirmS),
		Clear:      hoursClear,
		MaxGap:     hoursMaxGap,
		MaxPending: 256,
	}, sample{T: r.T, Cond: cond, Value: outside, Lat: lat, Lon: lon, Evidence: ev},
		func(start time.Time) *Episode {
			ep := e.newEpisode(v, RuleHours, start, "min", p.GraceM, 0, "clock")
			e.groundService(v, r.T, ep)
			return ep
		})
}

// MinutesOutside returns how many minutes the local time of t lies outside the profile's
// service hours (0 inside).
func MinutesOutside(p *profile.Profile, t time.Time) float64 {
	lt := t.In(p.Location())
	y, mo, d := lt.Date()
	midnight := time.Date(y, mo, d, 0, 0, 0, 0, p.Location())
	m := lt.Sub(midnight).Minutes()
	start := float64(profile.MustClock(p.ServiceHours.Start))
	end := float64(profile.MustClock(p.ServiceHours.End))
	const day = 24 * 60
	inside := func(m float64) bool {
		if start <= end {
			return m >= start && m < end
		}
		return m >= start || m < end // a window past midnight
	}
	if inside(m) {
		return 0
	}
	after := m - end
	if after < 0 {
		after += day
	}
	before := start - m
	if before < 0 {
		before += day
	}
	return min(after, before)
}

func kindOf(r *reading) string {
	switch {
	case r.Tacho != nil:
		return "tacho"
	case r.GPS != nil:
		return "gps"
	case r.Sound != nil:
		return "sound"
	case r.Door != nil:
		return "door"
	}
	return "service"
}
