package archive

import (
	"encoding/base64"
	"errors"
	"fmt"
	"hash/fnv"
	"math"
	"strconv"
	"time"
	"unicode/utf8"

	"github.com/trenzinho/trenzinho/wire"
)

// Measurements written to InfluxDB (docs/storage.md).
const (
	MeasurementGPS        = "gps"
	MeasurementTacho      = "tacho"
	MeasurementSound      = "sound"
	MeasurementService    = "service"
	MeasurementDoor       = "door"
	MeasurementWarning    = "warning"
	MeasurementBatch      = "batch"
	MeasurementQuarantine = "quarantine"
)

// measurements indexes pointCounts.
var measurements = [...]string{
	MeasurementGPS, MeasurementTacho, MeasurementSound, MeasurementService, MeasurementDoor,
	MeasurementWarning, MeasurementBatch, MeasurementQuarantine,
}

const (
	idxGPS = iota
	idxTacho
	idxSound
	idxService
	idxDoor
	idxWarning
	idxBatch
	idxQuarantine
)

// pointCounts counts points (and, for readings, same-time collisions) per measurement.
type pointCounts [len(measurements)]int

func (c *pointCounts) total() int {
	n := 0
	for _, v := range c {
		n += v
	}
	return n
}

// batchOffsetSpan is the range of the sub-millisecond offset that keeps two batch points of one
// vehicle with the same sent_at apart (docs/storage.md, "The batch measurement").
const batchOffsetSpan = 1_000_000

// BatchTimestamp returns the InfluxDB timestamp of a batch point: sent_at, whose wire precision
// is one millisecond, plus an offset below one millisecond derived from epoch and seq. Two
// batches of one vehicle sent in the same millisecond get different timestamps (consecutive seqs
// of one epoch always do), and a redelivered batch gets the same one.
func BatchTimestamp(sentAt time.Time, epoch string, seq uint64) int64 {
	h := fnv.New32a()
	h.Write([]byte(epoch))
	off := (uint64(h.Sum32()) + seq%batchOffsetSpan) % batchOffsetSpan
	return sentAt.Truncate(time.Millisecond).UnixNano() + int64(off)
}

// errSeqRange rejects a seq that InfluxDB cannot store as a signed integer.
var errSeqRange = errors.New("seq does not fit a signed 64-bit integer")

// AppendLines appends to dst the line protocol that ingest writes for a decoded batch received
// at receivedAt (size is the payload length), and returns it with the number of lines (points).
// Tools that must write exactly the points of ingest, such as the bare writer of the load
// benchmark, use it.
func AppendLines(dst []byte, b *wire.Batch, receivedAt time.Time, size int) ([]byte, int, error) {
	out, points, _, err := encodeBatch(dst, b, receivedAt, size)
	return out, points.total(), err
}

