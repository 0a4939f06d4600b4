package wire

import (
	"bytes"
	"crypto/ed25519"
	"encoding/base64"
	"encoding/hex"
	"errors"
	"fmt"
	"math"
	"os"
	"strings"
	"testing"
	"time"
)

// recv is the receipt time used by the tests: five seconds after the example's sent_at.
var recv = time.Date(2026, 11, 29, 15, 0, 10, 0, time.UTC)

const testTopic = "trenzinho/v1/PIU-001/telemetry"

// head is the required part of a batch, without the closing brace.
const head = `{"v":1,"vehicle":"PIU-001","epoch":"e-7f3a9c","seq":1042,"sent_at":"2026-11-29T15:00:05Z","clock":"gps"`

// example is the batch of docs/protocol.md §2, unsigned.
const example = head +
	`,"gps":[{"t":"2026-11-29T15:00:00Z","lat":-20.8367,"lon":-40.7292,"speed_kmh":12.3,"course_deg":90.0,"hdop":0.9,"sats":9,"fix":"3d"}]` +
	`,"tacho":[{"t":"2026-11-29T15:00:00Z","speed_kmh":12.1,"odometer_km":10234.555,"card":"0000000086H101"}]` +
	`,"sound":[{"t":"2026-11-29T15:00:00Z","laeq_db":68.2,"lamax_db":74.0,"dur_s":1.0}]` +
	`,"kid":"PIU-001-2026"}`

// Keys of the tests: deterministic, so the fuzz corpus stays valid.
var (
	testKey   = ed25519.NewKeyFromSeed(bytes.Repeat([]byte{1}, ed25519.SeedSize))
	testPub   = testKey.Public().(ed25519.PublicKey)
	otherKey  = ed25519.NewKeyFromSeed(bytes.Repeat([]byte{2}, ed25519.SeedSize))
	otherPub  = otherKey.Public().(ed25519.PublicKey)
	testSig64 = strings.Repeat("A", 86) + "==" // base64 of 64 zero bytes
)

// with returns head plus members (each starting with a comma) as a complete object.
func with(members string) string { return head + members + "}" }

const t0 = `"t":"2026-11-29T15:00:00Z"`

func gpsWith(fields string) string   { return with(`,"gps":[{` + t0 + `,` + fields + `}]`) }
func tachoWith(fields string) string { return with(`,"tacho":[{` + t0 + `,` + fields + `}]`) }
func soundWith(fields string) string { return with(`,"sound":[{` + t0 + `,` + fields + `}]`) }

// pos is a valid position, for gps readings that test another field.
const pos = `"lat":-20.8367,"lon":-40.7292`

// sub replaces old, which must occur, by new in s.
func sub(s, old, new string) string {
	if !strings.Contains(s, old) {
		panic(fmt.Sprintf("sub: %q not in %q", old, s))
	}
	return strings.Replace(s, old, new, 1)
}

// padTo inserts spaces before the closing brace of p until it is n bytes long.
func padTo(p string, n int) string {
	return p[:len(p)-1] + strings.Repeat(" ", n-len(p)) + "}"
}

// readings returns a batch with n readings: gps and sound in turn.
func readings(n int) string {
	var gps, snd []string
	for i := range n {
		t := NewTime(recv.Add(-10*time.Second + time.Duration(i)*10*time.Millisecond)).String()
		if i%2 == 0 {
			gps = append(gps, `{"t":"`+t+`","lat":-20.8367,"lon":-40.7292,"fix":"3d"}`)
		} else {
			snd = append(snd, `{"t":"`+t+`","laeq_db":68.2,"dur_s":0.1}`)
		}
	}
	return with(`,"gps":[` + strings.Join(gps, ",") + `],"sound":[` + strings.Join(snd, ",") + `]`)
}

// exampleBatch is example as a Batch.
func exampleBatch() *Batch {
	f := func(v float64) *float64 { return &v }
	n := func(v int) *int { return &v }
	at := func(s string) Time {
		t, err := ParseTime(s)
		if err != nil {
			panic(err)
		}
		return t
	}
	return &Batch{
		V: 1, Vehicle: "PIU-001", Epoch: "e-7f3a9c", Seq: 1042, SentAt: at("2026-11-29T15:00:05Z"), Clock: ClockGPS,
		GPS: []GPS{{T: at("2026-11-29T15:00:00Z"), Lat: -20.8367, Lon: -40.7292, SpeedKmh: f(12.3),
			CourseDeg: f(90), HDOP: f(0.9), Sats: n(9), Fix: Fix3D}},
		Tacho: []Tacho{{T: at("2026-11-29T15:00:00Z"), SpeedKmh: f(12.1), OdometerKm: f(10234.555), Card: "0000000086H101"}},
		Sound: []Sound{{T: at("2026-11-29T15:00:00Z"), LAeqDB: f(68.2), LAmaxDB: f(74), DurS: f(1)}},
		Kid:   "PIU-001-2026",
	}
}

// signedExample is example encoded and signed with testKey.
func signedExample() string {
	p, err := Encode(exampleBatch(), testKey)
	if err != nil {
		panic(err)
	}
	return string(p)
}

// cutSig returns a signed payload's signature member (`,"sig":"…"`) and the payload without it.
func cutSig(p string) (member, rest string) {
	i := strings.LastIndex(p, `,"sig":"`)
	return p[i : len(p)-1], p[:i] + "}"
}

// rejection is a payload that must be rejected with reason.
type rejection struct {
	name    string
	topic   string // "" to decode without a topic
	payload string
	reason  Reason
	detail  string // when set, the error detail must contain it
	// verify: the case is checked with Verify(payload, pub) instead of Decode.
	verify bool
	pub    ed25519.PublicKey
}

// notDecoded lists the reasons that package wire never returns, with who does.
var notDecoded = map[Reason]string{
	ReasonUnknownKey:     "the consumer, when kid is not in its key registry for the vehicle",
	ReasonUnstorable:     "the monitor, when its database refuses the batch",
	ReasonConflict:       "the consumer, when it took a batch of the same vehicle, epoch and seq with other content",
	ReasonUnknownVehicle: "the consumer, when the vehicle is not registered or beyond its limit of vehicles",
}

