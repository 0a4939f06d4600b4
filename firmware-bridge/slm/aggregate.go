package slm

import (
	"fmt"
	"math"
	"time"

	"github.com/trenzinho/trenzinho/wire"
)

// DefaultRate is the sample rate assumed when none is configured: ten samples a second.
const DefaultRate = 10.0

// Sample is one instantaneous sound level.
type Sample struct {
	T  time.Time // when it was taken
	DB float64   // the level in dB(A), before any configured offset
}

// EnergyAverage returns the equivalent continuous level of the levels Lᵢ (dB), each
// lasting tᵢ (any unit): 10·log10(Σ tᵢ·10^(Lᵢ/10) / Σ tᵢ). Levels that are all equal give
// that level exactly. It returns NaN when the slices are empty or of different lengths, a
// duration is negative, or the durations sum to zero.
func EnergyAverage(levels, durations []float64) float64 {
	if len(levels) == 0 || len(levels) != len(durations) {
		return math.NaN()
	}
	top := math.Inf(-1)
	for _, l := range levels {
		top = max(top, l)
	}
	// Energies relative to the largest level: no overflow, and exact for equal levels.
	var energy, total float64
	for i, l := range levels {
		t := durations[i]
		if t < 0 {
			return math.NaN()
		}
		energy += t * math.Pow(10, (l-top)/10)
		total += t
	}
	if total == 0 {
		return math.NaN()
	}
	return top + 10*math.Log10(energy/total)
}

// An Aggregator turns samples into one-second readings. It is not safe for concurrent use.
type Aggregator struct {
	rate   float64
	offset float64

	second int64     // the Unix second of the open window
	first  time.Time // time of its first sample
	levels []float64 // its levels, offset applied
	ones   []float64 // equal durations, as many as levels
}

// NewAggregator returns an aggregator for samples taken rate times a second, adding
// offsetDB to each.
func NewAggregator(rate, offsetDB float64) (*Aggregator, error) {
	if !(rate > 0) || math.IsInf(rate, 0) {
		return nil, fmt.Errorf("slm: sample rate %v: want a positive number", rate)
	}
	if math.IsNaN(offsetDB) || math.IsInf(offsetDB, 0) {
		return nil, fmt.Errorf("slm: offset %v dB: want a finite number", offsetDB)
	}
	return &Aggregator{rate: rate, offset: offsetDB}, nil
}

// Add adds a sample. When the sample falls in another second than the samples before it,
// Add returns the reading of those samples and true.
func (a *Aggregator) Add(s Sample) (wire.Sound, bool) {
	var out wire.Sound
	var ok bool
	sec := s.T.Unix()
	if len(a.levels) > 0 && sec != a.second {
		out, ok = a.Flush()
	}
	if len(a.levels) == 0 {
		a.second, a.first = sec, s.T
	}
	a.levels = append(a.levels, s.DB+a.offset)
	a.ones = append(a.ones, 1)
	return out, ok
}

// Flush returns the reading of the samples added since the last reading, and false when
// there are none.
func (a *Aggregator) Flush() (wire.Sound, bool) {
	n := len(a.levels)
	if n == 0 {
		return wire.Sound{}, false
	}
	leq := EnergyAverage(a.levels, a.ones)
	top := math.Inf(-1)
	for _, l := range a.levels {
		top = max(top, l)
	}
	dur := min(float64(n)/a.rate, 1)
	a.levels, a.ones = a.levels[:0], a.ones[:0]
	return wire.Sound{T: wire.NewTime(a.first), LAeqDB: &leq, LAmaxDB: &top, DurS: &dur}, true
}
