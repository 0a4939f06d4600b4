package store

import (
	"context"
	"errors"
	"fmt"
	"reflect"
	"testing"
	"time"

	"github.com/trenzinho/trenzinho/rules"
	"github.com/trenzinho/trenzinho/wire"
)

var t0 = time.Date(2026, 11, 29, 15, 0, 0, 250e6, time.UTC)

func testEpisode(vehicle, rule string, start time.Time, open bool) *rules.Episode {
	area := "mixed_residential"
	e := &rules.Episode{
		ID:        fmt.Sprintf("%s:%s:%s", vehicle, rule, wire.NewTime(start)),
		Vehicle:   vehicle,
		Rule:      rule,
		Article:   "Art. 23",
		Penalty:   "Art. 46, X",
		Start:     wire.NewTime(start),
		Peak:      41.3,
		Unit:      "km/h",
		Limit:     30,
		Tolerance: 7,
		Lat:       -20.8367,
		Lon:       -40.7292,
		PeakAt:    wire.NewTime(start.Add(5 * time.Second)),
		Area:      &area,
		Source:    "tacho",
		Epoch:     "e-7f3a9c",
		Evidence:  3,
	}
	if !open {
		end := wire.NewTime(start.Add(30 * time.Second))
		reason := rules.ClosedCleared
		e.End, e.Closed, e.DurationS = &end, &reason, 30
	}
	return e
}

func testEvidence(n int) []rules.Evidence {
	ev := make([]rules.Evidence, n)
	for i := range ev {
		lat, lon := -20.8367+float64(i)*1e-5, -40.7292
		ev[i] = rules.Evidence{Kind: "tacho", Epoch: "e-7f3a9c", Seq: 1042 + uint64(i), T: wire.NewTime(t0.Add(time.Duration(i) * time.Second)),
			Value: 38.5 + float64(i), Unit: "km/h", Lat: &lat, Lon: &lon}
	}
	ev[0].Lat, ev[0].Lon = nil, nil // a reading without position
	return ev
}

func TestUpsertEpisodeIdempotent(t *testing.T) {
	ctx := context.Background()
	db := openTemp(t)
	e := testEpisode("PIU-001", "speed", t0, true)
	ev := testEvidence(3)

	for range 3 { // a replay stores the same state again
		if err := db.UpsertEpisode(ctx, e, ev); err != nil {
			t.Fatal(err)
		}
	}
	var n int
	if err := db.db.QueryRowContext(ctx, `SELECT count(*) FROM episodes`).Scan(&n); err != nil {
		t.Fatal(err)
	}
	if n != 1 {
		t.Fatalf("%d episode rows after replays, want 1", n)
	}
	got, err := db.Episode(ctx, e.ID)
	if err != nil {
		t.Fatal(err)
	}
	want := *e
	want.Readings = ev
	if !reflect.DeepEqual(got, &want) {
		t.Errorf("Episode =\n%+v\nwant\n%+v", got, &want)
	}

	// The episode goes on, then closes: new evidence adds up, old evidence is not repeated.
	more := append(testEvidence(3), rules.Evidence{Kind: "gps", Epoch: "e-7f3a9c", Seq: 1044, T: wire.NewTime(t0.Add(2 * time.Second)), Value: 40.1, Unit: "km/h"})
	more = append(more, more[1]) // a duplicate within one call
	closed := testEpisode("PIU-001", "speed", t0, false)
	if err := db.UpsertEpisode(ctx, closed, more); err != nil {
		t.Fatal(err)
	}
	got, err = db.Episode(ctx, e.ID)
	if err != nil {
		t.Fatal(err)
	}
	if len(got.Readings) != 4 {
		t.Errorf("%d readings, want 4 (3 tacho + 1 gps, no duplicates)", len(got.Readings))
	}
	if got.Open() || got.Closed == nil || *got.Closed != rules.ClosedCleared {
		t.Errorf("episode not closed: end %v closed %v", got.End, got.Closed)
	}
	for i := 1; i < len(got.Readings); i++ {
		if got.Readings[i].T.Before(got.Readings[i-1].T.Time) {
			t.Errorf("readings not in time order: %+v", got.Readings)
		}
	}
	if open, err := db.OpenEpisodes(ctx); err != nil || len(open) != 0 {
		t.Errorf("OpenEpisodes after close = %v, %v", open, err)
	}

	if _, err := db.Episode(ctx, "nada"); !errors.Is(err, ErrNotFound) {
		t.Errorf("unknown episode: %v", err)
	}
	if err := db.UpsertEpisode(ctx, &rules.Episode{ID: "x"}, nil); err == nil {
		t.Error("episode without vehicle, rule and start accepted")
	}
}

