// Package view holds the JSON shapes that both the live loop and the HTTP API produce: the live
// state of a vehicle (GET /api/v1/vehicles and the stream's "position" event) and a draft as
// lists show it (GET /api/v1/drafts and the stream's "draft" event). docs/api.md describes them.
//
// They live here, on the domain packages only, so that the live loop (monitor/judge) publishes
// what the API serves without depending on the HTTP layer.
package view

import (
	"github.com/trenzinho/trenzinho/monitor/drafts"
	"github.com/trenzinho/trenzinho/wire"
)

// Vehicle is the live state of one vehicle as GET /api/v1/vehicles shows it. What is not known is
// omitted.
type Vehicle struct {
	ID           string            `json:"id"`
	Licensee     string            `json:"licensee,omitempty"`
	Online       *bool             `json:"online,omitempty"`
	LastSeen     wire.Time         `json:"last_seen,omitzero"`
	Lat          *float64          `json:"lat,omitempty"`
	Lon          *float64          `json:"lon,omitempty"`
	CourseDeg    *float64          `json:"course_deg,omitempty"`
	SpeedKmh     *float64          `json:"speed_kmh,omitempty"`
	LAeqDB       *float64          `json:"laeq_db,omitempty"`
	InService    *bool             `json:"in_service,omitempty"`
	Devices      map[string]string `json:"devices,omitempty"` // as in the bridge's status: gps, tacho, slm
	SpoolDepth   *int64            `json:"spool_depth,omitempty"`
	OpenEpisodes []string          `json:"open_episodes"`   // ids; [] when none
	Epoch        string            `json:"epoch,omitempty"` // the bridge's sequence epoch
	// ConfigVersion is the configuration bundle the bridge says it runs (its status);
	// ConfigCurrent the one the monitor issued it last, and ConfigStale whether they differ
	// (absent when the monitor issued none).
	ConfigVersion uint64 `json:"config_version,omitempty"`
	ConfigCurrent uint64 `json:"config_current,omitempty"`
	ConfigStale   *bool  `json:"config_stale,omitempty"`
	// Telemetry health: what the monitor did not judge of the vehicle's data, since it was first
	// seen (readings older than the newest of their kind, readings not fit as evidence, batches
	// seen before, readings or batches timed ahead of the receive clock), and its open
	// clock_fault episode, if any.
	Telemetry *Telemetry `json:"telemetry,omitempty"`
}

// Telemetry counts what the monitor did not judge of a vehicle's data.
type Telemetry struct {
	OutOfOrder  int64  `json:"out_of_order"`
	NotEvidence int64  `json:"not_evidence"`
	Duplicates  int64  `json:"duplicates"`
	ClockFaults int64  `json:"clock_faults"`
	ClockFault  string `json:"clock_fault,omitempty"` // id of the open clock_fault episode
}

// DraftSummary is a draft in a list (docs/api.md).
type DraftSummary struct {
	ID         string    `json:"id"`
	EpisodeIDs []string  `json:"episode_ids"`
	Vehicle    string    `json:"vehicle"`
	Licensee   string    `json:"licensee,omitempty"`
	Rules      []string  `json:"rules"`
	Articles   []string  `json:"articles"`
	Penalty    string    `json:"penalty"`
	FineUFMP   float64   `json:"fine_ufmp"`
	Status     string    `json:"status"`
	Notice     string    `json:"notice,omitempty"`
	CreatedAt  wire.Time `json:"created_at"`
	Integrity  string    `json:"integrity"` // "ok", or what is wrong, in Portuguese
}

// NewDraftSummary is a draft as lists and the stream show it: never its facts, warnings or
// driver, which may name a person (fiscal and above read those, audited).
func NewDraftSummary(d *drafts.Draft, status, integrity string) DraftSummary {
	return DraftSummary{
		ID: d.ID, EpisodeIDs: d.EpisodeIDs, Vehicle: d.Vehicle, Licensee: d.Licensee, Rules: d.Rules,
		Articles: d.Articles, Penalty: d.Penalty, FineUFMP: d.FineUFMP, Status: status, CreatedAt: d.CreatedAt,
		Integrity: integrity,
	}
}
