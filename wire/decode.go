package wire

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"reflect"
	"strconv"
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
	ReasonBadVehicle      Reason = "bad_vehicle"       // vehicle missing, not [A-Za-z0-9_-]{1,32}, or starting with "_"
	ReasonBadTopic        Reason = "bad_topic"         // topic is not trenzinho/v1/{vehicle}/telemetry
	ReasonTopicMismatch   Reason = "topic_mismatch"    // vehicle in the payload differs from the topic
	ReasonMissingEpoch    Reason = "missing_epoch"     // epoch missing or malformed
	ReasonMissingSeq      Reason = "missing_seq"       // seq missing or 0
	ReasonBadSeq          Reason = "bad_seq"           // seq above MaxSeq (2^63−1)
	ReasonBadClock        Reason = "bad_clock"         // clock missing or not gps|rtc|system
	ReasonTooManyReadings Reason = "too_many_readings" // more than MaxReadings readings
	ReasonBadTime         Reason = "bad_time"          // a time missing, not RFC 3339 UTC, finer than 1 ms, or outside 2000–2100
	ReasonFutureTime      Reason = "future_time"       // a time more than Limits.MaxAhead after receipt
	ReasonPastTime        Reason = "past_time"         // a time more than Limits.MaxAge before receipt
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
	// Reasons of the consumers, never returned by Decode.
	ReasonConflict       Reason = "conflict"        // same vehicle, epoch and seq as a batch taken before, other content
	ReasonUnknownVehicle Reason = "unknown_vehicle" // not in the registry, or beyond the vehicles tracked without one
	ReasonUnstorable     Reason = "unstorable"      // the monitor's database refused the batch
)

// Reasons lists every rejection reason, for metrics and documentation.
var Reasons = []Reason{
	ReasonTooLarge, ReasonNotUTF8, ReasonBadJSON, ReasonBadVersion, ReasonBadVehicle, ReasonBadTopic,
	ReasonTopicMismatch, ReasonMissingEpoch, ReasonMissingSeq, ReasonBadSeq, ReasonBadClock, ReasonTooManyReadings,
	ReasonBadTime, ReasonFutureTime, ReasonPastTime, ReasonNonFinite, ReasonBadPosition, ReasonBadSpeed, ReasonBadSound,
	ReasonBadFix, ReasonBadValue, ReasonBadSignature, ReasonSignatureFailed, ReasonUnsigned,
	ReasonUnknownKey, ReasonConflict, ReasonUnknownVehicle, ReasonUnstorable,
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

	// MaxWarnings bounds the warnings of one batch (they are not readings: MaxReadings does not
	// count them). A coach warns a few times a minute at most; 32 in one batch is a fault.
	MaxWarnings = 32
	// MaxRuleLen and MaxSiteLen bound a warning's rule and site ids, in bytes.
	MaxRuleLen = 64
	MaxSiteLen = 128
	// MaxWarningDistanceM bounds a warning's distance_m; MaxWarningMagnitude bounds the
	// absolute value of its value and limit (dB, km/h, minutes or days).
	MaxWarningDistanceM = 100_000.0
	MaxWarningMagnitude = 1_000_000.0
)

// Decode is DefaultLimits.Decode.
func Decode(topic string, payload []byte, receivedAt time.Time) (*Batch, error) {
	return DefaultLimits.Decode(topic, payload, receivedAt)
}

// Decode parses and validates a telemetry payload received on topic at receivedAt.
// topic may be empty when the payload does not come from MQTT (a file, a test); then only
// the payload's own vehicle is checked. A zero receivedAt skips the checks relative to the
// receipt (future_time, past_time); times outside [Earliest, Latest] are refused in any case.
// The returned error is always an *Error, with the reason of the first failed check, in this
// order: size, topic, UTF-8, JSON (one object; types; numbers that fit a float64; time
// syntax), signature layout, then the fields (v, vehicle, epoch, seq, clock, reading count,
// sent_at, each gps, tacho, sound, service and door reading in order, the warning count and
// each warning, kid and sig), and last the
// payload vehicle against the topic. It does not verify the signature: see Verify.
func (l Limits) Decode(topic string, payload []byte, receivedAt time.Time) (*Batch, error) {
	return l.decode(topic, payload, receivedAt, unmarshalBatch)
}

