package rules

import (
	"slices"
	"strings"
	"testing"

	"github.com/trenzinho/trenzinho/profile"
)

// withCalendars fills the calendars Piúma's profile ships empty, as an operator would once they
// are confirmed: the school recess of 2026/2027 and a municipal holiday (the town's
// anniversary, for the test), none of them on the days the tests judge.
func withCalendars(p *profile.Profile) *profile.Profile {
	p.Calendars.SchoolRecess = []profile.DateRange{{From: "2026-07-13", To: "2026-07-31"}, {From: "2026-12-21", To: "2027-02-05"}}
	p.Holidays.Dates = append(p.Holidays.Dates, profile.DateHoliday{Date: "2026-12-24", Name: "Aniversário do município", Scope: "municipal"})
	return p
}

// An empty calendar works against the accused: with no school recess on file a school is "open"
// in January and July, with no municipal holiday a holiday is a working day. While the calendar
// an episode depends on is empty, the episode grounds no auto (calendar_unconfirmed, naming the
// calendar); filled, the same episode is judged on its other grounds.
func TestSchoolZoneSoundWithAnEmptyCalendar(t *testing.T) {
	p := profile.Piuma()
	if got := p.UnconfirmedCalendars(); !slices.Equal(got, []string{profile.CalendarSchoolRecess, profile.CalendarMunicipalHolidays}) {
		t.Fatalf("Piúma's profile ships %v empty", got)
	}
	eps := soundNear(t, p, "school-ok", 50, weekday)
	if len(eps) != 1 {
		t.Fatalf("%d episodes", len(eps))
	}
	ep := eps[0]
	if ep.GroundsAuto || !slices.Contains(ep.CalendarUnconfirmed, profile.CalendarSchoolRecess) ||
		!strings.Contains(ep.GroundsNote, "calendar_unconfirmed") || !strings.Contains(ep.GroundsNote, profile.CalendarSchoolRecess) {
		t.Fatalf("school day, recess empty: %+v", ep)
	}
	// Nor does the agent's confirmation of the music make it a draft: the calendar is missing.
	ep.Verification = &Verification{Kind: VerifyMusic}
	if ep.Needs != "" || ep.Draftable() {
		t.Errorf("needs %q, draftable %v", ep.Needs, ep.Draftable())
	}

	// The school recess filled, the municipal holidays still empty: only those are named.
	p = profile.Piuma()
	p.Calendars.SchoolRecess = withCalendars(profile.Piuma()).Calendars.SchoolRecess
	eps = soundNear(t, p, "school-ok", 50, weekday)
	if len(eps) != 1 || !slices.Equal(eps[0].CalendarUnconfirmed, []string{profile.CalendarMunicipalHolidays}) || eps[0].GroundsAuto {
		t.Fatalf("recess filled, holidays empty: %+v", eps)
	}

	// Both filled: the episode lacks only the agent's confirmation of the music (Art. 45, VII).
	eps = soundNear(t, withCalendars(profile.Piuma()), "school-ok", 50, weekday)
	if len(eps) != 1 || eps[0].CalendarUnconfirmed != nil || eps[0].Needs != VerifyMusic {
		t.Fatalf("calendars filled: %+v", eps)
	}
	ep = eps[0]
	ep.Verification = &Verification{Kind: VerifyMusic}
	if !ep.Draftable() {
		t.Error("calendars filled and music confirmed: not a draft")
	}

	// A hospital keeps its hours on holidays and is no school: it depends on no calendar.
	eps = soundNear(t, profile.Piuma(), "hospital-247", 50, weekday)
	if len(eps) != 1 || eps[0].CalendarUnconfirmed != nil {
		t.Fatalf("hospital: %+v", eps)
	}
}
