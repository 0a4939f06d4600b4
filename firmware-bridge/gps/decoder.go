package gps

import (
	"bufio"
	"bytes"
	"io"
	"time"

	"github.com/trenzinho/trenzinho/wire"
)

// MaxLineLength is the longest input line the decoder reads, in bytes. NMEA 0183 limits a
// sentence to 82 bytes; receivers with extra precision or NMEA 4.x fields write a little
// more, and a line may start with some binary noise, but nothing sound comes near this.
const MaxLineLength = 1024

// Stats counts what a Decoder has seen. The counters only grow.
type Stats struct {
	// Lines is the number of non-empty lines read.
	Lines int64 `json:"lines"`
	// Comments is the number of lines starting with '#'.
	Comments int64 `json:"comments"`
	// Garbage is the number of lines with bytes that are not part of any sentence: no '$'
	// at all, or noise before the first '$'.
	Garbage int64 `json:"garbage"`
	// TooLong is the number of lines longer than MaxLineLength, dropped whole.
	TooLong int64 `json:"too_long"`
	// Sentences is the number of sentences accepted: checksum verified (or absent and
	// Decoder.AcceptNoChecksum set).
	Sentences int64 `json:"sentences"`
	// BadChecksums is the number of sentences whose checksum is wrong or unreadable, or
	// whose text holds bytes that NMEA 0183 does not allow.
	BadChecksums int64 `json:"bad_checksums"`
	// NoChecksum is the number of sentences without a checksum (a truncated sentence
	// looks like one); they are dropped unless Decoder.AcceptNoChecksum is set.
	NoChecksum int64 `json:"no_checksum"`
	// Malformed is the number of accepted sentences with a field that cannot be read,
	// ignored as a whole.
	Malformed int64 `json:"malformed"`
	// Unknown is the number of accepted sentences of types the decoder does not use (GSV,
	// GST, proprietary sentences, …).
	Unknown int64 `json:"unknown_sentences"`
	// InvalidFixes is the number of epochs the receiver reported without a valid fix (RMC
	// status V or mode N, M or S; GGA quality 0, 7 or 8; or no usable position).
	InvalidFixes int64 `json:"invalid_fixes"`
	// Undated is the number of epochs with a valid fix that were dropped because their
	// time or date was unknown.
	Undated int64 `json:"undated"`
	// Duplicates is the number of epochs dropped because a reading with the same time was
	// just returned.
	Duplicates int64 `json:"duplicates"`
	// Readings is the number of readings returned.
	Readings int64 `json:"readings"`
	// Estimated is the number of readings returned with fix "estimated" (dead reckoning).
	Estimated int64 `json:"estimated"`
}

// A Decoder turns the lines of an NMEA 0183 stream into position epochs. The zero value
// is ready to use. A Decoder is not safe for concurrent use.
type Decoder struct {
	// AcceptNoChecksum makes the decoder accept sentences that carry no checksum, as gpsd
	// does. It is off by default because a truncated sentence cannot be told from one
	// without a checksum (see the package documentation).
	AcceptNoChecksum bool

	stats  Stats
	cur    epoch
	fields []string

	// The date of the last dated epoch and its time of day, for epochs that carry no
	// date of their own.
	date    date
	dateTOD time.Duration

	last time.Time // time of the last reading returned
}

// epoch gathers the sentences that share one time of day.
type epoch struct {
	active bool
	timed  bool
	tod    time.Duration

	rmc, gga, vtg, gsa, zda bool // which sentences the epoch holds
	rmcTalker, ggaTalker    string

	r rmc
	g gga
	v vtg
	s gsa
	z zda
}

// Line decodes one line of receiver output and returns the readings of the epochs it
// completed, in order; usually none, or the previous epoch when the line starts a new
// one. The line may end in any mix of CR and LF; Line does not retain it.
func (d *Decoder) Line(line []byte) []wire.GPS {
	line = bytes.TrimRight(line, "\r\n")
	if len(line) > MaxLineLength {
		d.stats.Lines++
		d.stats.TooLong++
		return nil
	}
	line = bytes.TrimSpace(line)
	if len(line) == 0 {
		return nil
	}
	d.stats.Lines++
	if line[0] == '#' {
		d.stats.Comments++
		return nil
	}
	start := bytes.IndexByte(line, '$')
	if start != 0 {
		d.stats.Garbage++
		if start < 0 {
			return nil
		}
	}
	var out []wire.GPS
	for rest := line[start:]; len(rest) > 0; {
		end := bytes.IndexByte(rest[1:], '$') + 1
		if end == 0 {
			end = len(rest)
		}
		out = append(out, d.sentence(bytes.TrimSpace(rest[:end]))...)
		rest = rest[end:]
	}
	return out
}