// encodeBatch appends the line protocol of a decoded batch to dst: one line per reading in
// gps, tacho, sound and service, and one line in batch. Of readings of one kind with the same
// time, only the last is written (counted in collisions). size is the payload length.
func encodeBatch(dst []byte, b *wire.Batch, receivedAt time.Time, size int) (out []byte, points, collisions pointCounts, err error) {
	if b.Seq > math.MaxInt64 {
		return dst, points, collisions, errSeqRange
	}
	clock := string(b.Clock)
	var tag []byte
	tag = append(tag, ",vehicle="...)
	tag = append(tag, b.Vehicle...) // [A-Za-z0-9_-]: nothing to escape

	keep := lastOfEachTime(len(b.GPS), func(i int) int64 { return b.GPS[i].T.UnixNano() })
	collisions[idxGPS] = len(b.GPS) - len(keep)
	for _, i := range keep {
		g := &b.GPS[i]
		dst = append(dst, MeasurementGPS...)
		dst = append(dst, tag...)
		f := fields{dst: dst}
		f.float("lat", g.Lat)
		f.float("lon", g.Lon)
		f.optFloat("speed_kmh", g.SpeedKmh)
		f.optFloat("course_deg", g.CourseDeg)
		f.optFloat("hdop", g.HDOP)
		if g.Sats != nil {
			f.int("sats", int64(*g.Sats))
		}
		f.optString("fix", string(g.Fix))
		f.optFloat("alt_m", g.AltM)
		f.string("clock", clock)
		dst = f.end(g.T.UnixNano())
	}
	points[idxGPS] = len(keep)

	keep = lastOfEachTime(len(b.Tacho), func(i int) int64 { return b.Tacho[i].T.UnixNano() })
	collisions[idxTacho] = len(b.Tacho) - len(keep)
	for _, i := range keep {
		r := &b.Tacho[i]
		dst = append(dst, MeasurementTacho...)
		dst = append(dst, tag...)
		f := fields{dst: dst}
		f.optFloat("speed_kmh", r.SpeedKmh)
		f.optFloat("odometer_km", r.OdometerKm)
		f.optString("card", r.Card)
		f.string("clock", clock)
		dst = f.end(r.T.UnixNano())
	}
	points[idxTacho] = len(keep)

	keep = lastOfEachTime(len(b.Sound), func(i int) int64 { return b.Sound[i].T.UnixNano() })
	collisions[idxSound] = len(b.Sound) - len(keep)
	for _, i := range keep {
		s := &b.Sound[i]
		dst = append(dst, MeasurementSound...)
		dst = append(dst, tag...)
		f := fields{dst: dst}
		f.optFloat("laeq_db", s.LAeqDB)
		f.optFloat("lamax_db", s.LAmaxDB)
		f.optFloat("dur_s", s.DurS)
		f.string("clock", clock)
		dst = f.end(s.T.UnixNano())
	}
	points[idxSound] = len(keep)

	keep = lastOfEachTime(len(b.Service), func(i int) int64 { return b.Service[i].T.UnixNano() })
	collisions[idxService] = len(b.Service) - len(keep)
	for _, i := range keep {
		s := &b.Service[i]
		dst = append(dst, MeasurementService...)
		dst = append(dst, tag...)
		f := fields{dst: dst}
		f.bool("on", s.On)
		f.string("clock", clock)
		dst = f.end(s.T.UnixNano())
	}
	points[idxService] = len(keep)

	keep = lastOfEachTime(len(b.Door), func(i int) int64 { return b.Door[i].T.UnixNano() })
	collisions[idxDoor] = len(b.Door) - len(keep)
	for _, i := range keep {
		d := &b.Door[i]
		dst = append(dst, MeasurementDoor...)
		dst = append(dst, tag...)
		f := fields{dst: dst}
		f.bool("open", d.Open)
		f.string("clock", clock)
		dst = f.end(d.T.UnixNano())
	}
	points[idxDoor] = len(keep)

	// A warning's series is its vehicle, kind, rule and site: two warnings of one batch at the
	// same time differ in one of them, or are the same point (only the last is kept).
	keep = lastOfEachWarning(b.Warnings)
	collisions[idxWarning] = len(b.Warnings) - len(keep)
	for _, i := range keep {
		w := &b.Warnings[i]
		// Tags in the order of their keys, as InfluxDB keeps them: a line whose tags are not
		// sorted costs influxd a sort and a rebuilt series key per point.
		dst = append(dst, MeasurementWarning...)
		dst = append(dst, ",kind="...)
		dst = appendTagValue(dst, string(w.Kind))
		dst = append(dst, ",rule="...)
		dst = appendTagValue(dst, w.Rule)
		if w.Site != "" { // an empty tag value is no tag in line protocol
			dst = append(dst, ",site="...)
			dst = appendTagValue(dst, w.Site)
		}
		dst = append(dst, tag...)
		f := fields{dst: dst}
		f.optFloat("distance_m", w.DistanceM)
		f.optFloat("value", w.Value)
		f.optFloat("limit", w.Limit)
		f.string("clock", clock)
		dst = f.end(w.T.UnixNano())
	}
	points[idxWarning] = len(keep)

	dst = append(dst, MeasurementBatch...)
	dst = append(dst, tag...)
	f := fields{dst: dst}
	f.string("epoch", b.Epoch)
	f.int("seq", int64(b.Seq))
	f.string("sent_at", b.SentAt.String())
	f.string("received_at", wire.NewTime(receivedAt).String())
	f.float("lag_s", receivedAt.Sub(b.SentAt.Time).Seconds())
	f.string("clock", clock)
	f.int("n_gps", int64(len(b.GPS)))
	f.int("n_tacho", int64(len(b.Tacho)))
	f.int("n_sound", int64(len(b.Sound)))
	f.int("n_service", int64(len(b.Service)))
	f.int("n_door", int64(len(b.Door)))
	f.int("n_warning", int64(len(b.Warnings)))
	f.int("bytes", int64(size))
	f.optString("kid", b.Kid)
	if b.Sig != "" {
		f.bool("signed", true)
	}
	dst = f.end(BatchTimestamp(b.SentAt.Time, b.Epoch, b.Seq))
	points[idxBatch] = 1
	return dst, points, collisions, nil
}