// decode is Decode with the JSON reader as a parameter, so that the tests can run it with
// reflectBatch alone.
func (l Limits) decode(topic string, payload []byte, receivedAt time.Time, unmarshal func([]byte) (*Batch, missing, *Error)) (*Batch, error) {
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
	if p := bytes.TrimLeft(payload, " \t\r\n"); len(p) == 0 || p[0] != '{' {
		return nil, reject(ReasonBadJSON, "payload is not a JSON object")
	}
	b, m, jerr := unmarshal(payload)
	if jerr != nil {
		return nil, jerr
	}
	if ok, err := checkSig(payload); err != nil {
		return nil, err
	} else if b.Sig != "" && !ok {
		return nil, reject(ReasonBadSignature, "sig must be the last member")
	}
	if err := b.validate(l, receivedAt, m); err != nil {
		return nil, err
	}
	if topicVehicle != "" && b.Vehicle != topicVehicle {
		return nil, reject(ReasonTopicMismatch, "payload vehicle %q on topic of %q", b.Vehicle, topicVehicle)
	}
	return b, nil
}

// missing holds the index of the first service change without "on" and of the first door
// change without "open", or -1: a required boolean whose absence a bool cannot show.
type missing struct{ service, door int }

var noneMissing = missing{-1, -1}

// unmarshalBatch reads exactly one JSON object (payload starts with "{"). Absent lat/lon are returned as NaN (JSON cannot
// carry NaN, and validate rejects it). Empty arrays are returned as nil, so that absent and
// empty decode alike.
//
// The canonical shape — what Encode and every bridge write — is read by scanBatch, a scanner
// for this one schema without reflection. Whatever it is not sure to read exactly as
// encoding/json would (a duplicate member, a member name in other case or with escapes, a
// value of the wrong type, a string with escapes, a number out of range, a syntax error) it
// leaves to reflectBatch, the encoding/json decoder, which defines the result and the error:
// so both paths give the same batch or the same error (FuzzScanBatch), and a payload off the
// canonical shape costs what every payload cost before the scanner.
func unmarshalBatch(payload []byte) (*Batch, missing, *Error) {
	if b, m, ok := scanBatch(payload); ok {
		return b, m, nil
	}
	return reflectBatch(payload)
}

// batchIn is a Batch as encoding/json reads it: the members that are required but whose Go zero
// value is a valid reading (gps lat/lon, service on, door open) are read so that absence can be
// told apart from 0 or false. The outer fields shadow those of the embedded types.
type batchIn struct {
	Batch
	GPS     []gpsIn     `json:"gps"`
	Service []serviceIn `json:"service"`
	Door    []doorIn    `json:"door"`
}

type gpsIn struct {
	GPS
	Lat presentFloat `json:"lat"`
	Lon presentFloat `json:"lon"`
}

type serviceIn struct {
	Service
	On *bool `json:"on"`
}

type doorIn struct {
	Door
	Open *bool `json:"open"`
}

// presentFloat is a JSON number that remembers whether it was present (null counts as absent).
type presentFloat struct {
	v  float64
	ok bool
}

func (f *presentFloat) UnmarshalJSON(b []byte) error {
	if string(b) == "null" {
		return nil
	}
	if len(b) == 0 || (b[0] != '-' && (b[0] < '0' || b[0] > '9')) {
		var v float64
		return json.Unmarshal(b, &v) // a *json.UnmarshalTypeError: bad_json
	}
	// The decoder has already checked that b is a JSON number, a subset of ParseFloat's syntax.
	v, err := strconv.ParseFloat(string(b), 64)
	if err != nil {
		// As encoding/json reports it for a plain float64, with the field path added: non_finite.
		return &json.UnmarshalTypeError{Value: "number " + string(b), Type: reflect.TypeFor[float64]()}
	}
	f.v, f.ok = v, true
	return nil
}

