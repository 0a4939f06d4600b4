package rules

import (
	"time"
)

// A detector turns a per-sample condition into episodes: it opens an episode when the condition
// has held for confirm, keeps it open through short relapses (hysteresis), closes it when the
// condition has been false for clear, and breaks a run when the samples stop for longer than
// maxGap (device time). Its state is plain data so that it survives a monitor restart.
type detector struct {
	RunStart   time.Time  `json:"run_start,omitzero"`   // first true sample of the current run
	LastSample time.Time  `json:"last_sample,omitzero"` // last sample seen, true or false
	LastTrue   time.Time  `json:"last_true,omitzero"`
	ClearStart time.Time  `json:"clear_start,omitzero"` // first false sample while open
	Peak       float64    `json:"peak"`
	PeakAt     time.Time  `json:"peak_at,omitzero"`
	PeakLat    float64    `json:"peak_lat"`
	PeakLon    float64    `json:"peak_lon"`
	Pending    []Evidence `json:"pending,omitempty"` // evidence of an unconfirmed run
	EpisodeID  string     `json:"episode_id,omitempty"`
	// LastEvidence is when a rule that keeps one reading every so often as evidence
	// (document_expired) last kept one.
	LastEvidence time.Time `json:"last_evidence,omitzero"`
}

// sample is one evaluation of a rule's condition.
type sample struct {
	T        time.Time
	Cond     bool
	Value    float64
	Lat, Lon float64
	Evidence evidence // zero: nothing worth keeping as evidence
}

// evidence describes the Evidence a sample would give. Most samples' evidence is never kept
// (no run, no episode): the detector makes an Evidence of it only when it keeps it, so that
// judging a reading allocates nothing for it.
type evidence struct {
	ok       bool
	kind     string
	epoch    string
	seq      uint64
	t        time.Time
	value    float64
	unit     string
	pos      bool // lat and lon are known
	lat, lon float64
}

// readingEvidence describes the evidence of reading r: value in unit.
func readingEvidence(r *reading, kind string, value float64, unit string) evidence {
	return evidence{ok: true, kind: kind, epoch: r.Epoch, seq: r.Seq, t: r.T, value: value, unit: unit}
}

// at gives the evidence a position.
func (e evidence) at(lat, lon float64) evidence {
	e.pos, e.lat, e.lon = true, lat, lon
	return e
}

// make returns the Evidence; e.ok must be true.
func (e *evidence) make() Evidence {
	ev := Evidence{Kind: e.kind, Epoch: e.epoch, Seq: e.seq, T: newTime(e.t), Value: e.value, Unit: e.unit}
	if e.pos {
		ll := &[2]float64{e.lat, e.lon}
		ev.Lat, ev.Lon = &ll[0], &ll[1]
	}
	return ev
}

// params are a rule's timing parameters.
type params struct {
	Confirm, Clear, MaxGap time.Duration
	// MaxPending bounds the evidence kept for a run not yet confirmed.
	MaxPending int
}

// step feeds one sample. It returns what happened to the rule's episode, if anything.
func (d *detector) step(v *Vehicle, rule string, p params, s sample, newEpisode func(start time.Time) *Episode) {
	if !d.LastSample.IsZero() && s.T.Sub(d.LastSample) > p.MaxGap {
		d.breakRun(v, ClosedInterrupted)
	}
	d.LastSample = s.T
	ep := v.episode(d.EpisodeID)
	if ep != nil && ep.End != nil && (*ep.Closed == ClosedInterrupted || *ep.Closed == ClosedOutOfService && s.Cond) {
		// The data resumed within maxGap of the last sample after the receive-clock gap
		// timeout closed the episode: it goes on, as it would have live.
		ep.End, ep.Closed = nil, nil
		v.changed(ep, nil, EventReopen)
	}
	if s.Cond {
		d.ClearStart = time.Time{}
		if d.RunStart.IsZero() {
			d.RunStart = s.T
			d.Pending = d.Pending[:0]
			d.Peak, d.PeakAt = s.Value, s.T
			d.PeakLat, d.PeakLon = s.Lat, s.Lon
		}
		d.LastTrue = s.T
		if s.Value > d.Peak {
			d.Peak, d.PeakAt, d.PeakLat, d.PeakLon = s.Value, s.T, s.Lat, s.Lon
		}
		if ep == nil {
			if s.Evidence.ok && len(d.Pending) < p.MaxPending {
				d.Pending = append(d.Pending, s.Evidence.make())
			}
			if s.T.Sub(d.RunStart) >= p.Confirm {
				ep = newEpisode(d.RunStart)
				d.EpisodeID = ep.ID
				d.fill(ep, s.T)
				ev := d.Pending
				d.Pending = nil
				v.open(ep, ev)
			}
			return
		}
		d.fill(ep, s.T)
		v.changed(ep, &s.Evidence, EventUpdate)
		return
	}
	if ep == nil {
		d.RunStart = time.Time{}
		d.Pending = d.Pending[:0]
		return
	}
	if d.ClearStart.IsZero() {
		d.ClearStart = s.T
	}
	if s.T.Sub(d.ClearStart) >= p.Clear {
		d.close(v, ep, d.ClearStart, ClosedCleared, &s.Evidence)
		return
	}
	v.changed(ep, &s.Evidence, EventUpdate)
}

// peakMayChange reports whether a true sample at t whose value is at most upper could set the
// detector's peak (step): when it starts a run (none running, or the samples stopped for
// longer than MaxGap) or reaches the peak. When it cannot, its exact value changes nothing.
func (d *detector) peakMayChange(t time.Time, p params, upper float64) bool {
	if !d.LastSample.IsZero() && t.Sub(d.LastSample) > p.MaxGap {
		return true
	}
	return d.RunStart.IsZero() || !(upper < d.Peak)
}

func (d *detector) fill(ep *Episode, now time.Time) {
	ep.DurationS = now.Sub(ep.Start.Time).Seconds()
	ep.Peak = d.Peak
	ep.PeakAt = newTime(d.PeakAt)
	ep.Lat, ep.Lon = d.PeakLat, d.PeakLon
}

// breakRun ends the current run because the samples stopped (device time) or the receive
// clock's gap timeout passed.
func (d *detector) breakRun(v *Vehicle, reason string) {
	if ep := v.episode(d.EpisodeID); ep != nil && ep.End == nil {
		end := d.LastTrue
		if !d.ClearStart.IsZero() {
			end = d.ClearStart
		}
		d.close(v, ep, end, reason, nil)
	}
	d.reset()
}

func (d *detector) close(v *Vehicle, ep *Episode, end time.Time, reason string, last *evidence) {
	e := newTime(end)
	ep.End = &e
	ep.DurationS = end.Sub(ep.Start.Time).Seconds()
	r := reason
	ep.Closed = &r
	v.changed(ep, last, EventClose)
	if reason == ClosedCleared {
		d.reset()
	}
}

func (d *detector) reset() {
	*d = detector{}
}

// interrupt closes an open episode because the vehicle went silent (receive clock), keeping the
// run so that data resuming within maxGap (device time) reopens it.
func (d *detector) interrupt(v *Vehicle) {
	ep := v.episode(d.EpisodeID)
	if ep == nil || ep.End != nil {
		return
	}
	end := d.LastTrue
	if !d.ClearStart.IsZero() {
		end = d.ClearStart
	}
	d.close(v, ep, end, ClosedInterrupted, nil)
}
