package whatif_test

import (
	"context"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/trenzinho/trenzinho/geofences"
	"github.com/trenzinho/trenzinho/internal/testkit/testenv"
	"github.com/trenzinho/trenzinho/monitor/whatif"
	"github.com/trenzinho/trenzinho/monitor/whatif/fleetweek"
	"github.com/trenzinho/trenzinho/profile"
	"github.com/trenzinho/trenzinho/rules"
)

// newSchool is a proposed school 100 m north of the generator's road, 300 m east of where the
// trips start, open on weekdays from 7 to 12.
var newSchool = fmt.Sprintf(`{"type":"FeatureCollection","features":[{"type":"Feature","properties":{"id":"s-escola-nova","kind":"sensitive",
"category":"school","name":"Escola Municipal Nova","opening_hours":"Mo-Fr 07:00-12:00; PH off","source":"survey"},
"geometry":{"type":"Point","coordinates":[%.6f,%.6f]}}]}`, fleetweek.Lon+300/fleetweek.MetresPerDegreeEast, fleetweek.Lat+100/111320.0)

// TestReplayNewSchool: the question "and with a new school here?" is a geofences file, and "a
// radius of 50 m instead of 200?" a line of the profile: no code.
// A week of trips with the meter at 80 dB(A) past where the school would be: with the school,
// one sensitive_zone_sound episode per vehicle per weekday appears, at the school; nothing else
// changes, and no auto is added (sound not confirmed as music by an agent grounds none).
func TestReplayNewSchool(t *testing.T) {
	influx := testenv.StartInflux(t)
	p := profile.Piuma()
	loc := p.Location()
	first := time.Date(2026, 11, 30, 0, 0, 0, 0, loc) // a Monday; no holiday in the week
	week, err := fleetweek.Generate(fleetweek.Config{Loc: loc, First: first, SoundDB: 80})
	if err != nil {
		t.Fatal(err)
	}
	writeArchive(t, influx, week.Batches, func(b fleetweek.Batch) time.Time { return b.SentAt.Add(400 * time.Millisecond) })

	// The proposal's geofences: the sample set and the new school's file, in one directory.
	dir := t.TempDir()
	geo := filepath.Join(dir, "geofences")
	if err := os.CopyFS(geo, mustSub(t, geofences.SampleFS(), "piuma")); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(geo, "escola-nova.geojson"), []byte(newSchool), 0o644); err != nil {
		t.Fatal(err)
	}
	proposed, err := geofences.Load(geo)
	if err != nil {
		t.Fatal(err)
	}
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
		Proposed: whatif.Side{Label: "proposto", Profile: p, ProfileYAML: profile.PiumaYAML(), Places: proposed},
		Dir:      filepath.Join(dir, "stores"),
	})
	if err != nil {
		t.Fatal(err)
	}
	perDay := map[string]int{}
	for _, d := range res.Appear {
		if d.Rule != rules.RuleSensitiveZoneSound || d.Site == nil || d.Site.ID != "s-escola-nova" || d.Drafted {
			t.Errorf("appears: %s at %+v, drafted %v", d.ID, d.Site, d.Drafted)
			continue
		}
		day := d.Start.In(loc)
		if wd := day.Weekday(); wd == time.Saturday || wd == time.Sunday {
			t.Errorf("appears on a %s: %s", wd, d.ID)
		}
		perDay[d.Vehicle+day.Format(time.DateOnly)]++
	}
	if len(perDay) != 5*5 || len(res.Appear) != 25 {
		t.Errorf("%d episodes appear on %d vehicle-days, want one on each of 25", len(res.Appear), len(perDay))
	}
	if len(res.Vanish) != 0 || res.Changed != 0 || res.Same != len(res.InForce.Episodes) || res.Same == 0 {
		t.Errorf("vanish %d, changed %d, same %d of %d", len(res.Vanish), res.Changed, res.Same, len(res.InForce.Episodes))
	}
	if len(res.Proposed.Drafts) != len(res.InForce.Drafts) {
		t.Errorf("drafts: %d in force, %d proposed", len(res.InForce.Drafts), len(res.Proposed.Drafts))
	}
	for _, tb := range res.Tables() {
		if tb.Dimension != "local" {
			continue
		}
		for _, row := range tb.Rows {
			if row.Key == "s-escola-nova" && (row.Proposed.Episodes != 25 || row.InForce.Episodes != 0 || row.Label != "Escola Municipal Nova") {
				t.Errorf("the school's row: %+v", row)
			}
		}
	}

	// The radius 200 → 50 m, with the school in force: the school is 100 m from the road, so
	// its episodes vanish, and nothing else changes.
	narrow := profileWith(t, dir, "sensitive:\n  categories: [hospital, health, school, library, public_office, church]   # Art. 28\n  radius_m: 200",
		"sensitive:\n  categories: [hospital, health, school, library, public_office, church]   # Art. 28\n  radius_m: 50")
	res, err = whatif.Run(context.Background(), whatif.Config{
		Archive: src, From: first, To: first.AddDate(0, 0, 7),
		InForce:  whatif.Side{Label: "vigente", Profile: p, ProfileYAML: profile.PiumaYAML(), Places: proposed},
		Proposed: whatif.Side{Label: "proposto", Profile: narrow, ProfileYAML: []byte("radius 50"), Places: proposed},
		Dir:      filepath.Join(dir, "stores-50m"),
	})
	if err != nil {
		t.Fatal(err)
	}
	if len(res.Vanish) != 25 || len(res.Appear) != 0 || res.Changed != 0 {
		t.Errorf("radius 50 m: vanish %d, appear %d, changed %d", len(res.Vanish), len(res.Appear), res.Changed)
	}
	for _, d := range res.Vanish {
		if d.Rule != rules.RuleSensitiveZoneSound || d.Site == nil || d.Site.ID != "s-escola-nova" || len(d.Readings) == 0 {
			t.Errorf("vanishes: %s at %+v, %d readings", d.ID, d.Site, len(d.Readings))
		}
	}
}

// profileWith is Piúma's profile with one passage of its YAML replaced.
func profileWith(t *testing.T, dir, old, new string) *profile.Profile {
	t.Helper()
	y := string(profile.PiumaYAML())
	if !strings.Contains(y, old) {
		t.Fatalf("the profile has no %q", old)
	}
	path := filepath.Join(dir, "variant.yaml")
	if err := os.WriteFile(path, []byte(strings.Replace(y, old, new, 1)), 0o644); err != nil {
		t.Fatal(err)
	}
	p, err := profile.Load(path)
	if err != nil {
		t.Fatal(err)
	}
	return p
}

func mustSub(t *testing.T, fsys fs.FS, dir string) fs.FS {
	t.Helper()
	sub, err := fs.Sub(fsys, dir)
	if err != nil {
		t.Fatal(err)
	}
	return sub
}