func rejections() []rejection {
	signed := signedExample()
	sigMember, unsigned := cutSig(signed)
	flipped := []byte(signed)
	flipped[bytes.Index(flipped, []byte(`"seq":1042`))+len(`"seq":104`)] = '3'
	r := []rejection{
		// too_large
		{name: "256KiB+1", payload: padTo(example, MaxPayloadBytes+1), reason: ReasonTooLarge},
		{name: "huge garbage", payload: strings.Repeat("x", 300<<10), reason: ReasonTooLarge},

		// not_utf8
		{name: "invalid byte in a string", payload: with(`,"note":"caf` + "\xe9" + `"`), reason: ReasonNotUTF8},
		{name: "invalid byte in card", payload: tachoWith(`"card":"00` + "\xff" + `"`), reason: ReasonNotUTF8},
		{name: "surrogate encoded in UTF-8", payload: with(`,"x":"` + "\xed\xa0\x80" + `"`), reason: ReasonNotUTF8},

		// bad_json
		{name: "empty", payload: "", reason: ReasonBadJSON},
		{name: "blank", payload: " \n", reason: ReasonBadJSON},
		{name: "null", payload: "null", reason: ReasonBadJSON},
		{name: "array", payload: "[" + example + "]", reason: ReasonBadJSON},
		{name: "number", payload: "1", reason: ReasonBadJSON},
		{name: "string", payload: `"x"`, reason: ReasonBadJSON},
		{name: "truncated", payload: example[:len(example)-1], reason: ReasonBadJSON},
		{name: "trailing brace", payload: example + "}", reason: ReasonBadJSON},
		{name: "trailing bracket", payload: example + "]", reason: ReasonBadJSON},
		{name: "two objects", payload: example + example, reason: ReasonBadJSON},
		{name: "trailing garbage", payload: example + " x", reason: ReasonBadJSON},
		{name: "trailing comma", payload: with(`,`), reason: ReasonBadJSON},
		{name: "single quotes", payload: `{'v':1}`, reason: ReasonBadJSON},
		{name: "NaN literal", payload: gpsWith(`"lat":NaN,"lon":1`), reason: ReasonBadJSON},
		{name: "v is a string", payload: sub(example, `"v":1`, `"v":"1"`), reason: ReasonBadJSON},
		{name: "v is a fraction", payload: sub(example, `"v":1`, `"v":1.5`), reason: ReasonBadJSON},
		{name: "seq negative", payload: sub(example, `"seq":1042`, `"seq":-1`), reason: ReasonBadJSON},
		{name: "seq fraction", payload: sub(example, `"seq":1042`, `"seq":1042.5`), reason: ReasonBadJSON},
		{name: "seq string", payload: sub(example, `"seq":1042`, `"seq":"1042"`), reason: ReasonBadJSON},
		{name: "seq over uint64", payload: sub(example, `"seq":1042`, `"seq":18446744073709551616`), reason: ReasonBadJSON},
		{name: "gps is an object", payload: with(`,"gps":{}`), reason: ReasonBadJSON},
		{name: "lat is a string", payload: gpsWith(`"lat":"-20.8","lon":-40.7`), reason: ReasonBadJSON},
		{name: "lon is a bool", payload: gpsWith(`"lat":-20.8,"lon":true`), reason: ReasonBadJSON},
		{name: "speed is a string", payload: gpsWith(pos + `,"speed_kmh":"12"`), reason: ReasonBadJSON, detail: "gps.speed_kmh: string"},
		{name: "sats fraction", payload: gpsWith(pos + `,"sats":9.5`), reason: ReasonBadJSON},
		{name: "sats huge", payload: gpsWith(pos + `,"sats":1e400`), reason: ReasonBadJSON},
		{name: "card is a number", payload: tachoWith(`"card":86`), reason: ReasonBadJSON},
		{name: "on is a string", payload: with(`,"service":[{` + t0 + `,"on":"yes"}]`), reason: ReasonBadJSON},
		{name: "not JSON but ends like a sig", payload: `[1,"sig":"x"}`, reason: ReasonBadJSON},

		// bad_version
		{name: "v missing", payload: strings.Replace(example, `"v":1,`, ``, 1), reason: ReasonBadVersion},
		{name: "v 2", payload: sub(example, `"v":1`, `"v":2`), reason: ReasonBadVersion},
		{name: "v 0", payload: sub(example, `"v":1`, `"v":0`), reason: ReasonBadVersion},
		{name: "v null", payload: sub(example, `"v":1`, `"v":null`), reason: ReasonBadVersion},

		// bad_vehicle
		{name: "vehicle missing", payload: sub(example, `"vehicle":"PIU-001",`, ``), reason: ReasonBadVehicle},
		{name: "vehicle empty", payload: sub(example, `"PIU-001"`, `""`), reason: ReasonBadVehicle},
		{name: "vehicle 33 chars", payload: sub(example, `"PIU-001"`, `"`+strings.Repeat("A", 33)+`"`), reason: ReasonBadVehicle},
		{name: "vehicle with space", payload: sub(example, `"PIU-001"`, `"PIU 001"`), reason: ReasonBadVehicle},
		{name: "vehicle with slash", payload: sub(example, `"PIU-001"`, `"PIU/001"`), reason: ReasonBadVehicle},
		{name: "vehicle with accent", payload: sub(example, `"PIU-001"`, `"PIÚ-001"`), reason: ReasonBadVehicle},
		{name: "vehicle with plus", payload: sub(example, `"PIU-001"`, `"+"`), reason: ReasonBadVehicle},
		{name: "vehicle _quarantine", payload: sub(example, `"PIU-001"`, `"_quarantine"`), reason: ReasonBadVehicle},
		{name: "vehicle _sys", payload: sub(example, `"PIU-001"`, `"_sys"`), reason: ReasonBadVehicle},

		// bad_topic
		{name: "status topic", topic: "trenzinho/v1/PIU-001/status", payload: example, reason: ReasonBadTopic},
		{name: "v2 topic", topic: "trenzinho/v2/PIU-001/telemetry", payload: example, reason: ReasonBadTopic},
		{name: "quarantine topic of a vehicle named telemetry", topic: "trenzinho/v1/_quarantine/telemetry", payload: example, reason: ReasonBadTopic},
		{name: "service namespace", topic: "trenzinho/v1/_sys/telemetry", payload: example, reason: ReasonBadTopic},
		{name: "topic vehicle invalid", topic: "trenzinho/v1/PIU 001/telemetry", payload: example, reason: ReasonBadTopic},
		{name: "topic too deep", topic: "trenzinho/v1/PIU-001/telemetry/x", payload: example, reason: ReasonBadTopic},
		{name: "topic vehicle empty", topic: "trenzinho/v1//telemetry", payload: example, reason: ReasonBadTopic},
		{name: "topic leading slash", topic: "/trenzinho/v1/PIU-001/telemetry", payload: example, reason: ReasonBadTopic},
		{name: "wildcard topic", topic: TelemetryWildcard, payload: example, reason: ReasonBadTopic},
		{name: "quarantine topic", topic: QuarantineTopic("PIU-001"), payload: example, reason: ReasonBadTopic},

		// topic_mismatch
		{name: "other vehicle's topic", topic: TelemetryTopic("PIU-002"), payload: example, reason: ReasonTopicMismatch},
		{name: "case differs", topic: TelemetryTopic("piu-001"), payload: example, reason: ReasonTopicMismatch},

		// missing_epoch
		{name: "epoch missing", payload: sub(example, `"epoch":"e-7f3a9c",`, ``), reason: ReasonMissingEpoch},
		{name: "epoch empty", payload: sub(example, `"e-7f3a9c"`, `""`), reason: ReasonMissingEpoch},
		{name: "epoch 65 chars", payload: sub(example, `"e-7f3a9c"`, `"`+strings.Repeat("e", 65)+`"`), reason: ReasonMissingEpoch},
		{name: "epoch with space", payload: sub(example, `"e-7f3a9c"`, `"e 7f3a9c"`), reason: ReasonMissingEpoch},
		{name: "epoch with slash", payload: sub(example, `"e-7f3a9c"`, `"e/7f3a9c"`), reason: ReasonMissingEpoch},

		// missing_seq
		{name: "seq missing", payload: sub(example, `"seq":1042,`, ``), reason: ReasonMissingSeq},
		{name: "seq 0", payload: sub(example, `"seq":1042`, `"seq":0`), reason: ReasonMissingSeq},
		{name: "seq null", payload: sub(example, `"seq":1042`, `"seq":null`), reason: ReasonMissingSeq},

		// bad_seq: InfluxDB and SQLite integers are signed 64-bit
		{name: "seq 2^63", payload: sub(example, `"seq":1042`, `"seq":9223372036854775808`), reason: ReasonBadSeq},
		{name: "seq max uint64", payload: sub(example, `"seq":1042`, `"seq":18446744073709551615`), reason: ReasonBadSeq},

		// bad_clock
		{name: "clock missing", payload: sub(example, `,"clock":"gps"`, ``), reason: ReasonBadClock},
		{name: "clock empty", payload: sub(example, `"clock":"gps"`, `"clock":""`), reason: ReasonBadClock},
		{name: "clock upper case", payload: sub(example, `"clock":"gps"`, `"clock":"GPS"`), reason: ReasonBadClock},
		{name: "clock ntp", payload: sub(example, `"clock":"gps"`, `"clock":"ntp"`), reason: ReasonBadClock},

		// too_many_readings
		{name: "601 readings", payload: readings(MaxReadings + 1), reason: ReasonTooManyReadings},
		{name: "600 readings with door changes", payload: with(`,"service":[` + strings.Repeat(`{`+t0+`,"on":true},`, MaxReadings-1) + `{` + t0 + `,"on":false}],"door":[{` + t0 + `,"open":true}]`), reason: ReasonTooManyReadings},
		{name: "601 service changes", payload: with(`,"service":[` + strings.Repeat(`{`+t0+`,"on":true},`, MaxReadings) + `{` + t0 + `,"on":false}]`), reason: ReasonTooManyReadings},

		// bad_time
		{name: "sent_at missing", payload: sub(example, `"sent_at":"2026-11-29T15:00:05Z",`, ``), reason: ReasonBadTime},
		{name: "sent_at null", payload: sub(example, `"sent_at":"2026-11-29T15:00:05Z"`, `"sent_at":null`), reason: ReasonBadTime},
		{name: "sent_at empty", payload: sub(example, `"2026-11-29T15:00:05Z"`, `""`), reason: ReasonBadTime},
		{name: "sent_at number", payload: sub(example, `"2026-11-29T15:00:05Z"`, `1764428405`), reason: ReasonBadTime},
		{name: "4 fractional digits", payload: sub(example, `05Z"`, `05.1234Z"`), reason: ReasonBadTime},
		{name: "9 fractional digits", payload: sub(example, `05Z"`, `05.123456789Z"`), reason: ReasonBadTime},
		{name: "dot without digits", payload: sub(example, `05Z"`, `05.Z"`), reason: ReasonBadTime},
		{name: "comma as decimal mark", payload: sub(example, `05Z"`, `05,250Z"`), reason: ReasonBadTime},
		{name: "+00:00 offset", payload: sub(example, `05Z"`, `05+00:00"`), reason: ReasonBadTime},
		{name: "-03:00 offset", payload: sub(example, `T15:00:05Z"`, `T12:00:05-03:00"`), reason: ReasonBadTime},
		{name: "no zone", payload: sub(example, `05Z"`, `05"`), reason: ReasonBadTime},
		{name: "lower-case z", payload: sub(example, `05Z"`, `05z"`), reason: ReasonBadTime},
		{name: "space for T", payload: sub(example, `29T15:00:05Z"`, `29 15:00:05Z"`), reason: ReasonBadTime},
		{name: "no seconds", payload: sub(example, `15:00:05Z"`, `15:00Z"`), reason: ReasonBadTime},
		{name: "February 30", payload: sub(example, `2026-11-29T15:00:05Z`, `2026-02-30T15:00:05Z`), reason: ReasonBadTime},
		{name: "hour 24", payload: sub(example, `T15:00:05Z`, `T24:00:00Z`), reason: ReasonBadTime},
		{name: "leap second", payload: sub(example, `T15:00:05Z`, `T23:59:60Z`), reason: ReasonBadTime},
		{name: "year 1 (zero time)", payload: sub(example, `2026-11-29T15:00:05Z`, `0001-01-01T00:00:00Z`), reason: ReasonBadTime},
		{name: "gps t missing", payload: with(`,"gps":[{` + pos + `}]`), reason: ReasonBadTime},
		{name: "gps t with offset", payload: with(`,"gps":[{"t":"2026-11-29T15:00:00+00:00",` + pos + `}]`), reason: ReasonBadTime},
		{name: "tacho t missing", payload: with(`,"tacho":[{"speed_kmh":1}]`), reason: ReasonBadTime},
		{name: "sound t missing", payload: with(`,"sound":[{"laeq_db":60}]`), reason: ReasonBadTime},
		{name: "service t missing", payload: with(`,"service":[{"on":true}]`), reason: ReasonBadTime},
		{name: "door t missing", payload: with(`,"door":[{"open":true}]`), reason: ReasonBadTime},
		{name: "door in 9999", payload: with(`,"door":[{"t":"9999-12-31T23:59:59.999Z","open":true}]`), reason: ReasonBadTime},
		{name: "door 31 days old", payload: with(`,"door":[{"t":"2026-10-29T15:00:00Z","open":true}]`), reason: ReasonPastTime},
		{name: "door open is a string", payload: with(`,"door":[{` + t0 + `,"open":"yes"}]`), reason: ReasonBadJSON},
		{name: "null reading", payload: with(`,"tacho":[null]`), reason: ReasonBadTime},

		{name: "year 1970 (zeroed RTC)", payload: sub(example, `2026-11-29T15:00:05Z`, `1970-01-01T00:00:00Z`), reason: ReasonBadTime, detail: "outside 2000–2100"},
		{name: "year 1600", payload: with(`,"gps":[{"t":"1600-01-01T00:00:00Z",` + pos + `}]`), reason: ReasonBadTime},
		{name: "1999-12-31T23:59:59.999Z", payload: with(`,"tacho":[{"t":"1999-12-31T23:59:59.999Z"}]`), reason: ReasonBadTime},
		{name: "service in 9999", payload: with(`,"service":[{"t":"9999-12-31T23:59:59.999Z","on":true}]`), reason: ReasonBadTime},

		// future_time
		{name: "sent_at 10min+1ms ahead", payload: sub(example, `"sent_at":"2026-11-29T15:00:05Z"`, `"sent_at":"2026-11-29T15:10:10.001Z"`), reason: ReasonFutureTime, detail: "sent_at 2026-11-29T15:10:10.001Z"},
		{name: "gps a year ahead", payload: with(`,"gps":[{"t":"2027-11-29T15:00:00Z",` + pos + `}]`), reason: ReasonFutureTime},
		{name: "tacho 23h ahead", payload: with(`,"tacho":[{"t":"2026-11-30T14:00:10Z"}]`), reason: ReasonFutureTime},
		{name: "sound 10min+1ms ahead", payload: with(`,"sound":[{"t":"2026-11-29T15:10:10.001Z"}]`), reason: ReasonFutureTime},

		// past_time
		{name: "sent_at 30 days+1ms old", payload: sub(example, `"sent_at":"2026-11-29T15:00:05Z"`, `"sent_at":"2026-10-30T15:00:09.999Z"`), reason: ReasonPastTime, detail: "sent_at 2026-10-30T15:00:09.999Z"},
		{name: "gps in 2001", payload: with(`,"gps":[{"t":"2001-01-01T00:00:00Z",` + pos + `}]`), reason: ReasonPastTime},
		{name: "service 31 days old", payload: with(`,"service":[{"t":"2026-10-29T15:00:00Z","on":true}]`), reason: ReasonPastTime},

		// non_finite
		{name: "lat 1e400", payload: gpsWith(`"lat":1e400,"lon":-40.7`), reason: ReasonNonFinite, detail: "gps.lat: number 1e400"},
		{name: "lon -1e400", payload: gpsWith(`"lat":-20.8,"lon":-1e400`), reason: ReasonNonFinite},
		{name: "gps speed 1e309", payload: gpsWith(pos + `,"speed_kmh":1e309`), reason: ReasonNonFinite},
		{name: "course 1e999", payload: gpsWith(pos + `,"course_deg":1e999`), reason: ReasonNonFinite},
		{name: "hdop 1e400", payload: gpsWith(pos + `,"hdop":1e400`), reason: ReasonNonFinite},
		{name: "alt -1e400", payload: gpsWith(pos + `,"alt_m":-1e400`), reason: ReasonNonFinite},
		{name: "odometer 1e400", payload: tachoWith(`"odometer_km":1e400`), reason: ReasonNonFinite, detail: "tacho.odometer_km: number 1e400"},
		{name: "tacho speed 1e400", payload: tachoWith(`"speed_kmh":1e400`), reason: ReasonNonFinite},
		{name: "laeq 1e400", payload: soundWith(`"laeq_db":1e400`), reason: ReasonNonFinite},
		{name: "lamax 1e400", payload: soundWith(`"lamax_db":1e400`), reason: ReasonNonFinite},
		{name: "dur 1e400", payload: soundWith(`"dur_s":1e400`), reason: ReasonNonFinite},

		// bad_position
		{name: "lat missing", payload: gpsWith(`"lon":-40.7292`), reason: ReasonBadPosition},
		{name: "lon missing", payload: gpsWith(`"lat":-20.8367`), reason: ReasonBadPosition},
		{name: "lat and lon missing", payload: gpsWith(`"fix":"none"`), reason: ReasonBadPosition},
		{name: "lat null", payload: gpsWith(`"lat":null,"lon":-40.7292`), reason: ReasonBadPosition},
		{name: "null island", payload: gpsWith(`"lat":0,"lon":0`), reason: ReasonBadPosition},
		{name: "lat 90.0000001", payload: gpsWith(`"lat":90.0000001,"lon":-40.7`), reason: ReasonBadPosition},
		{name: "lat -90.1", payload: gpsWith(`"lat":-90.1,"lon":-40.7`), reason: ReasonBadPosition},
		{name: "lon 180.5", payload: gpsWith(`"lat":-20.8,"lon":180.5`), reason: ReasonBadPosition},
		{name: "lon -181", payload: gpsWith(`"lat":-20.8,"lon":-181`), reason: ReasonBadPosition},
		{name: "lat in micro-degrees", payload: gpsWith(`"lat":-20836700,"lon":-40729200`), reason: ReasonBadPosition},

		// bad_speed
		{name: "gps speed 250.0001", payload: gpsWith(pos + `,"speed_kmh":250.0001`), reason: ReasonBadSpeed},
		{name: "gps speed negative", payload: gpsWith(pos + `,"speed_kmh":-0.1`), reason: ReasonBadSpeed},
		{name: "tacho speed 251", payload: tachoWith(`"speed_kmh":251`), reason: ReasonBadSpeed},
		{name: "tacho speed -1", payload: tachoWith(`"speed_kmh":-1`), reason: ReasonBadSpeed},

		// bad_sound
		{name: "laeq negative", payload: soundWith(`"laeq_db":-0.1`), reason: ReasonBadSound},
		{name: "laeq 160.01", payload: soundWith(`"laeq_db":160.01`), reason: ReasonBadSound},
		{name: "lamax 200", payload: soundWith(`"laeq_db":70,"lamax_db":200`), reason: ReasonBadSound},

		// bad_fix
		{name: "fix upper case", payload: gpsWith(pos + `,"fix":"3D"`), reason: ReasonBadFix},
		{name: "fix unknown", payload: gpsWith(pos + `,"fix":"ppp"`), reason: ReasonBadFix},
		{name: "fix as number", payload: gpsWith(pos + `,"fix":"3"`), reason: ReasonBadFix},

		// bad_value
		{name: "course -1", payload: gpsWith(pos + `,"course_deg":-1`), reason: ReasonBadValue},
		{name: "course 360.5", payload: gpsWith(pos + `,"course_deg":360.5`), reason: ReasonBadValue},
		{name: "hdop 0", payload: gpsWith(pos + `,"hdop":0`), reason: ReasonBadValue},
		{name: "hdop 100", payload: gpsWith(pos + `,"hdop":100`), reason: ReasonBadValue},
		{name: "sats -1", payload: gpsWith(pos + `,"sats":-1`), reason: ReasonBadValue},
		{name: "sats 256", payload: gpsWith(pos + `,"sats":256`), reason: ReasonBadValue},
		{name: "alt -1001", payload: gpsWith(pos + `,"alt_m":-1001`), reason: ReasonBadValue},
		{name: "alt 20001", payload: gpsWith(pos + `,"alt_m":20001`), reason: ReasonBadValue},
		{name: "odometer negative", payload: tachoWith(`"odometer_km":-0.001`), reason: ReasonBadValue},
		{name: "odometer over 1e7", payload: tachoWith(`"odometer_km":10000000.001`), reason: ReasonBadValue},
		{name: "card 33 bytes", payload: tachoWith(`"card":"` + strings.Repeat("0", 33) + `"`), reason: ReasonBadValue},
		{name: "dur 0", payload: soundWith(`"laeq_db":60,"dur_s":0`), reason: ReasonBadValue},
		{name: "dur negative", payload: soundWith(`"laeq_db":60,"dur_s":-1`), reason: ReasonBadValue},
		{name: "dur 3601", payload: soundWith(`"laeq_db":60,"dur_s":3601`), reason: ReasonBadValue},
		{name: "service on missing", payload: with(`,"service":[{` + t0 + `,"on":true},{` + t0 + `}]`), reason: ReasonBadValue, detail: "service[1].on"},
		{name: "service on null", payload: with(`,"service":[{` + t0 + `,"on":null}]`), reason: ReasonBadValue},
		{name: "door open missing", payload: with(`,"door":[{` + t0 + `,"open":true},{` + t0 + `}]`), reason: ReasonBadValue, detail: "door[1].open"},
		{name: "door open null", payload: with(`,"door":[{` + t0 + `,"open":null}]`), reason: ReasonBadValue, detail: "door[0].open"},
		{name: "service on missing before door's", payload: with(`,"service":[{` + t0 + `}],"door":[{` + t0 + `}]`), reason: ReasonBadValue, detail: "service[0].on"},
		{name: "door open missing after a valid service", payload: with(`,"service":[{` + t0 + `,"on":true}],"door":[{` + t0 + `,"open":false},{` + t0 + `}]`), reason: ReasonBadValue, detail: "door[1].open"},

		// bad_signature
		{name: "sig not last", payload: sub(unsigned, `{"v":1`, `{"v":1`+sigMember), reason: ReasonBadSignature},
		{name: "sig with a space", payload: sub(signed, `,"sig":`, `, "sig":`), reason: ReasonBadSignature},
		{name: "sig not base64", payload: unsigned[:len(unsigned)-1] + `,"sig":"not base64!"}`, reason: ReasonBadSignature},
		{name: "sig 63 bytes", payload: unsigned[:len(unsigned)-1] + `,"sig":"` + strings.Repeat("A", 84) + `"}`, reason: ReasonBadSignature},
		{name: "sig 66 bytes", payload: unsigned[:len(unsigned)-1] + `,"sig":"` + strings.Repeat("A", 88) + `"}`, reason: ReasonBadSignature},
		{name: "sig empty", payload: unsigned[:len(unsigned)-1] + `,"sig":""}`, reason: ReasonBadSignature},
		{name: "sig without kid", payload: sub(signed, `,"kid":"PIU-001-2026"`, ``), reason: ReasonBadSignature},
		{name: "kid 65 chars", payload: sub(example, `"PIU-001-2026"`, `"`+strings.Repeat("k", 65)+`"`), reason: ReasonBadSignature},
		{name: "verify: sig not base64", payload: unsigned[:len(unsigned)-1] + `,"sig":"@@"}`, reason: ReasonBadSignature, verify: true, pub: testPub},

		// signature_failed and unsigned: decided by Verify.
		{name: "other vehicle's key", payload: signed, reason: ReasonSignatureFailed, verify: true, pub: otherPub},
		{name: "seq changed after signing", payload: string(flipped), reason: ReasonSignatureFailed, verify: true, pub: testPub},
		{name: "member added after signing", payload: sub(signed, `"clock":"gps"`, `"clock":"gps","x":1`), reason: ReasonSignatureFailed, verify: true, pub: testPub},
		{name: "zero signature", payload: unsigned[:len(unsigned)-1] + `,"sig":"` + testSig64 + `"}`, reason: ReasonSignatureFailed, verify: true, pub: testPub},
		{name: "public key of wrong size", payload: signed, reason: ReasonSignatureFailed, verify: true, pub: testPub[:31]},
		{name: "no sig", payload: example, reason: ReasonUnsigned, verify: true, pub: testPub},
		{name: "sig not last (verify)", payload: sub(unsigned, `{"v":1`, `{"v":1`+sigMember), reason: ReasonUnsigned, verify: true, pub: testPub},
	}
	return r
}

