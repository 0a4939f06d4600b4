// Package wire is the MQTT wire format v1 of the trenzinho monitor (docs/protocol.md): the only place
// that encodes, decodes and validates telemetry batches, status messages and quarantine records.
//
// Fields that are not known are omitted, never zero-filled: optional numbers are pointers and
// optional strings are empty. Numbers keep the precision of their source.
package wire

import (
	"fmt"
	"math"
	"strings"
)

// Version is the wire format version carried in every batch as "v".
const Version = 1

// Limits of one batch payload.
const (
	MaxPayloadBytes = 256 << 10 // 256 KiB
	MaxReadings     = 600
	// MaxSeq is the largest seq: InfluxDB integers and SQLite integers are signed 64-bit, so a
	// seq above 2^63−1 could be stored by neither.
	MaxSeq = math.MaxInt64
	// QuarantineCut is how much of a rejected payload is kept in a quarantine record.
	QuarantineCut = 64 << 10
)

// Clock says where a batch's device times came from.
type Clock string

// Clock values.
const (
	ClockGPS    Clock = "gps"
	ClockRTC    Clock = "rtc"
	ClockSystem Clock = "system" // never evidence
)

// Valid reports whether c is one of the known clocks.
func (c Clock) Valid() bool { return c == ClockGPS || c == ClockRTC || c == ClockSystem }

// Fix is the quality of a GPS position.
type Fix string

// Fix values.
const (
	FixNone      Fix = "none"
	Fix2D        Fix = "2d"
	Fix3D        Fix = "3d"
	FixDGPS      Fix = "dgps"
	FixRTK       Fix = "rtk"
	FixEstimated Fix = "estimated" // dead reckoning: never evidence
)

// Valid reports whether f is one of the known fix values.
func (f Fix) Valid() bool {
	switch f {
	case FixNone, Fix2D, Fix3D, FixDGPS, FixRTK, FixEstimated:
		return true
	}
	return false
}

// Batch is one telemetry message: the readings a vehicle collected since its previous batch.
type Batch struct {
	V       int       `json:"v"`
	Vehicle string    `json:"vehicle"`
	Epoch   string    `json:"epoch"`
	Seq     uint64    `json:"seq"`
	SentAt  Time      `json:"sent_at"`
	Clock   Clock     `json:"clock"`
	GPS     []GPS     `json:"gps,omitempty"`
	Tacho   []Tacho   `json:"tacho,omitempty"`
	Sound   []Sound   `json:"sound,omitempty"`
	Service []Service `json:"service,omitempty"`
	Door    []Door    `json:"door,omitempty"`
	// Warnings are what the bridge's driver's coach told the driver (additive to §2). They are
	// not readings: Readings does not count them, and MaxWarnings bounds them on their own.
	Warnings []Warning `json:"warnings,omitempty"`
	Kid      string    `json:"kid,omitempty"`
	// Sig is the base64 ed25519 signature over the batch serialised without it. It is never
	// produced by json.Marshal of a Batch: Encode appends it (see Sign and SplitSignature).
	Sig string `json:"sig,omitempty"`
}

// Readings returns how many readings the batch carries. Warnings are not readings: a warning
// is what the vehicle's own device said to its driver, not a measurement of the vehicle.
func (b *Batch) Readings() int {
	return len(b.GPS) + len(b.Tacho) + len(b.Sound) + len(b.Service) + len(b.Door)
}

// GPS is one position epoch.
type GPS struct {
	T         Time     `json:"t"`
	Lat       float64  `json:"lat"`
	Lon       float64  `json:"lon"`
	SpeedKmh  *float64 `json:"speed_kmh,omitempty"`
	CourseDeg *float64 `json:"course_deg,omitempty"`
	HDOP      *float64 `json:"hdop,omitempty"`
	Sats      *int     `json:"sats,omitempty"`
	Fix       Fix      `json:"fix,omitempty"`
	// AltM is the altitude above mean sea level in metres (additive to §4.1).
	AltM *float64 `json:"alt_m,omitempty"`
}

// Tacho is one tachograph D8 reading.
type Tacho struct {
	T          Time     `json:"t"`
	SpeedKmh   *float64 `json:"speed_kmh,omitempty"`
	OdometerKm *float64 `json:"odometer_km,omitempty"`
	Card       string   `json:"card,omitempty"`
}

