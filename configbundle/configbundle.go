// Package configbundle is the signed configuration the monitor sends each vehicle's bridge
// (docs/protocol.md §9): the legal profile, the geofences the vehicle's licensee drives among,
// the bridge's settings, a version and a validity date, signed with the monitor's ed25519 key.
//
// Both programs import it: the monitor builds and signs (Build, Sign), the bridge verifies
// (Open) with the public key it pinned at enrolment. It imports nothing of the monitor.
package configbundle

import (
	"bytes"
	"compress/gzip"
	"crypto/ed25519"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"time"

	"github.com/trenzinho/trenzinho/wire"
)

// Format is the bundle format this package writes and reads.
const Format = 1

// Bounds of a bundle.
const (
	// MaxBytes bounds a signed bundle as it travels (the MQTT payload). The Piúma example
	// weighs about 48 KB (docs/benchmarks.md, "Configuration bundle").
	MaxBytes = 256 << 10
	// MaxPayloadBytes bounds the payload once decompressed: a gzip bomb stops there.
	MaxPayloadBytes = 2 << 20
	// CompressAbove: a payload larger than this is sent gzip-compressed.
	CompressAbove = 64 << 10
)

// signContext separates a configuration signature from every other signature of the same key
// (the monitor's key signs drafts' evidence too): what is signed is this line, the encoding,
// a newline and the payload bytes.
const signContext = "trenzinho-config-v1\n"

// Encodings of the payload.
const (
	EncJSON = "json"
	EncGzip = "gzip" // gzip-compressed JSON
)

// Topic is the retained, per-vehicle topic of its bundle: the monitor alone writes it, the
// vehicle alone reads it (deploy/mosquitto/acl).
func Topic(vehicle string) string { return "trenzinho/v1/" + vehicle + "/config" }

// Bundle is the configuration of one vehicle's bridge.
type Bundle struct {
	Format   int    `json:"v"`
	Vehicle  string `json:"vehicle"`
	Licensee string `json:"licensee,omitempty"`
	// Version increases with every bundle the monitor issues to the vehicle; a bridge never
	// goes back to a lower one.
	Version    uint64    `json:"version"`
	IssuedAt   time.Time `json:"issued_at"`
	ValidUntil time.Time `json:"valid_until"`
	Profile    Profile   `json:"profile"`
	// Geofences is a GeoJSON FeatureCollection in the format of geofences.Read: the sensitive
	// sites (with their opening hours), the NBR zones, the boarding points, and the
	// itineraries and garages of the vehicle's licensee.
	Geofences json.RawMessage `json:"geofences"`
	Settings  Settings        `json:"settings"`
	// Documents are the dated documents of the vehicle and of its licensee (the registry's),
	// for the coach's document warning; absent in bundles of monitors that predate them.
	Documents []Document `json:"documents,omitempty"`
}

// Document is a dated document of the vehicle or its licensee: which kind, whose, and the last
// day it is valid.
type Document struct {
	Holder string `json:"holder"` // HolderVehicle or HolderLicensee
	// Kind is the registry's document kind: licenca, csv, inspecao, afericao_tacografo.
	Kind string `json:"kind"`
	// ValidUntil is the last day the document is valid, YYYY-MM-DD, a day of the calendar
	// of the profile's time zone.
	ValidUntil string `json:"valid_until"`
}

// Holders of a Document.
const (
	HolderVehicle  = "vehicle"
	HolderLicensee = "licensee"
)

// MaxDocuments bounds a bundle's documents (a vehicle and its licensee have a handful).
const MaxDocuments = 64

// Day is ValidUntil as a date (midnight UTC of that day); ok is false when it is not one.
func (d Document) Day() (t time.Time, ok bool) {
	t, err := time.Parse(time.DateOnly, d.ValidUntil)
	return t, err == nil
}

// Profile is the legal profile in force, as the monitor loaded it.
type Profile struct {
	ID   string `json:"id"`
	YAML string `json:"yaml"` // the profile file (docs/profile.md), parsed by the coach
}

// Settings are the bridge's settings that the monitor decides.
type Settings struct {
	// BatchIntervalMS is how often the bridge closes a batch, in milliseconds (0: its own).
	BatchIntervalMS int64 `json:"batch_interval_ms,omitempty"`
	// LogLevel is debug, info, warn or error ("": its own).
	LogLevel string `json:"log_level,omitempty"`
	// Warnings are the thresholds of the driver's coach.
	Warnings Warnings `json:"warnings"`
}

