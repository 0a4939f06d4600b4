package sim

import (
	"fmt"
	"time"
)

// Leg is one stretch of a scripted day: drive in a straight line to To at Kmh, or stand still
// (Stop, or until the offset Until from the start of the script), with the sound level DB at the
// meter. A scripted vehicle's path is the list of its legs from its Start point.
type Leg struct {
	To  Point
	Kmh float64
	// Stop stands still for this long (To and Kmh are ignored).
	Stop time.Duration
	// Until stands still until this offset from the start of the script (nothing when the
	// vehicle is already late).
	Until time.Duration
	DB    float64
	// TachoSilent: the tachograph sends nothing during this leg (its output cable is loose).
	TachoSilent bool
	// Mark names a scripted event that begins with this leg (see Script.Events).
	Mark string
	// SwitchOff: the driver's service switch is off during this leg (parked in the garage
	// before the trip, or driving out of service). It is on during every other leg, and off
	// once the script is over (parked for good).
	SwitchOff bool
	// Door: the passenger door is open during this leg (passengers boarding at a stop).
	Door bool
}

// Script is the scripted day of one vehicle: where it starts, its legs, and the sound level
// when it has played them all (parked, as at Start).
type Script struct {
	Start  Point
	Legs   []Leg
	IdleDB float64

	timed []timedLeg
}

type timedLeg struct {
	from, to   Point
	start, dur time.Duration
	kmh, db    float64
	course     float64
	mark       string
	silent     bool
	off, door  bool
}

// plan lays the legs out in time, once.
func (s *Script) plan() {
	if s.timed != nil {
		return
	}
	pos, at, course := s.Start, time.Duration(0), 0.0
	for _, l := range s.Legs {
		tl := timedLeg{from: pos, to: pos, start: at, db: l.DB, course: course, mark: l.Mark, silent: l.TachoSilent,
			off: l.SwitchOff, door: l.Door}
		switch {
		case l.Stop > 0:
			tl.dur = l.Stop
		case l.Until > 0:
			tl.dur = max(0, l.Until-at)
		case l.Kmh > 0:
			d := distance(pos, l.To)
			tl.to, tl.kmh = l.To, l.Kmh
			tl.dur = time.Duration(d / (l.Kmh / 3.6) * float64(time.Second))
			if d > 0 {
				course = bearing(pos, l.To)
			}
			tl.course = course
		}
		s.timed = append(s.timed, tl)
		pos, at = tl.to, at+tl.dur
	}
}

// Duration is how long the script runs before the vehicle is parked for good.
func (s *Script) Duration() time.Duration {
	s.plan()
	if len(s.timed) == 0 {
		return 0
	}
	last := s.timed[len(s.timed)-1]
	return last.start + last.dur
}

// MarkAt returns the offset at which the leg marked name begins.
func (s *Script) MarkAt(name string) (time.Duration, bool) {
	s.plan()
	for _, l := range s.timed {
		if l.mark == name {
			return l.start, true
		}
	}
	return 0, false
}

// at returns the state at offset e (without its time and odometer).
func (s *Script) at(e time.Duration) State {
	s.plan()
	for _, l := range s.timed {
		if e < l.start+l.dur {
			f := 0.0
			if l.dur > 0 {
				f = float64(e-l.start) / float64(l.dur)
			}
			p := Point{l.from.Lat + (l.to.Lat-l.from.Lat)*f, l.from.Lon + (l.to.Lon-l.from.Lon)*f}
			return State{Lat: p.Lat, Lon: p.Lon, Course: l.course, SpeedKmh: l.kmh, LAeqDB: l.db, TachoSilent: l.silent,
				ServiceOn: !l.off, DoorOpen: l.door}
		}
	}
	p, course := s.Start, 0.0
	if n := len(s.timed); n > 0 {
		p, course = s.timed[n-1].to, s.timed[n-1].course
	}
	return State{Lat: p.Lat, Lon: p.Lon, Course: course, LAeqDB: s.IdleDB}
}

// Timeline describes the legs with their offsets, for people reading a script.
func (s *Script) Timeline() []string {
	s.plan()
	var out []string
	for _, l := range s.timed {
		what := fmt.Sprintf("drive %.0f m at %.0f km/h", distance(l.from, l.to), l.kmh)
		if l.kmh == 0 {
			what = "stand still"
		}
		line := fmt.Sprintf("%s–%s %s, %.0f dB", Clock(l.start), Clock(l.start+l.dur), what, l.db)
		if l.silent {
			line += ", tachograph silent"
		}
		if l.off {
			line += ", service switch off"
		}
		if l.door {
			line += ", door open"
		}
		if l.mark != "" {
			line += " [" + l.mark + "]"
		}
		out = append(out, line)
	}
	return out
}

// Clock formats an offset from the start of a script as MM:SS.
func Clock(d time.Duration) string {
	d = d.Round(time.Second)
	return fmt.Sprintf("%02d:%02d", int(d.Minutes()), int(d.Seconds())%60)
}
