package rules

import (
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"slices"
	"time"

	"github.com/trenzinho/trenzinho/wire"
)

// A vehicle snapshot (Drain, Restore) is written once a second per vehicle under load, so its
// cost is most of what a commit costs. The bulky, hot parts of the state — its times and last
// fixes, the cursors, the minute of sound samples and the detectors — are written in a compact
// binary form; the rest of the vehicle (its open episodes, status, faults, counters and names)
// stays JSON, so that a field added to Vehicle is kept without touching this file. TestSnapshotCodecCoversFields fails
// when a field is added to one of the types written in binary.
//
// Layout (all integers varints, strings and byte strings length-prefixed):
//
//	magic "\x00TS" version(1)
//	scalars:   the vehicle's times (last_t, tacho_t, sound_t, stopped_since, boarding_stop_at,
//	           card_t, last_seen), fix, last_gps, tacho_kmh, laeq_db
//	cursors:   n, then per epoch (sorted): epoch, next, len(above), above as deltas
//	sounds:    n, then per sample: t (seconds as a delta from the previous sample), db, dur_s
//	detectors: n, then per rule (sorted): rule, the detector's fields, its pending evidence
//	rest:      the JSON of the vehicle without the parts above
//
// Snapshots written before this format are JSON documents (they start with '{'); Restore reads
// both. Times are written as seconds and nanoseconds since the Unix epoch and read back in UTC,
// which is how the JSON form read them back too (device times are UTC on the wire).

// snapshotMagic starts every binary snapshot; a JSON snapshot starts with '{'.
const snapshotMagic = "\x00TS\x01"

// errSnapshot is a binary snapshot that does not decode.
var errSnapshot = errors.New("malformed vehicle snapshot")

// marshalSnapshot returns the snapshot of v (v.forgetSettled must have run).
func marshalSnapshot(v *Vehicle, buf []byte) ([]byte, error) {
	rest := *v
	rest.Cursors, rest.Sounds, rest.Detectors = nil, nil, nil
	rest.LastT, rest.TachoT, rest.SoundT, rest.StoppedSince, rest.BoardingStopAt, rest.CardT, rest.LastSeen =
		time.Time{}, time.Time{}, time.Time{}, time.Time{}, time.Time{}, time.Time{}, time.Time{}
	rest.Fix, rest.LastGPS, rest.TachoKmh, rest.LAeqDB = nil, nil, nil, nil
	doc, err := json.Marshal(&rest)
	if err != nil {
		return nil, err
	}
	w := snapWriter{b: append(buf, snapshotMagic...)}

	for _, t := range [...]time.Time{v.LastT, v.TachoT, v.SoundT, v.StoppedSince, v.BoardingStopAt, v.CardT, v.LastSeen} {
		w.time(t)
	}
	w.fix(v.Fix)
	w.fix(v.LastGPS)
	w.optFloat(v.TachoKmh)
	w.optFloat(v.LAeqDB)

	epochs := make([]string, 0, len(v.Cursors))
	for k := range v.Cursors {
		epochs = append(epochs, k)
	}
	slices.Sort(epochs)
	w.uvarint(uint64(len(epochs)))
	for _, k := range epochs {
		c := v.Cursors[k]
		w.str(k)
		if c == nil {
			c = &Cursor{}
		}
		w.uvarint(c.Next)
		w.uvarint(uint64(len(c.Above)))
		prev := uint64(0)
		for _, s := range c.Above {
			w.uvarint(s - prev) // sorted ascending (Cursor.mark)
			prev = s
		}
	}

	w.uvarint(uint64(len(v.Sounds)))
	var prevSec int64
	for i := range v.Sounds {
		s := &v.Sounds[i]
		sec := s.T.Unix()
		w.varint(sec - prevSec)
		w.uvarint(uint64(s.T.Nanosecond()))
		prevSec = sec
		w.float(s.DB)
		w.float(s.DurS)
	}

	rules := make([]string, 0, len(v.Detectors))
	for k := range v.Detectors {
		rules = append(rules, k)
	}
	slices.Sort(rules)
	w.uvarint(uint64(len(rules)))
	for _, k := range rules {
		d := v.Detectors[k]
		if d == nil {
			d = &detector{}
		}
		w.str(k)
		w.time(d.RunStart)
		w.time(d.LastSample)
		w.time(d.LastTrue)
		w.time(d.ClearStart)
		w.float(d.Peak)
		w.time(d.PeakAt)
		w.float(d.PeakLat)
		w.float(d.PeakLon)
		w.str(d.EpisodeID)
		w.time(d.LastEvidence)
		w.uvarint(uint64(len(d.Pending)))
		for i := range d.Pending {
			ev := &d.Pending[i]
			w.str(ev.Kind)
			w.str(ev.Epoch)
			w.uvarint(ev.Seq)
			w.time(ev.T.Time)
			w.float(ev.Value)
			w.str(ev.Unit)
			w.optFloat(ev.Lat)
			w.optFloat(ev.Lon)
		}
	}
	w.b = append(w.b, doc...)
	return w.b, nil
}

