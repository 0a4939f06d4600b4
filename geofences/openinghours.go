package geofences

import (
	"errors"
	"fmt"
	"strconv"
	"strings"
	"time"
)

// OpeningHours is a weekly schedule written in the subset of the
// OpenStreetMap opening_hours syntax that the geofence files use:
//
//	24/7                               always open
//	off                                always closed ("closed" is a synonym)
//	Mo-Fr 08:00-12:00,14:00-18:00      day ranges and several time ranges
//	Sa,Su 09:00-13:00                  day lists
//	PH off                             public holidays
//	Fr,Sa 22:00-02:00                  ranges past midnight
//	Mo-Fr                              open all day on the days named
//	Mo-Fr 08:00-18:00; We 08:00-12:00  rules separated by ";"
//
// A rule without a day selector applies to every day. The weekdays are Mo,
// Tu, We, Th, Fr, Sa and Su; a range may wrap around the week (Fr-Mo). PH
// names the public holidays, which the caller supplies. Day names and the
// words off, closed and open are matched without regard to case, and spaces
// around "," and "-" are allowed.
//
// Rules are read from left to right, and a later rule overrides the earlier
// ones for every day it names: in "Mo-Fr 08:00-18:00; We 08:00-12:00" a
// Wednesday closes at noon, and in "Mo-Su 08:00-18:00; PH off" a holiday is
// closed. A time range whose end is not after its start runs past midnight,
// and the part after midnight belongs to the next day: "Fr 22:00-02:00" is
// open on Saturday until 02:00 unless a later rule names Saturday (or, on a
// holiday, PH). An end hour above 24 (extended hours, "22:00-26:00") is read
// the same way. A range may not be empty or longer than 24 hours.
//
// Anything else in the OpenStreetMap syntax (months, dates, week numbers,
// school holidays, sunrise and sunset, open ends "18:00+", comments and the
// "," and "||" rule separators) is rejected with an error that says so.
//
// A nil *OpeningHours means that the hours are not known: it is always open.
// An OpeningHours is immutable and safe for concurrent use.
type OpeningHours struct {
	rules []ohRule
}

// ohRule is one ";"-separated rule.
type ohRule struct {
	anyDay  bool         // no day selector: applies to every day
	days    uint8        // bit i set: applies on time.Weekday(i)
	holiday bool         // applies on public holidays (PH)
	closed  bool         // off
	all     bool         // written as 24/7
	spans   []minuteSpan // open intervals of the day the rule applies to
}

// minuteSpan is a half-open interval [start, end) in minutes from the
// midnight that starts the day; end may exceed 1440 (past midnight) but
// never by more than a day after start.
type minuteSpan struct {
	start, end int
}

const minutesPerDay = 24 * 60

// weekdayNames holds the OpenStreetMap day abbreviations in the order of
// time.Weekday, two letters each.
const weekdayNames = "SuMoTuWeThFrSa"

// weekdayName returns the abbreviation of wd.
func weekdayName(wd time.Weekday) string { return weekdayNames[2*wd : 2*wd+2] }

// ParseOpeningHours parses s, a value of an opening_hours property. The
// accepted syntax is described in the documentation of OpeningHours.
func ParseOpeningHours(s string) (*OpeningHours, error) {
	if strings.TrimSpace(s) == "" {
		return nil, errors.New("empty opening hours")
	}
	var o OpeningHours
	for i, text := range strings.Split(s, ";") {
		text = strings.TrimSpace(text)
		if text == "" {
			if i == 0 {
				return nil, errors.New(`empty rule before ";"`)
			}
			continue // tolerate "Mo-Fr 08:00-18:00;" and "a;;b"
		}
		r, err := parseRule(text)
		if err != nil {
			return nil, fmt.Errorf("rule %q: %w", text, err)
		}
		o.rules = append(o.rules, r)
	}
	return &o, nil
}

// ParseSchedule builds the schedule of an itinerary from its days property
// (a day selector such as "Fr-Su,PH") and its hours property (time ranges
// such as "18:00-23:00" or "09:00-12:00,14:00-23:00"). An empty days means
// every day and an empty hours means the whole day; when both are empty
// ParseSchedule returns nil, which is always open.
func ParseSchedule(days, hours string) (*OpeningHours, error) {
	days, hours = strings.TrimSpace(days), strings.TrimSpace(hours)
	if days == "" && hours == "" {
		return nil, nil
	}
	r := ohRule{anyDay: true}
	if days != "" {
		d, err := parseDaySelector(normalizeSeparators(days))
		if err != nil {
			return nil, fmt.Errorf("days %q: %w", days, err)
		}
		r.anyDay, r.days, r.holiday = false, d.days, d.holiday
	}
	if hours != "" {
		spans, err := parseTimeSpans(normalizeSeparators(hours))
		if err != nil {
			return nil, fmt.Errorf("hours %q: %w", hours, err)
		}
		r.spans = spans
	} else {
		r.spans = []minuteSpan{{0, minutesPerDay}}
	}
	return &OpeningHours{rules: []ohRule{r}}, nil
}

