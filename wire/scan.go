package wire

import (
	"math"
	"strconv"
	"sync"
	"time"
)

// scanBatch reads a batch in the canonical shape without reflection: one JSON object whose
// known members appear at most once, spelt exactly, with values of their type, strings without
// escapes and numbers that fit; unknown members are skipped (after checking their syntax).
// ok is false for any other input, which unmarshalBatch then hands to reflectBatch: scanBatch
// never decides an error, so the reasons and details of rejections stay encoding/json's.
//
// It must return exactly what reflectBatch returns whenever ok is true (FuzzScanBatch). The
// optional numbers of a batch point into a few shared blocks rather than one allocation each.
func scanBatch(p []byte) (b *Batch, m missing, ok bool) {
	s := scanPool.Get().(*scanner)
	defer s.release()
	s.p, s.i = p, 0
	b = new(Batch)
	m = noneMissing
	if !s.batch(b, &m) {
		return nil, noneMissing, false
	}
	s.ws()
	if s.i != len(s.p) {
		return nil, noneMissing, false
	}
	b.GPS = cloneOrNil(s.gps)
	b.Tacho = cloneOrNil(s.tacho)
	b.Sound = cloneOrNil(s.sound)
	b.Service = cloneOrNil(s.service)
	b.Door = cloneOrNil(s.door)
	b.Warnings = cloneOrNil(s.warnings)
	return b, m, true
}

// scanner is the state of scanBatch; its slices are scratch space reused between batches.
type scanner struct {
	p       []byte
	i       int
	gps     []GPS
	tacho   []Tacho
	sound   []Sound
	service []Service
	door    []Door
	// warnings is scratch space like the readings'; reuse drops it above MaxReadings entries.
	warnings []Warning
	floats   []float64 // the current block the optional numbers point into
	ints     []int
}

var scanPool = sync.Pool{New: func() any { return new(scanner) }}

// release returns s to the pool, without the space a payload of more than MaxReadings
// readings made it take.
func (s *scanner) release() {
	s.p = nil
	s.gps = reuse(s.gps)
	s.tacho = reuse(s.tacho)
	s.sound = reuse(s.sound)
	s.service = reuse(s.service)
	s.door = reuse(s.door)
	s.warnings = reuse(s.warnings)
	s.floats, s.ints = nil, nil // owned by the batch now
	scanPool.Put(s)
}

func reuse[T any](s []T) []T {
	if cap(s) > MaxReadings {
		return nil
	}
	clear(s)
	return s[:0]
}

func cloneOrNil[T any](s []T) []T {
	if len(s) == 0 {
		return nil
	}
	return append(make([]T, 0, len(s)), s...)
}

// Blocks of optional numbers grow from blockMin to blockMax entries: a batch of one reading
// holds little memory, and a batch of 600 needs few allocations.
const (
	blockMin = 16
	blockMax = 512
)

func (s *scanner) float(v float64) *float64 {
	if len(s.floats) == cap(s.floats) {
		s.floats = make([]float64, 0, min(max(2*cap(s.floats), blockMin), blockMax))
	}
	s.floats = append(s.floats, v)
	return &s.floats[len(s.floats)-1]
}

func (s *scanner) int(v int) *int {
	if len(s.ints) == cap(s.ints) {
		s.ints = make([]int, 0, min(max(2*cap(s.ints), blockMin), blockMax))
	}
	s.ints = append(s.ints, v)
	return &s.ints[len(s.ints)-1]
}

func (s *scanner) ws() {
	for s.i < len(s.p) {
		switch s.p[s.i] {
		case ' ', '\t', '\r', '\n':
			s.i++
		default:
			return
		}
	}
}

// next skips white space and returns the next byte, or 0 at the end.
func (s *scanner) next() byte {
	s.ws()
	if s.i < len(s.p) {
		return s.p[s.i]
	}
	return 0
}

