package gps

import (
	"errors"
	"strconv"
	"time"
)

// errField reports a field that is present but cannot be read.
var errField = errors.New("gps: malformed field")

// knotKmh is one knot in km/h (exact by definition: 1 nautical mile is 1852 m).
const knotKmh = 1.852

// checksum verifies the sentence s, which starts with '$', and returns its body: the text
// between '$' and '*'. hasSum reports whether s carries a checksum at all.
func checksum(s []byte) (body []byte, hasSum, ok bool) {
	star := -1
	for i := len(s) - 1; i > 0; i-- {
		if s[i] == '*' {
			star = i
			break
		}
	}
	if star < 0 {
		return s[1:], false, printable(s[1:])
	}
	body = s[1:star]
	hex := s[star+1:]
	if len(hex) != 2 {
		return nil, true, false
	}
	hi, ok1 := unhex(hex[0])
	lo, ok2 := unhex(hex[1])
	if !ok1 || !ok2 {
		return nil, true, false
	}
	var sum byte
	for _, c := range body {
		sum ^= c
	}
	if sum != hi<<4|lo {
		return nil, true, false
	}
	return body, true, printable(body)
}

// printable reports whether b holds only printable ASCII other than the delimiters '$'
// and '*'.
func printable(b []byte) bool {
	for _, c := range b {
		if c < 0x20 || c > 0x7e || c == '*' || c == '$' {
			return false
		}
	}
	return true
}

func unhex(c byte) (byte, bool) {
	switch {
	case '0' <= c && c <= '9':
		return c - '0', true
	case 'A' <= c && c <= 'F':
		return c - 'A' + 10, true
	case 'a' <= c && c <= 'f':
		return c - 'a' + 10, true
	}
	return 0, false
}

// field returns f[i], or "" when the sentence is shorter.
func field(f []string, i int) string {
	if i < len(f) {
		return f[i]
	}
	return ""
}

// decimal reports whether s is a plain decimal number: an optional sign, digits and at
// most one point, with at least one digit. It rejects what strconv.ParseFloat would
// also accept ("NaN", "Inf", "1e5", "0x1p3", "1_0").
func decimal(s string) bool {
	if s != "" && (s[0] == '-' || s[0] == '+') {
		s = s[1:]
	}
	digits, points := 0, 0
	for i := 0; i < len(s); i++ {
		switch c := s[i]; {
		case '0' <= c && c <= '9':
			digits++
		case c == '.':
			points++
		default:
			return false
		}
	}
	return digits > 0 && points <= 1
}

// number parses an optional decimal field: nil when empty.
func number(s string) (*float64, error) {
	if s == "" {
		return nil, nil
	}
	if !decimal(s) {
		return nil, errField
	}
	v, err := strconv.ParseFloat(s, 64)
	if err != nil {
		return nil, errField
	}
	return &v, nil
}

// nonNegative parses an optional decimal field that cannot be negative.
func nonNegative(s string) (*float64, error) {
	v, err := number(s)
	if err != nil || v == nil {
		return nil, err
	}
	if *v < 0 {
		return nil, errField
	}
	return v, nil
}

// course parses an optional true course in degrees, [0, 360].
func course(s string) (*float64, error) {
	v, err := nonNegative(s)
	if err != nil || v == nil {
		return nil, err
	}
	if *v > 360 {
		return nil, errField
	}
	return v, nil
}

// dop parses an optional dilution of precision; 0 means unknown.
func dop(s string) (*float64, error) {
	v, err := nonNegative(s)
	if err != nil || v == nil || *v == 0 {
		return nil, err
	}
	return v, nil
}

// count parses an optional small unsigned integer: -1 when empty.
func count(s string) (int, error) {
	if s == "" {
		return -1, nil
	}
	if len(s) > 4 {
		return 0, errField
	}
	n := 0
	for i := 0; i < len(s); i++ {
		c := s[i]
		if c < '0' || c > '9' {
			return 0, errField
		}
		n = n*10 + int(c-'0')
	}
	return n, nil
}

// clock parses a time of day hhmmss[.s…]; ok is false when the field is empty. Digits
// beyond the nanosecond are ignored.
func clock(s string) (tod time.Duration, ok bool, err error) {
	if s == "" {
		return 0, false, nil
	}
	if len(s) < 6 {
		return 0, false, errField
	}
	var hms [6]int
	for i := range hms {
		c := s[i]
		if c < '0' || c > '9' {
			return 0, false, errField
		}
		hms[i] = int(c - '0')
	}
	h, m, sec := hms[0]*10+hms[1], hms[2]*10+hms[3], hms[4]*10+hms[5]
	if h > 23 || m > 59 || sec > 60 {
		return 0, false, errField
	}
	tod = time.Duration(h)*time.Hour + time.Duration(m)*time.Minute + time.Duration(sec)*time.Second
	rest := s[6:]
	if rest == "" {
		return tod, true, nil
	}
	if rest[0] != '.' {
		return 0, false, errField
	}
	scale := 100 * time.Millisecond
	for i := 1; i < len(rest); i++ {
		c := rest[i]
		if c < '0' || c > '9' {
			return 0, false, errField
		}
		tod += time.Duration(c-'0') * scale
		scale /= 10
	}
	return tod, true, nil
}

