package rules

import (
	"slices"
	"strings"

	"github.com/trenzinho/trenzinho/registry"
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
	// StoppedS is, for boarding_sound, how long the vehicle had stood at the boarding point
	// (Site) by the end of the episode, in seconds.
	StoppedS float64 `json:"stopped_s,omitempty"`
	// R1M is, for noise_limit, the meter-to-loudspeaker distance r₁ the estimate used (the
	// registry's, else the profile's), in metres.
	R1M float64 `json:"r1_m,omitempty"`
	// ObservedS is, for parked_public_road, the longest span the vehicle's readings observed it
	// parked there, in seconds (the rest of the episode is silence: shown, never fined).
	ObservedS float64 `json:"observed_s,omitempty"`
	// Service says how the vehicle's service was established when the episode opened, for the
	// rules whose article binds the vehicle in service (speed, hours, document_expired, route,
	// rotation, boarding_outside_points, the driver, suspension and inspection rules); nil for
	// the others.
	Service *ServiceBasis `json:"service,omitempty"`
	// CalendarUnconfirmed names the calendars of the profile the episode depends on that the
	// profile ships empty (profile.CalendarSchoolRecess, profile.CalendarMunicipalHolidays): a
	// school open on a day that may be recess, a site open on a day that may be a municipal
	// holiday. Such an episode grounds no auto until the calendar is filled.
	CalendarUnconfirmed []string `json:"calendar_unconfirmed,omitempty"`
	// GroundsAuto says whether the episode, as the monitor observed it, can ground an auto de
	// infração: every fact the auto would state was observed by an instrument the law accepts,
	// and nothing the law presumes in the accused's favour was presumed against them. Always
	// present in the JSON. An episode that cannot is an alert for the inspector: shown, usable
	// in a manual notice after the agent's own verification, never a draft by itself.
	GroundsAuto bool `json:"grounds_auto"`
	// GroundsNote says, in Portuguese, why the episode cannot ground an auto (when GroundsAuto
	// is false); several reasons are joined by "; ".
	GroundsNote string `json:"grounds_note,omitempty"`
	// Needs is the agent's verification (VerifyMusic, VerifyNBR10151) that, recorded on the
	// episode, supplies its only missing ground: with it, the episode becomes a draft. "" when
	// no verification can (the episode grounds an auto already, or lacks something else).
	Needs string `json:"needs_verification,omitempty"`
	// Verification is the agent's verification recorded on the episode (POST
	// /api/v1/episodes/{id}/verification), nil when none. The engine never sets it; the store
	// keeps it across the engine's updates.
	Verification *Verification `json:"verification,omitempty"`
	// Readings are the evidence; only in the single-episode view.
	Readings []Evidence `json:"readings,omitempty"`
}

// Verification kinds: what an agent verified in person about an episode.
const (
	// VerifyMusic: the agent heard the sound system playing music at the place and time of the
	// episode (Art. 45, VII fines "executar músicas … com altura do som acima do permitido";
	// a sound level meter cannot tell music from an engine or passengers).
	VerifyMusic = "music_audible"
	// VerifyNBR10151: the agent measured the sound level by ABNT NBR 10151 (the form in
	// Measurement); the auto then cites that measurement, not the monitor's estimate.
	VerifyNBR10151 = "nbr10151_measurement"
	// VerifyField: the agent's field observation (constatação em campo) that does not confirm
	// music (none heard, or an episode of another rule): what they saw, with photos. It is
	// evidence shown with the episode; it is the missing ground of no episode.
	VerifyField = "field_observation"
)

// Verification is an agent's verification of an episode.
type Verification struct {
	Kind string `json:"kind"` // VerifyMusic or VerifyNBR10151
	// By is the agent (the signed-in user) and At when it was recorded (receive clock).
	By string    `json:"by"`
	At wire.Time `json:"at"`
	// Note is the agent's own account, pt-BR (required for VerifyMusic: what was heard, where).
	Note string `json:"note,omitempty"`
	// Measurement is the NBR 10151 measurement form (VerifyNBR10151 only).
	Measurement *Measurement `json:"measurement,omitempty"`

	// A field verification (constatação em campo, made on a phone, possibly offline) also
	// carries what the agent answered — music audible? passengers boarding or alighting? (nil:
	// not answered) —, when the agent made it by the phone's clock (CapturedAt, stated by the
	// device and signed with the session's key; At stays the monitor's receipt time), its
	// photos, and the signature.
	MusicAudible *bool           `json:"music_audible,omitempty"`
	Boarding     *bool           `json:"boarding,omitempty"`
	CapturedAt   *wire.Time      `json:"captured_at,omitempty"`
	Photos       []Photo         `json:"photos,omitempty"`
	Signature    *FieldSignature `json:"signature,omitempty"`
}

// Photo is a photograph attached to a verification, stored by the SHA-256 of its bytes. The
// EXIF fields are what the file states (the camera's clock and GPS), not facts the monitor
// observed; ReceivedAt is when the monitor first received the file.
type Photo struct {
	SHA256         string    `json:"sha256"`
	ContentType    string    `json:"content_type"`
	Size           int       `json:"size"`
	Width          int       `json:"width"`
	Height         int       `json:"height"`
	ReceivedAt     wire.Time `json:"received_at"`
	EXIFTakenAt    string    `json:"exif_taken_at,omitempty"` // RFC 3339, or a wall time without zone
	EXIFZoneStated bool      `json:"exif_zone_stated,omitempty"`
	EXIFLat        *float64  `json:"exif_lat,omitempty"`
	EXIFLon        *float64  `json:"exif_lon,omitempty"`
}

