package archive

import (
	"errors"
	"math"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/trenzinho/trenzinho/wire"
)

func decodeT(t *testing.T, payload string) *wire.Batch {
	t.Helper()
	b, err := wire.Decode("trenzinho/v1/PIU-001/telemetry", []byte(payload), time.Date(2026, 11, 29, 16, 0, 0, 0, time.UTC))
	if err != nil {
		t.Fatalf("decode: %v", err)
	}
	return b
}

func encodeT(t *testing.T, payload string) ([]string, pointCounts, pointCounts) {
	t.Helper()
	b := decodeT(t, payload)
	received := time.Date(2026, 11, 29, 15, 0, 6, 500_000_000, time.UTC)
	out, points, collisions, err := encodeBatch(nil, b, received, len(payload))
	if err != nil {
		t.Fatal(err)
	}
	if !strings.HasSuffix(string(out), "\n") {
		t.Fatalf("lines do not end in a newline: %q", out)
	}
	return strings.Split(strings.TrimSuffix(string(out), "\n"), "\n"), points, collisions
}

const fullBatch = `{"v":1,"vehicle":"PIU-001","epoch":"e-7f3a9c","seq":1042,"sent_at":"2026-11-29T15:00:05Z","clock":"gps",
 "gps":[{"t":"2026-11-29T15:00:00.25Z","lat":-20.836712345678901,"lon":-40.7292,"speed_kmh":12.300000000000002,
         "course_deg":90.0,"hdop":0.9,"sats":9,"fix":"3d","alt_m":-3.5}],
 "tacho":[{"t":"2026-11-29T15:00:00Z","speed_kmh":12.1,"odometer_km":10234.555,"card":"0000\"86\\H101"}],
 "sound":[{"t":"2026-11-29T15:00:00Z","laeq_db":68.2,"lamax_db":74.0,"dur_s":1.0}],
 "service":[{"t":"2026-11-29T15:00:01Z","on":true}],
 "door":[{"t":"2026-11-29T15:00:02Z","open":true},{"t":"2026-11-29T15:00:03.5Z","open":false}],
 "warnings":[{"t":"2026-11-29T15:00:03Z","kind":"site_sound","rule":"sensitive_zone_sound","site":"hospital são,x=1 y","distance_m":290.5,"value":74.2,"limit":65},
             {"t":"2026-11-29T15:00:04Z","kind":"speed_near","rule":"speed"}],
 "kid":"PIU-001-2026"}`

func TestEncodeBatchFull(t *testing.T) {
	lines, points, collisions := encodeT(t, fullBatch)
	ts := func(s string) string {
		p, err := wire.ParseTime(s)
		if err != nil {
			t.Fatal(err)
		}
		return strconv.FormatInt(p.UnixNano(), 10)
	}
	sent, _ := wire.ParseTime("2026-11-29T15:00:05Z")
	want := []string{
		`gps,vehicle=PIU-001 lat=-20.8367123456789,lon=-40.7292,speed_kmh=12.300000000000002,course_deg=90,hdop=0.9,sats=9i,fix="3d",alt_m=-3.5,clock="gps" ` + ts("2026-11-29T15:00:00.25Z"),
		`tacho,vehicle=PIU-001 speed_kmh=12.1,odometer_km=10234.555,card="0000\"86\\H101",clock="gps" ` + ts("2026-11-29T15:00:00Z"),
		`sound,vehicle=PIU-001 laeq_db=68.2,lamax_db=74,dur_s=1,clock="gps" ` + ts("2026-11-29T15:00:00Z"),
		`service,vehicle=PIU-001 on=true,clock="gps" ` + ts("2026-11-29T15:00:01Z"),
		`door,vehicle=PIU-001 open=true,clock="gps" ` + ts("2026-11-29T15:00:02Z"),
		`door,vehicle=PIU-001 open=false,clock="gps" ` + ts("2026-11-29T15:00:03.5Z"),
		`warning,kind=site_sound,rule=sensitive_zone_sound,site=hospital\ são\,x\=1\ y,vehicle=PIU-001 distance_m=290.5,value=74.2,limit=65,clock="gps" ` + ts("2026-11-29T15:00:03Z"),
		`warning,kind=speed_near,rule=speed,vehicle=PIU-001 clock="gps" ` + ts("2026-11-29T15:00:04Z"),
		`batch,vehicle=PIU-001 epoch="e-7f3a9c",seq=1042i,sent_at="2026-11-29T15:00:05Z",received_at="2026-11-29T15:00:06.5Z",lag_s=1.5,clock="gps",n_gps=1i,n_tacho=1i,n_sound=1i,n_service=1i,n_door=2i,n_warning=2i,bytes=` +
			strconv.Itoa(len(fullBatch)) + `i,kid="PIU-001-2026" ` + strconv.FormatInt(BatchTimestamp(sent.Time, "e-7f3a9c", 1042), 10),
	}
	if len(lines) != len(want) {
		t.Fatalf("got %d lines, want %d:\n%s", len(lines), len(want), strings.Join(lines, "\n"))
	}
	for i := range want {
		if lines[i] != want[i] {
			t.Errorf("line %d:\n got %s\nwant %s", i, lines[i], want[i])
		}
	}
	if points != (pointCounts{1, 1, 1, 1, 2, 2, 1, 0}) || collisions != (pointCounts{}) {
		t.Errorf("points %v collisions %v", points, collisions)
	}
}

