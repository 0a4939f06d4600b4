package complaints

import (
	"fmt"
	"math"
	"strings"
	"time"
)

// Answer says in plain Portuguese what the telemetry shows about a complaint, one sentence per
// vehicle matched (nearest first), or that no train came within the radius; times in loc.
func Answer(r *Result, loc *time.Location) []string {
	if len(r.Matches) == 0 {
		return []string{fmt.Sprintf("Nenhum trenzinho a menos de %s m entre %s e %s.",
			formatInt(r.RadiusM), clock(r.From, loc), clockDay(r.To, r.From, loc))}
	}
	var out []string
	forwarded := false
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
		if !forwarded {
			b.WriteString("; o caso foi encaminhado à fiscalização")
			forwarded = true
		}
		b.WriteString(".")
		out = append(out, b.String())
	}
	return out
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
