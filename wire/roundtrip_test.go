package wire

import (
	"bytes"
	"crypto/ed25519"
	"encoding/base64"
	"encoding/json"
	"math"
	"reflect"
	"strings"
	"testing"
	"time"
)

func equalBatch(a, b *Batch) bool { return reflect.DeepEqual(a, b) }

func ptr[T any](v T) *T { return &v }

// fullBatch has every optional field set, with values that need full float64 precision.
func fullBatch() *Batch {
	at := func(ms int) Time { return NewTime(recv.Add(time.Duration(ms) * time.Millisecond)) }
	return &Batch{
		V: 1, Vehicle: "PIU_001-b", Epoch: "e-7f3a9c.2", Seq: 1<<53 + 1, SentAt: at(-1), Clock: ClockRTC,
		GPS: []GPS{
			{T: at(-5000), Lat: -20.83671234567, Lon: -40.72921234567891, SpeedKmh: ptr(12.345678901234567),
				CourseDeg: ptr(359.999), HDOP: ptr(0.9), Sats: ptr(0), Fix: FixDGPS, AltM: ptr(-0.5)},
			{T: at(-4900), Lat: 1e-300, Lon: -180},
		},
		Tacho: []Tacho{
			{T: at(-5000), SpeedKmh: ptr(0.0), OdometerKm: ptr(10234.555), Card: "0000000086H101"},
			{T: at(-4000), Card: `<&>"\é`},
		},
		Sound: []Sound{
			{T: at(-5000), LAeqDB: ptr(68.2), LAmaxDB: ptr(74.0), DurS: ptr(1.0)},
			{T: at(-4999), LAeqDB: ptr(0.30000000000000004)},
		},
		Service: []Service{{T: at(-3000), On: true}, {T: at(-2999), On: false}},
		Door:    []Door{{T: at(-2500), Open: true}, {T: at(-2440), Open: false}},
		Warnings: []Warning{
			{T: at(-2400), Kind: WarningSiteSound, Rule: "sensitive_zone_sound", Site: "hospital-sao-lucas", DistanceM: ptr(290.123456789),
				Value: ptr(72.30000000000001), Limit: ptr(65.0)},
			{T: at(-2300), Kind: WarningSpeedOver, Rule: "speed", Value: ptr(31.5), Limit: ptr(30.0)},
		},
		Kid: "PIU-001-2026",
	}
}

// minimalBatch has only the required fields and one reading of each kind with only "t"
// (and lat/lon, on and open, which are required).
func minimalBatch() *Batch {
	t := NewTime(recv.Add(-time.Second))
	return &Batch{
		V: 1, Vehicle: "A", Epoch: "e", Seq: 1, SentAt: t, Clock: ClockSystem,
		GPS:      []GPS{{T: t, Lat: 1, Lon: 2}},
		Tacho:    []Tacho{{T: t}},
		Sound:    []Sound{{T: t}},
		Service:  []Service{{T: t}},
		Door:     []Door{{T: t}},
		Warnings: []Warning{{T: t, Kind: WarningHoursEnd, Rule: "hours"}},
	}
}

func TestRoundTrip(t *testing.T) {
	for name, b := range map[string]*Batch{
		"example": exampleBatch(),
		"full":    fullBatch(),
		"minimal": minimalBatch(),
		"empty":   {V: 1, Vehicle: "A", Epoch: "e", Seq: 1, SentAt: NewTime(recv), Clock: ClockGPS},
	} {
		t.Run(name, func(t *testing.T) {
			p, err := Encode(b, nil)
			if err != nil {
				t.Fatal(err)
			}
			got, err := Decode(TelemetryTopic(b.Vehicle), p, recv)
			if err != nil {
				t.Fatalf("Decode(Encode(b)): %v\n%s", err, p)
			}
			if !equalBatch(got, b) {
				t.Errorf("round trip changed the batch:\n got %+v\nwant %+v\n%s", got, b, p)
			}
			again, err := Encode(got, nil)
			if err != nil || !bytes.Equal(again, p) {
				t.Errorf("Encode is not stable: %v\n%s\n%s", err, p, again)
			}
		})
	}
}