// Flush completes the current epoch and returns its reading, if it has one. Call it at the
// end of the input, or when the receiver has been silent for longer than an epoch.
func (d *Decoder) Flush() []wire.GPS {
	return d.complete()
}

// Stats returns the counters so far.
func (d *Decoder) Stats() Stats { return d.stats }

// sentence decodes one sentence, s[0] == '$'.
func (d *Decoder) sentence(s []byte) []wire.GPS {
	body, hasSum, ok := checksum(s)
	if !hasSum {
		d.stats.NoChecksum++
		if !d.AcceptNoChecksum {
			return nil
		}
	}
	if !ok {
		d.stats.BadChecksums++
		return nil
	}
	d.stats.Sentences++

	d.fields = d.fields[:0]
	text := string(body)
	for {
		i := indexComma(text)
		if i < 0 {
			d.fields = append(d.fields, text)
			break
		}
		d.fields = append(d.fields, text[:i])
		text = text[i+1:]
	}
	addr, f := d.fields[0], d.fields[1:]
	if len(addr) != 5 || addr[0] == 'P' || !upper(addr) {
		d.stats.Unknown++
		return nil
	}
	talker := addr[:2]

	var (
		out []wire.GPS
		err error
	)
	switch addr[2:] {
	case "RMC":
		var r rmc
		if r, err = parseRMC(f); err == nil {
			out = d.join(r.timed, r.tod)
			if !d.cur.rmc || preferred(talker, d.cur.rmcTalker) {
				d.cur.rmc, d.cur.rmcTalker, d.cur.r = true, talker, r
			}
		}
	case "GGA":
		var g gga
		if g, err = parseGGA(f); err == nil {
			out = d.join(g.timed, g.tod)
			if !d.cur.gga || preferred(talker, d.cur.ggaTalker) {
				d.cur.gga, d.cur.ggaTalker, d.cur.g = true, talker, g
			}
		}
	case "ZDA":
		var z zda
		if z, err = parseZDA(f); err == nil {
			out = d.join(z.timed, z.tod)
			if !d.cur.zda {
				d.cur.zda, d.cur.z = true, z
			}
		}
	case "VTG":
		var v vtg
		if v, err = parseVTG(f); err == nil && d.cur.active && !d.cur.vtg {
			d.cur.vtg, d.cur.v = true, v
		}
	case "GSA":
		var g gsa
		if g, err = parseGSA(f); err == nil && d.cur.active && (!d.cur.gsa || d.cur.s.mode < 2) {
			d.cur.gsa, d.cur.s = true, g
		}
	case "GLL", "GNS":
		i := 4
		if addr[2:] == "GNS" {
			i = 0
		}
		var (
			tod   time.Duration
			timed bool
		)
		if tod, timed, err = timeOnly(f, i); err == nil && timed {
			out = d.join(true, tod)
		}
	default:
		d.stats.Unknown++
	}
	if err != nil {
		d.stats.Malformed++
	}
	return out
}

// indexComma is strings.IndexByte(s, ',') without the import.
func indexComma(s string) int {
	for i := 0; i < len(s); i++ {
		if s[i] == ',' {
			return i
		}
	}
	return -1
}

// upper reports whether s is made of upper-case letters and digits.
func upper(s string) bool {
	for i := 0; i < len(s); i++ {
		if c := s[i]; (c < 'A' || c > 'Z') && (c < '0' || c > '9') {
			return false
		}
	}
	return true
}

// preferred reports whether a sentence from talker replaces one of the same type from
// held: the combined GNSS talker GN wins over a single constellation.
func preferred(talker, held string) bool { return talker == "GN" && held != "GN" }

// join makes the current epoch the one at time of day tod (timed) or an untimed one,
// completing the current epoch if it is another.
func (d *Decoder) join(timed bool, tod time.Duration) []wire.GPS {
	if d.cur.active && d.cur.timed == timed && d.cur.tod == tod {
		return nil
	}
	out := d.complete()
	d.cur = epoch{active: true, timed: timed, tod: tod}
	return out
}

// complete ends the current epoch and returns its reading, if it yields one.
func (d *Decoder) complete() []wire.GPS {
	if !d.cur.active {
		return nil
	}
	e := d.cur
	d.cur = epoch{}
	g, ok := d.reading(&e)
	if !ok {
		return nil
	}
	d.stats.Readings++
	if g.Fix == wire.FixEstimated {
		d.stats.Estimated++
	}
	return []wire.GPS{g}
}

