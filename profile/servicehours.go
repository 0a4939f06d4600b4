package profile

import (
	"fmt"
	"slices"
	"time"
)

// DayHours are the service hours of some days of the week, in place of service_hours.start and
// .end on those days: a proposal such as "until 22 h on weekdays" is a profile, not a program.
type DayHours struct {
	// Days are the days of the week they apply to: mo, tu, we, th, fr, sa, su (as in the
	// opening_hours of the geofences).
	Days  []string `yaml:"days"`
	Start string   `yaml:"start"`
	End   string   `yaml:"end"`
}

var weekdays = []string{"su", "mo", "tu", "we", "th", "fr", "sa"} // time.Weekday order

// HoursOn returns the service hours of the local calendar day of t (its time of day ignored):
// those of the first service_hours.by_day entry naming its weekday, else start and end.
func (p *Profile) HoursOn(t time.Time) (start, end Clock) {
	wd := weekdays[t.In(p.Location()).Weekday()]
	h := p.ServiceHours
	for _, d := range h.ByDay {
		if slices.Contains(d.Days, wd) {
			return MustClock(d.Start), MustClock(d.End)
		}
	}
	return MustClock(h.Start), MustClock(h.End)
}

// String formats the clock as HH:MM.
func (c Clock) String() string { return fmt.Sprintf("%02d:%02d", int(c)/60, int(c)%60) }

// ServiceWindow is one day's service hours as instants: [Start, End).
type ServiceWindow struct{ Start, End time.Time }

// ServiceWindowOf returns the service window of the local calendar day of t; a window whose end
// is not after its start runs past midnight into the next day.
func (p *Profile) ServiceWindowOf(t time.Time) ServiceWindow {
	loc := p.Location()
	lt := t.In(loc)
	start, end := p.HoursOn(lt)
	at := func(c Clock, days int) time.Time {
		return time.Date(lt.Year(), lt.Month(), lt.Day()+days, 0, int(c), 0, 0, loc)
	}
	w := ServiceWindow{Start: at(start, 0), End: at(end, 0)}
	if end <= start {
		w.End = at(end, 1)
	}
	return w
}

// validateDayHours checks service_hours.by_day.
func validateDayHours(h ServiceHours, bad func(key, format string, args ...any)) {
	seen := map[string]bool{}
	for i, d := range h.ByDay {
		key := fmt.Sprintf("service_hours.by_day[%d]", i)
		if len(d.Days) == 0 {
			bad(key+".days", "name at least one day (mo, tu, we, th, fr, sa, su)")
		}
		for _, wd := range d.Days {
			switch {
			case !slices.Contains(weekdays, wd):
				bad(key+".days", "unknown day %q (want mo, tu, we, th, fr, sa or su)", wd)
			case seen[wd]:
				bad(key+".days", "day %q already has its hours in an earlier entry", wd)
			}
			seen[wd] = true
		}
		for _, c := range []struct{ k, v string }{{".start", d.Start}, {".end", d.End}} {
			if _, err := ParseClock(c.v); err != nil {
				bad(key+c.k, "%v", err)
			}
		}
	}
}