// object reads the members of an object, calling member with each name (the raw bytes between
// the quotes) with the scanner on its value. A name with an escape or a byte outside ASCII is
// refused: encoding/json could match it to a field by Unicode case folding.
func (s *scanner) object(member func(name []byte) bool) bool {
	if s.next() != '{' {
		return false
	}
	s.i++
	if s.next() == '}' {
		s.i++
		return true
	}
	for {
		if s.next() != '"' {
			return false
		}
		start := s.i + 1
		end := start
		for end < len(s.p) && s.p[end] != '"' {
			if c := s.p[end]; c == '\\' || c < 0x20 || c >= 0x80 {
				return false
			}
			end++
		}
		if end == len(s.p) {
			return false
		}
		s.i = end + 1
		if s.next() != ':' {
			return false
		}
		s.i++
		s.ws()
		if !member(s.p[start:end]) {
			return false
		}
		switch s.next() {
		case ',':
			s.i++
		case '}':
			s.i++
			return true
		default:
			return false
		}
	}
}

// array reads an array of objects, calling elem for each element with the scanner on it.
// null reads as no elements.
func (s *scanner) array(elem func() bool) bool {
	if s.null() {
		return true
	}
	if s.next() != '[' {
		return false
	}
	s.i++
	if s.next() == ']' {
		s.i++
		return true
	}
	for {
		s.ws()
		if !elem() {
			return false
		}
		switch s.next() {
		case ',':
			s.i++
		case ']':
			s.i++
			return true
		default:
			return false
		}
	}
}

// null consumes a null literal.
func (s *scanner) null() bool {
	if len(s.p)-s.i >= 4 && string(s.p[s.i:s.i+4]) == "null" {
		s.i += 4
		return true
	}
	return false
}

// member tells, for the members of one object, whether a name is known (its bit in seen) and
// whether it was seen before.
type members struct {
	names []string
	seen  uint32
}

// match returns the index of name among the known names, or -1 for an unknown name; ok is
// false for a duplicate or a name that differs from a known one only in case.
func (ms *members) match(name []byte) (i int, ok bool) {
	for i, n := range ms.names {
		if string(name) == n {
			if ms.seen&(1<<i) != 0 {
				return i, false
			}
			ms.seen |= 1 << i
			return i, true
		}
	}
	for _, n := range ms.names {
		if equalFoldASCII(name, n) {
			return -1, false
		}
	}
	return -1, true
}

func equalFoldASCII(a []byte, b string) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range len(a) {
		x, y := a[i], b[i]
		if 'A' <= x && x <= 'Z' {
			x += 'a' - 'A'
		}
		if 'A' <= y && y <= 'Z' {
			y += 'a' - 'A'
		}
		if x != y {
			return false
		}
	}
	return true
}

var (
	batchNames   = []string{"v", "vehicle", "epoch", "seq", "sent_at", "clock", "gps", "tacho", "sound", "service", "door", "kid", "sig", "warnings"}
	gpsNames     = []string{"t", "lat", "lon", "speed_kmh", "course_deg", "hdop", "sats", "fix", "alt_m"}
	tachoNames   = []string{"t", "speed_kmh", "odometer_km", "card"}
	soundNames   = []string{"t", "laeq_db", "lamax_db", "dur_s"}
	serviceNames = []string{"t", "on"}
	doorNames    = []string{"t", "open"}
	warningNames = []string{"t", "kind", "rule", "site", "distance_m", "value", "limit"}
)

func (s *scanner) batch(b *Batch, m *missing) bool {
	ms := members{names: batchNames}
	return s.object(func(name []byte) bool {
		i, ok := ms.match(name)
		if !ok {
			return false
		}
		switch i {
		case 0:
			return s.intValue(&b.V)
		case 1:
			return s.stringValue(&b.Vehicle)
		case 2:
			return s.stringValue(&b.Epoch)
		case 3:
			return s.uintValue(&b.Seq)
		case 4:
			return s.timeValue(&b.SentAt)
		case 5:
			var c string
			if !s.stringValue(&c) {
				return false
			}
			b.Clock = Clock(c)
			return true
		case 6:
			return s.array(func() bool { return s.gpsReading() })
		case 7:
			return s.array(func() bool { return s.tachoReading() })
		case 8:
			return s.array(func() bool { return s.soundReading() })
		case 9:
			return s.array(func() bool {
				var r Service
				var set bool
				ok := s.switchReading(serviceNames, &r.T, &r.On, &set)
				if ok && !set && m.service < 0 {
					m.service = len(s.service)
				}
				s.service = append(s.service, r)
				return ok
			})
		case 10:
			return s.array(func() bool {
				var r Door
				var set bool
				ok := s.switchReading(doorNames, &r.T, &r.Open, &set)
				if ok && !set && m.door < 0 {
					m.door = len(s.door)
				}
				s.door = append(s.door, r)
				return ok
			})
		case 11:
			return s.stringValue(&b.Kid)
		case 12:
			return s.stringValue(&b.Sig)
		case 13:
			return s.array(func() bool { return s.warning() })
		}
		return s.skip(0)
	})
}

