package deploy

import (
	"fmt"
	"regexp"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/trenzinho/trenzinho/ingest/archive"
	"github.com/trenzinho/trenzinho/wire"
)

// measurementSchema is what ingest writes into one measurement.
type measurementSchema struct {
	Fields map[string]bool
	Tags   map[string]bool
}

// quarantineSchema is the quarantine measurement, which ingest builds from a rejected payload
// internally (no exported function writes it): kept as a table here, and checked against
// ingest's source by TestQuarantineSchemaMatchesIngest so that it cannot drift.
var quarantineSchema = measurementSchema{
	Fields: setOf("topic", "detail", "payload", "payload_b64", "bytes", "truncated", "dup"),
	Tags:   setOf("reason", "vehicle"),
}

// ingestSchema derives the measurements, fields and tags ingest writes by running ingest's own
// encoder (archive.AppendLines, the function ingest writes with) on a batch that carries every
// optional member of the wire format, plus the quarantine table.
func ingestSchema(t testing.TB) map[string]measurementSchema {
	t.Helper()
	at := wire.NewTime(time.Date(2026, 11, 29, 15, 0, 0, 0, time.UTC))
	f := func(v float64) *float64 { return &v }
	sats := 9
	b := &wire.Batch{V: wire.Version, Vehicle: "PIU-001", Epoch: "e-1", Seq: 1, SentAt: at, Clock: wire.ClockGPS,
		GPS: []wire.GPS{{T: at, Lat: -20.8, Lon: -40.7, SpeedKmh: f(12), CourseDeg: f(90), HDOP: f(0.9), Sats: &sats,
			Fix: wire.Fix3D, AltM: f(4.7)}},
		Tacho:   []wire.Tacho{{T: at, SpeedKmh: f(12), OdometerKm: f(10234.5), Card: "0000000086H101"}},
		Sound:   []wire.Sound{{T: at, LAeqDB: f(68.2), LAmaxDB: f(74), DurS: f(1)}},
		Service: []wire.Service{{T: at, On: true}},
		Door:    []wire.Door{{T: at, Open: true}},
		Warnings: []wire.Warning{{T: at, Kind: wire.WarningSiteSound, Rule: "sensitive_zone_sound", Site: "hospital-1",
			DistanceM: f(290), Value: f(74.2), Limit: f(65)}},
		Kid: "PIU-001-2026",
		Sig: "c2ln",
	}
	lines, n, err := archive.AppendLines(nil, b, at.Add(time.Second), 1000)
	if err != nil {
		t.Fatal(err)
	}
	out := map[string]measurementSchema{}
	for _, line := range strings.Split(strings.TrimSpace(string(lines)), "\n") {
		name, s, err := parseLine(line)
		if err != nil {
			t.Fatalf("ingest wrote %q: %v", line, err)
		}
		out[name] = s
	}
	if len(out) != n {
		t.Fatalf("ingest wrote %d points in %d measurements: one point per measurement expected", n, len(out))
	}
	out[archive.MeasurementQuarantine] = quarantineSchema
	for _, m := range []string{archive.MeasurementGPS, archive.MeasurementTacho, archive.MeasurementSound,
		archive.MeasurementService, archive.MeasurementDoor, archive.MeasurementWarning, archive.MeasurementBatch, archive.MeasurementQuarantine} {
		if _, ok := out[m]; !ok {
			t.Fatalf("ingest wrote no %s point for a full batch", m)
		}
	}
	return out
}

// parseLine reads one line of InfluxDB line protocol as ingest writes it (no spaces in names or
// tag values; string fields quoted).
func parseLine(line string) (string, measurementSchema, error) {
	s := measurementSchema{Fields: map[string]bool{}, Tags: map[string]bool{}}
	head, rest, ok := strings.Cut(line, " ")
	if !ok {
		return "", s, fmt.Errorf("no fields")
	}
	parts := strings.Split(head, ",")
	for _, tag := range parts[1:] {
		k, _, _ := strings.Cut(tag, "=")
		s.Tags[k] = true
	}
	i := strings.LastIndexByte(rest, ' ')
	if i < 0 {
		return "", s, fmt.Errorf("no timestamp")
	}
	fields := rest[:i]
	inQuote := false
	start := 0
	for j := 0; j <= len(fields); j++ {
		if j < len(fields) {
			switch fields[j] {
			case '\\':
				j++
				continue
			case '"':
				inQuote = !inQuote
				continue
			case ',':
				if inQuote {
					continue
				}
			default:
				continue
			}
		}
		k, _, _ := strings.Cut(fields[start:j], "=")
		s.Fields[k] = true
		start = j + 1
	}
	return parts[0], s, nil
}

// TestQuarantineSchemaMatchesIngest: the quarantine table above is what ingest's encoder writes.
func TestQuarantineSchemaMatchesIngest(t *testing.T) {
	src := string(readFile(t, "ingest/archive/points.go"))
	i := strings.Index(src, "func encodeQuarantine(")
	if i < 0 {
		t.Fatal("ingest/archive/points.go: encodeQuarantine not found; update quarantineSchema and this test")
	}
	body := src[i:]
	body = body[:strings.Index(body, "\n}\n")]
	fields := map[string]bool{}
	for _, m := range regexp.MustCompile(`f\.\w+\("([a-z0-9_]+)"`).FindAllStringSubmatch(body, -1) {
		fields[m[1]] = true
	}
	tags := map[string]bool{}
	for _, m := range regexp.MustCompile(`",([a-z0-9_]+)="`).FindAllStringSubmatch(body, -1) {
		tags[m[1]] = true
	}
	if got, want := keys(fields), keys(quarantineSchema.Fields); got != want {
		t.Errorf("encodeQuarantine writes the fields %s, the table says %s", got, want)
	}
	if got, want := keys(tags), keys(quarantineSchema.Tags); got != want {
		t.Errorf("encodeQuarantine writes the tags %s, the table says %s", got, want)
	}
}

// TestIngestSchemaMatchesStorageDoc: docs/storage.md's schema table lists exactly what ingest
// writes.
func TestIngestSchemaMatchesStorageDoc(t *testing.T) {
	schema := ingestSchema(t)
	doc := string(readFile(t, "docs/storage.md"))
	row := regexp.MustCompile("(?m)^\\| `([a-z_]+)` \\| ([^|]*) \\| ([^|]*) \\|")
	names := regexp.MustCompile("`([a-z0-9_]+)`")
	seen := map[string]bool{}
	for _, m := range row.FindAllStringSubmatch(doc, -1) {
		s, ok := schema[m[1]]
		if !ok {
			continue // another table
		}
		seen[m[1]] = true
		var tags, fields []string
		for _, n := range names.FindAllStringSubmatch(m[2], -1) {
			tags = append(tags, n[1])
		}
		for _, n := range names.FindAllStringSubmatch(m[3], -1) {
			fields = append(fields, n[1])
		}
		if got, want := keys(setOf(tags...)), keys(s.Tags); got != want {
			t.Errorf("docs/storage.md: %s has the tags %s, ingest writes %s", m[1], got, want)
		}
		if got, want := keys(setOf(fields...)), keys(s.Fields); got != want {
			t.Errorf("docs/storage.md: %s has the fields %s, ingest writes %s", m[1], got, want)
		}
	}
	for m := range schema {
		if !seen[m] {
			t.Errorf("docs/storage.md: no row for the measurement %s", m)
		}
	}
}

func keys(m map[string]bool) string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	sort.Strings(out)
	return strings.Join(out, ",")
}
