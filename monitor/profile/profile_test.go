package profile

import (
	"strings"
	"testing"
	"time"
)

func TestPiumaBuiltIn(t *testing.T) {
	p := Piuma()
	if p.Speed.LimitKmh != 30 || p.Speed.ToleranceKmh != 7 || p.Rules["speed"].Penalty != "Art. 46, X" {
		t.Fatalf("unexpected defaults: %+v", p.Speed)
	}
	if p.Location().String() != "America/Sao_Paulo" {
		t.Fatal(p.Location())
	}
}

func TestValidationNamesTheKey(t *testing.T) {
	cases := []struct{ from, to, key string }{
		{"limit_kmh: 30", "limit_kmh: -1", "speed.limit_kmh"},
		{`start: "09:00"`, `start: "9h"`, "service_hours.start"},
		{"default_area: mixed_residential", "default_area: beach", "noise.default_area"},
		{"basis: confirmed", "basis: maybe", "recidivism.basis"},
		{"timezone: America/Sao_Paulo", "timezone: Mars/Olympus", "timezone"},
		{"    article: Art. 23\n", "    article: \"\"\n", "rules.speed.article"},
		{"gap_timeout_s: 120", "gap_timeout_s: 120\nspeeed: 1", "speeed"},
	}
	for _, c := range cases {
		y := strings.Replace(string(PiumaYAML()), c.from, c.to, 1)
		if y == string(PiumaYAML()) {
			t.Fatalf("case %q did not change the profile", c.from)
		}
		_, err := Parse([]byte(y), "test.yaml")
		if err == nil || !strings.Contains(err.Error(), c.key) {
			t.Errorf("%s → %s: error %v does not name %s", c.from, c.to, err, c.key)
		}
	}
}

func TestHolidays(t *testing.T) {
	p := Piuma()
	loc := p.Location()
	cases := []struct {
		date string
		want bool
	}{
		{"2026-11-20", true},  // Consciência Negra, national since 2024
		{"2023-11-20", false}, // before it became national
		{"2026-04-03", true},  // Good Friday 2026 (Easter 5 April)
		{"2026-04-13", true},  // Nossa Senhora da Penha: Easter + 8
		{"2026-02-17", false}, // Carnaval is not a holiday in this profile
		{"2026-12-25", true},
		{"2026-12-24", false},
	}
	for _, c := range cases {
		d, _ := time.ParseInLocation(time.DateOnly, c.date, loc)
		if _, got := p.Holiday(d.Add(12 * time.Hour)); got != c.want {
			t.Errorf("%s: holiday %v, want %v", c.date, got, c.want)
		}
	}
}