func (s *scanner) warning() bool {
	var w Warning
	if s.null() {
		s.warnings = append(s.warnings, w)
		return true
	}
	ms := members{names: warningNames}
	ok := s.object(func(name []byte) bool {
		i, ok := ms.match(name)
		if !ok {
			return false
		}
		switch i {
		case 0:
			return s.timeValue(&w.T)
		case 1:
			var k string
			if !s.stringValue(&k) {
				return false
			}
			w.Kind = WarningKind(k)
			return true
		case 2:
			return s.stringValue(&w.Rule)
		case 3:
			return s.stringValue(&w.Site)
		case 4:
			return s.floatValue(&w.DistanceM)
		case 5:
			return s.floatValue(&w.Value)
		case 6:
			return s.floatValue(&w.Limit)
		}
		return s.skip(0)
	})
	s.warnings = append(s.warnings, w)
	return ok
}

func (s *scanner) gpsReading() bool {
	if s.null() {
		s.gps = append(s.gps, GPS{Lat: math.NaN(), Lon: math.NaN()})
		return true
	}
	g := GPS{Lat: math.NaN(), Lon: math.NaN()}
	ms := members{names: gpsNames}
	ok := s.object(func(name []byte) bool {
		i, ok := ms.match(name)
		if !ok {
			return false
		}
		switch i {
		case 0:
			return s.timeValue(&g.T)
		case 1:
			return s.presentFloat(&g.Lat)
		case 2:
			return s.presentFloat(&g.Lon)
		case 3:
			return s.floatValue(&g.SpeedKmh)
		case 4:
			return s.floatValue(&g.CourseDeg)
		case 5:
			return s.floatValue(&g.HDOP)
		case 6:
			return s.intPtrValue(&g.Sats)
		case 7:
			var f string
			if !s.stringValue(&f) {
				return false
			}
			g.Fix = Fix(f)
			return true
		case 8:
			return s.floatValue(&g.AltM)
		}
		return s.skip(0)
	})
	s.gps = append(s.gps, g)
	return ok
}

func (s *scanner) tachoReading() bool {
	var r Tacho
	if s.null() {
		s.tacho = append(s.tacho, r)
		return true
	}
	ms := members{names: tachoNames}
	ok := s.object(func(name []byte) bool {
		i, ok := ms.match(name)
		if !ok {
			return false
		}
		switch i {
		case 0:
			return s.timeValue(&r.T)
		case 1:
			return s.floatValue(&r.SpeedKmh)
		case 2:
			return s.floatValue(&r.OdometerKm)
		case 3:
			return s.stringValue(&r.Card)
		}
		return s.skip(0)
	})
	s.tacho = append(s.tacho, r)
	return ok
}

func (s *scanner) soundReading() bool {
	var r Sound
	if s.null() {
		s.sound = append(s.sound, r)
		return true
	}
	ms := members{names: soundNames}
	ok := s.object(func(name []byte) bool {
		i, ok := ms.match(name)
		if !ok {
			return false
		}
		switch i {
		case 0:
			return s.timeValue(&r.T)
		case 1:
			return s.floatValue(&r.LAeqDB)
		case 2:
			return s.floatValue(&r.LAmaxDB)
		case 3:
			return s.floatValue(&r.DurS)
		}
		return s.skip(0)
	})
	s.sound = append(s.sound, r)
	return ok
}

// switchReading reads a service or door change: names are its time's and its state's; set
// tells whether the state was present (null counts as absent).
func (s *scanner) switchReading(names []string, t *Time, state, set *bool) bool {
	if s.null() {
		return true
	}
	ms := members{names: names}
	return s.object(func(name []byte) bool {
		i, ok := ms.match(name)
		if !ok {
			return false
		}
		switch i {
		case 0:
			return s.timeValue(t)
		case 1:
			if s.null() {
				return true
			}
			if !s.boolValue(state) {
				return false
			}
			*set = true
			return true
		}
		return s.skip(0)
	})
}

