package geofences

import (
	"strings"
	"testing"
	"time"
)

// brt is Brasília time; a fixed zone keeps the tests free of tzdata.
var brt = time.FixedZone("BRT", -3*3600)

// at parses "2006-01-02 15:04" in Brasília time. November 2026 starts on
// a Sunday: the 23rd is a Monday, the 27th a Friday, the 28th a Saturday
// and the 29th a Sunday.
func at(t *testing.T, s string) time.Time {
	t.Helper()
	tm, err := time.ParseInLocation("2006-01-02 15:04", s, brt)
	if err != nil {
		t.Fatal(err)
	}
	return tm
}

func TestOpeningHoursOpen(t *testing.T) {
	tests := []struct {
		hours   string
		time    string
		holiday bool
		want    bool
	}{
		{"24/7", "2026-11-29 03:00", false, true},
		{"24/7", "2026-11-29 03:00", true, true},
		{"off", "2026-11-23 10:00", false, false},
		{"closed", "2026-11-23 10:00", false, false},

		{"Mo-Fr 08:00-12:00,14:00-18:00", "2026-11-23 08:00", false, true}, // Monday, start included
		{"Mo-Fr 08:00-12:00,14:00-18:00", "2026-11-23 11:59", false, true},
		{"Mo-Fr 08:00-12:00,14:00-18:00", "2026-11-23 12:00", false, false}, // end excluded
		{"Mo-Fr 08:00-12:00,14:00-18:00", "2026-11-23 13:00", false, false},
		{"Mo-Fr 08:00-12:00,14:00-18:00", "2026-11-27 17:59", false, true},  // Friday
		{"Mo-Fr 08:00-12:00,14:00-18:00", "2026-11-28 10:00", false, false}, // Saturday
		{"Mo-Fr 08:00-12:00, 14:00-18:00", "2026-11-24 15:00", false, true}, // spaces
		{"mo - fr 08:00-18:00", "2026-11-24 15:00", false, true},            // case and spaces

		{"Sa,Su 09:00-13:00", "2026-11-28 09:30", false, true},
		{"Sa,Su 09:00-13:00", "2026-11-29 12:59", false, true},
		{"Sa,Su 09:00-13:00", "2026-11-27 10:00", false, false},
		{"Fr-Mo 10:00-11:00", "2026-11-30 10:30", false, true}, // range wraps the week
		{"Fr-Mo 10:00-11:00", "2026-11-24 10:30", false, false},
		{"Mo-Fr", "2026-11-24 03:00", false, true}, // all day
		{"Mo-Fr", "2026-11-28 03:00", false, false},
		{"08:00-18:00", "2026-11-29 09:00", false, true}, // no day selector: every day
		{"08:00-18:00", "2026-11-29 09:00", true, true},

		// Later rules override earlier ones for the days they name.
		{"Mo-Fr 08:00-18:00; We 08:00-12:00", "2026-11-25 14:00", false, false},
		{"Mo-Fr 08:00-18:00; We 08:00-12:00", "2026-11-26 14:00", false, true},
		{"Mo-Fr 08:00-18:00; We off", "2026-11-25 09:00", false, false},
		{"Mo-Fr 08:00-12:00; 14:00-20:00", "2026-11-23 09:00", false, false}, // the second rule names every day

		// Public holidays.
		{"Mo-Fr 08:00-18:00; PH off", "2026-11-20 10:00", true, false}, // Friday holiday
		{"Mo-Fr 08:00-18:00; PH off", "2026-11-20 10:00", false, true},
		{"Mo-Fr 08:00-18:00", "2026-11-20 10:00", true, true}, // PH not named: weekday rule holds
		{"PH off; Mo-Fr 08:00-18:00", "2026-11-20 10:00", true, true},
		{"Fr-Su,PH 18:00-23:00", "2026-11-23 19:00", true, true}, // Monday holiday
		{"Fr-Su,PH 18:00-23:00", "2026-11-23 19:00", false, false},
		{"Fr-Su,PH 18:00-23:00", "2026-11-29 22:59", false, true},
		{"PH", "2026-11-23 03:00", true, true},
		{"PH", "2026-11-23 03:00", false, false},

		// Ranges past midnight: the part after midnight is the next day's.
		{"Fr 22:00-02:00", "2026-11-27 23:00", false, true},
		{"Fr 22:00-02:00", "2026-11-28 01:59", false, true}, // Saturday morning
		{"Fr 22:00-02:00", "2026-11-28 02:00", false, false},
		{"Fr 22:00-02:00", "2026-11-27 01:00", false, false}, // Friday morning: Thursday's
		{"Fr 22:00-26:00", "2026-11-28 01:00", false, true},  // extended hours
		{"Fr 22:00-02:00; Sa 10:00-12:00", "2026-11-28 01:00", false, false},
		{"Fr 22:00-02:00; Sa 10:00-12:00", "2026-11-28 11:00", false, true},
		{"Sa 10:00-12:00; Fr 22:00-02:00", "2026-11-28 01:00", false, true}, // Saturday's rule is older
		{"Mo-Su 22:00-02:00", "2026-11-23 00:30", false, true},
		{"Fr 22:00-02:00; PH off", "2026-11-28 01:00", true, false}, // Saturday holiday
		{"22:00-00:00", "2026-11-23 23:59", false, true},
		{"22:00-00:00", "2026-11-24 00:00", false, false},
		{"00:00-24:00", "2026-11-24 23:59", false, true},
		{"Mo 10:00-34:00", "2026-11-24 09:59", false, true}, // 24 hours from Monday 10:00
		{"Mo 10:00-34:00", "2026-11-24 10:00", false, false},
		{"24/7; PH off", "2026-11-24 10:00", true, false},
		{"24/7; PH off", "2026-11-24 10:00", false, true},
	}
	for _, tt := range tests {
		o, err := ParseOpeningHours(tt.hours)
		if err != nil {
			t.Errorf("ParseOpeningHours(%q): %v", tt.hours, err)
			continue
		}
		if got := o.Open(at(t, tt.time), tt.holiday); got != tt.want {
			t.Errorf("%q at %s (holiday %v): Open = %v, want %v", tt.hours, tt.time, tt.holiday, got, tt.want)
		}
	}
}