func TestEpisodesPagination(t *testing.T) {
	ctx := context.Background()
	db := openTemp(t)
	// 57 episodes over 3 vehicles and 2 rules, several starting at the same instant so that
	// the id must break ties across page boundaries.
	want := map[string]bool{}
	for i := range 57 {
		vehicle := fmt.Sprintf("PIU-%03d", i%3+1)
		rule := []string{"speed", "hours"}[i%2]
		start := t0.Add(time.Duration(i/4) * time.Minute)
		e := testEpisode(vehicle, rule, start, i%5 == 0)
		if want[e.ID] {
			continue
		}
		want[e.ID] = true
		if err := db.UpsertEpisode(ctx, e, nil); err != nil {
			t.Fatal(err)
		}
	}

	for _, limit := range []int{1, 7, 10, 56, 57, 100} {
		seen := map[string]bool{}
		var prev *rules.Episode
		cursor := ""
		for pages := 0; ; pages++ {
			if pages > len(want)+1 {
				t.Fatalf("limit %d: pagination does not end", limit)
			}
			items, next, err := db.Episodes(ctx, EpisodeFilter{}, limit, cursor)
			if err != nil {
				t.Fatal(err)
			}
			if len(items) > limit {
				t.Fatalf("limit %d: page of %d", limit, len(items))
			}
			for i := range items {
				e := &items[i]
				if seen[e.ID] {
					t.Fatalf("limit %d: %s twice", limit, e.ID)
				}
				seen[e.ID] = true
				if prev != nil && (e.Start.After(prev.Start.Time) || e.Start.Equal(prev.Start.Time) && e.ID <= prev.ID) {
					t.Fatalf("limit %d: %s after %s", limit, e.ID, prev.ID)
				}
				if e.Readings != nil {
					t.Fatalf("list items carry readings")
				}
				prev = e
			}
			if next == "" {
				break
			}
			cursor = next
		}
		if len(seen) != len(want) {
			t.Errorf("limit %d: %d episodes over the pages, want %d", limit, len(seen), len(want))
		}
	}

	if _, _, err := db.Episodes(ctx, EpisodeFilter{}, 10, "not a cursor"); !errors.Is(err, ErrBadCursor) {
		t.Errorf("bad cursor: %v", err)
	}
	if _, _, err := db.Episodes(ctx, EpisodeFilter{}, 10, encodeCursor("abc:def")); !errors.Is(err, ErrBadCursor) {
		t.Errorf("bad cursor key: %v", err)
	}
}

func TestEpisodesFilter(t *testing.T) {
	ctx := context.Background()
	db := openTemp(t)
	eps := []*rules.Episode{
		testEpisode("PIU-001", "speed", t0, false),                     // t0 .. t0+30s
		testEpisode("PIU-001", "hours", t0.Add(time.Hour), true),       // t0+1h .. open
		testEpisode("PIU-002", "speed", t0.Add(2*time.Hour), false),    // t0+2h .. t0+2h30s
		testEpisode("PIU-002", "speed", t0.Add(-time.Hour), false),     // t0-1h .. t0-1h+30s
		testEpisode("PIU-003", "noise_limit", t0.Add(time.Hour), true), // t0+1h .. open
	}
	for _, e := range eps {
		if err := db.UpsertEpisode(ctx, e, nil); err != nil {
			t.Fatal(err)
		}
	}
	yes, no := true, false
	for _, c := range []struct {
		name string
		f    EpisodeFilter
		want []int // indexes into eps, in order
	}{
		{"all", EpisodeFilter{}, []int{2, 1, 4, 0, 3}},
		{"vehicle", EpisodeFilter{Vehicle: "PIU-002"}, []int{2, 3}},
		{"rule", EpisodeFilter{Rule: "speed"}, []int{2, 0, 3}},
		{"open", EpisodeFilter{Open: &yes}, []int{1, 4}},
		{"closed", EpisodeFilter{Open: &no}, []int{2, 0, 3}},
		{"vehicle and rule", EpisodeFilter{Vehicle: "PIU-001", Rule: "speed"}, []int{0}},
		// Overlapping [t0+10s, t0+90m): the first one (ends t0+30s) and the open ones.
		{"window", EpisodeFilter{From: t0.Add(10 * time.Second), To: t0.Add(90 * time.Minute)}, []int{1, 4, 0}},
		{"from", EpisodeFilter{From: t0.Add(time.Minute)}, []int{2, 1, 4}},
		{"to", EpisodeFilter{To: t0}, []int{3}},
	} {
		got, next, err := db.Episodes(ctx, c.f, 0, "")
		if err != nil {
			t.Fatal(err)
		}
		var ids, wantIDs []string
		for _, e := range got {
			ids = append(ids, e.ID)
		}
		for _, i := range c.want {
			wantIDs = append(wantIDs, eps[i].ID)
		}
		if !reflect.DeepEqual(ids, wantIDs) || next != "" {
			t.Errorf("%s: got %v (next %q), want %v", c.name, ids, next, wantIDs)
		}
	}

	open, err := db.OpenEpisodes(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if len(open) != 2 || open[0].ID != eps[1].ID || open[1].ID != eps[4].ID {
		t.Errorf("OpenEpisodes = %+v", open)
	}
}

// TestConcurrentWriters checks that writers queue on the busy timeout instead of failing.
func TestConcurrentWriters(t *testing.T) {
	ctx := context.Background()
	db := openTemp(t)
	const writers, each = 8, 20
	errs := make(chan error, writers)
	for w := range writers {
		go func() {
			for i := range each {
				e := testEpisode(fmt.Sprintf("PIU-%03d", w), "speed", t0.Add(time.Duration(i)*time.Minute), true)
				if err := db.UpsertEpisode(ctx, e, testEvidence(2)); err != nil {
					errs <- err
					return
				}
				if err := db.Audit(ctx, AuditEntry{Action: "test", Object: e.ID}); err != nil {
					errs <- err
					return
				}
			}
			errs <- nil
		}()
	}
	for range writers {
		if err := <-errs; err != nil {
			t.Fatal(err)
		}
	}
	open, err := db.OpenEpisodes(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if len(open) != writers*each {
		t.Errorf("%d episodes, want %d", len(open), writers*each)
	}
}