func TestEncodeBatchAbsentFieldsAbsent(t *testing.T) {
	lines, _, _ := encodeT(t, `{"v":1,"vehicle":"PIU-001","epoch":"e1","seq":1,"sent_at":"2026-11-29T15:00:05Z","clock":"system",
		"gps":[{"t":"2026-11-29T15:00:00Z","lat":-20.5,"lon":-40.25}],
		"tacho":[{"t":"2026-11-29T15:00:00Z"}],
		"sound":[{"t":"2026-11-29T15:00:00Z","laeq_db":0}]}`)
	for i, want := range []string{
		`gps,vehicle=PIU-001 lat=-20.5,lon=-40.25,clock="system" `,
		`tacho,vehicle=PIU-001 clock="system" `,
		`sound,vehicle=PIU-001 laeq_db=0,clock="system" `, // 0 is a value, not "unknown"
	} {
		if !strings.HasPrefix(lines[i], want) {
			t.Errorf("line %d = %s, want prefix %s", i, lines[i], want)
		}
	}
	for _, absent := range []string{"speed_kmh", "hdop", "sats", "fix", "course_deg", "alt_m", "odometer_km", "card", "lamax_db", "dur_s", "kid", "signed"} {
		for _, l := range lines {
			if strings.Contains(l, absent+"=") {
				t.Errorf("%s present in %s", absent, l)
			}
		}
	}
	if !strings.Contains(lines[3], "n_service=0i") || !strings.Contains(lines[3], "n_door=0i") || !strings.Contains(lines[3], "n_warning=0i") {
		t.Errorf("batch line lacks the zero service count: %s", lines[3])
	}
}

// TestEncodeBatchPrecision checks that every float reads back as exactly the value decoded
// from JSON: nothing on the way is rounded.
func TestEncodeBatchPrecision(t *testing.T) {
	values := []string{"-20.836712345678901", "0.30000000000000004", "1e-7", "9999999.999999998", "123.456789012345678", "5e-324", "89.99999999999999"}
	for _, v := range values {
		want, err := strconv.ParseFloat(v, 64)
		if err != nil {
			t.Fatal(err)
		}
		speed := "1"
		if want >= 0 && want <= 250 {
			speed = v
		}
		lines, _, _ := encodeT(t, `{"v":1,"vehicle":"PIU-001","epoch":"e1","seq":1,"sent_at":"2026-11-29T15:00:05Z","clock":"gps",
			"gps":[{"t":"2026-11-29T15:00:00Z","lat":-20,"lon":-40,"speed_kmh":`+speed+`}],
			"tacho":[{"t":"2026-11-29T15:00:00Z","odometer_km":`+strings.TrimPrefix(v, "-")+`}]}`)
		got := fieldValue(t, lines[1], "odometer_km")
		if f, err := strconv.ParseFloat(got, 64); err != nil || f != math.Abs(want) {
			t.Errorf("odometer %s written as %s", v, got)
		}
		if strings.ContainsAny(got, "eE") {
			t.Errorf("odometer %s written in exponent form %s", v, got)
		}
		if speed == v {
			got := fieldValue(t, lines[0], "speed_kmh")
			if f, err := strconv.ParseFloat(got, 64); err != nil || f != want {
				t.Errorf("speed %s written as %s", v, got)
			}
		}
	}
}