// rawString returns the bytes between the quotes of a string without escapes.
func (s *scanner) rawString() ([]byte, bool) {
	if s.i >= len(s.p) || s.p[s.i] != '"' {
		return nil, false
	}
	start := s.i + 1
	for j := start; j < len(s.p); j++ {
		switch c := s.p[j]; {
		case c == '"':
			s.i = j + 1
			return s.p[start:j], true
		case c == '\\' || c < 0x20:
			return nil, false
		}
	}
	return nil, false
}

// stringValue reads a string; null leaves v alone, as encoding/json does.
func (s *scanner) stringValue(v *string) bool {
	if s.null() {
		return true
	}
	r, ok := s.rawString()
	if !ok {
		return false
	}
	*v = intern(r)
	return true
}

// intern returns the string of the enum values without allocating.
func intern(b []byte) string {
	switch string(b) {
	case "":
		return ""
	case "gps":
		return "gps"
	case "rtc":
		return "rtc"
	case "system":
		return "system"
	case "none":
		return "none"
	case "2d":
		return "2d"
	case "3d":
		return "3d"
	case "dgps":
		return "dgps"
	case "rtk":
		return "rtk"
	case "estimated":
		return "estimated"
	case "site_sound":
		return "site_sound"
	case "speed_near":
		return "speed_near"
	case "speed_over":
		return "speed_over"
	case "hours_end":
		return "hours_end"
	case "itinerary":
		return "itinerary"
	case "document":
		return "document"
	}
	return string(b)
}

func (s *scanner) timeValue(t *Time) bool {
	if s.null() {
		*t = Time{}
		return true
	}
	r, ok := s.rawString()
	if !ok {
		return false
	}
	*t, ok = scanTime(r)
	return ok
}

func (s *scanner) boolValue(v *bool) bool {
	switch {
	case len(s.p)-s.i >= 4 && string(s.p[s.i:s.i+4]) == "true":
		*v = true
		s.i += 4
		return true
	case len(s.p)-s.i >= 5 && string(s.p[s.i:s.i+5]) == "false":
		*v = false
		s.i += 5
		return true
	}
	return false
}

// number returns a JSON number token; integer is false when it has a fraction or an exponent.
func (s *scanner) number() (tok []byte, integer, ok bool) {
	p, start := s.p, s.i
	j := start
	if j < len(p) && p[j] == '-' {
		j++
	}
	switch {
	case j < len(p) && p[j] == '0':
		j++
	case j < len(p) && '1' <= p[j] && p[j] <= '9':
		for j < len(p) && '0' <= p[j] && p[j] <= '9' {
			j++
		}
	default:
		return nil, false, false
	}
	integer = true
	if j < len(p) && p[j] == '.' {
		integer = false
		j++
		d := j
		for j < len(p) && '0' <= p[j] && p[j] <= '9' {
			j++
		}
		if j == d {
			return nil, false, false
		}
	}
	if j < len(p) && (p[j] == 'e' || p[j] == 'E') {
		integer = false
		j++
		if j < len(p) && (p[j] == '+' || p[j] == '-') {
			j++
		}
		d := j
		for j < len(p) && '0' <= p[j] && p[j] <= '9' {
			j++
		}
		if j == d {
			return nil, false, false
		}
	}
	s.i = j
	return p[start:j], integer, true
}

func (s *scanner) float64() (float64, bool) {
	tok, _, ok := s.number()
	if !ok {
		return 0, false
	}
	v, err := strconv.ParseFloat(string(tok), 64)
	return v, err == nil
}

// presentFloat reads a required number (lat, lon): null leaves v alone (NaN, absent).
func (s *scanner) presentFloat(v *float64) bool {
	if s.null() {
		return true
	}
	f, ok := s.float64()
	*v = f
	return ok
}

func (s *scanner) floatValue(v **float64) bool {
	if s.null() {
		*v = nil
		return true
	}
	f, ok := s.float64()
	if !ok {
		return false
	}
	*v = s.float(f)
	return true
}

func (s *scanner) intValue(v *int) bool {
	if s.null() {
		return true
	}
	tok, integer, ok := s.number()
	if !ok || !integer {
		return false
	}
	n, err := strconv.ParseInt(string(tok), 10, strconv.IntSize)
	*v = int(n)
	return err == nil
}