// Warnings are when the coach warns the driver.
type Warnings struct {
	LeadDistanceM      float64 `json:"lead_distance_m,omitempty"`      // before an open sensitive site
	SpeedMarginKmh     float64 `json:"speed_margin_kmh,omitempty"`     // below the speed limit
	ServiceEndMin      []int   `json:"service_end_min,omitempty"`      // before the end of service hours
	DocumentExpiryDays int     `json:"document_expiry_days,omitempty"` // before a document expires
	// VolumeLimiter turns on the volume limiter's relay near an open sensitive site, where
	// one is wired (docs/bridge.md); off by default.
	VolumeLimiter bool `json:"volume_limiter,omitempty"`
}

// BatchInterval is the setting as a duration (0: not set).
func (s Settings) BatchInterval() time.Duration {
	return time.Duration(s.BatchIntervalMS) * time.Millisecond
}

// Level parses LogLevel; ok is false when it is empty or not a level.
func (s Settings) Level() (l slog.Level, ok bool) {
	if s.LogLevel == "" {
		return 0, false
	}
	return l, l.UnmarshalText([]byte(s.LogLevel)) == nil
}

// Envelope is the signed bundle as it travels: the payload bytes, their encoding and the
// signature over them.
type Envelope struct {
	Alg     string `json:"alg"` // "ed25519"
	Enc     string `json:"enc"` // EncJSON or EncGzip
	Payload string `json:"payload"`
	Sig     string `json:"sig"`
}

// Errors of Open; each is wrapped with its detail.
var (
	ErrMalformed = errors.New("config bundle malformed")
	ErrSignature = errors.New("config bundle signature invalid")
	ErrExpired   = errors.New("config bundle expired")
	ErrVehicle   = errors.New("config bundle for another vehicle")
)

// Validate checks what every bundle must satisfy.
func (b *Bundle) Validate() error {
	switch {
	case b.Format != Format:
		return fmt.Errorf("%w: format %d, want %d", ErrMalformed, b.Format, Format)
	case !wire.ValidVehicle(b.Vehicle):
		return fmt.Errorf("%w: vehicle %q", ErrMalformed, b.Vehicle)
	case b.Version == 0 || b.Version > wire.MaxSeq:
		return fmt.Errorf("%w: version %d, want 1 to 2^63-1", ErrMalformed, b.Version)
	case b.IssuedAt.IsZero() || !b.ValidUntil.After(b.IssuedAt):
		return fmt.Errorf("%w: validity %s to %s", ErrMalformed, b.IssuedAt, b.ValidUntil)
	case b.Settings.BatchIntervalMS < 0 || b.Settings.BatchIntervalMS > 3_600_000:
		return fmt.Errorf("%w: batch_interval_ms %d", ErrMalformed, b.Settings.BatchIntervalMS)
	case b.Settings.BatchIntervalMS != 0 && b.Settings.BatchIntervalMS < 100:
		return fmt.Errorf("%w: batch_interval_ms %d below 100", ErrMalformed, b.Settings.BatchIntervalMS)
	case len(b.Documents) > MaxDocuments:
		return fmt.Errorf("%w: %d documents, at most %d", ErrMalformed, len(b.Documents), MaxDocuments)
	case b.Settings.Warnings.DocumentExpiryDays < 0 || b.Settings.Warnings.DocumentExpiryDays > 366:
		return fmt.Errorf("%w: document_expiry_days %d", ErrMalformed, b.Settings.Warnings.DocumentExpiryDays)
	}
	for _, d := range b.Documents {
		if _, ok := d.Day(); !ok || (d.Holder != HolderVehicle && d.Holder != HolderLicensee) || d.Kind == "" || len(d.Kind) > 64 {
			return fmt.Errorf("%w: document %+v", ErrMalformed, d)
		}
	}
	if _, ok := b.Settings.Level(); b.Settings.LogLevel != "" && !ok {
		return fmt.Errorf("%w: log_level %q", ErrMalformed, b.Settings.LogLevel)
	}
	if len(b.Geofences) > 0 {
		var fc struct {
			Type string `json:"type"`
		}
		if err := json.Unmarshal(b.Geofences, &fc); err != nil || fc.Type != "FeatureCollection" {
			return fmt.Errorf("%w: geofences are not a GeoJSON FeatureCollection", ErrMalformed)
		}
	}
	return nil
}

