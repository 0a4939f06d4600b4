package complaints

import (
	"strings"
	"testing"
	"time"
)

// The public answer (LGPD): no plate, no speed, never "acima do limite" from an estimate, and
// "encaminhado à fiscalização" only for a match above the screening threshold — once, however
// many there are. The staff's detail names the vehicle and its speed.
func TestAnswerPublicNamesNoVehicleNorSpeed(t *testing.T) {
	loc := time.UTC
	at := time.Date(2026, 11, 27, 21, 14, 0, 0, loc)
	f := func(v float64) *float64 { return &v }
	within := Match{Vehicle: "PIU-001", At: at, DistanceM: 40, SpeedKmh: f(35), LevelDB: f(55.5), LimitDB: f(55), Estimate: true}
	above := Match{Vehicle: "PIU-002", At: at, DistanceM: 62, SpeedKmh: f(41), LevelDB: f(63), LimitDB: f(55), Above: true, Estimate: true}
	unzoned := Match{Vehicle: "PIU-003", At: at, DistanceM: 120, SpeedKmh: f(12), LevelDB: f(70), Estimate: true}
	cases := []struct {
		name      string
		matches   []Match
		forwarded bool
	}{
		{"within the threshold", []Match{within}, false},
		{"level without a limit", []Match{unzoned}, false},
		{"above the threshold", []Match{above}, true},
		{"within and above", []Match{within, above, unzoned}, true},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			r := &Result{From: at.Add(-15 * time.Minute), To: at.Add(15 * time.Minute), RadiusM: 300, Matches: c.matches}
			a := Answer(r, loc)
			all := strings.Join(a, " ")
			if len(a) != len(c.matches) {
				t.Fatalf("answer %q: want one sentence per match", a)
			}
			for _, m := range c.matches {
				if strings.Contains(all, m.Vehicle) || strings.Contains(all, "km/h") {
					t.Errorf("the public answer names a vehicle or a speed: %q", a)
				}
			}
			if strings.Contains(all, "acima do limite") {
				t.Errorf("the public answer says \"acima do limite\" from an estimate: %q", a)
			}
			if n := strings.Count(all, "encaminhado à fiscalização"); n != map[bool]int{true: 1, false: 0}[c.forwarded] {
				t.Errorf("\"encaminhado à fiscalização\" %d time(s), forwarded %v: %q", n, c.forwarded, a)
			}
			if !strings.Contains(all, "nível sonoro estimado") {
				t.Errorf("the answer hides that the level is an estimate: %q", a)
			}
			d := strings.Join(Detail(r, loc), " ")
			for _, m := range c.matches {
				if !strings.Contains(d, m.Vehicle+" passou às 21:14") || !strings.Contains(d, "km/h") {
					t.Errorf("the staff's detail lacks %s or its speed: %q", m.Vehicle, d)
				}
			}
		})
	}
}