func TestOpeningHoursOpenAtHolidayYesterday(t *testing.T) {
	o, err := ParseOpeningHours("PH 22:00-02:00")
	if err != nil {
		t.Fatal(err)
	}
	holiday := func(day time.Time) bool { return day.Day() == 20 && day.Month() == time.November }
	if !o.OpenAt(at(t, "2026-11-21 01:00"), holiday) {
		t.Error("the night after a holiday: closed, want open")
	}
	if o.Open(at(t, "2026-11-21 01:00"), false) {
		t.Error("Open cannot know yesterday's holiday: open, want closed")
	}
	if o.OpenAt(at(t, "2026-11-22 01:00"), holiday) {
		t.Error("two nights later: open, want closed")
	}
	if !o.OpenAt(at(t, "2026-11-20 23:00"), holiday) {
		t.Error("holiday night: closed, want open")
	}
	if o.OpenAt(at(t, "2026-11-20 23:00"), nil) {
		t.Error("nil holidays: open, want closed")
	}
}

func TestOpeningHoursNilAlwaysOpen(t *testing.T) {
	var o *OpeningHours
	if !o.Open(at(t, "2026-11-23 03:00"), false) || !o.OpenAt(at(t, "2026-11-23 03:00"), nil) {
		t.Error("nil OpeningHours is closed, want open")
	}
	if o.String() != "" {
		t.Errorf("nil String = %q", o.String())
	}
}

func TestOpeningHoursLocalTime(t *testing.T) {
	o, _ := ParseOpeningHours("Mo-Fr 08:00-18:00")
	u := time.Date(2026, 11, 23, 12, 0, 0, 0, time.UTC) // 09:00 in Brasília
	if !o.Open(u.In(brt), false) {
		t.Error("09:00 local: closed, want open")
	}
	u = time.Date(2026, 11, 23, 10, 0, 0, 0, time.UTC) // 07:00 local
	if o.Open(u.In(brt), false) {
		t.Error("07:00 local: open, want closed")
	}
}

