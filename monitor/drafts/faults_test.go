package drafts_test

import (
	"context"
	"crypto/ed25519"
	"encoding/json"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/trenzinho/trenzinho/monitor/drafts"
	"github.com/trenzinho/trenzinho/rules"
)

// commitEngine drains the engine and commits its changes without a batch, as the judge does
// after recording a fault of a batch it did not judge.
func (f *regFixture) commitEngine(t *testing.T) {
	t.Helper()
	c, err := f.engine.Drain()
	if err != nil {
		t.Fatal(err)
	}
	if err := f.db.Commit(context.Background(), &c, nil); err != nil {
		t.Fatal(err)
	}
}

// speedDraft returns the speed draft among made, its sealed bundle verified, and the bundle's
// raw JSON keys.
func (f *regFixture) speedDraft(t *testing.T, made []drafts.Made) (drafts.Draft, *drafts.Bundle, map[string]json.RawMessage) {
	t.Helper()
	i := slices.IndexFunc(made, func(m drafts.Made) bool { return slices.Contains(m.Draft.Rules, "speed") })
	if i < 0 {
		t.Fatalf("no speed draft among %d", len(made))
	}
	b, err := drafts.Verify(&made[i].Sealed, f.key.Public().(ed25519.PublicKey))
	if err != nil {
		t.Fatalf("the draft does not verify: %v", err)
	}
	var keys map[string]json.RawMessage
	if err := json.Unmarshal(made[i].Sealed.Bundle, &keys); err != nil {
		t.Fatal(err)
	}
	// The draft as stored is the draft as sealed (the integrity check compares them).
	stored, err := f.db.DraftByID(context.Background(), made[i].Draft.ID)
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(stored.Doc.Warnings, b.Draft.Warnings) {
		t.Errorf("stored warnings %q, sealed %q", stored.Doc.Warnings, b.Draft.Warnings)
	}
	return made[i].Draft, b, keys
}

// A vehicle whose device sent a conflicting replay, or whose clock ran ahead, while it was
// speeding: the speed draft freezes the fault episode into its sealed bundle, beside (not among)
// its own episodes, and its warnings tell the agent; faults outside the evidence window and of
// other vehicles are not carried, and a draft without faults has none.
func TestDraftCarriesTheVehiclesTelemetryFaults(t *testing.T) {
	// speeding() is over 45 km/h from 60 s to 80 s; the evidence window ends 2 minutes later.
	inPeriod := noonFriday.Add(70 * time.Second)
	for _, tc := range []struct {
		name   string
		inject func(f *regFixture)
		rule   string // the fault carried, "" for none
		open   bool   // the vehicle stops for less than 10 min after: its fault is still open
		want   string // in the warning
	}{
		{"conflicting replay", func(f *regFixture) { f.engine.Conflict("PIU-001", "e-1", 3, inPeriod) },
			rules.TelemetryConflictRule, true, "enviou dados conflitantes (mesmo número de sequência com conteúdo diferente: 1 lote, recebidos desde 27/11/2026 12:01:10, em andamento"},
		{"clock fault", func(f *regFixture) { f.engine.ClockFault("PIU-001", 23*time.Hour, inPeriod) },
			rules.ClockFaultRule, false, "o relógio do equipamento do veículo esteve adiantado em relação ao horário de recepção (até 82800 s, de 27/11/2026 12:01:10 a 27/11/2026 12:01:10"},
		{"none", func(f *regFixture) {
			// Another vehicle's conflict in the period, and this vehicle's clock fault an hour
			// before (closed by its first right batch): neither is this draft's.
			f.engine.Conflict("PIU-002", "e-9", 3, inPeriod)
			f.engine.ClockFault("PIU-001", time.Hour, noonFriday.Add(-time.Hour))
		}, "", false, ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			f := newRegFixture(t)
			tc.inject(f)
			f.commitEngine(t)
			// Then speeding, and stopped: long enough for a fault to clear (10 min), or not.
			stop := 700
			if tc.open {
				stop = 60
			}
			f.play(t, "PIU-001", noonFriday, "000000000086H101", slices.Concat(speeding(), repeat(0, stop)))
			d, b, keys := f.speedDraft(t, f.drafts(t))

			if len(b.Episodes) != 1 || b.Episodes[0].Rule != "speed" || len(d.EpisodeIDs) != 1 {
				t.Errorf("the draft's own episodes: %d in the bundle, ids %v", len(b.Episodes), d.EpisodeIDs)
			}
			var faultWarnings []string
			for _, w := range d.Warnings {
				if strings.Contains(w, "verificar antes de autuar") {
					faultWarnings = append(faultWarnings, w)
				}
			}
			if tc.rule == "" {
				if len(b.Faults) != 0 || len(faultWarnings) != 0 {
					t.Errorf("a draft without faults carries %+v, warns %q", b.Faults, faultWarnings)
				}
				if _, ok := keys["faults"]; ok {
					t.Error("a bundle without faults has a faults key")
				}
				return
			}
			if len(b.Faults) != 1 {
				t.Fatalf("%d faults in the bundle, want 1: %+v", len(b.Faults), b.Faults)
			}
			fe := b.Faults[0]
			if fe.Rule != tc.rule || fe.Vehicle != "PIU-001" || fe.Open() != tc.open || slices.Contains(d.EpisodeIDs, fe.ID) {
				t.Errorf("fault %s %s of %s, open %v (want %v), among the draft's facts %v", fe.ID, fe.Rule, fe.Vehicle, fe.Open(), tc.open, d.EpisodeIDs)
			}
			if len(faultWarnings) != 1 || !strings.HasPrefix(faultWarnings[0], "Durante o período, o ") ||
				!strings.Contains(faultWarnings[0], tc.want) || !strings.Contains(faultWarnings[0], fe.ID) {
				t.Errorf("warnings %q, want one with %q and %s", d.Warnings, tc.want, fe.ID)
			}
			if !slices.Equal(b.Draft.Warnings, d.Warnings) {
				t.Errorf("sealed warnings %q, made %q", b.Draft.Warnings, d.Warnings)
			}
		})
	}
}
