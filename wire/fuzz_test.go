package wire

import (
	"bytes"
	"encoding/base64"
	"encoding/json"
	"errors"
	"reflect"
	"regexp"
	"slices"
	"testing"
	"time"
)

// fuzzSeedMax keeps big payloads (256 KiB, 600 readings) out of the fuzz seeds: they are tested
// above and only slow the fuzzer down.
const fuzzSeedMax = 4096

// FuzzDecode checks that Decode never panics, that every rejection is an *Error with a listed
// reason, and that an accepted batch survives Encode→Decode unchanged (but for Sig, which only
// a key can recreate) and encodes to the same bytes again.
func FuzzDecode(f *testing.F) {
	for _, c := range rejections() {
		if len(c.payload) <= fuzzSeedMax {
			f.Add([]byte(c.payload), c.topic)
		}
	}
	for _, c := range acceptances() {
		if len(c.payload) <= fuzzSeedMax {
			f.Add([]byte(c.payload), c.topic)
		}
	}
	for _, c := range warningCases {
		if len(c.payload) <= fuzzSeedMax {
			f.Add([]byte(c.payload), testTopic)
		}
	}
	f.Add([]byte(signedExample()), testTopic)
	f.Fuzz(func(t *testing.T, payload []byte, topic string) {
		b, err := Decode(topic, payload, recv)
		if err != nil {
			var we *Error
			if !errors.As(err, &we) {
				t.Fatalf("error %T is not a *wire.Error: %v", err, err)
			}
			if b != nil {
				t.Fatalf("batch returned with error %v", err)
			}
			if !slices.Contains(Reasons, we.Reason) {
				t.Fatalf("reason %q not in Reasons", we.Reason)
			}
			switch we.Reason {
			case ReasonSignatureFailed, ReasonUnsigned, ReasonUnknownKey:
				t.Fatalf("Decode returned %s, which is for the consumer", we.Reason)
			}
			return
		}
		// What an accepted batch guarantees.
		if b.V != Version || !ValidVehicle(b.Vehicle) || b.Seq == 0 || b.Seq > MaxSeq || !b.Clock.Valid() || b.Readings() > MaxReadings ||
			b.SentAt.IsZero() || b.SentAt.After(recv.Add(DefaultMaxAhead)) || b.SentAt.Before(recv.Add(-DefaultMaxAge)) {
			t.Fatalf("accepted an invalid batch: %+v", b)
		}
		if len(b.Warnings) > MaxWarnings {
			t.Fatalf("accepted %d warnings", len(b.Warnings))
		}
		for _, w := range b.Warnings {
			if w.Validate() != nil || w.T.Before(recv.Add(-DefaultMaxAge)) || w.T.After(recv.Add(DefaultMaxAhead)) {
				t.Fatalf("accepted warning %+v: %v", w, w.Validate())
			}
		}
		for _, g := range b.GPS {
			if !(g.Lat >= -90 && g.Lat <= 90 && g.Lon >= -180 && g.Lon <= 180) {
				t.Fatalf("accepted position %v %v", g.Lat, g.Lon)
			}
		}
		if b.GPS != nil && len(b.GPS) == 0 || b.Tacho != nil && len(b.Tacho) == 0 ||
			b.Sound != nil && len(b.Sound) == 0 || b.Service != nil && len(b.Service) == 0 ||
			b.Door != nil && len(b.Door) == 0 || b.Warnings != nil && len(b.Warnings) == 0 {
			t.Fatalf("empty, non-nil array: %+v", b)
		}
		if topic != "" {
			if v, _, _ := VehicleFromTopic(topic); v != b.Vehicle {
				t.Fatalf("vehicle %q accepted on topic %q", b.Vehicle, topic)
			}
		}
		if b.Sig != "" {
			_, sig, ok, err := SplitSignature(payload)
			if !ok || err != nil || len(sig) != 64 {
				t.Fatalf("accepted sig %q that SplitSignature does not find: %v %v", b.Sig, ok, err)
			}
			if dec, err := base64.StdEncoding.DecodeString(b.Sig); err != nil || !bytes.Equal(dec, sig) {
				t.Fatalf("sig %q is not the signature SplitSignature found", b.Sig)
			}
			if err := Verify(payload, testPub); err != nil && ReasonOf(err) != ReasonSignatureFailed {
				t.Fatalf("Verify of an accepted signed payload: %v", err)
			}
		}

		p, err := Encode(b, nil)
		if err != nil {
			t.Fatalf("Encode of an accepted batch: %v\n%+v", err, b)
		}
		b2, err := Decode(topic, p, recv)
		if err != nil {
			t.Fatalf("re-encoded batch rejected: %v\n%s", err, p)
		}
		want := *b
		want.Sig = ""
		if !reflect.DeepEqual(b2, &want) {
			t.Fatalf("Encode→Decode changed the batch:\n got %+v\nwant %+v\n%s", b2, &want, p)
		}
		p2, err := Encode(b2, nil)
		if err != nil || !bytes.Equal(p, p2) {
			t.Fatalf("Encode is not stable: %v\n%s\n%s", err, p, p2)
		}
	})
}

