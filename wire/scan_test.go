package wire

import (
	"encoding/json"
	"errors"
	"math"
	"reflect"
	"strings"
	"testing"
	"time"
	"unicode/utf8"
)

// decodeReflect is Decode as it was before scanBatch: encoding/json alone.
func decodeReflect(topic string, payload []byte, receivedAt time.Time) (*Batch, error) {
	return DefaultLimits.decode(topic, payload, receivedAt, reflectBatch)
}

// sameDecode fails when Decode and decodeReflect disagree on payload: both must accept the same
// batch or reject with the same reason and detail.
func sameDecode(t *testing.T, topic string, payload []byte, at time.Time) {
	t.Helper()
	got, err := DefaultLimits.Decode(topic, payload, at)
	want, wantErr := decodeReflect(topic, payload, at)
	if (err == nil) != (wantErr == nil) {
		t.Fatalf("Decode error %v, encoding/json error %v\n%q", err, wantErr, payload)
	}
	if err != nil {
		var e, we *Error
		if !errors.As(err, &e) || !errors.As(wantErr, &we) || *e != *we {
			t.Fatalf("Decode error %v, encoding/json error %v\n%q", err, wantErr, payload)
		}
		return
	}
	if !sameBatch(got, want) {
		t.Fatalf("Decode and encoding/json disagree on %q:\n got %+v\nwant %+v", payload, got, want)
	}
}

// sameBatch is reflect.DeepEqual with absent lat and lon (NaN) equal.
func sameBatch(a, b *Batch) bool {
	if a == nil || b == nil {
		return a == b
	}
	unNaN := func(x *Batch) *Batch {
		c := *x
		c.GPS = append([]GPS(nil), x.GPS...)
		for i := range c.GPS {
			if math.IsNaN(c.GPS[i].Lat) {
				c.GPS[i].Lat = math.Inf(1)
			}
			if math.IsNaN(c.GPS[i].Lon) {
				c.GPS[i].Lon = math.Inf(1)
			}
		}
		if x.GPS == nil {
			c.GPS = nil
		}
		return &c
	}
	return reflect.DeepEqual(unNaN(a), unNaN(b))
}

// doorCases are payloads with door changes: the door array is validated as service is.
var doorCases = []struct {
	name    string
	payload string
	reason  Reason // "" to accept
	detail  string
}{
	{name: "door changes", payload: with(`,"door":[{` + t0 + `,"open":true},{"t":"2026-11-29T15:00:01Z","open":false}]`)},
	{name: "empty door", payload: with(`,"door":[]`)},
	{name: "null door", payload: with(`,"door":null`)},
	{name: "door and service", payload: with(`,"service":[{` + t0 + `,"on":true}],"door":[{` + t0 + `,"open":false}]`)},
	{name: "door open missing", payload: with(`,"door":[{` + t0 + `,"open":true},{` + t0 + `}]`), reason: ReasonBadValue, detail: "door[1].open missing"},
	{name: "door open null", payload: with(`,"door":[{` + t0 + `,"open":null}]`), reason: ReasonBadValue, detail: "door[0].open"},
	{name: "door null element", payload: with(`,"door":[null]`), reason: ReasonBadTime, detail: "door[0].t missing"},
	{name: "door open a string", payload: with(`,"door":[{` + t0 + `,"open":"yes"}]`), reason: ReasonBadJSON, detail: "door.open"},
	{name: "door t missing", payload: with(`,"door":[{"open":true}]`), reason: ReasonBadTime, detail: "door[0].t missing"},
	{name: "door in 9999", payload: with(`,"door":[{"t":"9999-12-31T23:59:59.999Z","open":true}]`), reason: ReasonBadTime},
	{name: "door 31 days old", payload: with(`,"door":[{"t":"2026-10-29T15:00:00Z","open":true}]`), reason: ReasonPastTime},
	{name: "door ahead", payload: with(`,"door":[{"t":"2026-11-29T16:00:00Z","open":true}]`), reason: ReasonFutureTime},
	{name: "door not an array", payload: with(`,"door":{}`), reason: ReasonBadJSON},
	{name: "601 readings with doors", payload: with(`,"door":[` + strings.Repeat(`{`+t0+`,"open":true},`, MaxReadings) + `{` + t0 + `,"open":false}]`), reason: ReasonTooManyReadings},
	{name: "service checked before door", payload: with(`,"door":[{` + t0 + `}],"service":[{` + t0 + `}]`), reason: ReasonBadValue, detail: "service[0].on"},
}

func TestDoor(t *testing.T) {
	for _, c := range doorCases {
		t.Run(c.name, func(t *testing.T) {
			b, err := Decode(testTopic, []byte(c.payload), recv)
			if c.reason == "" {
				if err != nil {
					t.Fatalf("rejected: %v", err)
				}
				p, err := Encode(b, nil)
				if err != nil {
					t.Fatal(err)
				}
				if b2, err := Decode(testTopic, p, recv); err != nil || !reflect.DeepEqual(b, b2) {
					t.Fatalf("round trip: %v\n%s", err, p)
				}
			} else if ReasonOf(err) != c.reason || !strings.Contains(err.Error(), c.detail) {
				t.Fatalf("error %v, want %s with %q", err, c.reason, c.detail)
			}
			sameDecode(t, testTopic, []byte(c.payload), recv)
		})
	}
	b, err := Decode(testTopic, []byte(doorCases[0].payload), recv)
	if err != nil || len(b.Door) != 2 || !b.Door[0].Open || b.Door[1].Open || b.Readings() != 2 {
		t.Errorf("door %+v %v", b, err)
	}
}

