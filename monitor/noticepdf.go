package main

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"log/slog"

	"github.com/trenzinho/trenzinho/monitor/drafts"
	"github.com/trenzinho/trenzinho/monitor/notice"
	"github.com/trenzinho/trenzinho/monitor/store"
	"github.com/trenzinho/trenzinho/profile"
)

// noticePDF renders the PDF of a stored draft (api.Config.RenderPDF): it reads what became of
// the draft from the store — the decision, and for an issued auto the penalty calculus and the
// agent as recorded at the issue — and gives the renderer plain data (package notice does not
// read the store). The mini-map is drawn over the dashboard's tiles (tileURL, from the
// configuration only) when set, else as the vector sketch.
//
// An issued auto carries its public verification code (assigned here if the issue did not):
// the path /v/<code>, and with publicURL (TRENZINHO_PUBLIC_URL) the full URL and its QR code.
// The SHA-256 of every PDF rendered of an issued auto is recorded, so that the public page can
// tell whether an uploaded PDF is one the monitor issued.
func noticePDF(db *store.DB, prof *profile.Profile, tileURL, publicURL, version string, log *slog.Logger) func(io.Writer, *store.DraftRecord) error {
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
			// Handed over at its issue: delivered in hand on the day of issue, recorded before
			// the document was frozen (the issue's handed_over). Only then is the last day to
			// defend known to the auto (Art. 55: from the receipt).
			in.Decision.HandedOver = c.HandedOverAtIssue(prof.Location())
			for _, dev := range c.Instruments {
				in.Verified = append(in.Verified, notice.DeviceOf(dev))
			}
			if a := c.IssuerAgent; a != nil {
				in.Decision.Agent = &notice.Agent{FullName: a.FullName, Matricula: a.Matricula, Cargo: a.Cargo}
			}
		}
		if d.Status != drafts.StatusIssued {
			return notice.Render(w, in)
		}
		code, err := db.PublicCode(context.Background(), d.Sealed.ID)
		if err != nil {
			return fmt.Errorf("notice of %s: %w", d.Sealed.ID, err)
		}
		in.Public = &notice.Public{Path: "/v/" + code}
		if publicURL != "" {
			in.Public.URL = publicURL + in.Public.Path
		}
		// Rendered whole before it is sent, so that the hash recorded is of a complete PDF.
		var buf bytes.Buffer
		if err := notice.Render(&buf, in); err != nil {
			return err
		}
		sum := sha256.Sum256(buf.Bytes())
		if err := db.RecordPublicPDF(context.Background(), d.Sealed.ID, hex.EncodeToString(sum[:])); err != nil {
			return fmt.Errorf("notice of %s: %w", d.Sealed.ID, err)
		}
		_, err = w.Write(buf.Bytes())
		return err
	}
}