func TestRejections(t *testing.T) {
	for _, c := range rejections() {
		t.Run(string(c.reason)+"/"+c.name, func(t *testing.T) {
			var err error
			if c.verify {
				err = Verify([]byte(c.payload), c.pub)
			} else {
				var b *Batch
				b, err = Decode(c.topic, []byte(c.payload), recv)
				if b != nil {
					t.Errorf("Decode returned a batch with error %v", err)
				}
			}
			if err == nil {
				t.Fatalf("accepted, want %s", c.reason)
			}
			var we *Error
			if !errors.As(err, &we) {
				t.Fatalf("error %T %v is not a *wire.Error", err, err)
			}
			if we.Reason != c.reason {
				t.Fatalf("reason %s (%v), want %s", we.Reason, err, c.reason)
			}
			if we.Detail == "" || !strings.Contains(we.Detail, c.detail) {
				t.Errorf("detail %q, want it to contain %q", we.Detail, c.detail)
			}
			if ReasonOf(err) != c.reason {
				t.Errorf("ReasonOf = %q", ReasonOf(err))
			}
		})
	}
}

// TestEveryReasonHasACase fails when a reason in Reasons has no rejection case, so that a new
// reason cannot be added without a test; and when a case uses a reason not in Reasons.
func TestEveryReasonHasACase(t *testing.T) {
	known := map[Reason]bool{}
	for _, r := range Reasons {
		if known[r] {
			t.Errorf("reason %s listed twice", r)
		}
		known[r] = true
	}
	covered := map[Reason]int{}
	for _, c := range rejections() {
		if !known[c.reason] {
			t.Errorf("case %q: reason %q not in Reasons", c.name, c.reason)
		}
		covered[c.reason]++
	}
	for _, r := range Reasons {
		_, exempt := notDecoded[r]
		switch {
		case covered[r] == 0 && !exempt:
			t.Errorf("reason %s has no rejection case", r)
		case covered[r] > 0 && exempt:
			t.Errorf("reason %s is tested but listed in notDecoded", r)
		}
	}
	for r := range notDecoded {
		if !known[r] {
			t.Errorf("notDecoded lists %q, not in Reasons", r)
		}
	}
}

