package rules

import (
	"bytes"
	"fmt"
)

// EventKind says what happened to an episode or a vehicle.
type EventKind string

// Event kinds.
const (
	EventOpen     EventKind = "open"
	EventUpdate   EventKind = "update"
	EventClose    EventKind = "close"
	EventReopen   EventKind = "reopen"
	EventNewEpoch EventKind = "new_epoch"
)

// Event is something a person or another program should hear about: an episode opened,
// closed or reopened, or a vehicle started a new sequence epoch. Updates are not events.
type Event struct {
	Kind    EventKind `json:"kind"`
	Vehicle string    `json:"vehicle"`
	Epoch   string    `json:"epoch,omitempty"`
	Episode *Episode  `json:"episode,omitempty"`
}

type pendingChanges struct {
	episodes map[string]*Episode
	evidence map[string][]Evidence
	events   []Event
	dirty    map[string]bool
	// evidenceHint is how much evidence each episode had in the previous Drain, to size its
	// slice in this one ahead (an episode's evidence grows by a reading at a time).
	evidenceHint map[string]int
}

func newPendingChanges() pendingChanges {
	return pendingChanges{episodes: map[string]*Episode{}, evidence: map[string][]Evidence{}, dirty: map[string]bool{}}
}

func (v *Vehicle) open(ep *Episode, evidence []Evidence) {
	v.Episodes[ep.ID] = ep
	v.changed(ep, nil, EventOpen)
	v.pending.evidence[ep.ID] = append(v.pending.evidence[ep.ID], evidence...)
	ep.Evidence += len(evidence)
}

// changed records a change of an episode, with the evidence of the reading that changed it
// (nil or not ok: none).
func (v *Vehicle) changed(ep *Episode, ev *evidence, kind EventKind) {
	c := v.pending
	c.episodes[ep.ID] = ep
	c.dirty[v.ID] = true
	if ev != nil && ev.ok {
		evs := c.evidence[ep.ID]
		if evs == nil {
			// The episode's first evidence since the last Drain: room for as much as it had
			// then, and a quarter more, rather than growing from one (only the capacity
			// differs, never what the slice holds).
			n := c.evidenceHint[ep.ID]
			evs = make([]Evidence, 0, max(4, n+n/4))
		}
		c.evidence[ep.ID] = append(evs, ev.make())
		ep.Evidence++
	}
	if kind != EventUpdate {
		cp := *ep
		c.events = append(c.events, Event{Kind: kind, Vehicle: v.ID, Episode: &cp})
	}
}

// Changes is what the engine changed since the last Drain: to be persisted in one transaction
// before the batches that caused them are acknowledged.
type Changes struct {
	Episodes []Episode
	Evidence map[string][]Evidence // by episode id
	Events   []Event
	// Snapshots of the vehicles that changed, for Restore.
	Snapshots map[string][]byte
}

// Empty reports whether nothing changed.
func (c *Changes) Empty() bool {
	return len(c.Episodes) == 0 && len(c.Events) == 0 && len(c.Snapshots) == 0
}

// Drain returns the changes since the last call and forgets the episodes no detector can change
// any more.
func (e *Engine) Drain() (Changes, error) {
	p := &e.changes
	out := Changes{Evidence: p.evidence, Events: p.events, Snapshots: map[string][]byte{}}
	for _, ep := range p.episodes {
		out.Episodes = append(out.Episodes, *ep)
	}
	if e.written == nil {
		e.written = map[string][]byte{}
	}
	for id := range p.dirty {
		v := e.vehicles[id]
		if v == nil {
			continue
		}
		v.forgetSettled()
		b, err := marshalSnapshot(v, make([]byte, 0, len(e.written[id])+64))
		if err != nil {
			return Changes{}, fmt.Errorf("rules: snapshot vehicle %s: %w", id, err)
		}
		if bytes.Equal(b, e.written[id]) {
			continue // a status repeated, say: the stored snapshot is this one already
		}
		e.written[id] = b
		out.Snapshots[id] = b
	}
	e.changes = newPendingChanges()
	e.changes.evidenceHint = make(map[string]int, len(out.Evidence))
	for id, evs := range out.Evidence {
		e.changes.evidenceHint[id] = len(evs)
	}
	for _, v := range e.vehicles {
		v.pending = &e.changes
	}
	return out, nil
}

// forgetSettled drops closed episodes that no detector refers to.
func (v *Vehicle) forgetSettled() {
	for id, ep := range v.Episodes {
		if ep.End == nil {
			continue
		}
		referenced := false
		for _, d := range v.Detectors {
			if d.EpisodeID == id {
				referenced = true
				break
			}
		}
		if !referenced {
			delete(v.Episodes, id)
		}
	}
}