// fieldValue returns the raw value of a numeric field of a line.
func fieldValue(t *testing.T, line, key string) string {
	t.Helper()
	_, rest, ok := strings.Cut(line, " "+key+"=")
	if !ok {
		_, rest, ok = strings.Cut(line, ","+key+"=")
	}
	if !ok {
		t.Fatalf("no %s in %s", key, line)
	}
	end := strings.IndexAny(rest, ", ")
	return rest[:end]
}

func TestEncodeBatchSameTimeLaterWins(t *testing.T) {
	lines, points, collisions := encodeT(t, `{"v":1,"vehicle":"PIU-001","epoch":"e1","seq":1,"sent_at":"2026-11-29T15:00:05Z","clock":"gps",
		"gps":[{"t":"2026-11-29T15:00:01Z","lat":-20.1,"lon":-40},{"t":"2026-11-29T15:00:00Z","lat":-20.2,"lon":-40},{"t":"2026-11-29T15:00:01Z","lat":-20.3,"lon":-40}],
		"sound":[{"t":"2026-11-29T15:00:00Z","laeq_db":60},{"t":"2026-11-29T15:00:00Z","laeq_db":61}]}`)
	var gps, sound []string
	for _, l := range lines {
		switch {
		case strings.HasPrefix(l, "gps,"):
			gps = append(gps, fieldValue(t, l, "lat"))
		case strings.HasPrefix(l, "sound,"):
			sound = append(sound, fieldValue(t, l, "laeq_db"))
		case strings.HasPrefix(l, "batch,"):
			if fieldValue(t, l, "n_gps") != "3i" {
				t.Errorf("batch counts the readings as received: %s", l)
			}
		}
	}
	if strings.Join(gps, " ") != "-20.2 -20.3" || strings.Join(sound, " ") != "61" {
		t.Errorf("kept gps %v sound %v, want [-20.2 -20.3] [61]", gps, sound)
	}
	if collisions[idxGPS] != 1 || collisions[idxSound] != 1 || points[idxGPS] != 2 || points[idxSound] != 1 {
		t.Errorf("points %v collisions %v", points, collisions)
	}
}

// TestEncodeBatchSeqRange: wire refuses a seq above 2^63−1 (bad_seq); the encoder still refuses
// to write one, should a batch reach it by another way.
func TestEncodeBatchSeqRange(t *testing.T) {
	b := decodeT(t, `{"v":1,"vehicle":"PIU-001","epoch":"e1","seq":9223372036854775807,"sent_at":"2026-11-29T15:00:05Z","clock":"gps"}`)
	b.Seq++
	if _, _, _, err := encodeBatch(nil, b, time.Now(), 10); !errors.Is(err, errSeqRange) {
		t.Fatalf("err = %v, want errSeqRange", err)
	}
}

func TestBatchTimestamp(t *testing.T) {
	sent := time.Date(2026, 11, 29, 15, 0, 5, 123_000_000, time.UTC)
	seen := map[int64]uint64{}
	for seq := uint64(1); seq <= 10_000; seq++ {
		ts := BatchTimestamp(sent, "e-7f3a9c", seq)
		if ts < sent.UnixNano() || ts >= sent.Add(time.Millisecond).UnixNano() {
			t.Fatalf("seq %d: timestamp %d outside sent_at's millisecond", seq, ts)
		}
		if other, dup := seen[ts]; dup {
			t.Fatalf("seqs %d and %d of one epoch in one millisecond collide", other, seq)
		}
		seen[ts] = seq
	}
	again := sent.Add(0) // the same batch, decoded again
	if BatchTimestamp(sent, "e-7f3a9c", 7) != BatchTimestamp(again, "e-7f"+"3a9c", 7) {
		t.Error("a redelivered batch gets another timestamp")
	}
	if BatchTimestamp(sent, "e-1", 1) == BatchTimestamp(sent, "e-2", 1) {
		t.Error("seq 1 of two epochs in one millisecond collide")
	}
}

