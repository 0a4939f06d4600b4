package complaints

import (
	"fmt"
	"math"
	"strings"
	"time"
)

// Answer is what the public reads of a complaint (the receipt, the answer page /r/{code}, the
// e-mail): in plain Portuguese, one sentence per vehicle matched (nearest first), or that no
// train came within the radius; times in loc. It is personal data's minimum (LGPD): it names no
// vehicle and no speed (a plate and a speed at a place and time tell who drove how), and since
// the level at the place is only an estimate it never says the train was "acima do limite": a
// match whose estimate exceeds the area's limit plus the meter tolerance is above the screening
// threshold, and only such a match is "encaminhado à fiscalização". Detail is the staff's.
func Answer(r *Result, loc *time.Location) []string {
	if len(r.Matches) == 0 {
		return []string{noTrain(r, loc)}
	}
	var out []string
	forwarded := false
	for i, m := range r.Matches {
		var b strings.Builder
		who := "Um trenzinho"
		if i > 0 {
			who = "Outro trenzinho"
		}
		fmt.Fprintf(&b, "%s passou às %s a cerca de %s m do local", who, clock(m.At, loc), formatInt(About(m.DistanceM)))
		switch {
		case m.LevelDB == nil:
			b.WriteString(", sem leitura do medidor de som nesse momento")
		case m.LimitDB == nil:
			fmt.Fprintf(&b, ", com nível sonoro estimado de %s dB(A) no local (limite da área não cadastrado)", formatInt(*m.LevelDB))
		case m.Above:
			fmt.Fprintf(&b, ", com nível sonoro estimado de %s dB(A) no local, acima do limiar de triagem da área (limite de %s dB(A) mais a tolerância do medidor)",
				formatInt(*m.LevelDB), formatInt(*m.LimitDB))
		default:
			fmt.Fprintf(&b, ", com nível sonoro estimado de %s dB(A) no local, que não supera o limiar de triagem da área (limite de %s dB(A) mais a tolerância do medidor)",
				formatInt(*m.LevelDB), formatInt(*m.LimitDB))
		}
		if m.Above && !forwarded {
			b.WriteString("; o caso foi encaminhado à fiscalização")
			forwarded = true
		}
		b.WriteString(".")
		out = append(out, b.String())
	}
	return out
}

// Detail is what the staff read of a complaint's matching (role fiscal): one sentence per
// vehicle matched, with its plate, speed and the estimated level against the area's limit.
func Detail(r *Result, loc *time.Location) []string {
	if len(r.Matches) == 0 {
		return []string{noTrain(r, loc)}
	}
	var out []string
	for _, m := range r.Matches {
		var b strings.Builder
		fmt.Fprintf(&b, "%s passou às %s a cerca de %s m", m.Vehicle, clock(m.At, loc), formatInt(About(m.DistanceM)))
		if m.SpeedKmh != nil {
			fmt.Fprintf(&b, ", a %s km/h", formatInt(*m.SpeedKmh))
		}
		switch {
		case m.LevelDB == nil:
			b.WriteString(", sem leitura do medidor de som nesse momento")
		case m.LimitDB == nil:
			fmt.Fprintf(&b, ", com nível estimado de %s dB(A) (limite da área não cadastrado)", formatInt(*m.LevelDB))
		case m.Above:
			fmt.Fprintf(&b, ", com nível estimado de %s dB(A) — acima do limite da área (%s dB(A))", formatInt(*m.LevelDB), formatInt(*m.LimitDB))
		default:
			fmt.Fprintf(&b, ", com nível estimado de %s dB(A) — dentro do limite da área (%s dB(A))", formatInt(*m.LevelDB), formatInt(*m.LimitDB))
		}
		b.WriteString(".")
		out = append(out, b.String())
	}
	return out
}

// noTrain is the answer when no vehicle came within the radius in the window.
func noTrain(r *Result, loc *time.Location) string {
	return fmt.Sprintf("Nenhum trenzinho a menos de %s m entre %s e %s.",
		formatInt(r.RadiusM), clock(r.From, loc), clockDay(r.To, r.From, loc))
}

// EstimateNote is said with every answer that states a level.
const EstimateNote = "O nível no local é uma estimativa feita a partir do medidor instalado no veículo, não uma medição conforme a NBR 10151: serve de indício para a fiscalização e nunca fundamenta uma multa por si só."

// About rounds a distance as a person says it: to 5 m under 100 m, to 10 m above.
func About(m float64) float64 {
	if m < 100 {
		return math.Max(5, math.Round(m/5)*5)
	}
	return math.Round(m/10) * 10
}

func formatInt(x float64) string { return fmt.Sprintf("%.0f", math.Round(x)) }

func clock(t time.Time, loc *time.Location) string { return t.In(loc).Format("15:04") }

// clockDay is the end of a window: its time, with the date when it falls on another day.
func clockDay(t, from time.Time, loc *time.Location) string {
	if t.In(loc).Format("2006-01-02") != from.In(loc).Format("2006-01-02") {
		return t.In(loc).Format("15:04 de 02/01")
	}
	return clock(t, loc)
}