func TestAbsentStaysAbsent(t *testing.T) {
	p, err := Encode(minimalBatch(), nil)
	if err != nil {
		t.Fatal(err)
	}
	for _, name := range []string{"speed_kmh", "course_deg", "hdop", "sats", "fix", "alt_m", "odometer_km", "card",
		"laeq_db", "lamax_db", "dur_s", "kid", "sig", "site", "distance_m", "value", "limit"} {
		if bytes.Contains(p, []byte(`"`+name+`"`)) {
			t.Errorf("absent %s is in the payload: %s", name, p)
		}
	}
	// Zero values that are known are sent.
	b := minimalBatch()
	b.GPS[0].HDOP, b.GPS[0].Sats, b.GPS[0].SpeedKmh = nil, ptr(0), ptr(0.0)
	p, err = Encode(b, nil)
	if err != nil {
		t.Fatal(err)
	}
	for _, m := range []string{`"sats":0`, `"speed_kmh":0`, `"on":false`} {
		if !bytes.Contains(p, []byte(m)) {
			t.Errorf("%s missing from %s", m, p)
		}
	}
	if bytes.Contains(p, []byte(`"hdop"`)) {
		t.Errorf("nil HDOP encoded: %s", p)
	}
	// And arrays without readings are omitted.
	p, err = Encode(&Batch{V: 1, Vehicle: "A", Epoch: "e", Seq: 1, SentAt: NewTime(recv), Clock: ClockGPS, GPS: []GPS{}}, nil)
	if err != nil {
		t.Fatal(err)
	}
	if want := `{"v":1,"vehicle":"A","epoch":"e","seq":1,"sent_at":"2026-11-29T15:00:10Z","clock":"gps"}`; string(p) != want {
		t.Errorf("Encode = %s, want %s", p, want)
	}
}

func TestPrecision(t *testing.T) {
	p, err := Encode(fullBatch(), nil)
	if err != nil {
		t.Fatal(err)
	}
	for _, lit := range []string{`"odometer_km":10234.555`, `"lat":-20.83671234567`, `"lon":-40.72921234567891`,
		`"laeq_db":0.30000000000000004`, `"lat":1e-300`, `"seq":9007199254740993`, `"sent_at":"2026-11-29T15:00:09.999Z"`} {
		if !bytes.Contains(p, []byte(lit)) {
			t.Errorf("%s not in %s", lit, p)
		}
	}
	b, err := Decode("", p, recv)
	if err != nil {
		t.Fatal(err)
	}
	if *b.Tacho[0].OdometerKm != 10234.555 || b.GPS[0].Lat != -20.83671234567 || *b.Sound[1].LAeqDB != 0.30000000000000004 || b.Seq != 1<<53+1 {
		t.Errorf("precision lost: %+v", b)
	}
}

func TestEncodeRefuses(t *testing.T) {
	for name, mut := range map[string]func(*Batch){
		"NaN lat":          func(b *Batch) { b.GPS[0].Lat = math.NaN() },
		"Inf speed":        func(b *Batch) { b.GPS[0].SpeedKmh = ptr(math.Inf(1)) },
		"NaN odometer":     func(b *Batch) { b.Tacho[0].OdometerKm = ptr(math.NaN()) },
		"Inf dur":          func(b *Batch) { b.Sound[0].DurS = ptr(math.Inf(-1)) },
		"zero time":        func(b *Batch) { b.Sound[0].T = Time{} },
		"zero sent_at":     func(b *Batch) { b.SentAt = Time{} },
		"sub-millisecond":  func(b *Batch) { b.GPS[0].T = Time{recv.Add(time.Microsecond)} },
		"sub-ms elsewhere": func(b *Batch) { b.Service[0].T = Time{recv.Add(1500 * time.Microsecond)} },
	} {
		b := fullBatch()
		mut(b)
		if p, err := Encode(b, nil); err == nil {
			t.Errorf("%s: encoded %s", name, p)
		}
	}
	b := fullBatch()
	b.Kid = ""
	if _, err := Encode(b, testKey); err == nil {
		t.Error("signed without kid")
	}
}