// Sign encodes b (gzip-compressed when its JSON exceeds CompressAbove) and signs it with key.
// The encoding is deterministic: one bundle, one byte string.
func Sign(b *Bundle, key ed25519.PrivateKey) ([]byte, error) {
	if err := b.Validate(); err != nil {
		return nil, err
	}
	payload, err := json.Marshal(b)
	if err != nil {
		return nil, err
	}
	enc := EncJSON
	if len(payload) > CompressAbove {
		var buf bytes.Buffer
		zw, _ := gzip.NewWriterLevel(&buf, gzip.BestCompression) // header without name or time: deterministic
		zw.Write(payload)
		if err := zw.Close(); err != nil {
			return nil, err
		}
		payload, enc = buf.Bytes(), EncGzip
	}
	out, err := json.Marshal(Envelope{
		Alg: "ed25519", Enc: enc,
		Payload: base64.StdEncoding.EncodeToString(payload),
		Sig:     base64.StdEncoding.EncodeToString(ed25519.Sign(key, signedBytes(enc, payload))),
	})
	if err != nil {
		return nil, err
	}
	if len(out) > MaxBytes {
		return nil, fmt.Errorf("config bundle of %s: %d bytes, limit %d", b.Vehicle, len(out), MaxBytes)
	}
	return out, nil
}

func signedBytes(enc string, payload []byte) []byte {
	m := make([]byte, 0, len(signContext)+len(enc)+1+len(payload))
	m = append(m, signContext...)
	m = append(m, enc...)
	m = append(m, '\n')
	return append(m, payload...)
}

// Parse decodes a signed bundle WITHOUT checking its signature or validity date: for tools
// that show a bundle. A bridge uses Open.
func Parse(msg []byte) (*Bundle, *Envelope, error) {
	if len(msg) > MaxBytes {
		return nil, nil, fmt.Errorf("%w: %d bytes, limit %d", ErrMalformed, len(msg), MaxBytes)
	}
	var env Envelope
	dec := json.NewDecoder(bytes.NewReader(msg))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&env); err != nil {
		return nil, nil, fmt.Errorf("%w: %v", ErrMalformed, err)
	}
	if dec.More() {
		return nil, nil, fmt.Errorf("%w: data after the envelope", ErrMalformed)
	}
	if env.Alg != "ed25519" {
		return nil, nil, fmt.Errorf("%w: alg %q", ErrMalformed, env.Alg)
	}
	payload, err := base64.StdEncoding.DecodeString(env.Payload)
	if err != nil {
		return nil, nil, fmt.Errorf("%w: payload: %v", ErrMalformed, err)
	}
	if sig, err := base64.StdEncoding.DecodeString(env.Sig); err != nil || len(sig) != ed25519.SignatureSize {
		return nil, nil, fmt.Errorf("%w: sig is not an ed25519 signature", ErrMalformed)
	}
	var js []byte
	switch env.Enc {
	case EncJSON:
		js = payload
	case EncGzip:
		zr, err := gzip.NewReader(bytes.NewReader(payload))
		if err != nil {
			return nil, nil, fmt.Errorf("%w: gzip: %v", ErrMalformed, err)
		}
		js, err = io.ReadAll(io.LimitReader(zr, MaxPayloadBytes+1))
		if err != nil {
			return nil, nil, fmt.Errorf("%w: gzip: %v", ErrMalformed, err)
		}
	default:
		return nil, nil, fmt.Errorf("%w: enc %q", ErrMalformed, env.Enc)
	}
	if len(js) > MaxPayloadBytes {
		return nil, nil, fmt.Errorf("%w: payload above %d bytes", ErrMalformed, MaxPayloadBytes)
	}
	var b Bundle
	if err := json.Unmarshal(js, &b); err != nil {
		return nil, nil, fmt.Errorf("%w: %v", ErrMalformed, err)
	}
	if err := b.Validate(); err != nil {
		return nil, nil, err
	}
	return &b, &env, nil
}

// Open verifies a signed bundle for vehicle against the pinned public key and its validity at
// now, and returns it. Nothing of an unverified bundle is returned.
func Open(msg []byte, pub ed25519.PublicKey, vehicle string, now time.Time) (*Bundle, error) {
	if len(pub) != ed25519.PublicKeySize {
		return nil, fmt.Errorf("%w: no pinned public key", ErrSignature)
	}
	b, env, err := Parse(msg)
	if err != nil {
		return nil, err
	}
	payload, _ := base64.StdEncoding.DecodeString(env.Payload)
	sig, _ := base64.StdEncoding.DecodeString(env.Sig)
	if !ed25519.Verify(pub, signedBytes(env.Enc, payload), sig) {
		return nil, ErrSignature
	}
	if b.Vehicle != vehicle {
		return nil, fmt.Errorf("%w: %s, this is %s", ErrVehicle, b.Vehicle, vehicle)
	}
	if !now.Before(b.ValidUntil) {
		return nil, fmt.Errorf("%w: valid until %s", ErrExpired, b.ValidUntil.Format(time.RFC3339))
	}
	return b, nil
}