// normalizeSeparators removes the spaces around "," and "-" so that
// "Mo - Fr 08:00-12:00, 14:00-18:00" splits into whitespace-separated
// fields.
func normalizeSeparators(s string) string {
	var b strings.Builder
	b.Grow(len(s))
	fields := strings.Fields(s)
	for i, f := range fields {
		if i > 0 {
			prev := fields[i-1]
			glued := strings.HasSuffix(prev, ",") || strings.HasSuffix(prev, "-") ||
				strings.HasPrefix(f, ",") || strings.HasPrefix(f, "-")
			if !glued {
				b.WriteByte(' ')
			}
		}
		b.WriteString(f)
	}
	return b.String()
}

// parseRule parses one rule: [day selector] [time ranges] [off|closed|open],
// or 24/7.
func parseRule(text string) (ohRule, error) {
	fields := strings.Fields(normalizeSeparators(text))
	if len(fields) == 1 && fields[0] == "24/7" {
		return ohRule{anyDay: true, all: true, spans: []minuteSpan{{0, minutesPerDay}}}, nil
	}
	r := ohRule{anyDay: true}
	const (
		partDays = iota
		partTimes
		partModifier
		partDone
	)
	next := partDays // the first part that may still come
	var haveTimes, open bool
	for _, f := range fields {
		switch {
		case f == "24/7":
			return ohRule{}, errors.New(`24/7 must be a rule of its own`)
		case isModifier(f):
			if next > partModifier {
				return ohRule{}, fmt.Errorf("unexpected %q after the modifier", f)
			}
			switch strings.ToLower(f) {
			case "off", "closed":
				r.closed = true
			default:
				open = true
			}
			next = partDone
		case f[0] >= '0' && f[0] <= '9':
			if next > partTimes {
				return ohRule{}, fmt.Errorf("time ranges %q must come before the modifier", f)
			}
			spans, err := parseTimeSpans(f)
			if err != nil {
				return ohRule{}, err
			}
			r.spans, haveTimes = spans, true
			next = partModifier
		default:
			if err := unsupportedWord(f); err != nil {
				return ohRule{}, err
			}
			if next > partDays {
				if next == partModifier {
					return ohRule{}, fmt.Errorf("unexpected %q after the time ranges (separate rules with \";\")", f)
				}
				return ohRule{}, fmt.Errorf("unexpected %q", f)
			}
			d, err := parseDaySelector(f)
			if err != nil {
				return ohRule{}, err
			}
			r.anyDay, r.days, r.holiday = false, d.days, d.holiday
			next = partTimes
		}
	}
	switch {
	case r.closed && haveTimes:
		return ohRule{}, errors.New(`time ranges with "off" are not supported`)
	case r.closed:
		r.spans = nil
	case !haveTimes:
		if r.anyDay && !open {
			return ohRule{}, errors.New("rule names neither days nor times")
		}
		r.spans = []minuteSpan{{0, minutesPerDay}}
	}
	return r, nil
}

func isModifier(f string) bool {
	switch strings.ToLower(f) {
	case "off", "closed", "open":
		return true
	}
	return false
}

// unsupportedWord explains the common OpenStreetMap constructs outside
// the subset, or returns nil.
func unsupportedWord(f string) error {
	lower := strings.ToLower(f)
	switch {
	case strings.HasPrefix(f, `"`):
		return errors.New("comments are not supported")
	case strings.HasPrefix(f, "||"):
		return errors.New(`fallback rules "||" are not supported`)
	case strings.Contains(lower, "sunrise") || strings.Contains(lower, "sunset") ||
		strings.Contains(lower, "dawn") || strings.Contains(lower, "dusk"):
		return fmt.Errorf("variable times (%s) are not supported", f)
	case strings.Contains(f, "["):
		return fmt.Errorf("nth weekdays (%s) are not supported", f)
	}
	return nil
}

// daySelector is a parsed day selector.
type daySelector struct {
	days    uint8
	holiday bool
}

// parseDaySelector parses a comma-separated list of weekdays, weekday
// ranges and PH, without spaces.
func parseDaySelector(s string) (daySelector, error) {
	var d daySelector
	for _, item := range strings.Split(s, ",") {
		if item == "" {
			return d, fmt.Errorf("empty item in day selector %q", s)
		}
		if strings.EqualFold(item, "PH") {
			d.holiday = true
			continue
		}
		from, to, isRange := strings.Cut(item, "-")
		first, err := parseWeekday(from)
		if err != nil {
			return d, err
		}
		last := first
		if isRange {
			if last, err = parseWeekday(to); err != nil {
				return d, err
			}
		}
		for wd := first; ; wd = (wd + 1) % 7 {
			d.days |= 1 << wd
			if wd == last {
				break
			}
		}
	}
	return d, nil
}

