package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"

	"github.com/trenzinho/trenzinho/monitor/notice"
	"github.com/trenzinho/trenzinho/monitor/profile"
	"github.com/trenzinho/trenzinho/monitor/store"
)

// noticePDF renders the PDF of a stored draft (api.Config.RenderPDF): it reads what became of
// the draft from the store — the decision, and for an issued auto the penalty calculus and the
// agent as recorded at the issue — and gives the renderer plain data (package notice does not
// read the store). The mini-map is drawn over the dashboard's tiles (tileURL, from the
// configuration only) when set, else as the vector sketch.
func noticePDF(db *store.DB, prof *profile.Profile, tileURL, version string, log *slog.Logger) func(io.Writer, *store.DraftRecord) error {
	var tiles *notice.Tiles
	if tileURL != "" {
		tiles = &notice.Tiles{URL: tileURL, UserAgent: "trenzinho-monitor/" + version, Logger: log}
	}
	return func(w io.Writer, d *store.DraftRecord) error {
		in := notice.Input{Sealed: d.Sealed, Profile: prof, Addenda: len(d.Addenda), Tiles: tiles,
			Decision: notice.Decision{Status: d.Status, Notice: d.Notice, DecidedBy: d.DecidedBy, Reason: d.Reason}}
		if d.DecidedAt != nil {
			t := d.DecidedAt.Time
			in.Decision.DecidedAt = &t
		}
		c, err := db.CaseByDraft(context.Background(), d.Sealed.ID)
		switch {
		case errors.Is(err, store.ErrNotFound): // not issued
		case err != nil:
			return fmt.Errorf("notice of %s: %w", d.Sealed.ID, err)
		default:
			if c.Assessment != nil {
				// The penalty calculus made when the draft was issued: fine in R$, recidivism.
				in.Penalty = notice.PenaltyOf(c.Assessment, c.Licensee, c.Issued, prof.Location())
			}
			if a := c.IssuerAgent; a != nil {
				in.Decision.Agent = &notice.Agent{FullName: a.FullName, Matricula: a.Matricula, Cargo: a.Cargo}
			}
		}
		return notice.Render(w, in)
	}
}
