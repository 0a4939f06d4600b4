package wire

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"reflect"
	"strings"
	"time"
	"unicode/utf8"
)

// Reason is the machine-readable code of a rejection. Each one is documented in
// docs/protocol.md.
type Reason string

// Rejection reasons.
const (
	ReasonTooLarge        Reason = "too_large"         // payload over MaxPayloadBytes
	ReasonNotUTF8         Reason = "not_utf8"          // payload is not valid UTF-8
	ReasonBadJSON         Reason = "bad_json"          // not one JSON object, or a field of the wrong type
	ReasonBadVersion      Reason = "bad_version"       // "v" missing or not 1
	ReasonBadVehicle      Reason = "bad_vehicle"       // vehicle missing or not [A-Za-z0-9_-]{1,32}
	ReasonBadTopic        Reason = "bad_topic"         // topic is not trenzinho/v1/{vehicle}/telemetry
	ReasonTopicMismatch   Reason = "topic_mismatch"    // vehicle in the payload differs from the topic
	ReasonMissingEpoch    Reason = "missing_epoch"     // epoch missing or malformed
	ReasonMissingSeq      Reason = "missing_seq"       // seq missing or 0
	ReasonBadClock        Reason = "bad_clock"         // clock missing or not gps|rtc|system
	ReasonTooManyReadings Reason = "too_many_readings" // more than MaxReadings readings
	ReasonBadTime         Reason = "bad_time"          // a time missing, not RFC 3339 UTC or finer than 1 ms
	ReasonFutureTime      Reason = "future_time"       // a time more than MaxFuture after receipt
	ReasonNonFinite       Reason = "non_finite"        // a number that does not fit a float64
	ReasonBadPosition     Reason = "bad_position"      // lat/lon missing or out of range
	ReasonBadSpeed        Reason = "bad_speed"         // speed outside 0–250 km/h
	ReasonBadSound        Reason = "bad_sound"         // a sound level outside 0–160 dB
	ReasonBadFix          Reason = "bad_fix"           // fix not one of the enum
	ReasonBadValue        Reason = "bad_value"         // another field out of its range
	ReasonBadSignature    Reason = "bad_signature"     // sig not last, not base64 of 64 bytes, or without kid
	ReasonSignatureFailed Reason = "signature_failed"  // sig does not verify (checked by the consumer)
	ReasonUnsigned        Reason = "unsigned"          // no sig where the profile requires one
	ReasonUnknownKey      Reason = "unknown_key"       // kid not registered for the vehicle
)

// Reasons lists every rejection reason, for metrics and documentation.
var Reasons = []Reason{
	ReasonTooLarge, ReasonNotUTF8, ReasonBadJSON, ReasonBadVersion, ReasonBadVehicle, ReasonBadTopic,
	ReasonTopicMismatch, ReasonMissingEpoch, ReasonMissingSeq, ReasonBadClock, ReasonTooManyReadings,
	ReasonBadTime, ReasonFutureTime, ReasonNonFinite, ReasonBadPosition, ReasonBadSpeed, ReasonBadSound,
	ReasonBadFix, ReasonBadValue, ReasonBadSignature, ReasonSignatureFailed, ReasonUnsigned,
	ReasonUnknownKey,
}

// Error is a rejected payload: a reason code and a human-readable detail.
type Error struct {
	Reason Reason
	Detail string
}

func (e *Error) Error() string { return "wire: " + string(e.Reason) + ": " + e.Detail }

func reject(r Reason, format string, a ...any) *Error {
	return &Error{Reason: r, Detail: fmt.Sprintf(format, a...)}
}

// ReasonOf returns the reason of a wire error, or "" when err is not one.
func ReasonOf(err error) Reason {
	var e *Error
	if errors.As(err, &e) {
		return e.Reason
	}
	return ""
}

// Physical limits enforced on decode.
const (
	MaxSpeedKmh   = 250.0
	MaxSoundDB    = 160.0
	MaxHDOP       = 99.99
	MaxSats       = 255
	MaxOdometerKm = 10_000_000.0
	MaxDurS       = 3600.0
	MaxCardLen    = 32
	MaxKidLen     = 64
)

// Decode parses and validates a telemetry payload received on topic at receivedAt.
// topic may be empty when the payload does not come from MQTT (a file, a test); then only
// the payload's own vehicle is checked. The returned error is always an *Error.
func Decode(topic string, payload []byte, receivedAt time.Time) (*Batch, error) {
	if len(payload) > MaxPayloadBytes {
		return nil, reject(ReasonTooLarge, "%d bytes, limit %d", len(payload), MaxPayloadBytes)
	}
	var topicVehicle string
	if topic != "" {
		v, kind, err := VehicleFromTopic(topic)
		if err != nil || kind != "telemetry" {
			return nil, reject(ReasonBadTopic, "%q", topic)
		}
		topicVehicle = v
	}
	if !utf8.Valid(payload) {
		return nil, reject(ReasonNotUTF8, "payload is not valid UTF-8")
	}
	var sig []byte
	if _, s, ok, err := SplitSignature(payload); err != nil {
		return nil, err.(*Error)
	} else if ok {
		sig = s
	}
	var b Batch
	dec := json.NewDecoder(bytes.NewReader(payload))
	if err := dec.Decode(&b); err != nil {
		return nil, jsonError(err)
	}
	if dec.More() {
		return nil, reject(ReasonBadJSON, "more than one JSON value")
	}
	if _, err := dec.Token(); err == nil {
		return nil, reject(ReasonBadJSON, "trailing data after the object")
	}
	if err := b.validate(receivedAt); err != nil {
		return nil, err
	}
	if topicVehicle != "" && b.Vehicle != topicVehicle {
		return nil, reject(ReasonTopicMismatch, "payload vehicle %q on topic of %q", b.Vehicle, topicVehicle)
	}
	if b.Sig != "" && sig == nil {
		return nil, reject(ReasonBadSignature, "sig must be the last member")
	}
	return &b, nil
}