// TestProtocolDoc checks docs/protocol.md: a table row for every reason, the signing test
// vector, and that each example marked <!-- wire-example: accept --> or
// <!-- wire-example: reject REASON --> is decoded as it says.
func TestProtocolDoc(t *testing.T) {
	doc, err := os.ReadFile("../docs/protocol.md")
	if err != nil {
		t.Fatal(err)
	}
	for _, r := range Reasons {
		if !bytes.Contains(doc, []byte("| `"+string(r)+"` |")) {
			t.Errorf("no row for reason %s", r)
		}
	}
	for _, s := range []string{signedExample(), base64.StdEncoding.EncodeToString(testPub), hex.EncodeToString(testKey.Seed())} {
		if !bytes.Contains(doc, []byte(s)) {
			t.Errorf("test vector %s not in the document", s)
		}
	}
	lines := strings.Split(string(doc), "\n")
	n := 0
	for i, line := range lines {
		mark, ok := strings.CutPrefix(line, "<!-- wire-example: ")
		if !ok {
			continue
		}
		mark = strings.TrimSuffix(mark, " -->")
		if i+1 >= len(lines) || lines[i+1] != "```json" {
			t.Fatalf("line %d: example mark not followed by a json block", i+1)
		}
		var body []string
		for _, l := range lines[i+2:] {
			if l == "```" {
				break
			}
			body = append(body, l)
		}
		payload := []byte(strings.Join(body, "\n"))
		n++
		b, err := Decode(testTopic, payload, recv)
		switch want, _ := strings.CutPrefix(mark, "reject "); {
		case mark == "accept" && err != nil:
			t.Errorf("line %d: example rejected: %v", i+1, err)
		case mark == "accept" && b.Sig != "":
			if err := Verify(payload, testPub); err != nil {
				t.Errorf("line %d: signed example does not verify: %v", i+1, err)
			}
		case mark != "accept" && ReasonOf(err) != Reason(want):
			t.Errorf("line %d: example gives %v, want %s", i+1, err, want)
		}
	}
	if n < 10 {
		t.Errorf("only %d examples found", n)
	}
}