// date is a civil date; the zero value is unknown.
type date struct{ y, m, d int }

func (d date) known() bool { return d.y != 0 }

// midnight returns the start of the date in UTC.
func (d date) midnight() time.Time {
	return time.Date(d.y, time.Month(d.m), d.d, 0, 0, 0, 0, time.UTC)
}

// civil validates a date, returning the zero date for an impossible one.
func civil(y, m, d int) (date, error) {
	t := time.Date(y, time.Month(m), d, 0, 0, 0, 0, time.UTC)
	if m < 1 || m > 12 || d < 1 || t.Day() != d || t.Month() != time.Month(m) {
		return date{}, errField
	}
	return date{y, m, d}, nil
}

// ddmmyy parses the RMC date. Two-digit years 80–99 are 1980–1999 (the GPS epoch is
// 1980), 00–79 are 2000–2079.
func ddmmyy(s string) (date, error) {
	if s == "" {
		return date{}, nil
	}
	if len(s) != 6 {
		return date{}, errField
	}
	var n [6]int
	for i := range n {
		c := s[i]
		if c < '0' || c > '9' {
			return date{}, errField
		}
		n[i] = int(c - '0')
	}
	y := n[4]*10 + n[5]
	if y < 80 {
		y += 2000
	} else {
		y += 1900
	}
	return civil(y, n[2]*10+n[3], n[0]*10+n[1])
}

// coordinate parses a latitude (ddmm.mmm, N/S) or longitude (dddmm.mmm, E/W) pair of
// fields into signed degrees: degrees + minutes/60, unrounded. ok is false when either
// field is empty.
func coordinate(v, hemi string, lat bool) (deg float64, ok bool, err error) {
	if v == "" || hemi == "" {
		if v == "" && hemi == "" {
			return 0, false, nil
		}
		return 0, false, errField
	}
	var neg bool
	switch hemi {
	case "N", "E":
		if (hemi == "N") != lat {
			return 0, false, errField
		}
	case "S", "W":
		if (hemi == "S") != lat {
			return 0, false, errField
		}
		neg = true
	default:
		return 0, false, errField
	}
	if !decimal(v) || v[0] == '-' || v[0] == '+' {
		return 0, false, errField
	}
	point := len(v)
	for i := 0; i < len(v); i++ {
		if v[i] == '.' {
			point = i
			break
		}
	}
	if point < 2 || point > 5 {
		return 0, false, errField
	}
	d := 0
	for i := 0; i < point-2; i++ {
		d = d*10 + int(v[i]-'0')
	}
	minutes, err := strconv.ParseFloat(v[point-2:], 64)
	if err != nil || minutes >= 60 {
		return 0, false, errField
	}
	deg = float64(d) + minutes/60
	limit := 180.0
	if lat {
		limit = 90
	}
	if deg > limit {
		return 0, false, errField
	}
	if neg {
		deg = -deg
	}
	return deg, true, nil
}

// position is a latitude and longitude in degrees.
type position struct {
	lat, lon float64
	ok       bool
}

func latLon(f []string, i int) (position, error) {
	lat, okLat, err := coordinate(field(f, i), field(f, i+1), true)
	if err != nil {
		return position{}, err
	}
	lon, okLon, err := coordinate(field(f, i+2), field(f, i+3), false)
	if err != nil {
		return position{}, err
	}
	if okLat != okLon {
		return position{}, errField
	}
	return position{lat, lon, okLat}, nil
}

// rmc is a decoded RMC sentence.
type rmc struct {
	tod       time.Duration
	timed     bool
	valid     bool // status A and a mode that is a real fix
	estimated bool // mode E
	mode      byte // FAA mode indicator (NMEA 2.3+), 0 when absent
	pos       position
	knots     *float64
	course    *float64
	date      date
}

// $--RMC,hhmmss.ss,A,llll.ll,a,yyyyy.yy,a,x.x,x.x,ddmmyy,x.x,a,m[,s]*hh
func parseRMC(f []string) (r rmc, err error) {
	if len(f) < 9 {
		return r, errField
	}
	if r.tod, r.timed, err = clock(f[0]); err != nil {
		return r, err
	}
	switch f[1] {
	case "A":
		r.valid = true
	case "V", "":
	default:
		return r, errField
	}
	if r.pos, err = latLon(f, 2); err != nil {
		return r, err
	}
	if r.knots, err = nonNegative(f[6]); err != nil {
		return r, err
	}
	if r.course, err = course(f[7]); err != nil {
		return r, err
	}
	if r.date, err = ddmmyy(f[8]); err != nil {
		return r, err
	}
	if m := field(f, 11); m != "" {
		if len(m) != 1 || m[0] < 'A' || m[0] > 'Z' {
			return r, errField
		}
		r.mode = m[0]
		switch r.mode {
		case 'N', 'M', 'S':
			r.valid = false
		case 'E':
			r.estimated = true
		}
	}
	return r, nil
}