// unmarshalSnapshot decodes a snapshot written by marshalSnapshot, or the JSON form written
// before it.
func unmarshalSnapshot(b []byte, v *Vehicle) error {
	if len(b) > 0 && b[0] != snapshotMagic[0] {
		return json.Unmarshal(b, v)
	}
	if len(b) < len(snapshotMagic) || string(b[:len(snapshotMagic)]) != snapshotMagic {
		return fmt.Errorf("%w: unknown format", errSnapshot)
	}
	r := snapReader{b: b[len(snapshotMagic):]}

	var times [7]time.Time
	for i := range times {
		times[i] = r.time()
	}
	fix, lastGPS := r.fix(), r.fix()
	tachoKmh, laeq := r.optFloat(), r.optFloat()

	var cursors map[string]*Cursor
	n := r.count(3)
	if n > 0 {
		cursors = make(map[string]*Cursor, n)
	}
	for range n {
		k := r.str()
		c := &Cursor{Next: r.uvarint()}
		m := r.count(1)
		if m > 0 {
			c.Above = make([]uint64, m)
		}
		prev := uint64(0)
		for i := range m {
			prev += r.uvarint()
			c.Above[i] = prev
		}
		cursors[k] = c
	}

	var sounds []SoundSample
	n = r.count(18)
	if n > 0 {
		sounds = make([]SoundSample, n)
	}
	var sec int64
	for i := range sounds {
		sec += r.varint()
		ns := r.uvarint()
		if ns >= 1e9 {
			r.fail()
		}
		sounds[i] = SoundSample{T: time.Unix(sec, int64(ns)).UTC(), DB: r.float(), DurS: r.float()}
	}

	var dets map[string]*detector
	n = r.count(10)
	if n > 0 {
		dets = make(map[string]*detector, n)
	}
	for range n {
		k := r.str()
		d := &detector{}
		d.RunStart = r.time()
		d.LastSample = r.time()
		d.LastTrue = r.time()
		d.ClearStart = r.time()
		d.Peak = r.float()
		d.PeakAt = r.time()
		d.PeakLat = r.float()
		d.PeakLon = r.float()
		d.EpisodeID = r.str()
		d.LastEvidence = r.time()
		if m := r.count(14); m > 0 {
			d.Pending = make([]Evidence, m)
		}
		for i := range d.Pending {
			ev := &d.Pending[i]
			ev.Kind = r.str()
			ev.Epoch = r.str()
			ev.Seq = r.uvarint()
			ev.T = wire.Time{Time: r.time()}
			ev.Value = r.float()
			ev.Unit = r.str()
			ev.Lat = r.optFloat()
			ev.Lon = r.optFloat()
		}
		dets[k] = d
	}
	if r.err != nil {
		return r.err
	}
	if err := json.Unmarshal(r.b, v); err != nil {
		return err
	}
	v.Cursors, v.Sounds, v.Detectors = cursors, sounds, dets
	v.LastT, v.TachoT, v.SoundT, v.StoppedSince, v.BoardingStopAt, v.CardT, v.LastSeen =
		times[0], times[1], times[2], times[3], times[4], times[5], times[6]
	v.Fix, v.LastGPS, v.TachoKmh, v.LAeqDB = fix, lastGPS, tachoKmh, laeq
	return nil
}

