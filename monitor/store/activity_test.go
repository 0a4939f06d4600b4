package store

import (
	"context"
	"reflect"
	"testing"
	"time"

	"github.com/trenzinho/trenzinho/rules"
)

// The days of activity are local days (Piúma, UTC−3): a batch at 01:30 UTC on the 29th is on
// the 28th there; a batch across local midnight counts on both days; days outside the range and
// other vehicles' days are not mixed in.
func TestActivityDays(t *testing.T) {
	db := openTemp(t)
	ctx := context.Background()
	utc := func(d, h, m int) time.Time { return time.Date(2026, 11, d, h, m, 0, 0, time.UTC) }
	batch := func(v string, seq uint64, from, to time.Time) Batch {
		return Batch{Vehicle: v, Epoch: "e", Seq: seq, ReceivedAt: to, TMin: from, TMax: to, Payload: []byte(`{}`)}
	}
	bs := []Batch{
		batch("PIU-001", 1, utc(20, 15, 0), utc(20, 15, 1)), // 20/11 local, before the range
		batch("PIU-001", 2, utc(25, 15, 0), utc(25, 15, 1)), // 25/11
		batch("PIU-001", 3, utc(29, 1, 30), utc(29, 1, 31)), // 28/11 22:30 local
		batch("PIU-002", 1, utc(27, 2, 59), utc(27, 3, 1)),  // 26/11 23:59 → 27/11 00:01 local
		batch("PIU-002", 2, utc(28, 12, 0), utc(28, 12, 0)), // 28/11
		batch("PIU-003", 1, utc(30, 12, 0), utc(30, 12, 0)), // 30/11, after the range
	}
	if err := db.Commit(ctx, &rules.Changes{}, bs); err != nil {
		t.Fatal(err)
	}
	from, to := time.Date(2026, 11, 23, 3, 0, 0, 0, time.UTC), time.Date(2026, 11, 30, 2, 59, 59, 0, time.UTC) // 23–29/11 local
	got, err := db.ActivityDays(ctx, from, to, -3*time.Hour)
	if err != nil {
		t.Fatal(err)
	}
	want := []VehicleDays{
		{Vehicle: "PIU-001", Days: []string{"2026-11-25", "2026-11-28"}},
		{Vehicle: "PIU-002", Days: []string{"2026-11-26", "2026-11-27", "2026-11-28"}},
	}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("activity\n%+v\nwant\n%+v", got, want)
	}
}
