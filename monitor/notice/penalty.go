package notice

import (
	"fmt"
	"strings"
	"time"

	"github.com/trenzinho/trenzinho/monitor/penalty"
)

// PenaltyOf states a penalty calculus (penalty.Result) as the notice prints it: the fine in the
// fiscal unit and in reais at the value in force on the day of issue, whether it is a recidivism
// with the earlier notices relied on (number and dates), and the suspension or cassação
// recommended to the agent with the reason. licensee is the offence's ("" when the vehicle has
// no licensee in the registry).
func PenaltyOf(res *penalty.Result, licensee string, issued time.Time, loc *time.Location) *Penalty {
	if loc == nil {
		loc = time.UTC
	}
	pe := &Penalty{Article: res.Penalty, Warning: res.Warning, FineUFMP: res.TotalUFMP, BaseUFMP: res.BaseUFMP, FineBRL: res.TotalBRL,
		UnitValueBRL: res.UnitValueBRL, UnitDate: issued.In(loc)}
	list := func(ns []penalty.Notice) string {
		var s []string
		for _, n := range ns {
			item := "auto nº " + n.ID + " (fato de " + n.Offence.In(loc).Format("02/01/2006")
			if !n.Issued.IsZero() {
				item += ", emitido em " + n.Issued.In(loc).Format("02/01/2006")
			}
			s = append(s, item+")")
		}
		return strings.Join(s, "; ")
	}
	switch {
	case res.Warning:
		pe.Recidivism = "Não se aplica: primeira ocorrência, notificação preliminar sem multa (Art. 41, I)."
	case strings.TrimSpace(licensee) == "":
		pe.Recidivism = "Não verificada: veículo sem prestador identificado no cadastro; a reincidência (Art. 48) não pode ser verificada."
	case res.Recidivist:
		pe.Recidivism = fmt.Sprintf("Sim (Art. 48): multa aplicada em dobro (× %s). Autos anteriores considerados: %s.",
			num(res.Factor, 3), list(res.RelyingOn))
	default:
		pe.Recidivism = "Não (Art. 48): nenhuma multa anterior do prestador que conte para reincidência antes da data do fato."
	}
	if len(res.RepeatOf) > 0 {
		pe.Recidivism += " Repetição de infração já notificada (Art. 41, I): " + list(res.RepeatOf) + "."
	}
	var rec []string
	if s := res.SuspensionRecommended; s != nil {
		rec = append(rec, s.Reason)
	}
	if c := res.CassacaoRecommended; c != nil {
		rec = append(rec, c.Reason)
	}
	if len(rec) > 0 {
		pe.Recommendation = strings.Join(rec, " ")
	} else if !res.Warning {
		pe.Recommendation = "Nenhuma: sem reincidência específica (Art. 52) nem suspensões aplicadas que levem à cassação (Art. 53, III)."
	}
	return pe
}