// reflectBatch is unmarshalBatch by encoding/json: the reference of scanBatch.
func reflectBatch(payload []byte) (*Batch, missing, *Error) {
	var in batchIn
	if err := json.Unmarshal(payload, &in); err != nil {
		return nil, noneMissing, jsonError(err)
	}
	b := in.Batch
	b.GPS, b.Service, b.Door = nil, nil, nil
	if len(b.Warnings) == 0 {
		b.Warnings = nil
	}
	if len(in.GPS) > 0 {
		b.GPS = make([]GPS, len(in.GPS))
		for i := range in.GPS {
			g := &in.GPS[i]
			b.GPS[i] = g.GPS
			b.GPS[i].Lat, b.GPS[i].Lon = math.NaN(), math.NaN()
			if g.Lat.ok {
				b.GPS[i].Lat = g.Lat.v
			}
			if g.Lon.ok {
				b.GPS[i].Lon = g.Lon.v
			}
		}
	}
	m := noneMissing
	if len(in.Service) > 0 {
		b.Service = make([]Service, len(in.Service))
		for i, s := range in.Service {
			b.Service[i] = s.Service
			if s.On == nil {
				if m.service < 0 {
					m.service = i
				}
			} else {
				b.Service[i].On = *s.On
			}
		}
	}
	if len(in.Door) > 0 {
		b.Door = make([]Door, len(in.Door))
		for i, d := range in.Door {
			b.Door[i] = d.Door
			if d.Open == nil {
				if m.door < 0 {
					m.door = i
				}
			} else {
				b.Door[i].Open = *d.Open
			}
		}
	}
	if len(b.Tacho) == 0 {
		b.Tacho = nil
	}
	if len(b.Sound) == 0 {
		b.Sound = nil
	}
	return &b, m, nil
}

func jsonError(err error) *Error {
	var te *json.UnmarshalTypeError
	if errors.As(err, &te) {
		field := jsonPath(te.Field)
		if strings.HasPrefix(te.Value, "number") && te.Type != nil && te.Type.Kind() == reflect.Float64 {
			return reject(ReasonNonFinite, "%s: %.40s does not fit a float64", field, te.Value)
		}
		return reject(ReasonBadJSON, "%s: %.40s where %s expected", field, te.Value, jsonKind(te.Type))
	}
	var tErr *timeError
	if errors.As(err, &tErr) {
		return reject(ReasonBadTime, "%v", tErr)
	}
	return reject(ReasonBadJSON, "%v", err)
}

// jsonPath turns encoding/json's field path ("gps.GPS.speed_kmh") into member names
// ("gps.speed_kmh"), dropping the Go names of the embedded structs of batchIn and gpsIn.
func jsonPath(field string) string {
	if field == "" {
		return "payload"
	}
	parts := strings.Split(field, ".")
	out := parts[:0]
	for _, p := range parts {
		switch p {
		case "Batch", "GPS", "Service", "Door":
		default:
			out = append(out, p)
		}
	}
	return strings.Join(out, ".")
}

// jsonKind names the JSON value a Go type takes.
func jsonKind(t reflect.Type) string {
	if t == nil {
		return "another value"
	}
	switch t.Kind() {
	case reflect.Slice:
		return "an array"
	case reflect.Struct:
		return "an object"
	case reflect.String:
		return "a string"
	case reflect.Bool:
		return "true or false"
	case reflect.Int, reflect.Int64:
		return "an integer"
	case reflect.Uint64:
		return "an integer from 0"
	case reflect.Float64:
		return "a number"
	}
	return t.String()
}

