package profile_test

import (
	"bytes"
	"strings"
	"testing"
	"time"

	"github.com/trenzinho/trenzinho/profile"
)

// weekdays22 is the built-in profile with service until 22 h on weekdays, as a proposal to the
// Câmara would write it.
func weekdays22(t *testing.T, byDay string) (*profile.Profile, error) {
	t.Helper()
	y := profile.PiumaYAML()
	i := bytes.Index(y, []byte("service_hours:\n"))
	if i < 0 {
		t.Fatal("no service_hours in the built-in profile")
	}
	i += len("service_hours:\n")
	edited := append(append(append([]byte{}, y[:i]...), byDay...), y[i:]...)
	return profile.Parse(edited, "proposal.yaml")
}

func TestServiceHoursByDay(t *testing.T) {
	p, err := weekdays22(t, "  by_day:\n    - days: [mo, tu, we, th, fr]\n      start: \"09:00\"\n      end: \"22:00\"\n")
	if err != nil {
		t.Fatal(err)
	}
	loc := p.Location()
	for _, c := range []struct {
		day        string
		start, end string
	}{
		{"2026-11-27 23:30", "09:00", "22:00"}, // a Friday
		{"2026-11-28 10:00", "09:00", "23:00"}, // a Saturday: the general hours
		{"2026-11-30 00:10", "09:00", "22:00"}, // a Monday, just after midnight
	} {
		at, _ := time.ParseInLocation("2006-01-02 15:04", c.day, loc)
		start, end := p.HoursOn(at)
		if start.String() != c.start || end.String() != c.end {
			t.Errorf("%s: %s–%s, want %s–%s", c.day, start, end, c.start, c.end)
		}
	}
	w := p.ServiceWindowOf(time.Date(2026, 11, 27, 3, 0, 0, 0, loc))
	if w.Start.Format("2006-01-02 15:04") != "2026-11-27 09:00" || w.End.Format("2006-01-02 15:04") != "2026-11-27 22:00" {
		t.Errorf("Friday's window %v – %v", w.Start, w.End)
	}
}

func TestServiceHoursByDayValidated(t *testing.T) {
	for _, c := range []struct{ byDay, want string }{
		{"  by_day:\n    - days: [seg]\n      start: \"09:00\"\n      end: \"22:00\"\n", `unknown day "seg"`},
		{"  by_day:\n    - days: [mo]\n      start: \"09:00\"\n      end: \"22:00\"\n    - days: [mo]\n      start: \"10:00\"\n      end: \"22:00\"\n", `day "mo" already has its hours`},
		{"  by_day:\n    - days: [sa]\n      start: \"9h\"\n      end: \"22:00\"\n", "service_hours.by_day[0].start"},
		{"  by_day:\n    - days: []\n      start: \"09:00\"\n      end: \"22:00\"\n", "name at least one day"},
	} {
		_, err := weekdays22(t, c.byDay)
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%q: %v, want an error with %q", c.byDay, err, c.want)
		}
	}
}
