package rules

import (
	"math"
	"sort"
	"time"

	"github.com/trenzinho/trenzinho/wire"
)

// Sound levels are energy quantities: a level over a window is the energy average of the
// readings in it, L = 10·log10(Σ tᵢ·10^(Lᵢ/10) / Σ tᵢ) — never the arithmetic mean of decibels.

// keepSound adds a sound reading to the vehicle's window and drops what is older than the
// longest window a rule uses.
func (e *Engine) keepSound(v *Vehicle, s *wire.Sound) {
	if s.LAeqDB == nil {
		return
	}
	dur := 1.0
	if s.DurS != nil {
		dur = *s.DurS
	}
	v.Sounds = append(v.Sounds, SoundSample{T: s.T.Time, DB: *s.LAeqDB, DurS: dur})
	v.leqs = [2]leqMemo{}
	v.sums.add(&v.Sounds[len(v.Sounds)-1])
	keep := time.Duration(max(e.profile.Noise.WindowS, e.profile.Sensitive.EmissionWindow) * float64(time.Second))
	cut := 0
	for cut < len(v.Sounds) && s.T.Time.Sub(v.Sounds[cut].T) >= keep {
		cut++
	}
	if cut > 0 {
		v.sums.remove(v.Sounds[:cut])
		v.Sounds = append(v.Sounds[:0], v.Sounds[cut:]...)
	}
}

// soundSource is the instrument name sound episodes give as their source.
const soundSource = "slm"

// leq returns the energy-average level of the readings in the window (windowS seconds) ending
// at t, and whether the readings cover at least 90% of the window (a level over a shorter time
// is not the level the profile speaks of).
func (v *Vehicle) leq(t time.Time, windowS float64) (float64, bool) {
	// Several rules ask for the same window of the same reading (the emission window:
	// sensitive_zone_sound, boarding_sound, service_switch_suspect); the answer is kept until
	// keepSound changes the samples.
	for i := range v.leqs {
		if m := &v.leqs[i]; m.known && m.windowS == windowS && m.t.Equal(t) {
			return m.level, m.full
		}
	}
	level, full := v.leqOf(t, windowS)
	m := &v.leqs[v.leqNext]
	*m = leqMemo{t: t, windowS: windowS, level: level, full: full, known: true}
	v.leqNext = 1 - v.leqNext
	return level, full
}

// leqMemo is one answer of leq for the vehicle's current samples.
type leqMemo struct {
	t           time.Time
	windowS     float64
	level       float64
	full, known bool
}

// leqOf computes leq.
func (v *Vehicle) leqOf(t time.Time, windowS float64) (float64, bool) {
	var energy, covered float64
	from := t.Add(-time.Duration(windowS * float64(time.Second)))
	// v.Sounds is in strictly increasing time order (keepSound appends only readings newer
	// than the last), so the readings in (from, t] are a run of it: [lo, hi).
	hi := len(v.Sounds)
	for hi > 0 && v.Sounds[hi-1].T.After(t) {
		hi--
	}
	lo := sort.Search(hi, func(i int) bool { return v.Sounds[i].T.After(from) })
	window := v.Sounds[lo:hi]
	top := math.Inf(-1)
	for _, s := range window {
		top = max(top, s.DB)
	}
	if math.IsInf(top, -1) {
		return 0, false
	}
	for i := range window {
		s := &window[i]
		energy += s.DurS * s.relativeEnergy(top)
		covered += s.DurS
	}
	if covered <= 0 {
		return 0, false
	}
	return top + 10*math.Log10(energy/covered), covered >= 0.9*windowS
}

// relativeEnergy returns 10^((DB−top)/10), the sample's energy relative to the loudest sample
// of a window. A sample stays in the windows for a minute and their loudest sample seldom
// changes from one reading to the next, so the value is kept for the last two tops asked for
// (each reading asks for a short and a long window, whose tops often differ).
func (s *SoundSample) relativeEnergy(top float64) float64 {
	for i := range s.energyKnown {
		if s.energyTop[i] == top {
			return s.energy[i]
		}
	}
	e := math.Pow(10, (s.DB-top)/10)
	i := s.energyNext
	s.energy[i], s.energyTop[i] = e, top
	s.energyNext = 1 - i
	s.energyKnown = max(s.energyKnown, i+1)
	return e
}

// emitting reports whether the vehicle emits sound at t per the profile (Art. 28): the L_Aeq
// over the emission window at or above the emission threshold, at the meter.
func (e *Engine) emitting(v *Vehicle, t time.Time) (level float64, emits, known bool) {
	p := e.profile.Sensitive
	l, ok := v.leq(t, p.EmissionWindow)
	if !ok {
		return 0, false, false
	}
	return l, l >= p.EmissionDB, true
}

func soundEvidence(r *reading, value float64, lat, lon float64, havePos bool) evidence {
	ev := readingEvidence(r, "sound", value, "dB(A)")
	if havePos {
		ev = ev.at(lat, lon)
	}
	return ev
}
