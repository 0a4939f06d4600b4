package profile

import (
	"strings"
	"testing"
	"time"
)

// A ponto facultativo decreed (holidays.closed_days) is a day without expediente: no business
// day, as Saturdays, Sundays and holidays are not (Lei nº 9.784/1999, art. 66, § 1º).
func TestBusinessDayClosedDays(t *testing.T) {
	y := strings.Replace(string(PiumaYAML()), "  dates: []\n",
		"  dates: []\n  closed_days:\n    - {date: \"2027-02-08\", name: Carnaval, act: \"Decreto nº 1/2027 (teste)\"}\n", 1)
	p, err := Parse([]byte(y), "t.yaml")
	if err != nil {
		t.Fatal(err)
	}
	day := func(s string) time.Time { d, _ := time.Parse(time.DateOnly, s); return d }
	for _, c := range []struct {
		day string
		ok  bool
		why string
	}{
		{"2027-02-05", true, ""},                             // a Friday
		{"2027-02-06", false, "sábado"},                      //
		{"2027-02-07", false, "domingo"},                     //
		{"2027-02-08", false, "ponto facultativo: Carnaval"}, // Monday of Carnaval, decreed
		{"2027-02-09", true, ""},                             // Tuesday: not decreed here
		{"2026-11-02", false, "feriado: Finados"},
	} {
		if ok, why := p.BusinessDay(day(c.day)); ok != c.ok || why != c.why {
			t.Errorf("%s: %v %q, want %v %q", c.day, ok, why, c.ok, c.why)
		}
	}
	if _, err := Parse([]byte(strings.Replace(y, ", act: \"Decreto nº 1/2027 (teste)\"", "", 1)), "t.yaml"); err == nil ||
		!strings.Contains(err.Error(), "holidays.closed_days[0]") {
		t.Errorf("a closed day without its decree: %v", err)
	}
}