// lastOfEachTime returns the indexes 0..n-1 to write so that of several readings with the same
// time only the last one is kept, in their original order.
func lastOfEachTime(n int, t func(int) int64) []int {
	keep := make([]int, 0, n)
	increasing := true
	for i := range n {
		if i > 0 && t(i) <= t(i-1) {
			increasing = false
			break
		}
	}
	if increasing {
		for i := range n {
			keep = append(keep, i)
		}
		return keep
	}
	last := make(map[int64]int, n)
	for i := range n {
		last[t(i)] = i
	}
	for i := range n {
		if last[t(i)] == i {
			keep = append(keep, i)
		}
	}
	return keep
}

// lastOfEachWarning returns the indexes of the warnings to write: of several with the same time,
// kind, rule and site (one InfluxDB point), only the last, in their original order. A batch
// holds at most wire.MaxWarnings.
func lastOfEachWarning(ws []wire.Warning) []int {
	keep := make([]int, 0, len(ws))
	for i := range ws {
		later := false
		for j := i + 1; j < len(ws) && !later; j++ {
			later = ws[j].T == ws[i].T && ws[j].Kind == ws[i].Kind && ws[j].Rule == ws[i].Rule && ws[j].Site == ws[i].Site
		}
		if !later {
			keep = append(keep, i)
		}
	}
	return keep
}

// quarantineRecord is a rejected payload, as stored and published.
type quarantineRecord struct {
	wire.Quarantine
	vehicle   string // from the topic, "" when the topic names no valid vehicle
	size      int    // length of the whole payload
	duplicate bool   // MQTT DUP flag
	payload   []byte // cut at wire.QuarantineCut
}

// newQuarantine builds the record of a payload rejected for err.
func newQuarantine(topic string, payload []byte, receivedAt time.Time, duplicate bool, err error) *quarantineRecord {
	reason := wire.ReasonOf(err)
	if reason == "" {
		reason = wire.ReasonBadValue
	}
	var detail string
	var we *wire.Error
	if errors.As(err, &we) {
		detail = we.Detail
	} else {
		detail = err.Error()
	}
	q := &quarantineRecord{
		Quarantine: wire.Quarantine{
			Reason:     reason,
			Detail:     detail,
			Topic:      topic,
			ReceivedAt: wire.NewTime(receivedAt),
		},
		size:      len(payload),
		duplicate: duplicate,
		payload:   payload,
	}
	// A vehicle the registry does not know is no tag: made-up ids would grow InfluxDB's series
	// (its topic field still names it).
	if v, kind, err := wire.VehicleFromTopic(topic); err == nil && kind == "telemetry" && reason != wire.ReasonUnknownVehicle {
		q.vehicle = v
	}
	if len(payload) > wire.QuarantineCut {
		q.payload = payload[:wire.QuarantineCut]
		q.Truncated = true
	}
	q.PayloadB64 = base64.StdEncoding.EncodeToString(q.payload)
	return q
}

// unknownVehicle names the quarantine topic of a payload whose topic names no valid vehicle.
const unknownVehicle = "_unknown"