func (s *scanner) intPtrValue(v **int) bool {
	if s.null() {
		*v = nil
		return true
	}
	var n int
	if !s.intValue(&n) {
		return false
	}
	*v = s.int(n)
	return true
}

func (s *scanner) uintValue(v *uint64) bool {
	if s.null() {
		return true
	}
	tok, integer, ok := s.number()
	if !ok || !integer {
		return false
	}
	n, err := strconv.ParseUint(string(tok), 10, 64)
	*v = n
	return err == nil
}

// maxSkipDepth bounds the nesting of an unknown member the scanner skips; deeper values go
// to encoding/json, which has its own limit.
const maxSkipDepth = 32

// skip checks and skips one JSON value.
func (s *scanner) skip(depth int) bool {
	if depth > maxSkipDepth {
		return false
	}
	switch s.next() {
	case '{':
		return s.object(func([]byte) bool { return s.skip(depth + 1) })
	case '[':
		s.i++
		if s.next() == ']' {
			s.i++
			return true
		}
		for {
			if !s.skip(depth + 1) {
				return false
			}
			switch s.next() {
			case ',':
				s.i++
			case ']':
				s.i++
				return true
			default:
				return false
			}
		}
	case '"':
		return s.skipString()
	case 't', 'f':
		var b bool
		return s.boolValue(&b)
	case 'n':
		return s.null()
	default:
		_, _, ok := s.number()
		return ok
	}
}

// skipString skips a string, checking its escapes.
func (s *scanner) skipString() bool {
	p := s.p
	for j := s.i + 1; j < len(p); j++ {
		switch c := p[j]; {
		case c == '"':
			s.i = j + 1
			return true
		case c < 0x20:
			return false
		case c == '\\':
			j++
			if j == len(p) {
				return false
			}
			switch p[j] {
			case '"', '\\', '/', 'b', 'f', 'n', 'r', 't':
			case 'u':
				if j+4 >= len(p) {
					return false
				}
				for _, h := range p[j+1 : j+5] {
					if !('0' <= h && h <= '9' || 'a' <= h && h <= 'f' || 'A' <= h && h <= 'F') {
						return false
					}
				}
				j += 4
			default:
				return false
			}
		}
	}
	return false
}

// scanTime parses a wire time ("2026-11-29T15:00:00.25Z") as ParseTime does; ok is false for
// anything it does not accept, which ParseTime then explains.
func scanTime(b []byte) (Time, bool) {
	n := len(b)
	if n != 20 && (n < 22 || n > 24) || b[n-1] != 'Z' {
		return Time{}, false
	}
	digits := func(i, k int) (int, bool) {
		v := 0
		for _, c := range b[i : i+k] {
			if c < '0' || c > '9' {
				return 0, false
			}
			v = v*10 + int(c-'0')
		}
		return v, true
	}
	if b[4] != '-' || b[7] != '-' || b[10] != 'T' || b[13] != ':' || b[16] != ':' {
		return Time{}, false
	}
	year, ok1 := digits(0, 4)
	month, ok2 := digits(5, 2)
	day, ok3 := digits(8, 2)
	hour, ok4 := digits(11, 2)
	minute, ok5 := digits(14, 2)
	sec, ok6 := digits(17, 2)
	if !(ok1 && ok2 && ok3 && ok4 && ok5 && ok6) {
		return Time{}, false
	}
	ms := 0
	if n > 20 {
		if b[19] != '.' {
			return Time{}, false
		}
		f, ok := digits(20, n-21)
		if !ok {
			return Time{}, false
		}
		ms = f
		for range 24 - n {
			ms *= 10
		}
	}
	if month < 1 || month > 12 || day < 1 || day > daysIn(month, year) || hour > 23 || minute > 59 || sec > 59 {
		return Time{}, false
	}
	return Time{time.Date(year, time.Month(month), day, hour, minute, sec, ms*int(time.Millisecond), time.UTC)}, true
}

func daysIn(month, year int) int {
	switch month {
	case 2:
		if year%4 == 0 && (year%100 != 0 || year%400 == 0) {
			return 29
		}
		return 28
	case 4, 6, 9, 11:
		return 30
	}
	return 31
}
