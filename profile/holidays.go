package profile

import (
	"time"
)

// Holiday returns the name of the holiday on the local date of t, if it is one.
//
// The rules ask on every reading (for each sensitive site's opening hours, the route and the
// rotation rules): the local date is taken once, the fixed days compared as bytes and Easter
// computed with integer arithmetic, without formatting or building times — formatting the date
// twice and rickar/cal's Easter were 10% of the rule evaluation's CPU (docs/benchmarks.md, "Rule
// evaluation"). TestHolidayMatchesCal checks every day of four centuries against the former code.
func (p *Profile) Holiday(t time.Time) (string, bool) {
	t = t.In(p.loc)
	y, m, d := t.Date()
	md := [5]byte{byte('0' + m/10), byte('0' + m%10), '-', byte('0' + d/10), byte('0' + d%10)}
	for _, h := range p.Holidays.Fixed {
		if h.Day == string(md[:]) && (h.Since == 0 || y >= h.Since) {
			return h.Name, true
		}
	}
	if len(p.Holidays.Easter) > 0 {
		yd := yearDay(y, m, d)
		em, ed := easterSunday(y)
		easter := yearDay(y, em, ed)
		for _, h := range p.Holidays.Easter {
			if easter+h.Offset == yd {
				return h.Name, true
			}
		}
	}
	if len(p.Holidays.Dates) == 0 {
		return "", false
	}
	var buf [len(time.DateOnly)]byte
	date := t.AppendFormat(buf[:0], time.DateOnly)
	for _, h := range p.Holidays.Dates {
		if h.Date == string(date) {
			return h.Name, true
		}
	}
	return "", false
}

// easterSunday is the month and day of Easter Sunday in the Gregorian year y, by the
// Meeus/Jones/Butcher algorithm (as rickar/cal computes it).
func easterSunday(y int) (time.Month, int) {
	a := y % 19
	b, c := y/100, y%100
	d, e := b/4, b%4
	f := (b + 8) / 25
	g := (b - f + 1) / 3
	h := (19*a + b - d - g + 15) % 30
	i, k := c/4, c%4
	l := (32 + 2*e + 2*i - h - k) % 7
	m := (a + 11*h + 22*l) / 451
	return time.Month((h + l - 7*m + 114) / 31), (h+l-7*m+114)%31 + 1
}

// daysBefore[m] is the number of days of a common year before month m.
var daysBefore = [...]int{0, 0, 31, 59, 90, 120, 151, 181, 212, 243, 273, 304, 334}

// yearDay is the day of the year (1 for 1 January) of y-m-d.
func yearDay(y int, m time.Month, d int) int {
	n := daysBefore[m] + d
	if m > time.February && y%4 == 0 && (y%100 != 0 || y%400 == 0) {
		n++
	}
	return n
}

// RestDay reports whether the local date of t is a Sunday or a holiday.
func (p *Profile) RestDay(t time.Time) bool {
	if t.In(p.loc).Weekday() == time.Sunday {
		return true
	}
	_, ok := p.Holiday(t)
	return ok
}
