package rules

import (
	"strings"
	"testing"
	"time"

	"github.com/trenzinho/trenzinho/registry"
)

// A vehicle that failed its inspection on the 20th circulates on the 25th: an Art. 32, § 3º
// episode; after an approved re-inspection on the 26th, nothing; an accident on the 27th stops
// it again until inspected.
func TestUninspectedCirculating(t *testing.T) {
	reg := driverRegistry(t)
	v, _ := reg.Vehicle("PIU-002")
	d := registry.MustDate
	v.Events = []registry.VehicleEvent{
		{Date: d("2026-11-20"), Kind: registry.EventInspection},
		{Date: d("2026-11-26"), Kind: registry.EventInspection, Approved: true},
		{Date: d("2026-11-27"), Kind: registry.EventAccident, Note: "colisão"},
	}
	if _, err := reg.PutVehicle(v); err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		day    string
		detail string
	}{
		{"2026-11-19", ""},
		{"2026-11-25", "inspection 2026-11-20"},
		{"2026-11-26", ""},
		{"2026-11-28", "accident 2026-11-27"},
	} {
		r := docRun(t, reg)
		day, _ := time.Parse(time.DateOnly, c.day)
		tr := newTrip(day.Add(15 * time.Hour))
		tr.vehicle = "PIU-002"
		r.apply(t, tr.batches(repeat(20, 180)...), time.Second)
		eps := r.rule(RuleUninspectedCirculating)
		if c.detail == "" {
			if len(eps) != 0 {
				t.Errorf("%s: %+v", c.day, eps)
			}
			continue
		}
		// A failed inspection: Art. 32 § 3º, fined by Art. 47 (Art. 45, VI punishes not
		// re-inspecting after a repair or an accident, not circulating after a failure). An
		// accident on record: Art. 45, VI's, which the rule leaves to the agent.
		accident := strings.HasPrefix(c.detail, "accident")
		if len(eps) != 1 || eps[0].Detail != c.detail || eps[0].Article != "Art. 32, § 3º" || eps[0].Penalty != "Art. 47" || eps[0].GroundsAuto == accident {
			t.Errorf("%s: %+v", c.day, eps)
		}
		if accident && !strings.Contains(eps[0].GroundsNote, "Art. 45, VI") {
			t.Errorf("%s: note %q", c.day, eps[0].GroundsNote)
		}
	}
}
