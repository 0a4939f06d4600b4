package store

import (
	"reflect"
	"testing"
	"time"
)

// TestTransparencySpans: the service spans are merged, clipped to the month, intersected with
// the offence spans and cut at local midnight.
func TestTransparencySpans(t *testing.T) {
	loc := time.FixedZone("BRT", -3*3600)
	ms := func(d, h, m int) int64 { return millis(time.Date(2026, 11, d, h, m, 0, 0, loc)) }
	service := merge([]span{{ms(1, 23, 30), ms(2, 0, 30)}, {ms(2, 0, 30), ms(2, 1, 0)}, {ms(3, 10, 0), ms(3, 11, 0)}})
	if want := []span{{ms(1, 23, 30), ms(2, 1, 0)}, {ms(3, 10, 0), ms(3, 11, 0)}}; !reflect.DeepEqual(service, want) {
		t.Fatalf("merge: %v, want %v", service, want)
	}
	got := splitDays(clip(service, ms(1, 23, 45), ms(30, 0, 0)), loc)
	want := []daySeconds{{"2026-11-01", 15 * 60}, {"2026-11-02", 60 * 60}, {"2026-11-03", 60 * 60}}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("split: %v, want %v", got, want)
	}
	offence := merge([]span{{ms(3, 10, 50), ms(3, 11, 20)}, {ms(1, 23, 0), ms(1, 23, 40)}, {ms(3, 9, 0), ms(3, 10, 5)}})
	if got, want := intersect(service, offence), []span{{ms(1, 23, 30), ms(1, 23, 40)}, {ms(3, 10, 0), ms(3, 10, 5)}, {ms(3, 10, 50), ms(3, 11, 0)}}; !reflect.DeepEqual(got, want) {
		t.Errorf("intersect: %v, want %v", got, want)
	}
}
