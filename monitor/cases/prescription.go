package cases

import (
	"fmt"
	"time"

	"github.com/trenzinho/trenzinho/profile"
)

// Prescription (Decreto nº 20.910/1932, art. 1º, which the STJ applies to municipal fines:
// prescription_years, five by default) is checked at every step that exercises the power to
// fine or to collect: at issue (IssueBlockers, ReasonPrescribed), when an earlier paper notice
// is imported (PrescribedAtIssue), and before the inscription in dívida ativa (checkDividaAtiva:
// an auto issued after the facts prescribed, or a fine whose collection prescribed — the period
// counted, as for the execution of administrative fines (STJ, Súmula 467, by analogy), from the
// end of the administrative process: the last day to pay).

// yearsAfter is the day years after day ("YYYY-MM-DD"); "" for a malformed day.
func yearsAfter(day string, years int) string {
	d, err := time.Parse(time.DateOnly, day)
	if err != nil {
		return ""
	}
	return d.AddDate(years, 0, 0).Format(time.DateOnly)
}

// PrescribedAtIssue says, in Portuguese, why a notice of facts of the day offence issued on the
// day issued was issued once the power to fine had prescribed; "" when it was not.
func PrescribedAtIssue(p *profile.Profile, offence, issued string) string {
	years := p.PrescriptionPeriod()
	limit := yearsAfter(offence, years)
	if limit == "" || issued < limit {
		return ""
	}
	return fmt.Sprintf("o auto foi emitido em %s, depois de prescrita a pretensão punitiva: os fatos são de %s e o prazo de %d anos (Decreto nº 20.910/1932, art. 1º) terminou em %s",
		br(issued), br(offence), years, br(limit))
}

// collectionFrom is the day the period to collect the fine runs from: the day after the last
// day to pay (PaymentDeadline), else the day the fine became final (an imported notice's final
// date); "" while there is none.
func (c *Case) collectionFrom(p *profile.Profile) string {
	if last, _ := c.PaymentDeadline(p); last != "" {
		d, _ := time.Parse(time.DateOnly, last)
		return d.AddDate(0, 0, 1).Format(time.DateOnly)
	}
	if final, _, ok := c.FinalFrom(p); ok {
		return final
	}
	return ""
}

// checkPrescription refuses an inscription in dívida ativa on the day day of a case whose auto
// was issued after the facts prescribed, or whose collection prescribed.
func (c *Case) checkPrescription(p *profile.Profile, day string) error {
	label := actionText[ActionDividaAtiva]
	loc := p.Location()
	if why := PrescribedAtIssue(p, DayOf(c.Offence, loc), DayOf(c.Issued, loc)); why != "" && !c.Offence.IsZero() && !c.Issued.IsZero() {
		return conflictf("não é possível %s: %s; anule-o de ofício.", label, why)
	}
	from := c.collectionFrom(p)
	if from == "" {
		return nil
	}
	years := p.PrescriptionPeriod()
	if limit := yearsAfter(from, years); limit != "" && day >= limit {
		return conflictf("não é possível %s em %s: prescrita a pretensão de cobrança da multa do auto %s — o prazo de %d anos (Decreto nº 20.910/1932, art. 1º), contado de %s, fim do prazo para pagamento, terminou em %s.",
			label, br(day), c.Notice, years, br(from), br(limit))
	}
	return nil
}