func TestSignVerify(t *testing.T) {
	b := fullBatch()
	b.Sig = "ignored: Encode never copies Sig"
	p, err := Encode(b, testKey)
	if err != nil {
		t.Fatal(err)
	}
	if err := Verify(p, testPub); err != nil {
		t.Fatalf("Verify with the right key: %v", err)
	}
	if r := ReasonOf(Verify(p, otherPub)); r != ReasonSignatureFailed {
		t.Errorf("Verify with another key: %q", r)
	}

	// Byte-exact layout: the payload is the unsigned encoding with `,"sig":"…"` before its final
	// brace, and the signature is over exactly the unsigned encoding.
	unsigned, err := Encode(b, nil)
	if err != nil {
		t.Fatal(err)
	}
	member, rest := cutSig(string(p))
	if rest != string(unsigned) {
		t.Fatalf("signed part differs from the unsigned encoding:\n%s\n%s", rest, unsigned)
	}
	sig, err := base64.StdEncoding.DecodeString(strings.TrimSuffix(strings.TrimPrefix(member, `,"sig":"`), `"`))
	if err != nil || !ed25519.Verify(testPub, unsigned, sig) {
		t.Fatalf("signature is not ed25519 over the unsigned bytes (%v)", err)
	}
	signed, sig2, ok, err := SplitSignature(p)
	if !ok || err != nil || !bytes.Equal(signed, unsigned) || !bytes.Equal(sig2, sig) {
		t.Errorf("SplitSignature = %s, %x, %v, %v", signed, sig2, ok, err)
	}

	// Every single-byte change of the signed part breaks the signature.
	for i := range len(unsigned) - 1 {
		q := bytes.Clone(p)
		q[i] ^= 0x01
		if err := Verify(q, testPub); err == nil {
			t.Fatalf("byte %d changed (%q), still verifies", i, q[i])
		}
	}

	// Decode accepts the signed batch, Sig set; the batch equals the unsigned one but for Sig.
	d, err := Decode(TelemetryTopic(b.Vehicle), p, recv)
	if err != nil {
		t.Fatal(err)
	}
	want := fullBatch()
	want.Sig = base64.StdEncoding.EncodeToString(sig)
	if !equalBatch(d, want) {
		t.Errorf("Decode(signed) = %+v", d)
	}
	// Re-encoding a decoded batch with the key gives the same payload (ed25519 is deterministic).
	again, err := Encode(d, testKey)
	if err != nil || !bytes.Equal(again, p) {
		t.Errorf("re-signed payload differs: %v", err)
	}

	// A verifier does not care about whitespace after the object.
	if err := Verify(append(bytes.Clone(p), "\r\n"...), testPub); err != nil {
		t.Errorf("trailing newline: %v", err)
	}

	// sig not last: bad_signature from Decode.
	moved := strings.Replace(rest, `{"v":1`, `{"v":1`+member, 1)
	if _, err := Decode("", []byte(moved), recv); ReasonOf(err) != ReasonBadSignature {
		t.Errorf("sig not last: %v", err)
	}
}

func TestUnknownFieldsIgnored(t *testing.T) {
	// A newer producer's extra members, at the top and inside readings, are ignored; the signature
	// still covers them.
	b := exampleBatch()
	p, err := Encode(b, nil)
	if err != nil {
		t.Fatal(err)
	}
	s := strings.Replace(string(p), `"clock":"gps"`, `"clock":"gps","trailer":{"axles":[2,2,2],"sig":"x"},"v3":null`, 1)
	s = strings.Replace(s, `"fix":"3d"`, `"fix":"3d","pdop":1.1,"geoid_m":-5.2`, 1)
	extended := []byte(s)
	got, err := Decode(testTopic, extended, recv)
	if err != nil {
		t.Fatal(err)
	}
	if !equalBatch(got, b) {
		t.Errorf("unknown fields changed the batch: %+v", got)
	}
	// Signed by the vehicle with the extra members: verifies and decodes.
	sig := ed25519.Sign(testKey, extended)
	signed := append(extended[:len(extended)-1:len(extended)-1], `,"sig":"`+base64.StdEncoding.EncodeToString(sig)+`"}`...)
	if err := Verify(signed, testPub); err != nil {
		t.Fatal(err)
	}
	if _, err := Decode(testTopic, signed, recv); err != nil {
		t.Fatal(err)
	}
}

