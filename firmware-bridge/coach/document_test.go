package coach

import (
	"math"
	"testing"
	"time"

	"github.com/trenzinho/trenzinho/configbundle"
	"github.com/trenzinho/trenzinho/profile"
)

// TestDocumentWarnings: the bundle's documents are warned of the configured number of days
// before their last valid day (counted on Piúma's calendar, not UTC's), on it, and after it;
// once a day each, in service or not; one valid beyond the window is not.
func TestDocumentWarnings(t *testing.T) {
	// 22:30 on 2026-11-27 in Piúma is already the 28th in UTC: the days are Piúma's.
	start := time.Date(2026, 11, 28, 1, 30, 0, 0, time.UTC)
	b := testBundle(3, configbundle.Warnings{DocumentExpiryDays: 10})
	b.Documents = []configbundle.Document{
		{Holder: configbundle.HolderVehicle, Kind: "inspecao", ValidUntil: "2026-12-07"},           // 10 days left
		{Holder: configbundle.HolderLicensee, Kind: "licenca", ValidUntil: "2026-11-26"},           // expired yesterday
		{Holder: configbundle.HolderVehicle, Kind: "csv", ValidUntil: "2026-12-08"},                // 11 days: not yet
		{Holder: configbundle.HolderVehicle, Kind: "afericao_tacografo", ValidUntil: "2026-11-27"}, // today
	}
	cb := signedBundle(t, b)
	off := false
	// Two minutes parked with the switch off, then (a day later) another minute.
	bs, _ := stream{start: start, steps: steps(120, 0, math.NaN()), service: &off}.batches()
	ws, c := collect(t, cb, bs)
	d := ofKind(ws, KindDocument)
	got := map[string]float64{}
	for _, w := range d {
		if _, dup := got[w.Document]; dup {
			t.Errorf("%s warned twice in two minutes", w.Document)
		}
		got[w.Document] = w.Value
		if w.Rule != profile.DocumentExpiredRule || w.Limit != 10 || !w.T.Equal(start) {
			t.Errorf("document warning %+v", w)
		}
	}
	want := map[string]float64{"vehicle:inspecao": 10, "licensee:licenca": -1, "vehicle:afericao_tacografo": 0}
	if len(got) != len(want) {
		t.Fatalf("document warnings %v, want %v", got, want)
	}
	for k, v := range want {
		if g, ok := got[k]; !ok || g != v {
			t.Errorf("%s: days left %v (warned %v), want %v", k, g, ok, v)
		}
	}
	texts := map[string]bool{}
	for _, a := range c.State().Active {
		texts[a.Text] = true
	}
	for _, s := range []string{"LAUDO DE VISTORIA VENCE EM 10 DIAS", "LICENÇA — PRAZO VENCIDO", "AFERIÇÃO DO TACÓGRAFO VENCE HOJE"} {
		if !texts[s] {
			t.Errorf("local page lacks %q: %v", s, texts)
		}
	}

	// The next day: each is warned again, one day nearer; the CSV's window has come.
	next, _ := stream{start: start.Add(24 * time.Hour), steps: steps(5, 0, math.NaN()), service: &off}.batches()
	var again []Warning
	c.emit = func(w Warning) { again = append(again, w) }
	for _, b := range next {
		c.Apply(b)
	}
	got = map[string]float64{}
	for _, w := range ofKind(again, KindDocument) {
		got[w.Document] = w.Value
	}
	want = map[string]float64{"vehicle:inspecao": 9, "licensee:licenca": -2, "vehicle:afericao_tacografo": -1, "vehicle:csv": 10}
	if len(got) != len(want) {
		t.Fatalf("next day: document warnings %v, want %v", got, want)
	}
	for k, v := range want {
		if got[k] != v {
			t.Errorf("next day %s: days left %v, want %v", k, got[k], v)
		}
	}
}

// TestDocumentDefaultDays: a bundle without document_expiry_days warns DefaultDocumentDays
// before; a bundle without documents warns of none.
func TestDocumentDefaultDays(t *testing.T) {
	start := time.Date(2026, 11, 28, 15, 0, 0, 0, time.UTC)
	b := testBundle(3, configbundle.Warnings{})
	b.Documents = []configbundle.Document{
		{Holder: configbundle.HolderVehicle, Kind: "inspecao", ValidUntil: start.AddDate(0, 0, DefaultDocumentDays).Format(time.DateOnly)},
		{Holder: configbundle.HolderVehicle, Kind: "csv", ValidUntil: start.AddDate(0, 0, DefaultDocumentDays+1).Format(time.DateOnly)},
	}
	bs, _ := stream{start: start, steps: steps(3, 10, 50)}.batches()
	ws, _ := collect(t, signedBundle(t, b), bs)
	if d := ofKind(ws, KindDocument); len(d) != 1 || d[0].Document != "vehicle:inspecao" || d[0].Value != DefaultDocumentDays {
		t.Fatalf("document warnings %+v, want the inspection's alone, %d days before", d, DefaultDocumentDays)
	}
	ws, _ = collect(t, signedBundle(t, testBundle(3, configbundle.Warnings{})), bs)
	if d := ofKind(ws, KindDocument); len(d) != 0 {
		t.Fatalf("document warnings without documents: %+v", d)
	}
}