// TestScanBatchTakesCanonical checks that the scanner, not encoding/json, reads what bridges
// send: every accepted payload without escapes, every encoded batch, and the rejections whose
// JSON is canonical (so that their reasons come from validate, shared by both paths).
func TestScanBatchTakesCanonical(t *testing.T) {
	var payloads []string
	for _, c := range acceptances() {
		payloads = append(payloads, c.payload)
	}
	for _, b := range []*Batch{fiveSeconds(), fullBatch(), minimalBatch(), exampleBatch()} {
		b.Tacho = nil // fullBatch's card has escapes
		key := testKey
		if b.Kid == "" {
			key = nil
		}
		p, err := Encode(b, key)
		if err != nil {
			t.Fatal(err)
		}
		payloads = append(payloads, string(p))
	}
	for _, c := range doorCases {
		payloads = append(payloads, c.payload)
	}
	for _, c := range rejections() {
		if c.reason != ReasonBadJSON && c.reason != ReasonNonFinite && c.reason != ReasonNotUTF8 && c.reason != ReasonTooLarge {
			payloads = append(payloads, c.payload)
		}
	}
	n := 0
	for _, p := range payloads {
		if strings.Contains(p, `\`) || !strings.HasPrefix(strings.TrimLeft(p, " \t\r\n"), "{") || !json.Valid([]byte(p)) {
			continue
		}
		if hasWrongType(p) {
			continue
		}
		n++
		if _, _, ok := scanBatch([]byte(p)); !ok {
			t.Errorf("scanBatch left to encoding/json: %.200s", p)
		}
	}
	if n < 100 {
		t.Errorf("only %d canonical payloads", n)
	}
}

// hasWrongType reports whether encoding/json finds a value of the wrong type in p (which the
// scanner rightly leaves to it).
func hasWrongType(p string) bool {
	_, _, err := reflectBatch([]byte(p))
	return err != nil
}

// FuzzScanBatch is the differential test of the scanner: for any payload, Decode and the
// encoding/json decoder accept the same batch or reject with the same error; and whenever the
// scanner reads a payload itself, encoding/json reads the same batch from it.
func FuzzScanBatch(f *testing.F) {
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
	for _, c := range doorCases {
		if len(c.payload) <= fuzzSeedMax {
			f.Add([]byte(c.payload), testTopic)
		}
	}
	f.Add([]byte(signedExample()), testTopic)
	f.Fuzz(func(t *testing.T, payload []byte, topic string) {
		sameDecode(t, topic, payload, recv)
		if len(payload) == 0 || payload[0] != '{' || !utf8.Valid(payload) {
			return // refused before either reader runs
		}
		b, m, ok := scanBatch(payload)
		if !ok {
			return
		}
		want, wantM, err := reflectBatch(payload)
		if err != nil {
			t.Fatalf("scanner read %q, encoding/json refused it: %v", payload, err)
		}
		if m != wantM || !sameBatch(b, want) {
			t.Fatalf("scanner and encoding/json disagree on %q:\n got %+v %v\nwant %+v %v", payload, b, m, want, wantM)
		}
	})
}

// FuzzScanTime checks scanTime against ParseTime: it accepts nothing ParseTime refuses, reads
// the same time, and takes every time of the canonical syntax.
func FuzzScanTime(f *testing.F) {
	for _, s := range []string{
		"2026-11-29T15:00:00Z", "2026-11-29T15:00:00.250Z", "2026-11-29T15:00:00.1Z", "2026-11-29T15:00:00.25Z",
		"0000-01-01T00:00:00Z", "9999-12-31T23:59:59.999Z", "2028-02-29T12:00:00Z", "2026-02-29T12:00:00Z",
		"2100-02-29T12:00:00Z", "2000-02-29T12:00:00Z", "2026-04-31T00:00:00Z", "2026-00-10T00:00:00Z",
		"2026-11-29T15:00:00.1234Z", "2026-11-29T15:00:00+00:00", "2026-11-29T24:00:00Z", "2026-11-29T23:59:60Z",
		"2026-11-29T23:60:00Z", "2026-11-29t15:00:00Z", "2026-11-29T15:00:00.Z", "2026-11-29T15:00:00,250Z",
		"2026-11-29T15:00:00.-1Z", "+026-11-29T15:00:00Z", "2026-1-29T15:00:00.25Z", "",
	} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		got, ok := scanTime([]byte(s))
		want, err := ParseTime(s)
		if ok && (err != nil || got != want) {
			t.Fatalf("scanTime(%q) = %v, ParseTime = %v, %v", s, got.Time, want.Time, err)
		}
		if !ok && err == nil && wireTimeRE.MatchString(s) {
			t.Fatalf("scanTime refused %q, which ParseTime takes", s)
		}
	})
}
