package cases

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/trenzinho/trenzinho/monitor/drafts"
	"github.com/trenzinho/trenzinho/wire"
)

// A speed fact measured by a tachograph whose verification ran out before the fact is refused
// with instrument_unverified; once the registry holds its renewal (a verification valid on the
// fact's date) the refusal is gone and the case names the instrument as verified.
func TestIssueRefusedInstrumentUnverified(t *testing.T) {
	ctx := context.Background()
	m := newMemory()
	now := time.Date(2026, 10, 2, 10, 0, 0, 0, sp)
	o := newOffice(t, m, &now)
	expired := tachograph
	expired.INMETROVerification, expired.ValidUntil = "2025-09-01", "2026-09-30"
	putDraftWith(t, m, "D1", time.Date(2026, 10, 1, 15, 0, 0, 0, sp), func(d *drafts.Draft) {
		d.Facts[0].Instrument = &expired
		d.Registry.Devices = []drafts.Device{expired}
	})

	onFile := expired
	o.InstrumentOnFile = func(_ context.Context, vehicle, kind, serial string) (drafts.Device, bool) {
		if vehicle != "PIU-001" || kind != "tachograph" || serial != expired.Serial {
			return drafts.Device{}, false
		}
		return onFile, true
	}
	_, _, err := o.Issue(ctx, "D1", "", joao)
	var e *Error
	if !errors.As(err, &e) || len(e.Reasons) != 1 || e.Reasons[0].Code != ReasonInstrumentUnverified ||
		!strings.Contains(e.Reasons[0].Text, "tacógrafo nº TC-1") || !strings.Contains(e.Reasons[0].Text, "válida só até 30/09/2026") {
		t.Fatalf("expired tachograph: %v %+v", err, e)
	}

	// A verification dated after the fact does not cover it either.
	onFile.INMETROVerification, onFile.ValidUntil = "2026-10-02", "2027-10-01"
	if _, _, err := o.Issue(ctx, "D1", "", joao); !errors.As(err, &e) || e.Reasons[0].Code != ReasonInstrumentUnverified ||
		!strings.Contains(e.Reasons[0].Text, "depois do fato") {
		t.Fatalf("verified after the fact: %v", err)
	}

	// Renewed in the registry, verified before the fact.
	onFile.INMETROVerification, onFile.ValidUntil = "2026-09-28", "2027-09-27"
	c, _, err := o.Issue(ctx, "D1", "", joao)
	if err != nil {
		t.Fatalf("renewed: %v", err)
	}
	if len(c.Instruments) != 1 || c.Instruments[0].Serial != "TC-1" || c.Instruments[0].INMETROVerification != "2026-09-28" {
		t.Errorf("the case names %+v", c.Instruments)
	}
}

// Without a registered instrument the fact relies on, or with no verification on file, the
// auto is refused; a rule that cites no measured value needs none.
func TestInstrumentsOfTheFacts(t *testing.T) {
	s := wire.NewTime(time.Date(2026, 10, 1, 15, 0, 0, 0, sp))
	d := &drafts.Draft{Vehicle: "PIU-001", Facts: []drafts.Fact{
		{EpisodeID: "a", Rule: "speed", Start: s, End: s},
		{EpisodeID: "b", Rule: "noise_limit", Start: s, End: s, Instrument: &drafts.Device{Kind: "slm", Serial: "S1"}},
		{EpisodeID: "c", Rule: "hours", Start: s, End: s},
		{EpisodeID: "d", Rule: "noise_limit", Start: s, End: s, Instrument: &drafts.Device{Kind: "slm", Serial: "S2",
			INMETROVerification: "2025-01-01", Calibration: "2026-09-01", ValidUntil: "2027-08-31"}},
	}}
	fit, unfit := instruments(context.Background(), d, nil, sp)
	if len(unfit) != 2 || !strings.Contains(unfit[0], "não consta do cadastro") || !strings.Contains(unfit[1], "nem validade") {
		t.Errorf("unfit %q", unfit)
	}
	if len(fit) != 1 || fit[0].Serial != "S2" {
		t.Errorf("fit %+v", fit)
	}
}