// Sound is one sound-level aggregate, normally over one second.
type Sound struct {
	T       Time     `json:"t"`
	LAeqDB  *float64 `json:"laeq_db,omitempty"`
	LAmaxDB *float64 `json:"lamax_db,omitempty"`
	DurS    *float64 `json:"dur_s,omitempty"`
}

// Service is a change of the driver's service switch.
type Service struct {
	T  Time `json:"t"`
	On bool `json:"on"`
}

// Door is a change of the passenger door input (additive to §2).
type Door struct {
	T    Time `json:"t"`
	Open bool `json:"open"`
}

// WarningKind is what a warning of the driver's coach is about.
type WarningKind string

// Warning kinds.
const (
	WarningSiteSound WarningKind = "site_sound" // sound above the threshold near an open sensitive site
	WarningSpeedNear WarningKind = "speed_near" // speed nearing the limit
	WarningSpeedOver WarningKind = "speed_over" // speed above the limit
	WarningHoursEnd  WarningKind = "hours_end"  // the end of the service hours is near
	WarningItinerary WarningKind = "itinerary"  // leaving the authorised itinerary
	WarningDocument  WarningKind = "document"   // a document about to expire
)

// WarningKinds lists the known kinds, for documentation and tests.
var WarningKinds = []WarningKind{WarningSiteSound, WarningSpeedNear, WarningSpeedOver, WarningHoursEnd, WarningItinerary, WarningDocument}

// Valid reports whether k is one of the known kinds.
func (k WarningKind) Valid() bool {
	switch k {
	case WarningSiteSound, WarningSpeedNear, WarningSpeedOver, WarningHoursEnd, WarningItinerary, WarningDocument:
		return true
	}
	return false
}

// Warning is one warning the bridge's driver's coach gave the driver (buzzer, LED, local page):
// evidence that the licensee's own device told the driver, at T, what was about to happen.
// It is never a measurement: the monitor's rules do not read it.
type Warning struct {
	T    Time        `json:"t"`
	Kind WarningKind `json:"kind"`
	// Rule is the id of the rule the warning is about (e.g. "sensitive_zone_sound").
	Rule string `json:"rule"`
	// Site is the id of the geofence the warning is about, empty when none.
	Site string `json:"site,omitempty"`
	// DistanceM is the distance to Site in metres, when the warning is about a site.
	DistanceM *float64 `json:"distance_m,omitempty"`
	// Value is what the coach measured (dB, km/h, minutes, days: by Kind), Limit what it
	// compared it to.
	Value *float64 `json:"value,omitempty"`
	Limit *float64 `json:"limit,omitempty"`
}

// Status is the retained status message of a bridge.
type Status struct {
	Online       bool              `json:"online"`
	Version      string            `json:"version,omitempty"`
	Epoch        string            `json:"epoch,omitempty"`
	Seq          uint64            `json:"seq,omitempty"`
	SpoolDepth   *int64            `json:"spool_depth,omitempty"`
	SpoolEvicted *int64            `json:"spool_evicted,omitempty"`
	Devices      map[string]string `json:"devices,omitempty"`
	T            *Time             `json:"t,omitempty"`

	// PreviousEpoch links Epoch to the epoch it replaced when the bridge lost its state (its
	// epoch file missing or damaged) and re-sent the batches it still held under Epoch;
	// "unknown" when the bridge could not tell which. Absent for an epoch created fresh.
	PreviousEpoch string `json:"previous_epoch,omitempty"`
	// ConfigVersion is the version of the signed configuration bundle the bridge runs
	// (docs/protocol.md §9); absent when it runs none.
	ConfigVersion uint64 `json:"config_version,omitempty"`
	// Kid and Sig sign a status as they sign a batch (EncodeStatus; §6 of docs/protocol.md).
	// The MQTT will {"online":false} is unsigned: the broker publishes it, not the bridge.
	Kid string `json:"kid,omitempty"`
	Sig string `json:"sig,omitempty"`
}

