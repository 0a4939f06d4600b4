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
	outside := minutesOutside(v.hours.windows(e.profile, r.T), r.T)
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

// MinutesOutside returns how many minutes t lies outside the profile's service hours (0 inside):
// the distance to the nearest service window, that of its own day or of the day before or after,
// each day with its own hours (profile.HoursOn).
func MinutesOutside(p *profile.Profile, t time.Time) float64 {
	return minutesOutside(serviceWindowsAround(p, t), t)
}

func minutesOutside(ws [3]profile.ServiceWindow, t time.Time) float64 {
	best := -1.0
	for _, w := range ws {
		var d time.Duration
		switch {
		case !t.Before(w.Start) && t.Before(w.End):
			return 0
		case t.Before(w.Start):
			d = w.Start.Sub(t)
		default:
			d = t.Sub(w.End)
		}
		if m := d.Minutes(); best < 0 || m < best {
			best = m
		}
	}
	return best
}

// serviceWindowsAround returns the service windows of the day before t, of its day and of the
// day after (a window past midnight reaches into the next day).
func serviceWindowsAround(p *profile.Profile, t time.Time) [3]profile.ServiceWindow {
	lt := t.In(p.Location())
	var ws [3]profile.ServiceWindow
	for i := range ws {
		ws[i] = p.ServiceWindowOf(time.Date(lt.Year(), lt.Month(), lt.Day()+i-1, 12, 0, 0, 0, p.Location()))
	}
	return ws
}

// hoursCache holds the service windows around one local calendar day [from, to) of a profile:
// a vehicle's readings come in time order, so the windows (three days' hours, each parsed and
// placed in the calendar) are computed once a day instead of at every reading.
type hoursCache struct {
	p        *profile.Profile
	from, to time.Time
	ws       [3]profile.ServiceWindow
}

// windows returns serviceWindowsAround(p, t), from the cache when t lies in its day.
func (c *hoursCache) windows(p *profile.Profile, t time.Time) [3]profile.ServiceWindow {
	if c.p == p && !t.Before(c.from) && t.Before(c.to) {
		return c.ws
	}
	lt := t.In(p.Location())
	c.p = p
	c.from = time.Date(lt.Year(), lt.Month(), lt.Day(), 0, 0, 0, 0, p.Location())
	c.to = time.Date(lt.Year(), lt.Month(), lt.Day()+1, 0, 0, 0, 0, p.Location())
	c.ws = serviceWindowsAround(p, t)
	return c.ws
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