func parseWeekday(s string) (time.Weekday, error) {
	for wd := time.Sunday; wd <= time.Saturday; wd++ {
		if strings.EqualFold(s, weekdayName(wd)) {
			return wd, nil
		}
	}
	switch strings.ToUpper(s) {
	case "SH":
		return 0, errors.New("school holidays (SH) are not supported")
	case "":
		return 0, errors.New("missing day name")
	}
	return 0, fmt.Errorf("unsupported day selector %q (want Mo, Tu, We, Th, Fr, Sa, Su or PH)", s)
}

// parseTimeSpans parses a comma-separated list of time ranges without
// spaces, such as "08:00-12:00,14:00-18:00".
func parseTimeSpans(s string) ([]minuteSpan, error) {
	var spans []minuteSpan
	for _, item := range strings.Split(s, ",") {
		if item == "" {
			return nil, fmt.Errorf("empty item in time ranges %q", s)
		}
		sp, err := parseTimeSpan(item)
		if err != nil {
			if _, dayErr := parseDaySelector(item); dayErr == nil {
				return nil, fmt.Errorf(`%q after time ranges: "," between rules is not supported, use ";"`, item)
			}
			return nil, err
		}
		spans = append(spans, sp)
	}
	return spans, nil
}

func parseTimeSpan(s string) (minuteSpan, error) {
	from, to, ok := strings.Cut(s, "-")
	if !ok {
		if strings.HasSuffix(s, "+") {
			return minuteSpan{}, fmt.Errorf("open-ended time %q is not supported", s)
		}
		return minuteSpan{}, fmt.Errorf("time range %q is not of the form HH:MM-HH:MM", s)
	}
	start, err := parseClock(from, 24*60-1)
	if err != nil {
		return minuteSpan{}, fmt.Errorf("time range %q: start: %w", s, err)
	}
	end, err := parseClock(to, 48*60)
	if err != nil {
		return minuteSpan{}, fmt.Errorf("time range %q: end: %w", s, err)
	}
	switch {
	case end == start:
		return minuteSpan{}, fmt.Errorf("time range %q is empty", s)
	case end < start:
		end += minutesPerDay
	}
	if end-start > minutesPerDay {
		return minuteSpan{}, fmt.Errorf("time range %q is longer than 24 hours", s)
	}
	return minuteSpan{start, end}, nil
}

// parseClock parses H:MM or HH:MM and returns minutes after midnight, at
// most max.
func parseClock(s string, max int) (int, error) {
	h, m, ok := strings.Cut(s, ":")
	if !ok || len(h) < 1 || len(h) > 2 || len(m) != 2 || !allDigits(h) || !allDigits(m) {
		if strings.ContainsAny(s, "+()") || strings.Contains(strings.ToLower(s), "sun") ||
			strings.Contains(strings.ToLower(s), "dusk") || strings.Contains(strings.ToLower(s), "dawn") {
			return 0, fmt.Errorf("%q is not supported (only HH:MM)", s)
		}
		return 0, fmt.Errorf("%q is not a time of the form HH:MM", s)
	}
	hh, _ := strconv.Atoi(h)
	mm, _ := strconv.Atoi(m)
	if mm > 59 {
		return 0, fmt.Errorf("%q: minutes out of range", s)
	}
	if t := hh*60 + mm; t <= max {
		return t, nil
	}
	return 0, fmt.Errorf("%q: hour out of range", s)
}

func allDigits(s string) bool {
	for i := 0; i < len(s); i++ {
		if s[i] < '0' || s[i] > '9' {
			return false
		}
	}
	return true
}

// appliesTo reports whether the rule names the given day.
func (r *ohRule) appliesTo(wd time.Weekday, holiday bool) bool {
	return r.anyDay || r.days&(1<<wd) != 0 || (r.holiday && holiday)
}

// winner returns the index of the last rule that names the day, or -1.
func (o *OpeningHours) winner(wd time.Weekday, holiday bool) int {
	for i := len(o.rules) - 1; i >= 0; i-- {
		if o.rules[i].appliesTo(wd, holiday) {
			return i
		}
	}
	return -1
}

