package notice

import (
	"testing"

	"github.com/trenzinho/trenzinho/monitor/drafts"
	"github.com/trenzinho/trenzinho/rules"
)

// A chart draws a fact's limit lines only for a limit of the law: telemetry_fault's 10 km/h is
// the speed from which a tachograph must report, and an auto that drew it as a "limite" would
// say the driver exceeded one.
func TestChartDrawsOnlyLimitsOfTheLaw(t *testing.T) {
	for _, c := range []struct {
		f    drafts.Fact
		want bool
	}{
		{drafts.Fact{Rule: rules.RuleSpeed, Limit: 30, Tolerance: 7}, true},
		{drafts.Fact{Rule: rules.RuleNoiseLimit, Limit: 55, Tolerance: 1}, true},
		{drafts.Fact{Rule: rules.RuleTelemetryFault, Limit: 10}, false},
		{drafts.Fact{Rule: rules.RuleHours}, false},
	} {
		if got := drawsLimit(c.f); got != c.want {
			t.Errorf("%s (limit %v): draws its limit %v, want %v", c.f.Rule, c.f.Limit, got, c.want)
		}
	}
}
