package rules

import (
	"fmt"
	"math"
	"strconv"
	"strings"
	"time"

	"github.com/trenzinho/trenzinho/profile"
)

// MeasurementWindow is how far from a noise_limit episode an agent's NBR 10151 measurement may
// have been taken and still prove its fact: a measurement of another time proves another fact.
const MeasurementWindow = time.Hour

// JudgeMeasurement checks an agent's NBR 10151 measurement against a noise_limit episode, as
// the auto that cites it must: the limit is the NBR table's for the episode's area type (the
// profile's noise.areas, its default area outside every zone) and the period at the time of the
// measurement — never a typed one; the measured L_Aeq is corrected for the residual sound by
// energetic subtraction, L = 10·log10(10^(L_Aeq/10) − 10^(L_res/10)), when the residual lies
// within 10 dB of it, and cannot be determined when the difference is under 3 dB; the
// corrected level must exceed the limit; and the measurement must lie within MeasurementWindow
// of the episode. It returns the limit and the corrected level, and the problem (pt-BR) that
// refuses the measurement, "" when none.
func JudgeMeasurement(p *profile.Profile, ep *Episode, m *Measurement) (limit, corrected float64, problem string) {
	end := ep.Start.Time
	if ep.End != nil {
		end = ep.End.Time
	}
	if m.Date.Before(ep.Start.Add(-MeasurementWindow)) || m.Date.After(end.Add(MeasurementWindow)) {
		return 0, 0, fmt.Sprintf("medição fora do período do episódio (até %s antes do início ou depois do fim): mede outro fato", MeasurementWindow)
	}
	area := p.Noise.DefaultArea
	if ep.Area != nil {
		area = *ep.Area
	}
	a, ok := p.Noise.Areas[area]
	if !ok {
		return 0, 0, "tipo de área da NBR 10151 do local desconhecido: o limite não pode ser determinado"
	}
	limit = a.Day
	if Night(p, m.Date.Time) {
		limit = a.Night
	}
	diff := m.LAeqDB - m.ResidualDB
	switch {
	case diff < 3:
		return limit, 0, "nível de som residual a menos de 3 dB do medido: o som específico não pode ser determinado"
	case diff < 10:
		corrected = 10 * math.Log10(math.Pow(10, m.LAeqDB/10)-math.Pow(10, m.ResidualDB/10))
	default:
		corrected = m.LAeqDB
	}
	corrected = math.Round(corrected*10) / 10
	if corrected <= limit {
		return limit, corrected, "nível corrigido pelo som residual de " + strings.Replace(strconv.FormatFloat(corrected, 'f', 1, 64), ".", ",", 1) +
			" dB(A) não excede o limite de " + strconv.FormatFloat(limit, 'f', 0, 64) + " dB(A) da NBR 10151 para a área e o período"
	}
	return limit, corrected, ""
}