func TestOpeningHoursString(t *testing.T) {
	tests := []struct{ in, want string }{
		{"24/7", "24/7"},
		{"off", "off"},
		{"closed", "off"},
		{"Mo-Fr 08:00-12:00, 14:00-18:00", "Mo-Fr 08:00-12:00,14:00-18:00"},
		{"Sa-Su 09:00-13:00", "Sa,Su 09:00-13:00"},
		{"Su,Mo,Tu,We 9:00-10:00", "Mo-We,Su 09:00-10:00"},
		{"Fr-Mo 10:00-11:00", "Mo,Fr-Su 10:00-11:00"},
		{"PH,Mo-Fr 08:00-18:00;PH off", "Mo-Fr,PH 08:00-18:00; PH off"},
		{"Fr 22:00-26:00", "Fr 22:00-02:00"},
		{"Mo 10:00-34:00", "Mo 10:00-34:00"},
		{"Mo-Su 00:00-24:00", "Mo-Su"},
		{"00:00-24:00", "00:00-24:00"},
		{"Mo-Fr 08:00-18:00 open", "Mo-Fr 08:00-18:00"},
		{"Mo-Fr 08:00-18:00;", "Mo-Fr 08:00-18:00"},
		{"Mo,We,Fr 08:00-18:00", "Mo,We,Fr 08:00-18:00"},
	}
	for _, tt := range tests {
		o, err := ParseOpeningHours(tt.in)
		if err != nil {
			t.Errorf("ParseOpeningHours(%q): %v", tt.in, err)
			continue
		}
		if got := o.String(); got != tt.want {
			t.Errorf("ParseOpeningHours(%q).String() = %q, want %q", tt.in, got, tt.want)
		}
	}
}

func TestOpeningHoursErrors(t *testing.T) {
	tests := []struct{ in, want string }{
		{"", "empty"},
		{"   ", "empty"},
		{";Mo 08:00-12:00", "empty rule"},
		{"Mo-Fr 08:00-12:00 Sa 09:00-12:00", `separate rules with ";"`},
		{"Mo-Fr 08:00-12:00, Sa 09:00-12:00", `"," between rules is not supported, use ";"`},
		{"Jan-Mar 08:00-12:00", `unsupported day selector "Jan"`},
		{"SH off", "school holidays"},
		{"Mo-Fr 18:00+", "open-ended"},
		{"Mo-Fr sunrise-sunset", "not supported"},
		{"Mo-Fr 08:00-08:00", "empty"},
		{"Mo-Fr 25:00-26:00", "hour out of range"},
		{"Mo-Fr 24:00-26:00", "hour out of range"},
		{"Mo-Fr 08:00-49:00", "hour out of range"},
		{"Mo-Fr 10:00-35:00", "longer than 24 hours"},
		{"Mo-Fr 08:60-12:00", "minutes out of range"},
		{"Mo-Fr 8-12", "HH:MM"},
		{"Mo-Fr 08:00", "HH:MM-HH:MM"},
		{"Mo-Fr 08:00-12:00 off", "not supported"},
		{"Mo Tu 08:00-12:00", `unexpected "Tu"`},
		{"off 08:00-12:00", "before the modifier"},
		{"Mo,,Tu 08:00-12:00", "empty item"},
		{"Mo- 08:00-12:00", "unsupported day selector"},
		{"Mo-,Tu 08:00-12:00", "missing day name"},
		{"24/7 off", "24/7 must be a rule of its own"},
		{`Mo-Fr 08:00-12:00 "by appointment"`, "comments are not supported"},
		{"Mo-Fr 08:00-12:00 || PH off", "fallback rules"},
		{"Mo[1] 08:00-12:00", "nth weekdays"},
		{"08:00-12:00,", "empty item"},
	}
	for _, tt := range tests {
		_, err := ParseOpeningHours(tt.in)
		if err == nil {
			t.Errorf("ParseOpeningHours(%q): no error, want one containing %q", tt.in, tt.want)
			continue
		}
		if !strings.Contains(err.Error(), tt.want) {
			t.Errorf("ParseOpeningHours(%q) = %q, want it to contain %q", tt.in, err, tt.want)
		}
	}
}

