package rules

import (
	"math"
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
	keep := time.Duration(max(e.profile.Noise.WindowS, e.profile.Sensitive.EmissionWindow) * float64(time.Second))
	cut := 0
	for cut < len(v.Sounds) && s.T.Time.Sub(v.Sounds[cut].T) >= keep {
		cut++
	}
	if cut > 0 {
		v.Sounds = append(v.Sounds[:0], v.Sounds[cut:]...)
	}
}

// soundSource is the instrument name sound episodes give as their source.
const soundSource = "slm"

// leq returns the energy-average level of the readings in the window (windowS seconds) ending
// at t, and whether the readings cover at least 90% of the window (a level over a shorter time
// is not the level the profile speaks of).
func (v *Vehicle) leq(t time.Time, windowS float64) (float64, bool) {
	var energy, covered float64
	from := t.Add(-time.Duration(windowS * float64(time.Second)))
	top := math.Inf(-1)
	for _, s := range v.Sounds {
		if s.T.After(from) && !s.T.After(t) {
			top = max(top, s.DB)
		}
	}
	if math.IsInf(top, -1) {
		return 0, false
	}
	for _, s := range v.Sounds {
		if s.T.After(from) && !s.T.After(t) {
			energy += s.DurS * math.Pow(10, (s.DB-top)/10)
			covered += s.DurS
		}
	}
	if covered <= 0 {
		return 0, false
	}
	return top + 10*math.Log10(energy/covered), covered >= 0.9*windowS
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

func soundEvidence(r *reading, value float64, lat, lon float64, havePos bool) *Evidence {
	ev := &Evidence{Kind: "sound", Epoch: r.Epoch, Seq: r.Seq, T: newTime(r.T), Value: value, Unit: "dB(A)"}
	if havePos {
		ev.Lat, ev.Lon = ptr(lat), ptr(lon)
	}
	return ev
}
