package main

import (
	"slices"
	"testing"
)

// TestReadingsPerBatch: --readings-per-batch splits each shape over GPS, tacho and sound in
// turn, and refuses shapes outside 1–600.
func TestReadingsPerBatch(t *testing.T) {
	shapes, err := parseShapes("5, 30,1,600")
	if err != nil || !slices.Equal(shapes, []int{5, 30, 1, 600}) {
		t.Fatalf("parseShapes = %v, %v", shapes, err)
	}
	for n, want := range map[int][3]int{1: {1, 0, 0}, 2: {1, 1, 0}, 5: {2, 2, 1}, 30: {10, 10, 10}, 31: {11, 10, 10}} {
		l := load{vehicles: 3, batches: 2}.shaped(n)
		if got := [3]int{l.gps, l.tacho, l.sound}; got != want || l.readings() != 3*2*n {
			t.Errorf("shaped(%d) = %v (%d readings), want %v", n, got, l.readings(), want)
		}
	}
	for _, bad := range []string{"0", "601", "x", "5,", ""} {
		if _, err := parseShapes(bad); err == nil {
			t.Errorf("parseShapes(%q) accepted", bad)
		}
	}
}