// acceptance is a payload that must be accepted; check, when set, looks at the batch.
type acceptance struct {
	name    string
	topic   string
	payload string
	recv    time.Time // zero: recv
	noRecv  bool      // decode with a zero receipt time
	check   func(t *testing.T, b *Batch)
}

func acceptances() []acceptance {
	signed := signedExample()
	f := func(p *float64) float64 {
		if p == nil {
			return math.NaN()
		}
		return *p
	}
	gps0 := func(want func(GPS) bool) func(*testing.T, *Batch) {
		return func(t *testing.T, b *Batch) {
			if len(b.GPS) != 1 || !want(b.GPS[0]) {
				t.Errorf("gps %+v", b.GPS)
			}
		}
	}
	return []acceptance{
		{name: "example", payload: example},
		{name: "example on its topic", topic: testTopic, payload: example},
		{name: "signed example", topic: testTopic, payload: signed, check: func(t *testing.T, b *Batch) {
			if len(b.Sig) != 88 || b.Kid != "PIU-001-2026" {
				t.Errorf("sig %q kid %q", b.Sig, b.Kid)
			}
		}},
		{name: "signed, trailing newline", payload: signed + "\n"},
		{name: "no readings", payload: with(``), check: func(t *testing.T, b *Batch) {
			if b.GPS != nil || b.Tacho != nil || b.Sound != nil || b.Service != nil || b.Readings() != 0 {
				t.Errorf("readings %+v", b)
			}
		}},
		{name: "empty arrays decode as absent", payload: with(`,"gps":[],"tacho":[],"sound":[],"service":[],"door":[]`), check: func(t *testing.T, b *Batch) {
			if b.GPS != nil || b.Tacho != nil || b.Sound != nil || b.Service != nil || b.Door != nil {
				t.Errorf("empty arrays not nil: %+v", b)
			}
		}},
		{name: "null arrays", payload: with(`,"gps":null,"tacho":null,"sound":null,"service":null,"door":null`)},
		{name: "whitespace around", payload: " \n\t" + sub(example, `"v":1,`, "\"v\" : 1 ,\r\n") + "\n "},
		{name: "600 readings", payload: readings(MaxReadings), check: func(t *testing.T, b *Batch) {
			if b.Readings() != MaxReadings {
				t.Errorf("%d readings", b.Readings())
			}
		}},
		{name: "exactly 256 KiB", payload: padTo(example, MaxPayloadBytes)},
		{name: "1 fractional digit", payload: sub(example, `05Z"`, `05.2Z"`)},
		{name: "2 fractional digits", payload: sub(example, `05Z"`, `05.25Z"`)},
		{name: "3 fractional digits", payload: sub(example, `05Z"`, `05.250Z"`), check: func(t *testing.T, b *Batch) {
			if b.SentAt.Nanosecond() != 250e6 {
				t.Errorf("sent_at %v", b.SentAt)
			}
		}},
		{name: "exactly 10 min ahead", payload: sub(example, `"sent_at":"2026-11-29T15:00:05Z"`, `"sent_at":"2026-11-29T15:10:10Z"`)},
		{name: "10 min ahead of a receipt with sub-ms time", payload: sub(example, `"sent_at":"2026-11-29T15:00:05Z"`, `"sent_at":"2026-11-29T15:10:10.001Z"`),
			recv: recv.Add(1500 * time.Microsecond)},
		{name: "exactly 30 days old", payload: sub(example, `"sent_at":"2026-11-29T15:00:05Z"`, `"sent_at":"2026-10-30T15:00:10Z"`)},
		{name: "no receipt time: no future check", payload: sub(example, `2026-11-29T15:00:05Z`, `2099-01-01T00:00:00Z`), noRecv: true},
		{name: "no receipt time: no age check", payload: sub(example, `2026-11-29T15:00:05Z`, `2000-01-01T00:00:00Z`), noRecv: true},
		{name: "no receipt time: up to 2100", payload: sub(example, `2026-11-29T15:00:05Z`, `2100-01-01T00:00:00Z`), noRecv: true},
		{name: "speed 250", payload: gpsWith(pos + `,"speed_kmh":250`)},
		{name: "speed 0", payload: tachoWith(`"speed_kmh":0`), check: func(t *testing.T, b *Batch) {
			if b.Tacho[0].SpeedKmh == nil || *b.Tacho[0].SpeedKmh != 0 {
				t.Errorf("speed 0 not kept: %+v", b.Tacho[0])
			}
		}},
		{name: "lat 90", payload: gpsWith(`"lat":90,"lon":0`)},
		{name: "lat -90", payload: gpsWith(`"lat":-90,"lon":0`)},
		{name: "lon ±180", payload: with(`,"gps":[{` + t0 + `,"lat":0,"lon":180},{` + t0 + `,"lat":0,"lon":-180}]`)},
		{name: "lat 0 (equator)", payload: gpsWith(`"lat":0,"lon":-40.7292`), check: gps0(func(g GPS) bool { return g.Lat == 0 && g.Lon == -40.7292 })},
		{name: "sound 0 and 160", payload: soundWith(`"laeq_db":0,"lamax_db":160`)},
		{name: "limits of other values", payload: gpsWith(pos + `,"course_deg":360,"hdop":99.99,"sats":255,"alt_m":-1000`)},
		{name: "low limits", payload: gpsWith(pos + `,"course_deg":0,"hdop":0.01,"sats":0,"alt_m":20000`)},
		{name: "odometer and card limits", payload: tachoWith(`"odometer_km":10000000,"card":"` + strings.Repeat("0", 32) + `"`)},
		{name: "dur 3600", payload: soundWith(`"dur_s":3600`)},
		{name: "kid 64", payload: sub(example, `"PIU-001-2026"`, `"`+strings.Repeat("k", 64)+`"`)},
		{name: "vehicle 32 and epoch 64", topic: TelemetryTopic(strings.Repeat("V", 32)),
			payload: sub(sub(example, `"PIU-001"`, `"`+strings.Repeat("V", 32)+`"`), `"e-7f3a9c"`, `"`+strings.Repeat("e.", 32)+`"`)},
		{name: "every fix", payload: with(`,"gps":[` + strings.Join([]string{
			`{` + t0 + `,` + pos + `,"fix":"none"}`, `{` + t0 + `,` + pos + `,"fix":"2d"}`, `{` + t0 + `,` + pos + `,"fix":"3d"}`,
			`{` + t0 + `,` + pos + `,"fix":"dgps"}`, `{` + t0 + `,` + pos + `,"fix":"rtk"}`, `{` + t0 + `,` + pos + `,"fix":"estimated"}`,
			`{` + t0 + `,` + pos + `}`,
		}, ",") + `]`)},
		{name: "clock rtc", payload: sub(example, `"clock":"gps"`, `"clock":"rtc"`)},
		{name: "clock system", payload: sub(example, `"clock":"gps"`, `"clock":"system"`)},
		{name: "seq 2^63-1", payload: sub(example, `"seq":1042`, `"seq":9223372036854775807`)},
		{name: "service changes", payload: with(`,"service":[{` + t0 + `,"on":true},{"t":"2026-11-29T15:00:01Z","on":false}]`), check: func(t *testing.T, b *Batch) {
			if len(b.Service) != 2 || !b.Service[0].On || b.Service[1].On {
				t.Errorf("service %+v", b.Service)
			}
		}},
		{name: "door changes", payload: with(`,"door":[{` + t0 + `,"open":true},{"t":"2026-11-29T15:00:01Z","open":false}]`), check: func(t *testing.T, b *Batch) {
			if len(b.Door) != 2 || !b.Door[0].Open || b.Door[1].Open || b.Readings() != 2 {
				t.Errorf("door %+v", b.Door)
			}
		}},
		{name: "unknown fields are ignored", topic: testTopic, payload: sub(sub(sub(example,
			`"clock":"gps"`, `"clock":"gps","v2_field":{"nested":[1,"two",{"sig":"x"}]},"note":"olá"`),
			`"fix":"3d"`, `"fix":"3d","pdop":1.2`),
			`"card":"0000000086H101"`, `"card":"0000000086H101","slot":2`)},
		{name: "absent fields stay absent", payload: gpsWith(pos), check: gps0(func(g GPS) bool {
			return g.SpeedKmh == nil && g.CourseDeg == nil && g.HDOP == nil && g.Sats == nil && g.Fix == "" && g.AltM == nil
		})},
		{name: "zero is not absent", payload: gpsWith(pos + `,"speed_kmh":0,"course_deg":0,"sats":0,"alt_m":0`), check: gps0(func(g GPS) bool {
			return f(g.SpeedKmh) == 0 && f(g.CourseDeg) == 0 && g.Sats != nil && *g.Sats == 0 && f(g.AltM) == 0 && g.HDOP == nil
		})},
		{name: "precision kept", payload: gpsWith(`"lat":-20.83671234567,"lon":-40.729212345678901`), check: gps0(func(g GPS) bool {
			return g.Lat == -20.83671234567 && g.Lon == -40.729212345678901
		})},
		{name: "exponent numbers", payload: tachoWith(`"odometer_km":1.0234555e4,"speed_kmh":12E-1`), check: func(t *testing.T, b *Batch) {
			if f(b.Tacho[0].OdometerKm) != 10234.555 || f(b.Tacho[0].SpeedKmh) != 1.2 {
				t.Errorf("tacho %+v", b.Tacho[0])
			}
		}},
		{name: "escaped card", payload: tachoWith(`"card":"00\u00410"`), check: func(t *testing.T, b *Batch) {
			if b.Tacho[0].Card != "00A0" {
				t.Errorf("card %q", b.Tacho[0].Card)
			}
		}},
	}
}