func TestParseSchedule(t *testing.T) {
	s, err := ParseSchedule("Fr-Su,PH", "18:00-23:00")
	if err != nil {
		t.Fatal(err)
	}
	if got, want := s.String(), "Fr-Su,PH 18:00-23:00"; got != want {
		t.Errorf("String = %q, want %q", got, want)
	}
	if !s.Open(at(t, "2026-11-28 18:00"), false) || s.Open(at(t, "2026-11-28 23:00"), false) {
		t.Error("Saturday 18:00 should be open and 23:00 closed")
	}
	if s.Open(at(t, "2026-11-26 19:00"), false) || !s.Open(at(t, "2026-11-26 19:00"), true) {
		t.Error("Thursday 19:00 is open only on a holiday")
	}

	if s, err := ParseSchedule("", ""); s != nil || err != nil {
		t.Errorf(`ParseSchedule("", "") = %v, %v; want nil, nil`, s, err)
	}
	s, err = ParseSchedule("", "09:00-23:00")
	if err != nil || s.String() != "09:00-23:00" {
		t.Errorf(`ParseSchedule("", "09:00-23:00") = %q, %v`, s, err)
	}
	s, err = ParseSchedule("Mo-Su", "")
	if err != nil || s.String() != "Mo-Su" || !s.Open(at(t, "2026-11-28 03:00"), false) {
		t.Errorf(`ParseSchedule("Mo-Su", "") = %q, %v`, s, err)
	}
	for _, bad := range [][2]string{
		{"Fr-Su 18:00-23:00", ""},
		{"Fr-Xx", "18:00-23:00"},
		{"Fr", "18:00"},
		{"Fr", "Sa"},
		{"Fr", "off"},
	} {
		if _, err := ParseSchedule(bad[0], bad[1]); err == nil {
			t.Errorf("ParseSchedule(%q, %q): no error", bad[0], bad[1])
		}
	}
}

// FuzzOpeningHours checks that the parser never panics and that what it
// accepts prints in a canonical form that parses back to the same
// schedule.
func FuzzOpeningHours(f *testing.F) {
	for _, s := range []string{
		"24/7", "off", "Mo-Fr 08:00-12:00,14:00-18:00", "Sa,Su 09:00-13:00; PH off",
		"Fr 22:00-02:00", "Fr-Su,PH 18:00-23:00", "Mo-Fr 08:00-18:00; We 08:00-12:00",
		"Mo 10:00-34:00", "PH", "mo - fr 8:00-18:00 open;", "Jan 08:00-10:00",
	} {
		f.Add(s)
	}
	times := []time.Time{
		time.Date(2026, 11, 23, 0, 30, 0, 0, brt),  // Monday
		time.Date(2026, 11, 24, 9, 0, 0, 0, brt),   // Tuesday
		time.Date(2026, 11, 27, 23, 59, 0, 0, brt), // Friday
		time.Date(2026, 11, 28, 1, 15, 0, 0, brt),  // Saturday
		time.Date(2026, 11, 29, 12, 0, 0, 0, brt),  // Sunday
	}
	f.Fuzz(func(t *testing.T, s string) {
		o, err := ParseOpeningHours(s)
		if err != nil {
			if o != nil {
				t.Fatalf("ParseOpeningHours(%q) returned a schedule and an error", s)
			}
			return
		}
		canon := o.String()
		o2, err := ParseOpeningHours(canon)
		if err != nil {
			t.Fatalf("ParseOpeningHours(%q) ok, but its String %q: %v", s, canon, err)
		}
		if again := o2.String(); again != canon {
			t.Fatalf("String not canonical: %q -> %q -> %q", s, canon, again)
		}
		for _, tm := range times {
			for _, h := range []bool{false, true} {
				if o.Open(tm, h) != o2.Open(tm, h) {
					t.Fatalf("%q and its String %q differ at %v (holiday %v)", s, canon, tm, h)
				}
			}
		}
	})
}