// wireTimeRE is the syntax of a wire time; ParseTime also checks the calendar.
var wireTimeRE = regexp.MustCompile(`^[0-9]{4}-[0-9]{2}-[0-9]{2}T[0-9]{2}:[0-9]{2}:[0-9]{2}(\.[0-9]{1,3})?Z$`)

// FuzzParseTime checks ParseTime against the syntax above and time.Parse, and that an accepted
// time is UTC, whole milliseconds, and round-trips through String and JSON.
func FuzzParseTime(f *testing.F) {
	for _, s := range []string{
		"2026-11-29T15:00:00Z", "2026-11-29T15:00:00.250Z", "2026-11-29T15:00:00.1Z", "2026-11-29T15:00:00.000Z",
		"0000-01-01T00:00:00Z", "9999-12-31T23:59:59.999Z", "2028-02-29T12:00:00Z", "2026-02-29T12:00:00Z",
		"2026-11-29T15:00:00.1234Z", "2026-11-29T15:00:00+00:00", "2026-11-29T12:00:00-03:00", "2026-11-29T15:00:00.Z",
		"2026-11-29T15:00:00,250Z", "2026-11-29T24:00:00Z", "2026-11-29T23:59:60Z", "2026-11-29T15:00:00z", "",
		"2026-11-29T15:00:00.-1Z", "2026-11-29T15:00:00.+1Z", "+026-11-29T15:00:00Z", "2026-1-29T15:00:00.25Z",
	} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		tm, err := ParseTime(s)
		ref, refErr := time.Parse(time.RFC3339Nano, s)
		wantOK := wireTimeRE.MatchString(s) && refErr == nil
		if (err == nil) != wantOK {
			t.Fatalf("ParseTime(%q) error %v; syntax %v, time.Parse error %v", s, err, wireTimeRE.MatchString(s), refErr)
		}
		if err != nil {
			return
		}
		if !tm.Equal(ref) || tm.Location() != time.UTC || tm.Nanosecond()%int(time.Millisecond) != 0 {
			t.Fatalf("ParseTime(%q) = %v", s, tm.Time)
		}
		back, err := ParseTime(tm.String())
		if err != nil || back != tm {
			t.Fatalf("ParseTime(%q).String() = %q does not parse back: %v", s, tm.String(), err)
		}
		j, err := json.Marshal(tm)
		if tm.IsZero() {
			if err == nil {
				t.Fatalf("zero time %q marshalled", s)
			}
			return
		}
		var u Time
		if err != nil || json.Unmarshal(j, &u) != nil || u != tm {
			t.Fatalf("JSON round trip of %q: %s %v %v", s, j, err, u)
		}
	})
}