// FieldSignature is the HMAC-SHA256 a dashboard session made of a field verification when the
// agent captured it (docs/api.md, "Constatação em campo"): Session names the session whose key
// signed (not its token), Client is the item's id on the phone, Verified that the monitor
// checked it.
type FieldSignature struct {
	Session  string `json:"session"`
	Client   string `json:"client_id"`
	HMAC     string `json:"hmac"`
	Verified bool   `json:"verified"`
}

// Measurement is an agent's sound measurement by ABNT NBR 10151: the form the auto cites.
type Measurement struct {
	Meter       string  `json:"meter"`       // make, model and serial of the sound level meter
	Class       int     `json:"class"`       // IEC 61672 class: 1 or 2
	Calibration string  `json:"calibration"` // calibration certificate (number, laboratory, date)
	Position    string  `json:"position"`    // where the microphone stood (address, height, distance)
	LAeqDB      float64 `json:"laeq_db"`     // the measured L_Aeq, dB(A)
	ResidualDB  float64 `json:"residual_db"` // the residual sound level, dB(A)
	// LimitDB is the NBR 10151 limit of the place and period at Date, dB(A), and CorrectedDB
	// the measured level corrected for the residual sound: both computed when the
	// verification is recorded (JudgeMeasurement), never typed.
	LimitDB     float64   `json:"limit_db"`
	CorrectedDB float64   `json:"corrected_db,omitempty"`
	Date        wire.Time `json:"date"` // when it was measured
}

// Draftable reports whether the episode can become a draft by itself: it grounds an auto, or
// the only ground it lacked is a verification of the kind it needs and that verification is
// recorded.
func (e *Episode) Draftable() bool {
	return e.GroundsAuto || (e.Needs != "" && e.Verification.supplies(e.Needs, e.Rule) && e.musicConfirmed())
}

// PenaltyMusic is the penalty of Lei 2.277/2018 that fines music: Art. 45, VII, "executar
// músicas vedadas pela presente Lei ou com altura do som acima do permitido".
const PenaltyMusic = "Art. 45, VII"

// musicConfirmed reports whether a noise_limit episode fined under PenaltyMusic has the agent's
// confirmation that music was playing (a sound level meter cannot tell music from an engine or
// passengers): the NBR 10151 measurement proves the level, not the music. Other episodes need
// none.
func (e *Episode) musicConfirmed() bool {
	if e.Rule != RuleNoiseLimit || e.Penalty != PenaltyMusic {
		return true
	}
	v := e.Verification
	return v != nil && v.MusicAudible != nil && *v.MusicAudible
}

// supplies reports whether the verification is one of kind that supplies a missing ground of an
// episode of rule: a field verification only when the agent saw passengers boarding or
// alighting (the service or the boarding an episode lacked), or, parked, the agent's observation
// at the place.
func (v *Verification) supplies(kind, rule string) bool {
	if v == nil || v.Kind != kind {
		return false
	}
	if kind == VerifyField && rule != RuleParkedPublicRoad {
		return v.Boarding != nil && *v.Boarding
	}
	// A parked vehicle: the agent's field observation at the place is the constatação.
	return true
}

// noGround records that the episode cannot ground an auto, and why (pt-BR). No verification
// then makes it one.
func (e *Episode) noGround(note string) {
	e.GroundsAuto, e.Needs = false, ""
	e.addNote(note)
}

// needs records that the episode lacks the agent's verification of a kind: when that is all
// it lacks, recording the verification makes it a draft.
func (e *Episode) needs(kind, note string) {
	switch {
	case e.GroundsAuto:
		e.Needs = kind
	case e.Needs != kind:
		e.Needs = "" // two grounds missing: no one verification supplies them
	}
	e.GroundsAuto = false
	e.addNote(note)
}

// calendarUnconfirmed records that the episode depends on a calendar the profile ships empty.
func (e *Episode) calendarUnconfirmed(name string) {
	if !slices.Contains(e.CalendarUnconfirmed, name) {
		e.CalendarUnconfirmed = append(e.CalendarUnconfirmed, name)
	}
	e.noGround("calendar_unconfirmed: calendário do perfil vazio (" + name + "); o episódio depende dele")
}

// grounded resets the episode to grounding an auto, before its rule judges it again.
func (e *Episode) grounded() { e.GroundsAuto, e.GroundsNote, e.Needs = true, "", "" }

func (e *Episode) addNote(note string) {
	switch {
	case e.GroundsNote == "":
		e.GroundsNote = note
	case !strings.Contains(e.GroundsNote, note):
		e.GroundsNote += "; " + note
	}
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
	// MarginM is the position margin allowed in the accused's favour, and MaxDistanceM the
	// distance + margin the auto states ("no máximo X m"); for sensitive_zone_sound.
	MarginM      float64 `json:"margin_m,omitempty"`
	MaxDistanceM float64 `json:"max_distance_m,omitempty"`
	// HoursKnown: the site's opening hours are on file (sensitive_zone_sound).
	HoursKnown bool `json:"hours_known,omitempty"`
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
	// ClosedOutOfService: document_expired's episode pauses when the vehicle leaves service;
	// it reopens at the next in-service reading, until the document is renewed.
	ClosedOutOfService = "out_of_service"
)
