package profile

import (
	"testing"
	"time"

	"github.com/rickar/cal/v2"
)

// holidayBefore is Holiday as it was before its rewrite without formatting (verbatim): the date
// formatted and Easter computed by rickar/cal. The reference for TestHolidayMatchesCal.
func (p *Profile) holidayBefore(t time.Time) (string, bool) {
	t = t.In(p.loc)
	y, m, d := t.Date()
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

// TestHolidayMatchesCal compares Holiday with the former code on every day from 1900 to 2299,
// at 00:00, 12:00 and 23:59 local time, for Piúma's holidays plus Easter offsets that reach
// both ends of the year and beyond (so that a leap day and the year boundary are crossed).
func TestHolidayMatchesCal(t *testing.T) {
	p := Piuma()
	for _, off := range []int{-100, -79, -48, -47, -2, 0, 1, 39, 60, 270, 280} {
		p.Holidays.Easter = append(p.Holidays.Easter, EasterHoliday{Offset: off, Name: "easter" + time.Duration(off).String()})
	}
	p.Holidays.Fixed = append(p.Holidays.Fixed, FixedHoliday{Day: "02-29", Name: "leap"}, FixedHoliday{Day: "12-31", Name: "eve", Since: 2000})
	n := 0
	for day := time.Date(1900, 1, 1, 0, 0, 0, 0, p.loc); day.Year() < 2300; day = day.AddDate(0, 0, 1) {
		for _, at := range []time.Duration{0, 12 * time.Hour, 23*time.Hour + 59*time.Minute} {
			tm := day.Add(at)
			gotName, got := p.Holiday(tm)
			wantName, want := p.holidayBefore(tm)
			if got != want || gotName != wantName {
				t.Fatalf("%s: Holiday = %q, %v; before %q, %v", tm, gotName, got, wantName, want)
			}
			if got {
				n++
			}
		}
	}
	if n < 400*3*10 {
		t.Fatalf("only %d holiday instants in four centuries: the comparison saw too few", n)
	}
}

func BenchmarkHoliday(b *testing.B) {
	p := Piuma()
	t0 := time.Date(2026, 11, 25, 15, 0, 0, 0, time.UTC)
	b.Run("now", func(b *testing.B) {
		for i := 0; b.Loop(); i++ {
			p.Holiday(t0.Add(time.Duration(i) * time.Second))
		}
	})
	b.Run("before", func(b *testing.B) {
		for i := 0; b.Loop(); i++ {
			p.holidayBefore(t0.Add(time.Duration(i) * time.Second))
		}
	})
}
