package rules

import (
	"github.com/trenzinho/trenzinho/monitor/registry"
	"github.com/trenzinho/trenzinho/wire"
)

// Episode is one violation (or fault) of one rule by one vehicle: it opens when the rule's
// condition is confirmed, is updated while it lasts, and closes when the condition clears or the
// vehicle's data stops. Its JSON is the public shape of docs/api.md.
type Episode struct {
	// ID is deterministic: the vehicle, the rule and the device time the episode started, so
	// that a replay or a monitor restart finds the same episode instead of opening another.
	ID        string     `json:"id"`
	Vehicle   string     `json:"vehicle"`
	Rule      string     `json:"rule"`
	Article   string     `json:"article"`
	Penalty   string     `json:"penalty"`
	Start     wire.Time  `json:"start"`
	End       *wire.Time `json:"end"`
	DurationS float64    `json:"duration_s"`
	Peak      float64    `json:"peak"`
	Unit      string     `json:"unit"`
	Limit     float64    `json:"limit"`
	Tolerance float64    `json:"tolerance,omitempty"`
	Lat       float64    `json:"lat"`
	Lon       float64    `json:"lon"`
	PeakAt    wire.Time  `json:"peak_at,omitzero"`
	Site      *Site      `json:"site"`
	Area      *string    `json:"area"`
	Source    string     `json:"source,omitempty"` // instrument that measured: "tacho", "gps", "slm", "clock"
	// Estimate: the value is an estimate (the sound level at the receptor, from the level at
	// the meter by point-source spreading), not a measurement.
	Estimate bool `json:"estimate,omitempty"`
	// Detail names the variant of the condition (telemetry_fault: "silent" or "contradicts_gps").
	Detail       string  `json:"detail,omitempty"`
	Epoch        string  `json:"epoch,omitempty"`
	Evidence     int     `json:"evidence_count"`
	Closed       *string `json:"closed_reason"`
	Unregistered bool    `json:"unregistered,omitempty"` // "veículo não cadastrado": not in the registry
	// Document is, for document_expired, the expired item of the registry as it stood when the
	// episode opened: which document, of which record, its number and its last valid day.
	Document *registry.Expiry `json:"document,omitempty"`
	// R1M is, for noise_limit, the meter-to-loudspeaker distance r₁ the estimate used (the
	// registry's, else the profile's), in metres.
	R1M float64 `json:"r1_m,omitempty"`
	// Readings are the evidence; only in the single-episode view.
	Readings []Evidence `json:"readings,omitempty"`
}

// Open reports whether the episode has not closed yet.
func (e *Episode) Open() bool { return e.End == nil }

// Site is the sensitive site or zone an episode involves.
type Site struct {
	ID           string  `json:"id"`
	Kind         string  `json:"kind"`
	Name         string  `json:"name"`
	Category     string  `json:"category,omitempty"`
	DistanceM    float64 `json:"distance_m"`
	Verified     bool    `json:"verified"`
	Source       string  `json:"source,omitempty"`
	OpeningHours string  `json:"opening_hours,omitempty"`
}

// Evidence is one reading that proves an episode, tagged with the batch it came in.
type Evidence struct {
	Kind  string    `json:"kind"` // gps, tacho, sound
	Epoch string    `json:"epoch"`
	Seq   uint64    `json:"seq"`
	T     wire.Time `json:"t"`
	Value float64   `json:"value"`
	Unit  string    `json:"unit"`
	Lat   *float64  `json:"lat,omitempty"`
	Lon   *float64  `json:"lon,omitempty"`
}

// Closing reasons.
const (
	ClosedCleared     = "cleared"     // the condition ended
	ClosedInterrupted = "interrupted" // the vehicle's data stopped for the gap timeout
)
