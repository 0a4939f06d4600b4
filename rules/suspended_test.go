package rules

import (
	"testing"
	"time"

	"github.com/trenzinho/trenzinho/registry"
)

// A vehicle in service while its licensee's activity is suspended: an alert recommending the
// apreensão (Art. 42 sole para.), not an auto; outside the suspension, nothing.
func TestSuspendedCirculating(t *testing.T) {
	reg := driverRegistry(t)
	l, _ := reg.Licensee("L1")
	l.Suspensions = []registry.Period{{From: registry.MustDate("2026-11-25"), To: registry.MustDate("2026-12-04"), Reference: "AI-0042/2026"}}
	if _, err := reg.PutLicensee(l); err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		day  time.Time
		want int
	}{
		{noon, 1},
		{noon.Add(-5 * 24 * time.Hour), 0},
	} {
		r := docRun(t, reg)
		tr := newTrip(c.day)
		tr.vehicle = "PIU-002"
		r.apply(t, tr.batches(repeat(20, 180)...), time.Second)
		eps := r.rule(RuleSuspendedCirculating)
		if len(eps) != c.want || c.want == 1 && (eps[0].Detail != "AI-0042/2026" || eps[0].Article != "Art. 42, parágrafo único" || eps[0].GroundsAuto) {
			t.Errorf("%s: %+v", c.day.Format(time.DateOnly), eps)
		}
	}
}