func jsonError(err error) *Error {
	var te *json.UnmarshalTypeError
	if errors.As(err, &te) {
		if strings.HasPrefix(te.Value, "number") && te.Type.Kind() == reflect.Float64 {
			return reject(ReasonNonFinite, "field %s: %v", te.Field, err)
		}
		return reject(ReasonBadJSON, "field %s: %s where %s expected", te.Field, te.Value, te.Type)
	}
	var tErr *timeError
	if errors.As(err, &tErr) {
		return reject(ReasonBadTime, "%v", tErr)
	}
	return reject(ReasonBadJSON, "%v", err)
}

func (b *Batch) validate(receivedAt time.Time) *Error {
	if b.V != Version {
		return reject(ReasonBadVersion, "v=%d, want %d", b.V, Version)
	}
	if !ValidVehicle(b.Vehicle) {
		return reject(ReasonBadVehicle, "%q", b.Vehicle)
	}
	if !epochRE.MatchString(b.Epoch) {
		return reject(ReasonMissingEpoch, "epoch %q", b.Epoch)
	}
	if b.Seq == 0 {
		return reject(ReasonMissingSeq, "seq missing or 0")
	}
	if !b.Clock.Valid() {
		return reject(ReasonBadClock, "clock %q", b.Clock)
	}
	if n := b.Readings(); n > MaxReadings {
		return reject(ReasonTooManyReadings, "%d readings, limit %d", n, MaxReadings)
	}
	limit := receivedAt.Add(MaxFuture)
	checkT := func(what string, i int, t Time) *Error {
		if t.IsZero() {
			return reject(ReasonBadTime, "%s[%d].t missing", what, i)
		}
		if !receivedAt.IsZero() && t.After(limit) {
			return reject(ReasonFutureTime, "%s[%d].t %s is more than %s after receipt %s", what, i, t, MaxFuture, NewTime(receivedAt))
		}
		return nil
	}
	if err := checkT("sent_at", 0, b.SentAt); err != nil {
		return err
	}
	for i, g := range b.GPS {
		if err := checkT("gps", i, g.T); err != nil {
			return err
		}
		if err := g.validate(i); err != nil {
			return err
		}
	}
	for i, r := range b.Tacho {
		if err := checkT("tacho", i, r.T); err != nil {
			return err
		}
		if err := speed("tacho", i, r.SpeedKmh); err != nil {
			return err
		}
		if r.OdometerKm != nil && (*r.OdometerKm < 0 || *r.OdometerKm > MaxOdometerKm) {
			return reject(ReasonBadValue, "tacho[%d].odometer_km %v", i, *r.OdometerKm)
		}
		if len(r.Card) > MaxCardLen {
			return reject(ReasonBadValue, "tacho[%d].card longer than %d", i, MaxCardLen)
		}
	}
	for i, s := range b.Sound {
		if err := checkT("sound", i, s.T); err != nil {
			return err
		}
		for _, p := range []*float64{s.LAeqDB, s.LAmaxDB} {
			if p != nil && (*p < 0 || *p > MaxSoundDB) {
				return reject(ReasonBadSound, "sound[%d]: %v dB outside 0–%v", i, *p, MaxSoundDB)
			}
		}
		if s.DurS != nil && (*s.DurS <= 0 || *s.DurS > MaxDurS) {
			return reject(ReasonBadValue, "sound[%d].dur_s %v", i, *s.DurS)
		}
	}
	for i, s := range b.Service {
		if err := checkT("service", i, s.T); err != nil {
			return err
		}
	}
	if len(b.Kid) > MaxKidLen {
		return reject(ReasonBadSignature, "kid longer than %d", MaxKidLen)
	}
	if b.Sig != "" && b.Kid == "" {
		return reject(ReasonBadSignature, "sig without kid")
	}
	return nil
}

func speed(what string, i int, p *float64) *Error {
	if p != nil && (*p < 0 || *p > MaxSpeedKmh || math.IsNaN(*p)) {
		return reject(ReasonBadSpeed, "%s[%d].speed_kmh %v outside 0–%v", what, i, *p, MaxSpeedKmh)
	}
	return nil
}

func (g *GPS) validate(i int) *Error {
	if g.Lat < -90 || g.Lat > 90 || g.Lon < -180 || g.Lon > 180 || (g.Lat == 0 && g.Lon == 0) {
		return reject(ReasonBadPosition, "gps[%d]: lat %v lon %v", i, g.Lat, g.Lon)
	}
	if err := speed("gps", i, g.SpeedKmh); err != nil {
		return err
	}
	if g.CourseDeg != nil && (*g.CourseDeg < 0 || *g.CourseDeg > 360) {
		return reject(ReasonBadValue, "gps[%d].course_deg %v", i, *g.CourseDeg)
	}
	if g.HDOP != nil && (*g.HDOP <= 0 || *g.HDOP > MaxHDOP) {
		return reject(ReasonBadValue, "gps[%d].hdop %v", i, *g.HDOP)
	}
	if g.Sats != nil && (*g.Sats < 0 || *g.Sats > MaxSats) {
		return reject(ReasonBadValue, "gps[%d].sats %v", i, *g.Sats)
	}
	if g.AltM != nil && (*g.AltM < -1000 || *g.AltM > 20000) {
		return reject(ReasonBadValue, "gps[%d].alt_m %v", i, *g.AltM)
	}
	if g.Fix != "" && !g.Fix.Valid() {
		return reject(ReasonBadFix, "gps[%d].fix %q", i, g.Fix)
	}
	return nil
}