func TestTime(t *testing.T) {
	for _, c := range []struct{ in, out string }{
		{"2026-11-29T15:00:00Z", "2026-11-29T15:00:00Z"},
		{"2026-11-29T15:00:00.250Z", "2026-11-29T15:00:00.25Z"},
		{"2026-11-29T15:00:00.000Z", "2026-11-29T15:00:00Z"},
		{"2026-11-29T15:00:00.001Z", "2026-11-29T15:00:00.001Z"},
		{"2028-02-29T23:59:59.999Z", "2028-02-29T23:59:59.999Z"},
	} {
		tm, err := ParseTime(c.in)
		if err != nil {
			t.Errorf("ParseTime(%q): %v", c.in, err)
			continue
		}
		if tm.String() != c.out || tm.Location() != time.UTC {
			t.Errorf("ParseTime(%q) = %s %v", c.in, tm, tm.Location())
		}
	}
	for _, in := range []string{"", "2026-11-29T15:00:00", "2026-11-29T15:00:00+00:00", "2026-11-29T15:00:00.0001Z",
		"2026-11-29T15:00:00.Z", "2026-11-29t15:00:00Z", "2026-11-29T15:00:00z", "2026-11-29T15:00Z", "26-11-29T15:00:00Z",
		"2026-11-29T15:00:00.12aZ", "2026-11-29T15:00:00,250Z", " 2026-11-29T15:00:00Z", "2026-13-01T00:00:00Z"} {
		if tm, err := ParseTime(in); err == nil {
			t.Errorf("ParseTime(%q) = %s, want an error", in, tm)
		}
	}

	local := time.Date(2026, 11, 29, 12, 0, 0, 123456789, time.FixedZone("BRT", -3*3600))
	n := NewTime(local)
	if n.String() != "2026-11-29T15:00:00.123Z" {
		t.Errorf("NewTime = %s", n)
	}
	j, err := json.Marshal(struct {
		A Time  `json:"a"`
		B *Time `json:"b,omitempty"`
	}{A: n})
	if err != nil || string(j) != `{"a":"2026-11-29T15:00:00.123Z"}` {
		t.Errorf("Marshal = %s, %v", j, err)
	}
	var back struct{ A, B Time }
	if err := json.Unmarshal([]byte(`{"A":"2026-11-29T15:00:00.123Z","B":null}`), &back); err != nil || back.A != n || !back.B.IsZero() {
		t.Errorf("Unmarshal = %+v, %v", back, err)
	}
	for _, bad := range []Time{{}, {local}} {
		if _, err := json.Marshal(bad); err == nil {
			t.Errorf("Marshal(%v) accepted", bad.Time)
		}
	}
}

func TestStatusAndQuarantineShape(t *testing.T) {
	// The MQTT will.
	if j, err := json.Marshal(Status{}); err != nil || string(j) != `{"online":false}` {
		t.Errorf("will = %s, %v", j, err)
	}
	at := NewTime(recv)
	s := Status{Online: true, Version: "1.2.0", Epoch: "e-7f3a9c", Seq: 1042, SpoolDepth: ptr[int64](0), SpoolEvicted: ptr[int64](3),
		Devices: map[string]string{"gps": DeviceOK, "tacho": DeviceMissing, "slm": DeviceOK}, T: &at}
	j, err := json.Marshal(s)
	want := `{"online":true,"version":"1.2.0","epoch":"e-7f3a9c","seq":1042,"spool_depth":0,"spool_evicted":3,` +
		`"devices":{"gps":"ok","slm":"ok","tacho":"missing"},"t":"2026-11-29T15:00:10Z"}`
	if err != nil || string(j) != want {
		t.Errorf("status = %s, %v\nwant %s", j, err, want)
	}
	q := Quarantine{Reason: ReasonBadTime, Detail: "x", Topic: testTopic, ReceivedAt: at, PayloadB64: "e30="}
	j, err = json.Marshal(q)
	want = `{"reason":"bad_time","detail":"x","topic":"trenzinho/v1/PIU-001/telemetry","received_at":"2026-11-29T15:00:10Z","payload_b64":"e30="}`
	if err != nil || string(j) != want {
		t.Errorf("quarantine = %s, %v", j, err)
	}
}