// gga is a decoded GGA sentence.
type gga struct {
	tod     time.Duration
	timed   bool
	pos     position
	quality int // -1 when empty
	sats    *int
	hdop    *float64
	altM    *float64
}

// invalid reports whether the quality says there is no real fix.
func (g *gga) invalid() bool {
	switch g.quality {
	case 0, 7, 8:
		return true
	}
	return false
}

// fix reports whether the quality says there is a real fix.
func (g *gga) fix() bool { return g.quality > 0 && !g.invalid() }

// $--GGA,hhmmss.ss,llll.ll,a,yyyyy.yy,a,q,nn,h.h,a.a,M,g.g,M,x.x,xxxx*hh
func parseGGA(f []string) (g gga, err error) {
	if len(f) < 9 {
		return g, errField
	}
	if g.tod, g.timed, err = clock(f[0]); err != nil {
		return g, err
	}
	if g.pos, err = latLon(f, 1); err != nil {
		return g, err
	}
	if g.quality, err = count(f[5]); err != nil || g.quality > 9 {
		return g, errField
	}
	n, err := count(f[6])
	if err != nil {
		return g, err
	}
	if n > 0 {
		g.sats = &n
	}
	if g.hdop, err = dop(f[7]); err != nil {
		return g, err
	}
	if g.altM, err = number(f[8]); err != nil {
		return g, err
	}
	if g.altM != nil && field(f, 9) != "M" && field(f, 9) != "" {
		g.altM = nil // not metres: unknown rather than misread
	}
	return g, nil
}

// vtg is a decoded VTG sentence.
type vtg struct {
	course *float64
	knots  *float64
	kmh    *float64
}

// $--VTG,x.x,T,x.x,M,x.x,N,x.x,K,m*hh, or before NMEA 2.0 $--VTG,x.x,x.x,x.x,x.x*hh.
// A VTG with mode N carries nothing.
func parseVTG(f []string) (v vtg, err error) {
	var c, kn, kmh string
	switch {
	case len(f) >= 8 && (f[1] == "T" || f[1] == ""):
		if f[5] != "N" && f[5] != "" || f[7] != "K" && f[7] != "" {
			return v, errField
		}
		if field(f, 8) == "N" {
			return v, nil
		}
		c, kn, kmh = f[0], f[4], f[6]
	case len(f) == 4:
		c, kn, kmh = f[0], f[2], f[3]
	default:
		return v, errField
	}
	if v.course, err = course(c); err != nil {
		return v, err
	}
	if v.knots, err = nonNegative(kn); err != nil {
		return v, err
	}
	if v.kmh, err = nonNegative(kmh); err != nil {
		return v, err
	}
	return v, nil
}

// gsa is a decoded GSA sentence.
type gsa struct {
	mode int // 1 no fix, 2 2D, 3 3D; -1 when empty
	hdop *float64
}

// $--GSA,a,x,xx,xx,xx,xx,xx,xx,xx,xx,xx,xx,xx,xx,p.p,h.h,v.v[,s]*hh
func parseGSA(f []string) (g gsa, err error) {
	if len(f) < 2 {
		return g, errField
	}
	if g.mode, err = count(f[1]); err != nil || g.mode > 3 {
		return g, errField
	}
	if len(f) >= 17 {
		if g.hdop, err = dop(f[15]); err != nil {
			return g, err
		}
	}
	return g, nil
}

// zda is a decoded ZDA sentence.
type zda struct {
	tod   time.Duration
	timed bool
	date  date
}

// $--ZDA,hhmmss.ss,dd,mm,yyyy,zh,zm*hh
func parseZDA(f []string) (z zda, err error) {
	if len(f) < 4 {
		return z, errField
	}
	if z.tod, z.timed, err = clock(f[0]); err != nil {
		return z, err
	}
	if f[1] == "" && f[2] == "" && f[3] == "" {
		return z, nil
	}
	d, err1 := count(f[1])
	m, err2 := count(f[2])
	y, err3 := count(f[3])
	if err1 != nil || err2 != nil || err3 != nil || len(f[3]) != 4 {
		return z, errField
	}
	z.date, err = civil(y, m, d)
	return z, err
}

// timeOnly reads the time of a GLL (field 4) or GNS (field 0) sentence.
func timeOnly(f []string, i int) (time.Duration, bool, error) {
	return clock(field(f, i))
}