func TestAcceptances(t *testing.T) {
	for _, c := range acceptances() {
		t.Run(c.name, func(t *testing.T) {
			at := recv
			if c.noRecv {
				at = time.Time{}
			} else if !c.recv.IsZero() {
				at = c.recv
			}
			b, err := Decode(c.topic, []byte(c.payload), at)
			if err != nil {
				t.Fatalf("rejected: %v", err)
			}
			if c.check != nil {
				c.check(t, b)
			}
		})
	}
}

func TestBoundarySizes(t *testing.T) {
	// The boundary cases above must really sit on the boundary.
	if n := len(padTo(example, MaxPayloadBytes)); n != 256*1024 {
		t.Errorf("padded payload is %d bytes", n)
	}
	if strings.Count(readings(MaxReadings), `"t":`) != 600 {
		t.Errorf("readings(600) does not hold 600 readings")
	}
}

func TestDecodeExample(t *testing.T) {
	b, err := Decode(testTopic, []byte(example), recv)
	if err != nil {
		t.Fatal(err)
	}
	if want := exampleBatch(); !equalBatch(b, want) {
		t.Errorf("Decode(example) =\n%+v\nwant\n%+v", b, want)
	}
}

func TestVehicleFromTopic(t *testing.T) {
	for _, c := range []struct{ topic, vehicle, kind string }{
		{TelemetryTopic("PIU-001"), "PIU-001", "telemetry"},
		{StatusTopic("a_B-9"), "a_B-9", "status"},
		{EpisodesTopic("PIU-001"), "PIU-001", "episodes"},
	} {
		v, k, err := VehicleFromTopic(c.topic)
		if err != nil || v != c.vehicle || k != c.kind {
			t.Errorf("VehicleFromTopic(%q) = %q, %q, %v", c.topic, v, k, err)
		}
	}
	for _, topic := range []string{"", "trenzinho/v1/", "trenzinho/v1/PIU-001", "trenzinho/v1/PIU-001/status/x",
		"trenzinho/v1/_quarantine/PIU-001/x", "x/v1/PIU-001/status", "trenzinho/v1/_quarantine/telemetry",
		QuarantineTopic("telemetry"), "trenzinho/v1/_sys/status"} {
		if _, _, err := VehicleFromTopic(topic); err == nil {
			t.Errorf("VehicleFromTopic(%q) accepted", topic)
		}
	}
	if got := QuarantineTopic("PIU-001"); got != "trenzinho/v1/_sys/quarantine/PIU-001" {
		t.Errorf("QuarantineTopic = %q", got)
	}
}

func TestEnums(t *testing.T) {
	for _, c := range []Clock{ClockGPS, ClockRTC, ClockSystem} {
		if !c.Valid() {
			t.Errorf("%q not valid", c)
		}
	}
	for _, f := range []Fix{FixNone, Fix2D, Fix3D, FixDGPS, FixRTK, FixEstimated} {
		if !f.Valid() {
			t.Errorf("%q not valid", f)
		}
	}
	if Clock("").Valid() || Clock("GPS").Valid() || Fix("").Valid() || Fix("3D").Valid() {
		t.Error("invalid enum value accepted")
	}
}
