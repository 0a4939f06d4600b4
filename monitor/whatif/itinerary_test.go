package whatif_test

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"testing"
	"time"

	"github.com/trenzinho/trenzinho/geofences"
	"github.com/trenzinho/trenzinho/internal/testkit/testenv"
	"github.com/trenzinho/trenzinho/monitor/whatif"
	"github.com/trenzinho/trenzinho/monitor/whatif/fleetweek"
	"github.com/trenzinho/trenzinho/profile"
	"github.com/trenzinho/trenzinho/registry"
	"github.com/trenzinho/trenzinho/rules"
)

// proposedItinerary authorises licensee L1 on the generator's road every day from 9 to 23.
var proposedItinerary = fmt.Sprintf(`{"type":"FeatureCollection","features":[{"type":"Feature","properties":{"id":"it-l1-proposto","kind":"itinerary",
"days":"Mo-Su","hours":"09:00-23:00","licensee":"L1","name":"Itinerário proposto (estrada oeste)","source":"survey","valid_from":"2026-01-01"},
"geometry":{"type":"LineString","coordinates":[[%.6f,%.6f],[%.6f,%.6f]]}}]}`,
	fleetweek.Lon-100/fleetweek.MetresPerDegreeEast, fleetweek.Lat, fleetweek.Lon+4200/fleetweek.MetresPerDegreeEast, fleetweek.Lat)

// TestReplayItinerary: "a proposed itinerary for a licensee" is a geofences file read with the
// registry: L1's new itinerary on the generator's road clears its vehicles' route deviations,
// and makes L2's vehicle, on the same road at the same hours, a rotation conflict.
func TestReplayItinerary(t *testing.T) {
	influx := testenv.StartInflux(t)
	p := profile.Piuma()
	loc := p.Location()
	first := time.Date(2026, 11, 30, 0, 0, 0, 0, loc)
	week, err := fleetweek.Generate(fleetweek.Config{Loc: loc, First: first})
	if err != nil {
		t.Fatal(err)
	}
	writeArchive(t, influx, week.Batches, func(b fleetweek.Batch) time.Time { return b.SentAt.Add(400 * time.Millisecond) })
	dir := t.TempDir()
	example, err := os.ReadFile(filepath.Join(testenv.RepoRoot(t), "registry", "testdata", "piuma-example.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	regPath := filepath.Join(dir, "registry.yaml")
	if err := os.WriteFile(regPath, example, 0o600); err != nil {
		t.Fatal(err)
	}
	reg, err := registry.Open(regPath)
	if err != nil {
		t.Fatal(err)
	}
	reg.SetLocation(loc)
	geo := filepath.Join(dir, "geofences")
	if err := os.CopyFS(geo, mustSub(t, geofences.SampleFS(), "piuma")); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(geo, "itinerario-proposto.geojson"), []byte(proposedItinerary), 0o644); err != nil {
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
		InForce:  whatif.Side{Label: "vigente", Profile: p, ProfileYAML: profile.PiumaYAML(), Places: sample, Registry: reg},
		Proposed: whatif.Side{Label: "proposto", Profile: p, ProfileYAML: profile.PiumaYAML(), Places: proposed, Registry: reg},
		Dir:      filepath.Join(dir, "stores"),
	})
	if err != nil {
		t.Fatal(err)
	}
	// The route deviations of L1's vehicles vanish; L2's vehicle on the same road at the same
	// hours now works L1's itinerary: a rotation conflict (Art. 38 §1) appears each day.
	count := func(ds []whatif.Diff, rule, licensee string, vehicles ...string) int {
		n := 0
		for _, d := range ds {
			if d.Rule == rule && d.Licensee == licensee && slices.Contains(vehicles, d.Vehicle) {
				n++
			}
		}
		return n
	}
	if n := count(res.Vanish, rules.RuleRouteDeviation, "L1", "PIU-001", "PIU-002"); n != 14 || len(res.Vanish) != 14 {
		t.Errorf("vanish: %d route deviations of L1 of %d", n, len(res.Vanish))
	}
	if n := count(res.Appear, rules.RuleRotationConflict, "L2", "PIU-003"); n != 7 || len(res.Appear) != 7 {
		t.Errorf("appear: %d rotation conflicts of L2 of %d", n, len(res.Appear))
	}
	if res.Changed != 0 || res.Same == 0 {
		t.Errorf("changed %d, same %d", res.Changed, res.Same)
	}
	// The drafts move with the episodes: L1's 14 route drafts go; each rotation conflict joins
	// the draft of PIU-003's route deviation of its day (one conduct, one draft).
	for _, d := range res.Vanish {
		if !d.Drafted {
			t.Errorf("%s vanishes undrafted", d.ID)
		}
	}
	for _, d := range res.Appear {
		dr, ok := res.Proposed.DraftOf(d.ID)
		if !ok || len(dr.EpisodeIDs) != 2 || !slices.ContainsFunc(dr.EpisodeIDs, func(id string) bool {
			e, ok := res.Proposed.Episode(id)
			return ok && e.Rule == rules.RuleRouteDeviation && e.Vehicle == "PIU-003"
		}) {
			t.Errorf("%s: draft %+v", d.ID, dr)
		}
	}
	if len(res.Proposed.Drafts) != len(res.InForce.Drafts)-14 {
		t.Errorf("drafts %d → %d", len(res.InForce.Drafts), len(res.Proposed.Drafts))
	}
	// The vehicles the registry does not know are not judged, and the coverage says so.
	for _, v := range res.Coverage.Vehicles {
		if unknown := v.Vehicle == "PIU-004" || v.Vehicle == "PIU-005"; v.Unknown != unknown || v.Batches == 0 {
			t.Errorf("coverage %s: unknown %v, %d batches", v.Vehicle, v.Unknown, v.Batches)
		}
	}
	for _, tb := range res.Tables() {
		if tb.Dimension != "permissionario" {
			continue
		}
		var keys []string
		for _, row := range tb.Rows {
			keys = append(keys, row.Key)
		}
		slices.Sort(keys)
		if !slices.Equal(keys, []string{"L1", "L2"}) {
			t.Errorf("licensees %q", keys)
		}
	}
}
