package profile

import (
	"time"

	"github.com/rickar/cal/v2"
)

// Holiday returns the name of the holiday on the local date of t, if it is one.
func (p *Profile) Holiday(t time.Time) (string, bool) {
	t = t.In(p.loc)
	y, m, d := t.Date()
	// The rules ask on every reading: the dates are formatted into a buffer on the stack.
	var buf [len(time.DateOnly)]byte
	md := t.AppendFormat(buf[:0], "01-02")
	for _, h := range p.Holidays.Fixed {
		if h.Day == string(md) && (h.Since == 0 || y >= h.Since) {
			return h.Name, true
		}
	}
	for _, h := range p.Holidays.Easter {
		e := cal.CalcEasterOffset(&cal.Holiday{Offset: h.Offset}, y)
		if ey, em, ed := e.Date(); ey == y && em == m && ed == d {
			return h.Name, true
		}
	}
	if len(p.Holidays.Dates) == 0 {
		return "", false
	}
	date := t.AppendFormat(buf[:0], time.DateOnly)
	for _, h := range p.Holidays.Dates {
		if h.Date == string(date) {
			return h.Name, true
		}
	}
	return "", false
}

// RestDay reports whether the local date of t is a Sunday or a holiday.
func (p *Profile) RestDay(t time.Time) bool {
	if t.In(p.loc).Weekday() == time.Sunday {
		return true
	}
	_, ok := p.Holiday(t)
	return ok
}
