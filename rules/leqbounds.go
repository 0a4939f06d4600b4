package rules

import (
	"math"
	"time"
)

// noise_limit asks for the L_Aeq over 60 s on every sound reading: summing the energies of the
// minute of samples again each time was a tenth of the engine's work. A running sum (add the
// sample that enters, subtract the one that leaves) is O(1), but it sums in another order than
// leq, so its level may differ from leq's in the last bits — and leq's value is what the
// episodes record. So the running sum only bounds leq's value: leqBounds returns an interval
// that certainly holds it, and the rule uses the interval only where every value in it gives
// the same judgement and the same episode (noise.go): the condition is decided, and the value
// cannot become the run's peak. Otherwise — near the limit, a new peak, a run starting — it
// computes leq exactly. The output is bit for bit leq's (TestLeqBoundsHoldLeq,
// TestNoiseFastPathSameEpisodes, TestEngineDigest).

// soundSums are the running sums over a vehicle's Sounds of the energies DurS·10^(DB/10) and of
// the durations, with what bounds their rounding errors.
type soundSums struct {
	valid       bool
	energy, dur float64 // the sums
	// maxEnergy and maxDur are the largest the sums were since they were last recomputed, ops
	// the additions and subtractions since: each added at most 2⁻⁵³ of the sum's magnitude.
	maxEnergy, maxDur float64
	ops               int
	// odd counts the samples outside the range leqBounds' error bound assumes (regular).
	odd int
}

// sumsReanchor is how many additions and subtractions the sums take before leqBounds recomputes
// them, which keeps their rounding error small.
const sumsReanchor = 256

// regular reports whether a sample is in the range leqBounds' error bound assumes: a level
// between −50 and 200 dB, a duration between 10 ms and 10 s (a meter integrates over 125 ms to a
// few seconds). Samples outside it are judged by leq alone.
func regular(s *SoundSample) bool {
	return s.DB >= -50 && s.DB <= 200 && s.DurS >= 0.01 && s.DurS <= 10
}

// absEnergy returns DurS·10^(DB/10), computed once per sample.
func (s *SoundSample) absEnergy() float64 {
	if !s.absKnown {
		s.abs, s.absKnown = s.DurS*math.Pow(10, s.DB/10), true
	}
	return s.abs
}

// add counts a sample that entered Sounds.
func (m *soundSums) add(s *SoundSample) {
	if !m.valid {
		return // recomputed when next needed
	}
	if !regular(s) {
		m.odd++
		return
	}
	m.energy += s.absEnergy()
	m.dur += s.DurS
	m.maxEnergy, m.maxDur = max(m.maxEnergy, m.energy), max(m.maxDur, m.dur)
	m.ops++
}

// remove counts samples that left Sounds.
func (m *soundSums) remove(ss []SoundSample) {
	if !m.valid {
		return
	}
	for i := range ss {
		s := &ss[i]
		if !regular(s) {
			m.odd--
			continue
		}
		m.energy -= s.absEnergy()
		m.dur -= s.DurS
		m.ops++
	}
}

// recompute sums Sounds afresh.
func (v *Vehicle) recomputeSums() {
	m := soundSums{valid: true}
	for i := range v.Sounds {
		s := &v.Sounds[i]
		if !regular(s) {
			m.odd++
			continue
		}
		m.energy += s.absEnergy()
		m.dur += s.DurS
		m.ops++ // each addition rounds too
	}
	m.maxEnergy, m.maxDur = m.energy, m.dur
	v.sums = m
}

// leqBounds returns an interval [lo, hi] that holds the level leq(t, windowS) returns, and
// exactly leq's full (whether the samples cover 90% of the window); ok is false when it cannot
// tell them (the window is not the whole of Sounds, an irregular sample, a level or coverage
// too close to call): the caller then asks leq.
//
// The bound: the level is 10·log10(E/C). The running sums E and C are within γ·maxEnergy and
// γ·maxDur of the exact sums, γ = (4·(ops + n) + 16)·2⁻⁵³ (each addition and subtraction rounds
// by at most 2⁻⁵³ of a sum no larger than the max), and E within 64·2⁻⁵³·E more for the
// cached energies' own rounding (10^(DB/10) with DB/10 ≤ 20 rounded: ln 10·20·2⁻⁵³, and the
// power and the product). leq sums relative energies 10^((DBᵢ−top)/10) in order: its relative
// error is at most (2n + 10 + 80·C)·2⁻⁵³ for regular samples (the rounding of each exponent,
// 2·2⁻⁵³·|xᵢ|, costs at most 2.3·2·0.16·2⁻⁵³·C of energy, against the top sample's, at least
// 10 ms). A relative error ε of an energy sum is at most 4.343·ε dB; the interval takes twice
// the sum of both errors, plus 4·2⁻⁵³ of the level for the logarithm and the additions, and
// 10⁻⁹ dB.
func (v *Vehicle) leqBounds(t time.Time, windowS float64) (lo, hi float64, full, ok bool) {
	n := len(v.Sounds)
	if n == 0 {
		return 0, 0, false, false
	}
	from := t.Add(-time.Duration(windowS * float64(time.Second)))
	if v.Sounds[n-1].T.After(t) || !v.Sounds[0].T.After(from) {
		return 0, 0, false, false // the window is not the whole of Sounds
	}
	if !v.sums.valid || v.sums.ops >= sumsReanchor {
		v.recomputeSums()
	}
	m := &v.sums
	if m.odd != 0 {
		return 0, 0, false, false
	}
	const u = 0x1p-53
	e, c := m.energy, m.dur
	gamma := float64(4*(m.ops+n)+16) * u
	errE, errC := gamma*m.maxEnergy+64*u*e, gamma*m.maxDur
	if !(e > 4*errE && c > 4*errC) { // also NaN
		return 0, 0, false, false
	}
	// full: leq compares its own sum of the durations, within n·2⁻⁵³·C of the exact one.
	spread := 2 * (errC + float64(n+2)*u*c)
	threshold := 0.9 * windowS
	switch {
	case c-spread >= threshold:
		full = true
	case c+spread < threshold:
		full = false
	default:
		return 0, 0, false, false
	}
	level := 10 * math.Log10(e/c)
	delta := 2*4.343*(errE/e+errC/c+float64(2*n+10)*u+80*u*c) + 4*u*math.Abs(level) + 1e-9
	if !(delta < 0.01) { // also NaN: too wide to be of use
		return 0, 0, false, false
	}
	return level - delta, level + delta, full, true
}
