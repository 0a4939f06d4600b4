package rules

import (
	"fmt"
	"time"
)

// The device's clock is the licensee's: it is evidence, not authority. The engine orders a
// vehicle's readings by device time (a spool replays hours of readings late, and they are
// judged as if live), but only within a bounded window: a reading timed more than
// ClockTolerance ahead of the receive clock is not judged and cannot move the vehicle's
// instruments forward, so that no reading can make the vehicle's later true readings "late"
// (out of order) for more than ClockTolerance. Each such reading, and each batch that ingest and
// the monitor refuse as future_time (more than max_ahead ahead), is a clock fault: the vehicle
// gets a clock_fault episode, a telemetry fault shown in the fleet health and never drafted (it
// is no infraction of the law), open until its clock has been right for ClockFaultClear.

// ClockFaultRule is the rule id of the clock_fault episodes.
const ClockFaultRule = "clock_fault"

// ClockTolerance is how far a device time may be ahead of its receipt and still be judged. A
// clock set from GNSS or a disciplined RTC is within a second; a minute absorbs a drifting RTC.
const ClockTolerance = time.Minute

// ClockFaultClear is how long a vehicle's clock must be right before its clock_fault closes.
const ClockFaultClear = 10 * time.Minute

// ClockFault records that a vehicle's device time was ahead of the receive clock receivedAt by
// ahead: it opens the vehicle's clock_fault episode or raises its peak. The judge calls it for
// batches refused as future_time; Apply for readings beyond ClockTolerance.
func (e *Engine) ClockFault(vehicle string, ahead time.Duration, receivedAt time.Time) {
	e.clockFault(e.vehicle(vehicle), ahead, receivedAt)
}

func (e *Engine) clockFault(v *Vehicle, ahead time.Duration, at time.Time) {
	v.ClockFaults++
	v.ClockFaultAt = at
	e.changes.dirty[v.ID] = true
	if ep := v.episode(v.ClockFaultID); ep != nil && ep.End == nil {
		if ahead.Seconds() > ep.Peak {
			ep.Peak, ep.PeakAt = ahead.Seconds(), newTime(at)
		}
		ep.DurationS = at.Sub(ep.Start.Time).Seconds()
		v.changed(ep, nil, EventUpdate)
		return
	}
	// The receive clock times the episode: the device's is what is at fault.
	ep := e.newEpisode(v, ClockFaultRule, at, "s", ClockTolerance.Seconds(), 0, "clock")
	ep.Peak, ep.PeakAt = ahead.Seconds(), newTime(at)
	ep.Detail = fmt.Sprintf("ahead %s", ahead.Round(time.Second))
	v.ClockFaultID = ep.ID
	v.open(ep, nil)
}

// clockRight closes the vehicle's clock_fault once its clock has been right for ClockFaultClear.
func (e *Engine) clockRight(v *Vehicle, at time.Time) {
	ep := v.episode(v.ClockFaultID)
	if ep == nil || ep.End != nil || at.Sub(v.ClockFaultAt) < ClockFaultClear {
		return
	}
	end := newTime(v.ClockFaultAt)
	ep.End = &end
	ep.DurationS = v.ClockFaultAt.Sub(ep.Start.Time).Seconds()
	reason := ClosedCleared
	ep.Closed = &reason
	v.ClockFaultID = ""
	v.changed(ep, nil, EventClose)
}
