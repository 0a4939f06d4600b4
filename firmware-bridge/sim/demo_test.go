package sim

import (
	"testing"
)

func TestDemoTimeline(t *testing.T) {
	for _, v := range Demo() {
		t.Logf("%s: %v", v.ID, v.Script.Duration())
		for _, l := range v.Script.Timeline() {
			t.Logf("  %s", l)
		}
	}
}