type snapWriter struct{ b []byte }

func (w *snapWriter) uvarint(x uint64) { w.b = binary.AppendUvarint(w.b, x) }
func (w *snapWriter) varint(x int64)   { w.b = binary.AppendVarint(w.b, x) }
func (w *snapWriter) float(f float64) {
	w.b = binary.LittleEndian.AppendUint64(w.b, math.Float64bits(f))
}

func (w *snapWriter) str(s string) {
	w.uvarint(uint64(len(s)))
	w.b = append(w.b, s...)
}

// time writes 0 for the zero time, else 1 + 2×nanoseconds, then the seconds.
func (w *snapWriter) time(t time.Time) {
	if t.IsZero() {
		w.uvarint(0)
		return
	}
	w.uvarint(1 + 2*uint64(t.Nanosecond()))
	w.varint(t.Unix())
}

func (w *snapWriter) optFloat(f *float64) {
	if f == nil {
		w.b = append(w.b, 0)
		return
	}
	w.b = append(w.b, 1)
	w.float(*f)
}

func (w *snapWriter) fix(f *Fix) {
	if f == nil {
		w.b = append(w.b, 0)
		return
	}
	w.b = append(w.b, 1)
	w.time(f.T)
	w.float(f.Lat)
	w.float(f.Lon)
	w.optFloat(f.SpeedKmh)
	w.optFloat(f.Course)
	w.optFloat(f.HDOP)
}

// snapReader reads what snapWriter wrote; after the first error every read returns zero and
// err says what went wrong.
type snapReader struct {
	b   []byte
	err error
}

func (r *snapReader) fail() {
	if r.err == nil {
		r.err = fmt.Errorf("%w: truncated or corrupt", errSnapshot)
	}
	r.b = nil
}

func (r *snapReader) uvarint() uint64 {
	x, n := binary.Uvarint(r.b)
	if n <= 0 {
		r.fail()
		return 0
	}
	r.b = r.b[n:]
	return x
}

func (r *snapReader) varint() int64 {
	x, n := binary.Varint(r.b)
	if n <= 0 {
		r.fail()
		return 0
	}
	r.b = r.b[n:]
	return x
}

// count reads a number of elements each at least size bytes long, refusing one the rest of the
// snapshot cannot hold (a corrupt count must not allocate gigabytes).
func (r *snapReader) count(size int) int {
	n := r.uvarint()
	if n > uint64(len(r.b)/size) {
		r.fail()
		return 0
	}
	return int(n)
}

func (r *snapReader) float() float64 {
	if len(r.b) < 8 {
		r.fail()
		return 0
	}
	f := math.Float64frombits(binary.LittleEndian.Uint64(r.b))
	r.b = r.b[8:]
	return f
}

func (r *snapReader) str() string {
	n := r.uvarint()
	if n > uint64(len(r.b)) {
		r.fail()
		return ""
	}
	s := string(r.b[:n])
	r.b = r.b[n:]
	return s
}

func (r *snapReader) time() time.Time {
	h := r.uvarint()
	if h == 0 {
		return time.Time{}
	}
	ns := (h - 1) / 2
	if ns >= 1e9 || (h-1)%2 != 0 {
		r.fail()
		return time.Time{}
	}
	return time.Unix(r.varint(), int64(ns)).UTC()
}

func (r *snapReader) optFloat() *float64 {
	if len(r.b) < 1 {
		r.fail()
		return nil
	}
	flag := r.b[0]
	r.b = r.b[1:]
	switch flag {
	case 0:
		return nil
	case 1:
		f := r.float()
		return &f
	}
	r.fail()
	return nil
}

func (r *snapReader) fix() *Fix {
	if len(r.b) < 1 || r.b[0] > 1 {
		r.fail()
		return nil
	}
	present := r.b[0] == 1
	r.b = r.b[1:]
	if !present {
		return nil
	}
	return &Fix{T: r.time(), Lat: r.float(), Lon: r.float(), SpeedKmh: r.optFloat(), Course: r.optFloat(), HDOP: r.optFloat()}
}
