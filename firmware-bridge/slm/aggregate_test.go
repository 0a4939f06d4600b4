package slm

import (
	"math"
	"testing"
	"time"

	"github.com/trenzinho/trenzinho/wire"
)

func near(a, b float64) bool { return math.Abs(a-b) < 1e-9 }

func TestEnergyAverage(t *testing.T) {
	tests := []struct {
		name      string
		levels    []float64
		durations []float64
		want      float64
	}{
		// 10·log10((10^6 + 10^7)/2): not 65, the arithmetic mean.
		{"60 and 70 dB, equal times", []float64{60, 70}, []float64{1, 1}, 67.40362689494245},
		{"equal times in other units", []float64{60, 70}, []float64{0.1, 0.1}, 67.40362689494245},
		{"60 dB for 3 s, 70 dB for 1 s", []float64{60, 70}, []float64{3, 1}, 65.11883360978874},
		{"0 and 100 dB", []float64{0, 100}, []float64{1, 1}, 96.98970004379449},
		{"five each of 65.5 and 72 dB", []float64{65.5, 72, 65.5, 72, 65.5, 72, 65.5, 72, 65.5, 72},
			[]float64{1, 1, 1, 1, 1, 1, 1, 1, 1, 1}, 69.86706043756695},
		{"one level", []float64{68.2}, []float64{0.1}, 68.2},
		{"a level of no duration", []float64{50, 90}, []float64{1, 0}, 50},
	}
	for _, tt := range tests {
		if got := EnergyAverage(tt.levels, tt.durations); !near(got, tt.want) {
			t.Errorf("%s: %v, want %v", tt.name, got, tt.want)
		}
	}
	// Equal levels give the level exactly, not a rounding of it.
	if got := EnergyAverage([]float64{68.2, 68.2, 68.2}, []float64{1, 1, 1}); got != 68.2 {
		t.Errorf("equal levels: %v, want 68.2 exactly", got)
	}
	for name, args := range map[string][2][]float64{
		"empty":             {nil, nil},
		"lengths differ":    {{60, 70}, {1}},
		"negative duration": {{60, 70}, {1, -1}},
		"zero durations":    {{60, 70}, {0, 0}},
	} {
		if got := EnergyAverage(args[0], args[1]); !math.IsNaN(got) {
			t.Errorf("%s: %v, want NaN", name, got)
		}
	}
}

func collect(t *testing.T, a *Aggregator, samples []Sample) []wire.Sound {
	t.Helper()
	var out []wire.Sound
	for _, s := range samples {
		if r, ok := a.Add(s); ok {
			out = append(out, r)
		}
	}
	if r, ok := a.Flush(); ok {
		out = append(out, r)
	}
	if _, ok := a.Flush(); ok {
		t.Fatal("second Flush returned a reading")
	}
	return out
}

// tenHz returns n samples at 10 Hz from start, alternating 60 and 70 dB.
func tenHz(start time.Time, n int) []Sample {
	s := make([]Sample, n)
	for i := range s {
		s[i] = Sample{T: start.Add(time.Duration(i) * 100 * time.Millisecond), DB: 60 + 10*float64(i%2)}
	}
	return s
}

func checkSound(t *testing.T, r wire.Sound, at string, leq, lmax, dur float64) {
	t.Helper()
	if r.T.String() != at || !near(*r.LAeqDB, leq) || *r.LAmaxDB != lmax || *r.DurS != dur {
		t.Errorf("reading %s L_Aeq %v L_AFmax %v dur %v; want %s %v %v %v",
			r.T, *r.LAeqDB, *r.LAmaxDB, *r.DurS, at, leq, lmax, dur)
	}
}

var noon = time.Date(2026, 11, 29, 12, 0, 0, 0, time.UTC)

func TestAggregator(t *testing.T) {
	a, err := NewAggregator(10, 0)
	if err != nil {
		t.Fatal(err)
	}
	rs := collect(t, a, tenHz(noon, 25))
	if len(rs) != 3 {
		t.Fatalf("%d readings, want 3", len(rs))
	}
	checkSound(t, rs[0], "2026-11-29T12:00:00Z", 67.40362689494245, 70, 1)
	checkSound(t, rs[1], "2026-11-29T12:00:01Z", 67.40362689494245, 70, 1)
	// 60, 70, 60, 70, 60 dB: 10·log10((3·10^6 + 2·10^7)/5).
	checkSound(t, rs[2], "2026-11-29T12:00:02Z", 66.62757831681574, 70, 0.5)

	// A start in mid-second: the first reading starts at the first sample and covers 0.5 s.
	rs = collect(t, a, tenHz(noon.Add(500*time.Millisecond), 10))
	checkSound(t, rs[0], "2026-11-29T12:00:00.5Z", 66.62757831681574, 70, 0.5)
	checkSound(t, rs[1], "2026-11-29T12:00:01Z", 68.06179973983888, 70, 0.5)

	// Calibration offset.
	a, _ = NewAggregator(10, 1.5)
	rs = collect(t, a, tenHz(noon, 10))
	checkSound(t, rs[0], "2026-11-29T12:00:00Z", 68.90362689494245, 71.5, 1)

	// A meter clock to the second: every sample of that second in one reading; more
	// samples than the rate cover no more than the second.
	a, _ = NewAggregator(10, 0)
	var same []Sample
	for range 12 {
		same = append(same, Sample{T: noon, DB: 68.2})
	}
	same = append(same, Sample{T: noon.Add(time.Second), DB: 70}, Sample{T: noon.Add(time.Second), DB: 60})
	rs = collect(t, a, same)
	checkSound(t, rs[0], "2026-11-29T12:00:00Z", 68.2, 68.2, 1)
	checkSound(t, rs[1], "2026-11-29T12:00:01Z", 67.40362689494245, 70, 0.2)

	// Missing samples cover less.
	a, _ = NewAggregator(10, 0)
	s := tenHz(noon, 10)
	rs = collect(t, a, append(s[:3:3], s[6:]...))
	checkSound(t, rs[0], "2026-11-29T12:00:00Z", 66.86380877027999, 70, 0.7)
}

func TestNewAggregatorErrors(t *testing.T) {
	for _, args := range [][2]float64{{0, 0}, {-1, 0}, {math.NaN(), 0}, {math.Inf(1), 0}, {10, math.NaN()}, {10, math.Inf(-1)}} {
		if _, err := NewAggregator(args[0], args[1]); err == nil {
			t.Errorf("NewAggregator(%v, %v): no error", args[0], args[1])
		}
	}
}
