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

// ClockFault records that a vehicle's device time was ahead of the receive clock receivedAt by
// ahead: it opens the vehicle's clock_fault episode or raises its peak. The judge calls it for
// batches refused as future_time; Apply for readings beyond ClockTolerance.
func (e *Engine) ClockFault(vehicle string, ahead time.Duration, receivedAt time.Time) {
	e.clockFault(e.vehicle(vehicle), ahead, receivedAt)
}

func (e *Engine) clockFault(v *Vehicle, ahead time.Duration, at time.Time) {
	v.ClockFaults++
	e.fault(v, ClockFaultRule, at, ahead.Seconds(), ClockTolerance.Seconds(), fmt.Sprintf("ahead %s", ahead.Round(time.Second)))
}

// TelemetryConflictRule is the rule id of the episodes of conflicting replays: a batch with the
// (vehicle, epoch, seq) of one judged before and other content (package replay). Tamper
// evidence, never drafted; its peak is the number of conflicting batches.
const TelemetryConflictRule = "telemetry_conflict"

// Conflict records a conflicting replay of the vehicle's batch (epoch, seq), received at
// receivedAt: it opens the vehicle's telemetry_conflict episode or counts one more.
func (e *Engine) Conflict(vehicle, epoch string, seq uint64, receivedAt time.Time) {
	v := e.vehicle(vehicle)
	n := 1.0
	if ep := v.episode(v.Faults[TelemetryConflictRule].ID); ep != nil && ep.End == nil {
		n = ep.Peak + 1
	}
	e.fault(v, TelemetryConflictRule, receivedAt, n, 0, fmt.Sprintf("epoch %s seq %d", epoch, seq))
}

// FaultClear is how long a fault must not recur before its episode closes.
const FaultClear = 10 * time.Minute

// ClockFaultClear is how long a vehicle's clock must be right before its clock_fault closes.
const ClockFaultClear = FaultClear

// Fault is the open fault episode of one rule of a vehicle and when the fault was last seen.
type Fault struct {
	ID string    `json:"id"`
	At time.Time `json:"at"`
}

// fault opens the vehicle's episode of a fault rule, timed by the receive clock at (the device's
// clock may be what is at fault), or updates it: peak is the new peak when higher.
func (e *Engine) fault(v *Vehicle, rule string, at time.Time, peak, limit float64, detail string) {
	e.changes.dirty[v.ID] = true
	if v.Faults == nil {
		v.Faults = map[string]Fault{}
	}
	f := v.Faults[rule]
	f.At = at
	if ep := v.episode(f.ID); ep != nil && ep.End == nil {
		v.Faults[rule] = f
		if peak > ep.Peak {
			ep.Peak, ep.PeakAt = peak, newTime(at)
		}
		ep.Detail = detail
		ep.DurationS = at.Sub(ep.Start.Time).Seconds()
		v.changed(ep, nil, EventUpdate)
		return
	}
	source := "clock"
	if rule != ClockFaultRule {
		source = "batch"
	}
	ep := e.newEpisode(v, rule, at, "s", limit, 0, source)
	if rule == TelemetryConflictRule {
		ep.Unit = "batches"
	}
	ep.Peak, ep.PeakAt, ep.Detail = peak, newTime(at), detail
	f.ID = ep.ID
	v.Faults[rule] = f
	v.open(ep, nil)
}

// faultsCleared closes the vehicle's fault episodes whose fault did not recur for FaultClear
// before at (the receive clock of a batch that showed none).
func (e *Engine) faultsCleared(v *Vehicle, at time.Time) {
	for rule, f := range v.Faults {
		if at.Sub(f.At) < FaultClear {
			continue
		}
		delete(v.Faults, rule)
		e.changes.dirty[v.ID] = true
		ep := v.episode(f.ID)
		if ep == nil || ep.End != nil {
			continue
		}
		end := newTime(f.At)
		ep.End = &end
		ep.DurationS = f.At.Sub(ep.Start.Time).Seconds()
		reason := ClosedCleared
		ep.Closed = &reason
		v.changed(ep, nil, EventClose)
	}
}

// ClockFaultID returns the id of the vehicle's open clock_fault episode, or "".
func (v *Vehicle) ClockFaultID() string { return v.Faults[ClockFaultRule].ID }
