package cases

import (
	"context"
	"errors"
	"fmt"

	"github.com/trenzinho/trenzinho/monitor/drafts"
	"github.com/trenzinho/trenzinho/rules"
)

// EpisodeGrounds is an Office.GroundsMissing over the stored episodes (episode; notFound is the
// store's error for one it does not hold): every episode of the draft not found, not readable,
// or that does not ground an auto as it stands now (rules.Episode.Draftable: grounds_auto false
// and no agent's verification that supplies the missing ground). The drafter makes no draft of
// them, so this is the last check before an auto is issued.
func EpisodeGrounds(episode func(ctx context.Context, id string) (*rules.Episode, error), notFound error) func(ctx context.Context, d *drafts.Draft) []string {
	return func(ctx context.Context, d *drafts.Draft) []string {
		var missing []string
		for _, f := range d.Facts {
			ep, err := episode(ctx, f.EpisodeID)
			if errors.Is(err, notFound) {
				missing = append(missing, fmt.Sprintf("episódio %s não encontrado", f.EpisodeID))
				continue
			}
			if err != nil {
				missing = append(missing, fmt.Sprintf("episódio %s: não foi possível lê-lo (%v)", f.EpisodeID, err))
				continue
			}
			if !ep.Draftable() {
				note := ep.GroundsNote
				if note == "" {
					note = "não fundamenta auto de infração"
				}
				missing = append(missing, fmt.Sprintf("episódio %s (%s): %s", ep.ID, ep.Rule, note))
			}
		}
		return missing
	}
}
