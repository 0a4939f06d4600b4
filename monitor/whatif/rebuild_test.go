package whatif

import (
	"testing"
	"time"

	"github.com/trenzinho/trenzinho/wire"
)

// TestAssemblerCutsReadingsIntoBatches: each batch takes, of each kind, the last readings it
// carried timed no later than its send time; a reading before them that no batch claims is an
// orphan, and a batch that finds fewer than it carried (a collision in the archive) counts the
// shortfall without taking the next batch's.
func TestAssemblerCutsReadingsIntoBatches(t *testing.T) {
	t0 := time.Date(2026, 1, 5, 12, 0, 0, 0, time.UTC)
	at := func(s int) time.Time { return t0.Add(time.Duration(s) * time.Second) }
	w := &window{}
	for s := range 15 {
		w.gps = append(w.gps, wire.GPS{T: wire.Time{Time: at(s)}, Lat: float64(s)})
		if s != 7 { // second 7's tachograph reading collided with another: one point
			w.tacho = append(w.tacho, wire.Tacho{T: wire.Time{Time: at(s)}})
		}
	}
	// Second 0 belongs to a batch before the window; the batches carried 1–5, 6–10, 11–14.
	w.batches = []archivedBatch{
		{epoch: "e", seq: 1, sentAt: at(5), n: [kinds]int{kGPS: 5, kTacho: 5}},
		{epoch: "e", seq: 2, sentAt: at(10), n: [kinds]int{kGPS: 5, kTacho: 5}},
		{epoch: "e", seq: 3, sentAt: at(14), n: [kinds]int{kGPS: 4, kTacho: 4}},
	}
	var a assembler
	bs := a.batches("PIU-001", w)
	if len(bs) != 3 || a.orphans != 2 { // second 0 of the GPS and of the tachograph
		t.Fatalf("%d batches, %d orphans", len(bs), a.orphans)
	}
	for k, want := range [][2]float64{{1, 5}, {6, 10}, {11, 14}} {
		g := bs[k].GPS
		if g[0].Lat != want[0] || g[len(g)-1].Lat != want[1] {
			t.Errorf("batch %d: gps %v–%v, want %v", k+1, g[0].Lat, g[len(g)-1].Lat, want)
		}
	}
	if len(bs[1].Tacho) != 4 || bs[1].missing != 1 || bs[0].missing != 0 || bs[2].missing != 0 || len(bs[2].Tacho) != 4 {
		t.Errorf("tacho: %d (missing %d), next %d", len(bs[1].Tacho), bs[1].missing, len(bs[2].Tacho))
	}
}