// validate checks the decoded batch; m says which service and door changes lacked their state.
func (b *Batch) validate(l Limits, receivedAt time.Time, m missing) *Error {
	if b.V != Version {
		return reject(ReasonBadVersion, "v=%d, want %d", b.V, Version)
	}
	if !ValidVehicle(b.Vehicle) {
		return reject(ReasonBadVehicle, "%q", b.Vehicle)
	}
	if !validEpoch(b.Epoch) {
		return reject(ReasonMissingEpoch, "epoch %q", b.Epoch)
	}
	if b.Seq == 0 {
		return reject(ReasonMissingSeq, "seq missing or 0")
	}
	if b.Seq > MaxSeq {
		return reject(ReasonBadSeq, "seq %d above 2^63-1", b.Seq)
	}
	if !b.Clock.Valid() {
		return reject(ReasonBadClock, "clock %q", b.Clock)
	}
	if n := b.Readings(); n > MaxReadings {
		return reject(ReasonTooManyReadings, "%d readings, limit %d", n, MaxReadings)
	}
	lo, hi := l.window(receivedAt)
	check := func(what string, i int, t Time) *Error { return checkTime(what, i, t, receivedAt, lo, hi) }
	if err := check("sent_at", -1, b.SentAt); err != nil {
		return err
	}
	for i, g := range b.GPS {
		if err := check("gps", i, g.T); err != nil {
			return err
		}
		if err := g.validate(i); err != nil {
			return err
		}
	}
	for i, r := range b.Tacho {
		if err := check("tacho", i, r.T); err != nil {
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
		if err := check("sound", i, s.T); err != nil {
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
		if err := check("service", i, s.T); err != nil {
			return err
		}
		if i == m.service {
			return reject(ReasonBadValue, "service[%d].on missing", i)
		}
	}
	for i, d := range b.Door {
		if err := check("door", i, d.T); err != nil {
			return err
		}
		if i == m.door {
			return reject(ReasonBadValue, "door[%d].open missing", i)
		}
	}
	if len(b.Warnings) > MaxWarnings {
		return reject(ReasonBadValue, "%d warnings, limit %d", len(b.Warnings), MaxWarnings)
	}
	for i := range b.Warnings {
		w := &b.Warnings[i]
		if err := check("warnings", i, w.T); err != nil {
			return err
		}
		if err := w.validate(i); err != nil {
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

// checkTime checks a required time against [lo, hi]; i < 0 for sent_at, else the index of
// the reading.
func checkTime(what string, i int, t Time, receivedAt, lo, hi time.Time) *Error {
	missing := t.IsZero()
	if !missing && !t.Before(lo) && !t.After(hi) {
		return nil
	}
	if i >= 0 {
		what = fmt.Sprintf("%s[%d].t", what, i)
	}
	switch {
	case missing:
		return reject(ReasonBadTime, "%s missing", what)
	case t.Before(Earliest) || t.After(Latest):
		return reject(ReasonBadTime, "%s %s is outside %d–%d", what, t, Earliest.Year(), Latest.Year())
	case t.After(hi):
		return reject(ReasonFutureTime, "%s %s is more than %s after receipt %s", what, t, hi.Sub(receivedAt), NewTime(receivedAt))
	default:
		return reject(ReasonPastTime, "%s %s is more than %s before receipt %s", what, t, receivedAt.Sub(lo), NewTime(receivedAt))
	}
}

func speed(what string, i int, p *float64) *Error {
	if p != nil && (*p < 0 || *p > MaxSpeedKmh || math.IsNaN(*p)) {
		return reject(ReasonBadSpeed, "%s[%d].speed_kmh %v outside 0–%v", what, i, *p, MaxSpeedKmh)
	}
	return nil
}

func (g *GPS) validate(i int) *Error {
	if math.IsNaN(g.Lat) || math.IsNaN(g.Lon) {
		return reject(ReasonBadPosition, "gps[%d]: lat or lon missing", i)
	}
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

// Validate checks a warning as Decode checks the warnings of a batch, but for its time, which
// only a batch's receipt can judge (it must only be set): a bridge refuses a warning that would
// make its whole batch rejected.
func (w *Warning) Validate() error {
	if w.T.IsZero() {
		return reject(ReasonBadTime, "warning t missing")
	}
	if err := w.validate(-1); err != nil {
		return err
	}
	return nil
}

// validate checks a warning's members but its time; i is its index in the batch (-1: alone).
func (w *Warning) validate(i int) *Error {
	name := "warning"
	if i >= 0 {
		name = fmt.Sprintf("warnings[%d]", i)
	}
	if !w.Kind.Valid() {
		return reject(ReasonBadValue, "%s.kind %.40q", name, w.Kind)
	}
	if !validRule(w.Rule) {
		return reject(ReasonBadValue, "%s.rule %.80q: want [a-z][a-z0-9_]{0,%d}", name, w.Rule, MaxRuleLen-1)
	}
	if len(w.Site) > MaxSiteLen || strings.ContainsFunc(w.Site, func(r rune) bool { return r < 0x20 || r == 0x7f }) {
		return reject(ReasonBadValue, "%s.site: longer than %d bytes or with a control character", name, MaxSiteLen)
	}
	if p := w.DistanceM; p != nil && !(*p >= 0 && *p <= MaxWarningDistanceM) {
		return reject(ReasonBadValue, "%s.distance_m %v outside 0–%v", name, *p, MaxWarningDistanceM)
	}
	for _, m := range []struct {
		what string
		p    *float64
	}{{"value", w.Value}, {"limit", w.Limit}} {
		if m.p != nil && !(math.Abs(*m.p) <= MaxWarningMagnitude) {
			return reject(ReasonBadValue, "%s.%s %v outside ±%v", name, m.what, *m.p, MaxWarningMagnitude)
		}
	}
	return nil
}

// validRule reports whether s is a rule id: [a-z][a-z0-9_]{0,MaxRuleLen-1}.
func validRule(s string) bool {
	if len(s) == 0 || len(s) > MaxRuleLen || s[0] < 'a' || s[0] > 'z' {
		return false
	}
	for i := 1; i < len(s); i++ {
		if c := s[i]; !(c >= 'a' && c <= 'z' || c >= '0' && c <= '9' || c == '_') {
			return false
		}
	}
	return true
}
