package main

import (
	"context"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/trenzinho/trenzinho/monitor/cases"
	"github.com/trenzinho/trenzinho/monitor/drafts"
	"github.com/trenzinho/trenzinho/monitor/store"
	"github.com/trenzinho/trenzinho/rules"
	"github.com/trenzinho/trenzinho/wire"
)

// cases.EpisodeGrounds over the store is the last check before an auto is issued: an episode of the draft that, as
// stored now, does not ground an auto (and has no verification that supplies its missing
// ground), or that is not in the store at all, is a grounds_missing reason.
func TestGroundsMissing(t *testing.T) {
	ctx := context.Background()
	db, err := store.Open(ctx, filepath.Join(t.TempDir(), "monitor.db"))
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	start := wire.NewTime(time.Date(2026, 11, 27, 22, 0, 0, 0, time.UTC))
	end := wire.NewTime(start.Add(time.Minute))
	grounded := &rules.Episode{ID: "PIU-001.speed.1", Vehicle: "PIU-001", Rule: rules.RuleSpeed,
		Start: start, End: &end, GroundsAuto: true}
	alert := &rules.Episode{ID: "PIU-001.noise_limit.1", Vehicle: "PIU-001", Rule: rules.RuleNoiseLimit,
		Start: start, End: &end, GroundsNote: "estimativa no receptor: indício, não medição NBR 10151",
		Needs: rules.VerifyNBR10151}
	for _, e := range []*rules.Episode{grounded, alert} {
		if err := db.UpsertEpisode(ctx, e, nil); err != nil {
			t.Fatal(err)
		}
	}
	check := cases.EpisodeGrounds(db.Episode, store.ErrNotFound)
	if got := check(ctx, &drafts.Draft{Facts: []drafts.Fact{{EpisodeID: grounded.ID}}}); len(got) != 0 {
		t.Errorf("a grounded episode: %q, want no reason", got)
	}
	got := check(ctx, &drafts.Draft{Facts: []drafts.Fact{{EpisodeID: grounded.ID}, {EpisodeID: alert.ID}, {EpisodeID: "gone"}}})
	if len(got) != 2 || !strings.Contains(got[0], alert.ID) || !strings.Contains(got[0], "indício") ||
		!strings.Contains(got[1], "gone") || !strings.Contains(got[1], "não encontrado") {
		t.Errorf("an alert and a missing episode: %q", got)
	}
	// The agent's NBR 10151 measurement supplies the only ground the alert lacked.
	alert.Verification = &rules.Verification{Kind: rules.VerifyNBR10151, By: "fiscal", At: end}
	if err := db.UpsertEpisode(ctx, alert, nil); err != nil {
		t.Fatal(err)
	}
	if got := check(ctx, &drafts.Draft{Facts: []drafts.Fact{{EpisodeID: alert.ID}}}); len(got) != 0 {
		t.Errorf("a verified alert: %q, want no reason", got)
	}
}
