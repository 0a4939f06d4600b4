package drafts

import (
	"strings"
	"testing"
	"time"

	"github.com/trenzinho/trenzinho/monitor/profile"
	"github.com/trenzinho/trenzinho/monitor/rules"
	"github.com/trenzinho/trenzinho/wire"
)

// Every rule of rules.Table has its own description in Portuguese (not the generic fallback).
func TestEveryRuleIsDescribed(t *testing.T) {
	p := profile.Piuma()
	start := wire.NewTime(time.Date(2026, 11, 27, 15, 0, 0, 0, time.UTC))
	for _, info := range rules.Table {
		ep := rules.Episode{ID: "x", Vehicle: "PIU-001", Rule: info.ID, Start: start, Peak: 1, Unit: "min"}
		got := describe(p, &ep)
		if strings.HasPrefix(got, info.ID+":") {
			t.Errorf("rule %s has no description of its own: %s", info.ID, got)
		}
	}
}
