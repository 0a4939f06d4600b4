package whatif

import (
	"testing"
	"time"

	"github.com/trenzinho/trenzinho/profile"
)

// TestGapsWithinServiceHours: a silence is a gap only for the part of it within the profile's
// service hours (09:00–23:00 in Piúma), day by day in local time.
func TestGapsWithinServiceHours(t *testing.T) {
	p := profile.Piuma()
	loc := p.Location()
	at := func(d, h, m int) time.Time { return time.Date(2026, 1, d, h, m, 0, 0, loc) }
	got := inServiceHours(p, Gap{Vehicle: "PIU-001", From: at(5, 8, 0), To: at(6, 10, 0)})
	want := []Gap{{"PIU-001", at(5, 9, 0).UTC(), at(5, 23, 0).UTC()}, {"PIU-001", at(6, 9, 0).UTC(), at(6, 10, 0).UTC()}}
	if len(got) != len(want) {
		t.Fatalf("%v, want %v", got, want)
	}
	for k := range got {
		if !got[k].From.Equal(want[k].From) || !got[k].To.Equal(want[k].To) {
			t.Errorf("gap %d: %v–%v, want %v–%v", k, got[k].From, got[k].To, want[k].From, want[k].To)
		}
	}
	// A night's silence is no gap.
	if g := inServiceHours(p, Gap{From: at(5, 23, 30), To: at(6, 8, 45)}); len(g) != 0 {
		t.Errorf("night: %v", g)
	}

	// The coverage of a vehicle silent from 12:00 to 15:00 and after 18:00 of a day.
	c := Coverage{Vehicles: []VehicleCoverage{{Vehicle: "PIU-001", Batches: 2, First: at(5, 9, 0), Last: at(5, 18, 0),
		silences: []Gap{{"PIU-001", at(5, 12, 0), at(5, 15, 0)}}, hours: map[int64]bool{1: true, 2: true}}}}
	c.finish(p, at(5, 0, 0), at(6, 0, 0))
	if len(c.Gaps) != 2 || c.Gaps[0].Duration() != 5*time.Hour || c.Gaps[1].Duration() != 3*time.Hour || c.GapHours() != 8 {
		t.Errorf("gaps %v (%v h)", c.Gaps, c.GapHours())
	}
	if c.Vehicles[0].HoursWithData != 2 {
		t.Errorf("hours with data %d", c.Vehicles[0].HoursWithData)
	}
}
