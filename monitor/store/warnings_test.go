package store

import (
	"context"
	"testing"
	"time"

	"github.com/trenzinho/trenzinho/rules"
	"github.com/trenzinho/trenzinho/wire"
)

func warningAt(at time.Time, kind wire.WarningKind, rule, site string) wire.Warning {
	d := 290.0
	return wire.Warning{T: wire.NewTime(at), Kind: kind, Rule: rule, Site: site, DistanceM: &d}
}

// TestWarningsStoredOnce: the warnings of a judged batch are stored in its commit, once however
// often the batch is committed again, with the batch's clock and the vehicle's licensee.
func TestWarningsStoredOnce(t *testing.T) {
	ctx := context.Background()
	db := openTemp(t)
	b := Batch{Vehicle: "PIU-001", Epoch: "e-1", Seq: 7, ReceivedAt: t0, TMin: t0, TMax: t0.Add(time.Second), Payload: []byte(`{}`),
		Clock: wire.ClockGPS, Licensee: "L1",
		Warnings: []wire.Warning{
			warningAt(t0, wire.WarningSiteSound, rules.RuleSensitiveZoneSound, "hospital-1"),
			warningAt(t0, wire.WarningSpeedNear, rules.RuleSpeed, ""),
		}}
	for range 2 { // a replay commits nothing new
		if err := db.Commit(ctx, &rules.Changes{}, []Batch{b}); err != nil {
			t.Fatal(err)
		}
	}
	ws, err := db.Warnings(ctx, WarningFilter{Vehicle: "PIU-001"}, 100)
	if err != nil || len(ws) != 2 {
		t.Fatalf("warnings %+v %v", ws, err)
	}
	w := ws[0]
	if w.Kind != wire.WarningSiteSound || w.Site != "hospital-1" || *w.DistanceM != 290 || w.Value != nil || w.Clock != wire.ClockGPS ||
		w.Licensee != "L1" || w.Epoch != "e-1" || w.Seq != 7 || !w.T.Equal(t0) {
		t.Errorf("warning %+v", w)
	}
	if ws, _ := db.Warnings(ctx, WarningFilter{Licensee: "L2"}, 100); len(ws) != 0 {
		t.Errorf("L2's warnings: %+v", ws)
	}
	if ws, _ := db.Warnings(ctx, WarningFilter{From: t0.Add(time.Millisecond)}, 100); len(ws) != 0 {
		t.Errorf("warnings after t0: %+v", ws)
	}
	dw, err := db.VehicleWarnings(ctx, "PIU-001", t0, t0)
	if err != nil || len(dw) != 2 || dw[1].Rule != rules.RuleSpeed {
		t.Errorf("VehicleWarnings %+v %v", dw, err)
	}
}

// TestWarningSummary: a warning is followed when an episode of its rule (and site) of its vehicle
// meets [t, t+within], pending while within has not passed, heeded after.
func TestWarningSummary(t *testing.T) {
	ctx := context.Background()
	db := openTemp(t)
	within := 10 * time.Minute
	site := func(e *rules.Episode, id string) *rules.Episode { e.Site = &rules.Site{ID: id, Name: id}; return e }
	eps := []*rules.Episode{
		site(testEpisode("V1", rules.RuleSensitiveZoneSound, t0.Add(3*time.Minute), false), "hospital-1"), // follows w1
		testEpisode("V2", rules.RuleSpeed, t0.Add(-time.Minute), true),                                    // open when w3 came
		site(testEpisode("V3", rules.RuleSensitiveZoneSound, t0.Add(time.Minute), false), "school-2"),     // another site
		testEpisode("V4", rules.RuleSpeed, t0.Add(11*time.Minute), false),                                 // too late
	}
	for _, e := range eps {
		if err := db.UpsertEpisode(ctx, e, nil); err != nil {
			t.Fatal(err)
		}
	}
	batch := func(vehicle, licensee string, seq uint64, ws ...wire.Warning) Batch {
		return Batch{Vehicle: vehicle, Epoch: "e", Seq: seq, ReceivedAt: t0, TMin: t0, TMax: t0, Payload: []byte(`{}`),
			Clock: wire.ClockGPS, Licensee: licensee, Warnings: ws}
	}
	bs := []Batch{
		batch("V1", "L1", 1, warningAt(t0, wire.WarningSiteSound, rules.RuleSensitiveZoneSound, "hospital-1")), // followed
		batch("V1", "L1", 2, warningAt(t0, wire.WarningSpeedNear, rules.RuleSpeed, "")),                        // heeded: no speed episode
		batch("V2", "L1", 1, warningAt(t0, wire.WarningSpeedOver, rules.RuleSpeed, "")),                        // followed (open)
		batch("V3", "L2", 1, warningAt(t0, wire.WarningSiteSound, rules.RuleSensitiveZoneSound, "hospital-1")), // heeded: other site
		batch("V4", "L2", 1, warningAt(t0, wire.WarningSpeedNear, rules.RuleSpeed, "")),                        // heeded: 11 min later
		batch("V4", "L2", 2, warningAt(t0.Add(time.Hour), wire.WarningSpeedNear, rules.RuleSpeed, "")),         // pending at now
	}
	if err := db.Commit(ctx, &rules.Changes{}, bs); err != nil {
		t.Fatal(err)
	}
	now := t0.Add(time.Hour + time.Minute)
	got, err := db.WarningSummary(ctx, time.Time{}, time.Time{}, now, within)
	if err != nil {
		t.Fatal(err)
	}
	want := []LicenseeWarnings{
		{Licensee: "L1", Warnings: 3, Heeded: 1, Followed: 2},
		{Licensee: "L2", Warnings: 3, Heeded: 2, Pending: 1},
	}
	if len(got) != len(want) || got[0] != want[0] || got[1] != want[1] {
		t.Errorf("summary %+v, want %+v", got, want)
	}
	// The period bounds the warnings counted.
	got, err = db.WarningSummary(ctx, t0.Add(time.Minute), time.Time{}, now.Add(time.Hour), within)
	if err != nil || len(got) != 1 || got[0] != (LicenseeWarnings{Licensee: "L2", Warnings: 1, Heeded: 1}) {
		t.Errorf("summary from t0+1m: %+v %v", got, err)
	}
}
