package whatif_test

import (
	"context"
	"fmt"
	"path/filepath"
	"testing"
	"time"

	"github.com/trenzinho/trenzinho/geofences"
	"github.com/trenzinho/trenzinho/internal/testkit/testenv"
	"github.com/trenzinho/trenzinho/monitor/whatif"
	"github.com/trenzinho/trenzinho/monitor/whatif/fleetweek"
	"github.com/trenzinho/trenzinho/profile"
	"github.com/trenzinho/trenzinho/rules"
)

// TestReplayWeekdayHours: "service until 22 h on weekdays" is a few lines of the profile
// (service_hours.by_day). A week of late trips, each vehicle starting between 22:30 and 22:58:
// within the hours in force (until 23:00, 20 minutes' grace), outside the proposed ones on the
// five weekdays only, one hours episode a vehicle a weekday and nothing at the weekend.
func TestReplayWeekdayHours(t *testing.T) {
	influx := testenv.StartInflux(t)
	p := profile.Piuma()
	loc := p.Location()
	first := time.Date(2026, 11, 30, 0, 0, 0, 0, loc) // a Monday; no holiday in the week
	week, err := fleetweek.Generate(fleetweek.Config{Loc: loc, First: first, TripStart: 22*time.Hour + 30*time.Minute})
	if err != nil {
		t.Fatal(err)
	}
	writeArchive(t, influx, week.Batches, func(b fleetweek.Batch) time.Time { return b.SentAt.Add(400 * time.Millisecond) })
	dir := t.TempDir()
	proposed := profileWith(t, dir, "service_hours:\n", "service_hours:\n  by_day:\n    - days: [mo, tu, we, th, fr]\n      start: \"09:00\"\n      end: \"22:00\"\n")
	sample, err := geofences.Sample()
	if err != nil {
		t.Fatal(err)
	}
	src, err := whatif.NewInflux(whatif.InfluxConfig{URL: fmt.Sprintf("http://127.0.0.1:%d", influx.Port), Bucket: influx.Database})
	if err != nil {
		t.Fatal(err)
	}
	res, err := whatif.Run(context.Background(), whatif.Config{
		Archive: src, From: first, To: first.AddDate(0, 0, 7),
		InForce:  whatif.Side{Label: "vigente", Profile: p, ProfileYAML: profile.PiumaYAML(), Places: sample},
		Proposed: whatif.Side{Label: "proposto", Profile: proposed, ProfileYAML: []byte("until 22 h on weekdays"), Places: sample},
		Dir:      filepath.Join(dir, "stores"),
	})
	if err != nil {
		t.Fatal(err)
	}
	for _, ep := range res.InForce.Episodes {
		if ep.Rule == rules.RuleHours {
			t.Errorf("in force: an hours episode %s", ep.ID)
		}
	}
	perDay := map[string]int{}
	for _, d := range res.Appear {
		day := d.Start.In(loc)
		if d.Rule != rules.RuleHours {
			t.Errorf("appears: %s (%s)", d.ID, d.Rule)
			continue
		}
		if wd := day.Weekday(); wd == time.Saturday || wd == time.Sunday {
			t.Errorf("appears on a %s: %s", wd, d.ID)
		}
		perDay[d.Vehicle+day.Format(time.DateOnly)]++
	}
	if len(perDay) != 5*5 || len(res.Appear) != 25 {
		t.Errorf("%d hours episodes appear on %d vehicle-days, want one on each of 25", len(res.Appear), len(perDay))
	}
	if len(res.Vanish) != 0 {
		t.Errorf("%d episodes vanish", len(res.Vanish))
	}
}
