package cases

import (
	"fmt"
	"time"

	"github.com/trenzinho/trenzinho/monitor/penalty"
	"github.com/trenzinho/trenzinho/profile"
)

// When a fine is final (definitiva), for recidivism (Art. 48: "Reincidente é aquele que violar
// preceitos desta lei por cuja infração já houver sido multado") and for the suspension of the
// licence (Art. 52): when no appeal can change it any more.
//
//   - A decision confirming the fine was notified and no appeal was filed: final on the day
//     after the appeal period ran out (Lei nº 9.784/1999, art. 59, by analogy) — not on the
//     decision's notice, while the appeal may still be filed.
//   - A timely appeal was filed: final on the day its decision (rejecting it) was notified.
//   - Payment is not a waiver: a paid fine becomes final as any other, or on the day an
//     express written waiver of the defence and the appeal is recorded (ActionWaiver).
//
// An imported paper notice's finality is what its record says (Final), else the calculus
// derives it from its dates (docs/penalty.md).

// ActionWaiver: the offender's express written waiver of the defence and of the appeal,
// recorded as such (Text: the declaration and how it was received) on a paid fine not yet
// final. Only it, never the payment alone, makes a paid fine final before the periods run out.
const ActionWaiver = "waiver"

// FinalFrom is the first day on which the fine is final, and why (pt-BR); ok false, and why,
// while no day can be named yet. The day may be after today: a decision notified is final the
// day after its appeal period ends, if no appeal is filed by then (FinalOn says whether it is
// final on a given day).
func (c *Case) FinalFrom(p *profile.Profile) (day, why string, ok bool) {
	switch {
	case c.Void():
		return "", "auto sem efeito: " + StateText(c.State), false
	case c.Final != "":
		return c.Final, "multa definitiva em " + br(c.Final), true
	case c.Waived != "":
		return c.Waived, "renúncia expressa à defesa e ao recurso registrada em " + br(c.Waived), true
	case c.Appealed != "" && c.AppealOutcome == OutcomeRejected && c.AppealNotified != "":
		return c.AppealNotified, "recurso improvido, decisão notificada em " + br(c.AppealNotified), true
	case c.Appealed != "" && c.AppealDecided != "":
		return "", "recurso decidido em " + br(c.AppealDecided) + ", decisão ainda não notificada ao autuado: a multa não é definitiva", false
	case c.Appealed != "":
		return "", "recurso interposto em " + br(c.Appealed) + ", pendente de decisão da autoridade superior: a multa não é definitiva", false
	case c.Decided != "" && c.Outcome == OutcomeRejected && c.DecisionNotified != "":
		last, _ := c.AppealDeadline(p)
		d, err := time.Parse(time.DateOnly, last)
		if err != nil {
			return "", "prazo de recurso não calculado: a multa não é definitiva", false
		}
		day = d.AddDate(0, 0, 1).Format(time.DateOnly)
		return day, fmt.Sprintf("multa confirmada em %s, decisão notificada em %s; sem recurso até %s (fim do prazo de recurso), definitiva a partir de %s",
			br(c.Decided), br(c.DecisionNotified), br(last), br(day)), true
	case c.Paid != "" && c.Decided == "":
		return "", "paga em " + br(c.Paid) + " sem decisão da autoridade: o pagamento não é renúncia à defesa nem ao recurso; a multa só é definitiva com a renúncia expressa registrada", false
	case c.Decided != "":
		return "", "decisão de " + br(c.Decided) + " ainda não notificada ao autuado: a multa não é definitiva", false
	case c.DefenceFiled != "":
		return "", "defesa apresentada em " + br(c.DefenceFiled) + ", pendente de decisão: a multa não é definitiva", false
	case c.Notified != "" || c.Published != "":
		return "", "sem decisão da autoridade (com defesa ou à revelia) notificada ao autuado: a multa não é definitiva", false
	}
	return "", "emitido e ainda não notificado ao autuado: a multa não é definitiva", false
}

// FinalOn reports whether the fine is final on the day today ("YYYY-MM-DD"), and why (pt-BR).
func (c *Case) FinalOn(p *profile.Profile, today string) (day, why string, ok bool) {
	day, why, ok = c.FinalFrom(p)
	if ok && day > today {
		last, _ := c.AppealDeadline(p)
		return "", fmt.Sprintf("prazo de recurso em curso até %s: a multa não é definitiva; sem recurso, será definitiva a partir de %s", br(last), br(day)), false
	}
	return day, why, ok
}

// waiverAllowed reports whether the state admits an express waiver: a paid fine, not waived
// yet, that no appeal's decision notified already made final.
func (c *Case) waiverAllowed() bool {
	return c.State == penalty.StatusPaid && c.Waived == "" && c.Final == "" && (c.Appealed == "" || c.AppealNotified == "")
}

// checkWaiver: the express written waiver states what it is (at least 10 characters: the
// declaration and how it was received), on or after the payment.
func (c *Case) checkWaiver(_ *profile.Profile, a *Action, d days) error {
	if err := text(&a.Text, 10, "a renúncia expressa exige a identificação da declaração escrita do autuado (text, pelo menos 10 caracteres)."); err != nil {
		return err
	}
	last, lastWhat := c.lastStep(d.loc)
	if c.Paid > last {
		last, lastWhat = c.Paid, "data do pagamento"
	}
	return d.dayAfter(&a.Date, "da renúncia", last, lastWhat)
}

// PenaltyNoticeOn is the case as the penalty calculus reads it on the day today: a fine whose
// finality is still to come (the appeal period running) is pending, with why, rather than final
// on a day an appeal may yet change.
func (c *Case) PenaltyNoticeOn(p *profile.Profile, today string) penalty.Notice {
	n := c.PenaltyNotice(p)
	if c.Imported() {
		return n
	}
	if _, why, ok := c.FinalOn(p, today); !ok {
		n.Final, n.Pending = time.Time{}, why
	}
	return n
}