// mqttTopic is where the record is published (wire.QuarantineTopic).
func (q *quarantineRecord) mqttTopic() string {
	if q.vehicle == "" {
		return wire.QuarantineTopic(unknownVehicle)
	}
	return wire.QuarantineTopic(q.vehicle)
}

// encodeQuarantine appends the quarantine line of q at timestamp ts (ns) to dst.
func encodeQuarantine(dst []byte, q *quarantineRecord, ts int64) []byte {
	dst = append(dst, MeasurementQuarantine...)
	dst = append(dst, ",reason="...)
	dst = appendTagValue(dst, string(q.Reason))
	if q.vehicle != "" {
		dst = append(dst, ",vehicle="...)
		dst = append(dst, q.vehicle...)
	}
	f := fields{dst: dst}
	f.string("topic", q.Topic)
	f.optString("detail", q.Detail)
	if p, ok := utf8Prefix(q.payload, q.Truncated); ok {
		f.string("payload", p)
	} else {
		// Not UTF-8: a string field cannot hold it faithfully.
		f.string("payload_b64", q.PayloadB64)
	}
	f.int("bytes", int64(q.size))
	if q.Truncated {
		f.bool("truncated", true)
	}
	if q.duplicate {
		f.bool("dup", true)
	}
	return f.end(ts)
}

// utf8Prefix returns p as a string when it is valid UTF-8 — when truncated, but for the bytes of
// a rune cut at its end by the truncation at wire.QuarantineCut.
func utf8Prefix(p []byte, truncated bool) (string, bool) {
	if !truncated {
		return string(p), utf8.Valid(p)
	}
	for n := len(p); n >= 0 && n >= len(p)-(utf8.UTFMax-1); n-- {
		if utf8.Valid(p[:n]) {
			return string(p[:n]), true
		}
	}
	return "", false
}

// appendTagValue escapes a tag value (commas, equals signs, spaces).
func appendTagValue(dst []byte, s string) []byte {
	for i := 0; i < len(s); i++ {
		switch c := s[i]; c {
		case ',', '=', ' ', '\\':
			dst = append(dst, '\\', c)
		case '\n':
			dst = append(dst, ' ')
		default:
			dst = append(dst, c)
		}
	}
	return dst
}

// fields appends the field set and timestamp of one line.
type fields struct {
	dst []byte
	n   int
}

func (f *fields) key(k string) {
	if f.n == 0 {
		f.dst = append(f.dst, ' ')
	} else {
		f.dst = append(f.dst, ',')
	}
	f.n++
	f.dst = append(f.dst, k...)
	f.dst = append(f.dst, '=')
}

// float writes the shortest decimal that reads back as exactly v: nothing is rounded.
func (f *fields) float(k string, v float64) {
	f.key(k)
	f.dst = strconv.AppendFloat(f.dst, v, 'f', -1, 64)
}

func (f *fields) optFloat(k string, v *float64) {
	if v != nil {
		f.float(k, *v)
	}
}

func (f *fields) int(k string, v int64) {
	f.key(k)
	f.dst = strconv.AppendInt(f.dst, v, 10)
	f.dst = append(f.dst, 'i')
}

func (f *fields) bool(k string, v bool) {
	f.key(k)
	f.dst = strconv.AppendBool(f.dst, v)
}

func (f *fields) string(k, v string) {
	f.key(k)
	f.dst = append(f.dst, '"')
	for i := 0; i < len(v); i++ {
		if c := v[i]; c == '"' || c == '\\' {
			f.dst = append(f.dst, '\\')
		}
		f.dst = append(f.dst, v[i])
	}
	f.dst = append(f.dst, '"')
}

func (f *fields) optString(k, v string) {
	if v != "" {
		f.string(k, v)
	}
}

// end appends the timestamp (ns) and the newline.
func (f *fields) end(ts int64) []byte {
	if f.n == 0 {
		panic(fmt.Sprintf("archive: line without fields: %q", f.dst))
	}
	f.dst = append(f.dst, ' ')
	f.dst = strconv.AppendInt(f.dst, ts, 10)
	return append(f.dst, '\n')
}
