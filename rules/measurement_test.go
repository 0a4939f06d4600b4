package rules

import (
	"strings"
	"testing"
	"time"

	"github.com/trenzinho/trenzinho/profile"
	"github.com/trenzinho/trenzinho/wire"
)

// The agent's NBR 10151 measurement must prove the excess: the limit is the table's for the
// area and the period at the measurement's time, the level is corrected for the residual sound,
// and a measurement of another time proves nothing of the episode.
func TestJudgeMeasurement(t *testing.T) {
	p := profile.Piuma()
	var area string
	for id := range p.Noise.Areas {
		area = id
		break
	}
	a := p.Noise.Areas[area]
	start := localTime(t, "2026-11-26 15:00:00") // afternoon: the day limit
	end := wire.NewTime(start.Add(5 * time.Minute))
	ep := &Episode{Rule: RuleNoiseLimit, Start: wire.NewTime(start), End: &end, Area: &area}
	at := wire.NewTime(start.Add(10 * time.Minute))
	for _, c := range []struct {
		name          string
		laeq, res     float64
		date          wire.Time
		corrected     float64
		wantProblem   string
		ignoredTyping float64
	}{
		{"well above, residual far below", a.Day + 10, a.Day - 20, at, a.Day + 10, "", 20},
		// 3 dB above the residual: the specific sound is 3 dB under the measured level.
		{"above before the correction, not after", a.Day + 2, a.Day - 1, at, a.Day - 1, "não excede", 20},
		{"residual too close", a.Day + 5, a.Day + 4, at, 0, "não pode ser determinado", 20},
		{"outside the window", a.Day + 10, a.Day - 20, wire.NewTime(start.Add(3 * time.Hour)), 0, "fora do período", 20},
	} {
		m := &Measurement{LAeqDB: c.laeq, ResidualDB: c.res, LimitDB: c.ignoredTyping, Date: c.date}
		limit, corrected, problem := JudgeMeasurement(p, ep, m)
		if c.wantProblem == "" {
			if problem != "" || limit != a.Day || corrected != c.corrected {
				t.Errorf("%s: limit %v corrected %v problem %q", c.name, limit, corrected, problem)
			}
			continue
		}
		if !strings.Contains(problem, c.wantProblem) || (c.corrected != 0 && (corrected < c.corrected-0.1 || corrected > c.corrected+0.1)) {
			t.Errorf("%s: corrected %v problem %q, want %q", c.name, corrected, problem, c.wantProblem)
		}
	}
}