func TestEncodeQuarantine(t *testing.T) {
	received := time.Date(2026, 11, 29, 15, 0, 0, 1, time.UTC)
	topic := "trenzinho/v1/PIU-002/telemetry"
	cases := []struct {
		name, payload string
		want          []string // substrings
		absent        []string
	}{
		{"quotes and newlines", "{\"a\":\"x\\\\y\"\n}", []string{`payload="{\"a\":\"x\\\\y\"` + "\n}\"", `bytes=13i`, `reason=bad_json,vehicle=PIU-002 `}, []string{"truncated", "payload_b64"}},
		{"not utf-8", "\xff\xfe{}", []string{`payload_b64="//57fQ=="`}, []string{"payload="}},
		{"truncated", strings.Repeat("a", wire.QuarantineCut-1) + "é" + "tail", []string{`truncated=true`, `bytes=` + strconv.Itoa(wire.QuarantineCut+5) + `i`}, []string{"payload_b64", "é"}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			q := newQuarantine(topic, []byte(c.payload), received, false, &wire.Error{Reason: wire.ReasonBadJSON, Detail: "d"})
			line := string(encodeQuarantine(nil, q, received.UnixNano()))
			if !strings.HasPrefix(line, "quarantine,reason=bad_json,vehicle=PIU-002 ") || !strings.HasSuffix(line, " "+strconv.FormatInt(received.UnixNano(), 10)+"\n") {
				t.Errorf("line %.200q", line)
			}
			for _, w := range c.want {
				if !strings.Contains(line, w) {
					t.Errorf("%.200q lacks %q", line, w)
				}
			}
			for _, a := range c.absent {
				if strings.Contains(line, a) {
					t.Errorf("%.200q has %q", line, a)
				}
			}
			if q.mqttTopic() != "trenzinho/v1/_sys/quarantine/PIU-002" {
				t.Errorf("topic %s", q.mqttTopic())
			}
		})
	}
	q := newQuarantine("trenzinho/v1/bad.vehicle/telemetry", []byte("x"), received, true, &wire.Error{Reason: wire.ReasonBadTopic})
	line := string(encodeQuarantine(nil, q, 1))
	if !strings.HasPrefix(line, "quarantine,reason=bad_topic topic=") || !strings.Contains(line, "dup=true") {
		t.Errorf("line %q", line)
	}
	if q.mqttTopic() != "trenzinho/v1/_sys/quarantine/_unknown" {
		t.Errorf("topic %s", q.mqttTopic())
	}
}

// tagKeys returns the tag keys of a line protocol line, in their order on the line.
func tagKeys(t *testing.T, line string) []string {
	t.Helper()
	var keys []string
	var cur []byte
	inKey, escaped := false, false
	for i := 0; i < len(line); i++ {
		c := line[i]
		switch {
		case escaped:
			escaped = false
			if inKey {
				cur = append(cur, c)
			}
		case c == '\\':
			escaped = true
		case c == ',':
			inKey, cur = true, cur[:0]
		case c == '=' && inKey:
			keys = append(keys, string(cur))
			inKey = false
		case c == ' ':
			return keys
		case inKey:
			cur = append(cur, c)
		}
	}
	t.Fatalf("no field set in %q", line)
	return nil
}

// TestEncodeTagsSorted checks that every line has its tags in the order of their keys, the order
// in which InfluxDB keeps a series key: influxd sorts the tags of any other line, at a cost per
// point, before it stores the same series.
func TestEncodeTagsSorted(t *testing.T) {
	lines, _, _ := encodeT(t, fullBatch)
	received := time.Date(2026, 11, 29, 15, 0, 6, 0, time.UTC)
	q := newQuarantine("trenzinho/v1/PIU-002/telemetry", []byte("{"), received, false, &wire.Error{Reason: wire.ReasonBadJSON})
	lines = append(lines, strings.TrimSuffix(string(encodeQuarantine(nil, q, 1)), "\n"))
	withSeveral := 0
	for _, l := range lines {
		keys := tagKeys(t, l)
		if len(keys) > 1 {
			withSeveral++
		}
		for i := 1; i < len(keys); i++ {
			if keys[i-1] >= keys[i] {
				t.Errorf("tags %v not sorted by key in %s", keys, l)
			}
		}
	}
	if withSeveral < 3 { // both warnings and the quarantine line
		t.Errorf("%d lines with several tags, want 3: %q", withSeveral, lines)
	}
}