// Open reports whether the schedule is open at t, read in t's location (the
// local time of the site). isHoliday tells whether t's calendar day is a
// public holiday; the day before is taken as a working day, which matters
// only for a range past midnight that starts on a holiday: use OpenAt to
// tell it. A nil OpeningHours is always open.
func (o *OpeningHours) Open(t time.Time, isHoliday bool) bool {
	if o == nil {
		return true
	}
	y, m, d := t.Date()
	return o.OpenAt(t, func(day time.Time) bool {
		dy, dm, dd := day.Date()
		return isHoliday && dy == y && dm == m && dd == d
	})
}

// OpenAt is like Open but asks isHoliday, which may be nil (no holidays),
// whether a calendar day is a public holiday. It is called with midnight
// of t's day and of the day before, in t's location.
func (o *OpeningHours) OpenAt(t time.Time, isHoliday func(day time.Time) bool) bool {
	if o == nil {
		return true
	}
	y, mo, d := t.Date()
	today := time.Date(y, mo, d, 0, 0, 0, 0, t.Location())
	yesterday := time.Date(y, mo, d-1, 0, 0, 0, 0, t.Location())
	holidayToday, holidayYesterday := false, false
	if isHoliday != nil {
		holidayToday = isHoliday(today)
		holidayYesterday = isHoliday(yesterday)
	}
	sec := t.Hour()*3600 + t.Minute()*60 + t.Second()

	w := o.winner(today.Weekday(), holidayToday)
	if w >= 0 {
		for _, sp := range o.rules[w].spans {
			if sp.start*60 <= sec && sec < min(sp.end, minutesPerDay)*60 {
				return true
			}
		}
	}
	// The part past midnight of yesterday's ranges, unless a later rule
	// names today.
	wy := o.winner(yesterday.Weekday(), holidayYesterday)
	if wy < 0 || w > wy {
		return false
	}
	for _, sp := range o.rules[wy].spans {
		if sp.end > minutesPerDay && sec < (sp.end-minutesPerDay)*60 {
			return true
		}
	}
	return false
}

// String returns the schedule in a canonical form that ParseOpeningHours
// reads back to the same schedule: rules separated by "; ", days as
// ranges in the order Mo…Su followed by PH, times as HH:MM with ends past
// midnight written modulo 24 hours. A nil OpeningHours returns "".
func (o *OpeningHours) String() string {
	if o == nil {
		return ""
	}
	var b strings.Builder
	for i := range o.rules {
		if i > 0 {
			b.WriteString("; ")
		}
		o.rules[i].format(&b)
	}
	return b.String()
}

// MarshalText implements encoding.TextMarshaler with String.
func (o *OpeningHours) MarshalText() ([]byte, error) {
	return []byte(o.String()), nil
}

// UnmarshalText implements encoding.TextUnmarshaler with
// ParseOpeningHours.
func (o *OpeningHours) UnmarshalText(text []byte) error {
	p, err := ParseOpeningHours(string(text))
	if err != nil {
		return err
	}
	*o = *p
	return nil
}

func (r *ohRule) format(b *strings.Builder) {
	if r.all {
		b.WriteString("24/7")
		return
	}
	sep := ""
	if !r.anyDay {
		formatDays(b, r.days, r.holiday)
		sep = " "
	}
	if r.closed {
		b.WriteString(sep + "off")
		return
	}
	if !r.anyDay && len(r.spans) == 1 && r.spans[0] == (minuteSpan{0, minutesPerDay}) {
		return // "Mo-Fr": all day
	}
	b.WriteString(sep)
	for i, sp := range r.spans {
		if i > 0 {
			b.WriteByte(',')
		}
		end := sp.end
		if end > minutesPerDay && end-minutesPerDay != sp.start {
			end -= minutesPerDay // "22:00-02:00"; a whole day stays "10:00-34:00"
		}
		fmt.Fprintf(b, "%02d:%02d-%02d:%02d", sp.start/60, sp.start%60, end/60, end%60)
	}
}

// formatDays writes the days Mo…Su as runs, then PH.
func formatDays(b *strings.Builder, days uint8, holiday bool) {
	first := true
	item := func(s string) {
		if !first {
			b.WriteByte(',')
		}
		b.WriteString(s)
		first = false
	}
	// Monday-first order: Mo=1 … Sa=6, Su=0.
	order := [7]time.Weekday{1, 2, 3, 4, 5, 6, 0}
	for i := 0; i < 7; {
		if days&(1<<order[i]) == 0 {
			i++
			continue
		}
		j := i
		for j+1 < 7 && days&(1<<order[j+1]) != 0 {
			j++
		}
		switch {
		case j == i:
			item(weekdayName(order[i]))
		case j == i+1:
			item(weekdayName(order[i]))
			item(weekdayName(order[j]))
		default:
			item(weekdayName(order[i]) + "-" + weekdayName(order[j]))
		}
		i = j + 1
	}
	if holiday {
		item("PH")
	}
}
