package wire

import (
	"bytes"
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

// wt is the members of a warning at t0 of the given kind and rule.
func wt(kind, rule string) string { return t0 + `,"kind":"` + kind + `","rule":"` + rule + `"` }

// warningCases are payloads with warnings of the driver's coach (protocol §2.7).
var warningCases = []struct {
	name    string
	payload string
	reason  Reason // "" to accept
	detail  string
	// fallback: off the canonical shape, read by encoding/json alone.
	fallback bool
}{
	{name: "site warning", payload: with(`,"warnings":[{` + wt("site_sound", "sensitive_zone_sound") + `,"site":"hospital-1","distance_m":290,"value":72.5,"limit":65}]`)},
	{name: "every kind", payload: with(`,"warnings":[{` + wt("site_sound", "sensitive_zone_sound") + `},{` + wt("speed_near", "speed") + `},{` +
		wt("speed_over", "speed") + `},{` + wt("hours_end", "hours") + `,"value":-5},{` + wt("itinerary", "route_deviation") + `},{` + wt("document", "document_expired") + `,"value":3}]`)},
	{name: "with readings", payload: with(`,"sound":[{` + t0 + `,"laeq_db":70}],"warnings":[{` + wt("speed_near", "speed") + `,"value":28,"limit":30}]`)},
	{name: "empty warnings", payload: with(`,"warnings":[]`)},
	{name: "null warnings", payload: with(`,"warnings":null`)},
	{name: "site null", payload: with(`,"warnings":[{` + wt("speed_near", "speed") + `,"site":null,"distance_m":null}]`)},
	{name: "unknown member skipped", payload: with(`,"warnings":[{` + wt("speed_near", "speed") + `,"extra":[1,{"a":"b"}]}]`)},
	{name: "site at its limit", payload: with(`,"warnings":[{` + wt("site_sound", "sensitive_zone_sound") + `,"site":"` + strings.Repeat("s", MaxSiteLen) + `"}]`)},
	{name: "32 warnings", payload: with(`,"warnings":[` + strings.Repeat(`{`+wt("speed_near", "speed")+`},`, MaxWarnings-1) + `{` + wt("speed_near", "speed") + `}]`)},
	{name: "600 readings and 32 warnings", payload: with(`,"sound":[` + strings.Repeat(`{`+t0+`,"laeq_db":60},`, MaxReadings-1) + `{` + t0 + `,"laeq_db":60}],"warnings":[` +
		strings.Repeat(`{`+wt("speed_near", "speed")+`},`, MaxWarnings-1) + `{` + wt("speed_near", "speed") + `}]`)},
	{name: "33 warnings", payload: with(`,"warnings":[` + strings.Repeat(`{`+wt("speed_near", "speed")+`},`, MaxWarnings) + `{` + wt("speed_near", "speed") + `}]`), reason: ReasonBadValue, detail: "33 warnings"},
	{name: "unknown kind", payload: with(`,"warnings":[{` + wt("siren", "speed") + `}]`), reason: ReasonBadValue, detail: "warnings[0].kind"},
	{name: "kind missing", payload: with(`,"warnings":[{` + t0 + `,"rule":"speed"}]`), reason: ReasonBadValue, detail: "warnings[0].kind"},
	{name: "rule missing", payload: with(`,"warnings":[{` + t0 + `,"kind":"speed_near"}]`), reason: ReasonBadValue, detail: "warnings[0].rule"},
	{name: "rule upper case", payload: with(`,"warnings":[{` + wt("speed_near", "Speed") + `}]`), reason: ReasonBadValue, detail: "warnings[0].rule"},
	{name: "rule too long", payload: with(`,"warnings":[{` + wt("speed_near", strings.Repeat("r", MaxRuleLen+1)) + `}]`), reason: ReasonBadValue, detail: "warnings[0].rule"},
	{name: "site too long", payload: with(`,"warnings":[{` + wt("site_sound", "sensitive_zone_sound") + `,"site":"` + strings.Repeat("s", MaxSiteLen+1) + `"}]`), reason: ReasonBadValue, detail: "warnings[0].site"},
	{name: "site with a control character", payload: with(`,"warnings":[{` + wt("site_sound", "sensitive_zone_sound") + `,"site":"a\nb"}]`), reason: ReasonBadValue, detail: "warnings[0].site"},
	{name: "negative distance", payload: with(`,"warnings":[{` + wt("site_sound", "sensitive_zone_sound") + `,"distance_m":-1}]`), reason: ReasonBadValue, detail: "warnings[0].distance_m"},
	{name: "distance too far", payload: with(`,"warnings":[{` + wt("site_sound", "sensitive_zone_sound") + `,"distance_m":100001}]`), reason: ReasonBadValue, detail: "warnings[0].distance_m"},
	{name: "value too big", payload: with(`,"warnings":[{` + wt("speed_over", "speed") + `,"value":1e7}]`), reason: ReasonBadValue, detail: "warnings[0].value"},
	{name: "limit too small", payload: with(`,"warnings":[{` + wt("speed_over", "speed") + `,"limit":-1e7}]`), reason: ReasonBadValue, detail: "warnings[0].limit"},
	{name: "value overflows", payload: with(`,"warnings":[{` + wt("speed_over", "speed") + `,"value":1e999}]`), reason: ReasonNonFinite, detail: "warnings.value"},
	{name: "value a string", payload: with(`,"warnings":[{` + wt("speed_over", "speed") + `,"value":"31"}]`), reason: ReasonBadJSON, detail: "warnings.value"},
	{name: "kind a number", payload: with(`,"warnings":[{` + t0 + `,"kind":1,"rule":"speed"}]`), reason: ReasonBadJSON, detail: "warnings.kind"},
	{name: "warning t missing", payload: with(`,"warnings":[{"kind":"speed_near","rule":"speed"}]`), reason: ReasonBadTime, detail: "warnings[0].t missing"},
	{name: "warning null element", payload: with(`,"warnings":[null]`), reason: ReasonBadTime, detail: "warnings[0].t missing"},
	{name: "warning 31 days old", payload: with(`,"warnings":[{"t":"2026-10-29T15:00:00Z","kind":"speed_near","rule":"speed"}]`), reason: ReasonPastTime},
	{name: "warning ahead", payload: with(`,"warnings":[{"t":"2026-11-29T16:00:00Z","kind":"speed_near","rule":"speed"}]`), reason: ReasonFutureTime},
	{name: "warnings not an array", payload: with(`,"warnings":{}`), reason: ReasonBadJSON},
	{name: "door checked before warnings", payload: with(`,"warnings":[{` + t0 + `}],"door":[{` + t0 + `}]`), reason: ReasonBadValue, detail: "door[0].open"},
	{name: "duplicate warnings member", payload: with(`,"warnings":[],"warnings":[{` + wt("speed_near", "speed") + `}]`), fallback: true},
	{name: "member in other case", payload: with(`,"Warnings":[{` + wt("speed_near", "speed") + `,"Site":"x"}]`), fallback: true},
}

// TestWarnings: the warnings array is decoded alike by the scanner and encoding/json, validated,
// round-trips, and is not counted as readings.
func TestWarnings(t *testing.T) {
	for _, c := range warningCases {
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
	b, err := Decode(testTopic, []byte(warningCases[0].payload), recv)
	if err != nil || len(b.Warnings) != 1 || b.Readings() != 0 {
		t.Fatalf("warning %+v %v", b, err)
	}
	w := b.Warnings[0]
	if w.Kind != WarningSiteSound || w.Rule != "sensitive_zone_sound" || w.Site != "hospital-1" || *w.DistanceM != 290 || *w.Value != 72.5 || *w.Limit != 65 || !w.T.Equal(recv.Add(-10*time.Second)) {
		t.Errorf("warning %+v", w)
	}
	if b, err := Decode(testTopic, []byte(warningCases[2].payload), recv); err != nil || b.Readings() != 1 || len(b.Warnings) != 1 {
		t.Errorf("a warning counted as a reading: %+v %v", b, err)
	}
	if _, _, ok := scanBatch([]byte(warningCases[0].payload)); !ok {
		t.Error("the scanner left a canonical warning to encoding/json")
	}
}

// TestWarningValidate: what a bridge checks before it puts a warning in a batch.
func TestWarningValidate(t *testing.T) {
	good := Warning{T: NewTime(recv), Kind: WarningSiteSound, Rule: "sensitive_zone_sound", Site: "h", DistanceM: ptr(10.0)}
	if err := good.Validate(); err != nil {
		t.Fatal(err)
	}
	for name, w := range map[string]Warning{
		"no time":  {Kind: WarningSpeedNear, Rule: "speed"},
		"no kind":  {T: NewTime(recv), Rule: "speed"},
		"no rule":  {T: NewTime(recv), Kind: WarningSpeedNear},
		"NaN":      {T: NewTime(recv), Kind: WarningSpeedNear, Rule: "speed", Value: ptr(math.NaN())},
		"infinite": {T: NewTime(recv), Kind: WarningSiteSound, Rule: "speed", DistanceM: ptr(math.Inf(1))},
	} {
		if err := w.Validate(); err == nil {
			t.Errorf("%s: accepted %+v", name, w)
		}
	}
	b := &Batch{V: 1, Vehicle: "A", Epoch: "e", Seq: 1, SentAt: NewTime(recv), Clock: ClockGPS,
		Warnings: []Warning{{T: NewTime(recv), Kind: WarningSpeedNear, Rule: "speed", Value: ptr(math.Inf(-1))}}}
	if _, err := Encode(b, nil); ReasonOf(err) != ReasonNonFinite {
		t.Errorf("Encode of an infinite value: %v", err)
	}
}

// TestSignedWarnings: a signed batch with warnings verifies, and a changed warning does not.
func TestSignedWarnings(t *testing.T) {
	b := fullBatch()
	p, err := Encode(b, testKey)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := Decode(TelemetryTopic(b.Vehicle), p, recv); err != nil {
		t.Fatal(err)
	}
	if err := Verify(p, testPub); err != nil {
		t.Fatalf("signed batch with warnings: %v", err)
	}
	forged := bytes.Replace(p, []byte(`"distance_m":290.123456789`), []byte(`"distance_m":990.123456789`), 1)
	if bytes.Equal(forged, p) {
		t.Fatal("distance not found in the payload")
	}
	if err := Verify(forged, testPub); ReasonOf(err) != ReasonSignatureFailed {
		t.Errorf("a changed warning verifies: %v", err)
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
	for _, c := range warningCases {
		if !c.fallback {
			payloads = append(payloads, c.payload)
		}
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
	for _, c := range warningCases {
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
