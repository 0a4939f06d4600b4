package cases

import (
	"strings"

	"github.com/trenzinho/trenzinho/monitor/penalty"
	"github.com/trenzinho/trenzinho/profile"
)

// Reconsideration (Lei nº 9.784/1999, art. 56, § 1º, by analogy: "O recurso será dirigido à
// autoridade que proferiu a decisão, a qual, se não a reconsiderar no prazo de cinco dias, o
// encaminhará à autoridade superior"): within five days of the appeal, the author of the
// decision on the defence may reconsider it, accepting the appeal's reasons — the auto is then
// without effect, as an appeal granted. Not reconsidered, the appeal goes to the superior
// authority (decide_appeal); nobody else reconsiders another's decision.

// ActionReconsider: the author of the decision on the defence reconsidered it on the appeal.
const ActionReconsider = "reconsider"

// ReconsiderDays is the period to reconsider, from the appeal (art. 56, § 1º).
const ReconsiderDays = 5

// reconsiderAllowed reports whether the state admits a reconsideration: an appeal filed and not
// yet decided.
func (c *Case) reconsiderAllowed() bool {
	return c.State == penalty.StatusAppealFiled && c.AppealDecided == ""
}

// reconsiderImpediment is why user may not reconsider: only the decision's author may.
func (c *Case) reconsiderImpediment(action, user string) string {
	if action != ActionReconsider || c.DecidedBy == "" || strings.EqualFold(user, c.DecidedBy) {
		return ""
	}
	return "Somente quem proferiu a decisão sobre a defesa (" + c.DecidedBy + ") pode reconsiderá-la (Lei nº 9.784/1999, art. 56, § 1º, por analogia); " +
		"não reconsiderada, o recurso é decidido pela autoridade superior."
}

// checkReconsider: the reasons of the reconsideration, on or after the appeal and within
// ReconsiderDays of it, counted as every deadline of the process.
func (c *Case) checkReconsider(p *profile.Profile, a *Action, d days) error {
	if err := text(&a.Text, 20, "a reconsideração exige a sua fundamentação (text, pelo menos 20 caracteres): por que as razões do recurso procedem."); err != nil {
		return err
	}
	if err := d.dayAfter(&a.Date, "da reconsideração", c.Appealed, "interposição do recurso"); err != nil {
		return err
	}
	last, _ := period(p, c.Appealed, ReconsiderDays, "Prazo de reconsideração")
	if a.Date > last {
		return conflictf("não é possível %s em %s: o prazo de %d dias do recurso (%s) terminou em %s; o recurso segue para a autoridade superior (Lei nº 9.784/1999, art. 56, § 1º, por analogia).",
			actionText[ActionReconsider], br(a.Date), ReconsiderDays, br(c.Appealed), br(last))
	}
	a.Outcome = OutcomeAccepted
	return nil
}