// OfflineOnly reports whether s says nothing but that the bridge went offline: the MQTT will.
func (s *Status) OfflineOnly() bool {
	return !s.Online && s.Version == "" && s.Epoch == "" && s.Seq == 0 && s.SpoolDepth == nil &&
		s.SpoolEvicted == nil && s.Devices == nil && s.T == nil && s.PreviousEpoch == "" && s.ConfigVersion == 0
}

// Device states reported in Status.Devices.
const (
	DeviceOK      = "ok"
	DeviceNoFix   = "no_fix"
	DeviceMissing = "missing"
)

// Quarantine is the record ingest publishes and stores for a rejected payload.
type Quarantine struct {
	Reason     Reason `json:"reason"`
	Detail     string `json:"detail,omitempty"`
	Topic      string `json:"topic"`
	ReceivedAt Time   `json:"received_at"`
	PayloadB64 string `json:"payload_b64"`
	Truncated  bool   `json:"truncated,omitempty"`
}

// Topics.
const (
	topicPrefix = "trenzinho/v1/"
	// TelemetryWildcard subscribes to every vehicle's telemetry.
	TelemetryWildcard = topicPrefix + "+/telemetry"
	// StatusWildcard subscribes to every vehicle's status.
	StatusWildcard = topicPrefix + "+/status"
	// SysPrefix roots the service topics, outside every vehicle's namespace: a vehicle id never
	// starts with "_", and a service topic has more levels than a vehicle's.
	SysPrefix = topicPrefix + "_sys/"
	// QuarantineWildcard subscribes to every quarantine record.
	QuarantineWildcard = SysPrefix + "quarantine/#"
)

// ValidVehicle reports whether id is a valid vehicle id: 1 to 32 of A–Z, a–z, 0–9, "-" and "_", not
// starting with "_" (ids starting with "_" are the service namespace's, trenzinho/v1/_sys/…). The
// regular expression ^[A-Za-z0-9-][A-Za-z0-9_-]{0,31}$, checked by hand: it runs for every message,
// and the regexp package was 3.7% of ingest's CPU on 5-reading batches.
func ValidVehicle(id string) bool {
	if len(id) == 0 || len(id) > 32 || id[0] == '_' {
		return false
	}
	for i := 0; i < len(id); i++ {
		if c := id[i]; !alnum(c) && c != '-' && c != '_' {
			return false
		}
	}
	return true
}

// validEpoch reports whether e is a valid epoch: 1 to 64 of A–Z, a–z, 0–9, "_", "." and "-"
// (^[A-Za-z0-9_.-]{1,64}$).
func validEpoch(e string) bool {
	if len(e) == 0 || len(e) > 64 {
		return false
	}
	for i := 0; i < len(e); i++ {
		if c := e[i]; !alnum(c) && c != '-' && c != '_' && c != '.' {
			return false
		}
	}
	return true
}

func alnum(c byte) bool { return 'a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' || '0' <= c && c <= '9' }

// TelemetryTopic is the topic a vehicle publishes its batches to.
func TelemetryTopic(vehicle string) string { return topicPrefix + vehicle + "/telemetry" }

// StatusTopic is the topic of a vehicle's retained status.
func StatusTopic(vehicle string) string { return topicPrefix + vehicle + "/status" }

// EpisodesTopic is the topic the monitor publishes a vehicle's episodes to.
func EpisodesTopic(vehicle string) string { return topicPrefix + vehicle + "/episodes" }

// QuarantineTopic is the topic ingest publishes rejected payloads of a vehicle to
// (trenzinho/v1/_sys/quarantine/{vehicle}); vehicle is "_unknown" when the topic named none.
func QuarantineTopic(vehicle string) string { return SysPrefix + "quarantine/" + vehicle }

// VehicleFromTopic returns the vehicle id of a telemetry or status topic and its kind
// ("telemetry" or "status").
func VehicleFromTopic(topic string) (vehicle, kind string, err error) {
	rest, ok := strings.CutPrefix(topic, topicPrefix)
	if !ok {
		return "", "", fmt.Errorf("topic %q: not under %s", topic, topicPrefix)
	}
	vehicle, kind, ok = strings.Cut(rest, "/")
	if !ok || strings.Contains(kind, "/") || !ValidVehicle(vehicle) {
		return "", "", fmt.Errorf("topic %q: want %s{vehicle}/{kind}", topic, topicPrefix)
	}
	return vehicle, kind, nil
}
