package cases

import (
	"fmt"
	"time"

	"github.com/trenzinho/trenzinho/monitor/penalty"
	"github.com/trenzinho/trenzinho/profile"
)

// Next is where the process of a case stands on a day: what it awaits, the next deadline, and
// who may act, as the case view shows it.
type Next struct {
	// Step says, in Portuguese, where the process stands and what it awaits.
	Step string `json:"step"`
	// Deadline is the next deadline ("YYYY-MM-DD"), DeadlineText what it is and how it was
	// counted; empty when none runs.
	Deadline     string `json:"deadline,omitempty"`
	DeadlineText string `json:"deadline_text,omitempty"`
	// Final is the day from which the fine is final (for recidivism), FinalText why it is or
	// is not.
	Final     string `json:"final,omitempty"`
	FinalText string `json:"final_text"`
	// Acts are the acts the state admits, each with who may record it.
	Acts []Act `json:"acts"`
}

// Act is an act the case admits and who may record it.
type Act struct {
	Action string `json:"action"`
	Label  string `json:"label"` // pt-BR
	// Role is the least role that records it; NotBy the users impeded from it.
	Role  Role     `json:"role"`
	NotBy []string `json:"not_by,omitempty"`
}

// Next says where the case stands on the day of now.
func (c *Case) Next(p *profile.Profile, now time.Time) Next {
	today := DayOf(now, p.Location())
	var n Next
	n.Final, n.FinalText, _ = c.FinalOn(p, today)
	for _, a := range c.Allowed() {
		n.Acts = append(n.Acts, Act{Action: a, Label: actionText[a], Role: RoleFor(p, a), NotBy: c.impeded(a)})
	}
	if n.Acts == nil {
		n.Acts = []Act{}
	}
	authority := p.Authority.Title
	if authority == "" {
		authority = "autoridade competente"
	}
	superior := p.Appeal.To
	if superior == "" {
		superior = "autoridade superior"
	}
	switch c.State {
	case penalty.StatusIssued:
		n.Step = "Aguardando a notificação do autuado (Art. 54)."
		if k, need := len(c.FailedDeliveries), p.Notification.EditalAfter(); k > 0 && k < need {
			n.Step += fmt.Sprintf(" %d de %d tentativas de entrega frustradas registradas antes do edital (Art. 54, § 1º).", k, need)
		} else if k >= need {
			n.Step += " Esgotadas as tentativas de entrega: cabe a notificação por edital (Art. 54, § 1º)."
		}
	case penalty.StatusNotified:
		d, why := c.DefenceDeadline(p)
		if !d.IsZero() && today <= d.Format(time.DateOnly) {
			n.Step = "Prazo de defesa em curso (Art. 55)."
			n.Deadline, n.DeadlineText = d.Format(time.DateOnly), why
		} else {
			n.Step = "Prazo de defesa esgotado sem defesa: cabe o julgamento à revelia pela " + authority + "."
		}
	case penalty.StatusDefenceFiled:
		n.Step = "Defesa apresentada em " + br(c.DefenceFiled) + ", aguardando a decisão da " + authority + " (Art. 57)."
		if !c.TimelyDefence(p) {
			n.Step += " A defesa foi apresentada fora do prazo: não suspende a exigibilidade da multa."
		}
	case penalty.StatusAppealFiled:
		n.Step = "Recurso interposto em " + br(c.Appealed) + ", aguardando a decisão da " + superior + "; a exigibilidade da multa está suspensa."
	case penalty.StatusConfirmed, penalty.StatusDefenceRejected:
		c.nextConfirmed(p, today, &n)
	case penalty.StatusPaid:
		n.Step = "Multa paga em " + br(c.Paid) + ": processo encerrado."
		if _, why, ok := c.FinalFrom(p); !ok {
			n.Step = "Multa paga em " + br(c.Paid) + "; " + why + "."
		}
	case penalty.StatusDividaAtiva:
		n.Step = "Multa inscrita em dívida ativa em " + br(c.DividaAtiva) + " (Art. 51): cobrança judicial ou extrajudicial."
	default:
		n.Step = "Auto " + StateText(c.State) + ": processo encerrado, sem multa."
	}
	return n
}

// nextConfirmed is Next for a fine confirmed by a decision: its notification, the appeal
// period, the payment period, then dívida ativa.
func (c *Case) nextConfirmed(p *profile.Profile, today string, n *Next) {
	switch {
	case c.Decided != "" && c.DecisionNotified == "":
		n.Step = "Multa confirmada em " + br(c.Decided) + ": aguardando a notificação da decisão ao autuado."
		return
	case c.AppealDecided != "" && c.AppealNotified == "":
		n.Step = "Recurso improvido em " + br(c.AppealDecided) + ": aguardando a notificação da decisão do recurso ao autuado."
		return
	case c.DecisionNotified == "":
		n.Step = "Multa confirmada."
		return
	}
	pay, payWhy := c.PaymentDeadline(p)
	if last, why := c.AppealDeadline(p); c.Appealed == "" && last != "" && today <= last {
		n.Step = fmt.Sprintf("Decisão notificada em %s: prazo de recurso em curso; prazo de pagamento até %s.", br(c.DecisionNotified), br(pay))
		n.Deadline, n.DeadlineText = last, why
		return
	}
	closed := "Decisão definitiva na esfera administrativa (sem recurso no prazo)"
	if c.Appealed != "" {
		closed = "Decisão definitiva na esfera administrativa (recurso improvido, notificado em " + br(c.AppealNotified) + ")"
	}
	switch {
	case pay != "" && today <= pay:
		n.Step = closed + "; prazo de pagamento em curso."
		n.Deadline, n.DeadlineText = pay, payWhy
	case pay != "":
		n.Step = closed + "; prazo de pagamento esgotado em " + br(pay) + " sem pagamento: cabe a inscrição em dívida ativa (Art. 51)."
	default:
		n.Step = closed + "."
	}
}
