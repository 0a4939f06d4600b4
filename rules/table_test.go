package rules

import (
	"slices"
	"testing"

	"github.com/trenzinho/trenzinho/profile"
)

// Every rule the engine applies has its entry in the table, with a name, a short label, a
// colour and a chart kind, and its legal mapping with a text in Piúma's profile; the table has
// no entry for a rule that does not exist.
func TestRuleTable(t *testing.T) {
	e := New(profile.Piuma(), nil)
	p := profile.Piuma()
	ids := e.RuleIDs()
	for _, id := range ids {
		info, ok := Info(id)
		if !ok {
			t.Errorf("rule %s has no entry in rules.Table", id)
			continue
		}
		if info.Name == "" || info.Short == "" || info.Color == "" || !slices.Contains([]string{ChartSpeed, ChartSound, ChartNone}, info.Chart) {
			t.Errorf("rule %s: incomplete entry %+v", id, info)
		}
		if id == profile.DocumentExpiredRule {
			for kind, m := range p.DocumentExpired.Documents {
				if m.Text == "" {
					t.Errorf("document_expired.documents.%s has no text", kind)
				}
			}
			continue
		}
		if m, ok := p.Rules[id]; !ok || m.Text == "" || m.Article == "" || m.Penalty == "" {
			t.Errorf("rule %s: Piúma's profile maps %+v", id, m)
		}
	}
	for _, info := range Table {
		if !slices.Contains(ids, info.ID) {
			t.Errorf("rules.Table names %s, which the engine does not apply", info.ID)
		}
	}
}
