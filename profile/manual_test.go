package profile

import (
	"strings"
	"testing"
)

func TestManualInfractionsAndRepeat(t *testing.T) {
	p := Piuma()
	if r := p.Rules["route_deviation"].Repeat; r == nil || r.Penalty != "Art. 45, I" || r.Fine != 300 || p.Rules["route_deviation"].Article != "Art. 38" {
		t.Errorf("route_deviation repeat: %+v", r)
	}
	m, ok := p.ManualInfractions["art16"]
	if !ok || m.Article != "Art. 16" || m.Penalty != "Art. 46, XII" || m.Fine != 400 {
		t.Errorf("art16: %+v", m)
	}
	for _, id := range []string{"art25", "art26", "art46_ii", "art46_ix"} {
		if _, ok := p.ManualInfractions[id]; !ok {
			t.Errorf("manual infraction %s missing", id)
		}
	}
	cases := []struct{ from, to, key string }{
		{`repeat: {penalty: "Art. 45, I", fine: 300}`, `repeat: {penalty: "Art. 45, I", fine: 0}`, "rules.route_deviation.repeat.fine"},
		{`repeat: {penalty: "Art. 45, I", fine: 300}`, "repeat: {fine: 300}", "rules.route_deviation.repeat.penalty"},
		{"    fine: 400\n    infraction: true\n", "    fine: 400\n    infraction: true\n    repeat: {penalty: Art. 47, fine: 250}\n", "rules.speed.repeat"},
		{"  art16:\n    article: Art. 16\n", "  art16:\n    article: \"\"\n", "manual_infractions.art16.article"},
		{"  art26:\n", "  speed:\n", "manual_infractions.speed"},
		{"    text: conduzir o veículo com excesso de passageiros\n    fine: 400\n", "    text: conduzir o veículo com excesso de passageiros\n    fine: 0\n", "manual_infractions.art46_ix.fine"},
	}
	for _, c := range cases {
		y := strings.Replace(string(PiumaYAML()), c.from, c.to, 1)
		if y == string(PiumaYAML()) {
			t.Fatalf("case %q did not change the profile", c.from)
		}
		_, err := Parse([]byte(y), "test.yaml")
		if err == nil || !strings.Contains(err.Error(), c.key) {
			t.Errorf("%q → %q: error %v does not name %s", c.from, c.to, err, c.key)
		}
	}
}