// reading merges an epoch into one reading; ok is false when the epoch is not a valid,
// dated position.
func (d *Decoder) reading(e *epoch) (g wire.GPS, ok bool) {
	if !e.rmc && !e.gga {
		return g, false // ZDA, GLL or GNS alone: nothing to report
	}
	if e.rmc && !e.r.valid || e.gga && e.g.invalid() {
		d.stats.InvalidFixes++
		return g, false
	}
	var pos position
	switch {
	case e.rmc && e.r.pos.ok:
		pos = e.r.pos
	case e.gga && e.g.fix():
		pos = e.g.pos
	}
	if !pos.ok {
		d.stats.InvalidFixes++
		return g, false
	}
	day, ok := d.day(e)
	if !ok {
		d.stats.Undated++
		return g, false
	}
	t := day.Add(e.tod)
	if t.Equal(d.last) {
		d.stats.Duplicates++
		return g, false
	}
	d.last = t

	g = wire.GPS{T: wire.NewTime(t), Lat: pos.lat, Lon: pos.lon}
	switch {
	case e.rmc && e.r.knots != nil:
		g.SpeedKmh = ptr(*e.r.knots * knotKmh)
	case e.vtg && e.v.kmh != nil:
		g.SpeedKmh = ptr(*e.v.kmh)
	case e.vtg && e.v.knots != nil:
		g.SpeedKmh = ptr(*e.v.knots * knotKmh)
	}
	switch {
	case e.rmc && e.r.course != nil:
		g.CourseDeg = ptr(*e.r.course)
	case e.vtg && e.v.course != nil:
		g.CourseDeg = ptr(*e.v.course)
	}
	if e.gga {
		g.HDOP, g.Sats, g.AltM = e.g.hdop, e.g.sats, e.g.altM
	}
	if g.HDOP == nil && e.gsa {
		g.HDOP = e.s.hdop
	}
	g.Fix = fix(e)
	return g, true
}

// day returns the start (UTC midnight) of the epoch's date and remembers it for epochs
// that carry none; ok is false for an untimed epoch or an unknown date.
func (d *Decoder) day(e *epoch) (time.Time, bool) {
	if !e.timed {
		return time.Time{}, false
	}
	var dt date
	switch {
	case e.rmc && e.r.date.known():
		dt = e.r.date
	case e.zda && e.z.date.known():
		dt = e.z.date
	case d.date.known():
		day := d.date.midnight()
		switch diff := e.tod - d.dateTOD; {
		case diff < -12*time.Hour:
			day = day.AddDate(0, 0, 1)
		case diff > 12*time.Hour:
			day = day.AddDate(0, 0, -1)
		}
		dt = date{day.Year(), int(day.Month()), day.Day()}
	default:
		return time.Time{}, false
	}
	d.date, d.dateTOD = dt, e.tod
	return dt.midnight(), true
}

// fix classifies the quality of an epoch's position.
func fix(e *epoch) wire.Fix {
	q := -1
	if e.gga {
		q = e.g.quality
	}
	var mode byte
	if e.rmc {
		mode = e.r.mode
	}
	switch {
	case q == 6 || mode == 'E':
		return wire.FixEstimated
	case q == 4 || q == 5 || mode == 'R' || mode == 'F':
		return wire.FixRTK
	case q == 2 || mode == 'D':
		return wire.FixDGPS
	case e.gsa && e.s.mode == 3:
		return wire.Fix3D
	case e.gsa && e.s.mode == 2:
		return wire.Fix2D
	}
	return ""
}

func ptr[T any](v T) *T { return &v }

// DecodeFile decodes a whole NMEA capture and returns its readings in order with the
// decoder's counters. The error is that of reading r; bad input is only counted.
func DecodeFile(r io.Reader) ([]wire.GPS, Stats, error) {
	var (
		d   Decoder
		out []wire.GPS
	)
	sc := bufio.NewScanner(r)
	sc.Split(ScanLines)
	for sc.Scan() {
		out = append(out, d.Line(sc.Bytes())...)
	}
	out = append(out, d.Flush()...)
	return out, d.Stats(), sc.Err()
}

// ScanLines is a bufio.SplitFunc for receiver output: it splits at CR, LF or any mix of
// them, skips empty lines, and cuts a line that runs past MaxLineLength into a piece of
// MaxLineLength+1 bytes (which Decoder.Line drops as too long) so that a stream without
// line ends never stalls a bufio.Scanner or grows its buffer.
func ScanLines(data []byte, atEOF bool) (advance int, token []byte, err error) {
	i := 0
	for i < len(data) && (data[i] == '\r' || data[i] == '\n') {
		i++
	}
	data = data[i:]
	if j := bytes.IndexAny(data, "\r\n"); j >= 0 {
		return i + j + 1, data[:j], nil
	}
	switch {
	case len(data) > MaxLineLength:
		return i + MaxLineLength + 1, data[:MaxLineLength+1], nil
	case atEOF && len(data) > 0:
		return i + len(data), data, nil
	}
	return i, nil, nil
}
