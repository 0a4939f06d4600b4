package cases

import (
	"encoding/json"
	"fmt"
	"strings"

	"github.com/trenzinho/trenzinho/profile"
)

// A decision on a defence or an appeal is structured as a court would read it (Lei nº
// 9.784/1999, art. 50: "Os atos administrativos deverão ser motivados, com indicação dos fatos
// e dos fundamentos jurídicos"; art. 2º, parágrafo único, VII): the relatório (what the case
// holds: the auto, the defence or the appeal and their points), the fundamentação (the reasons,
// answering each point raised) and the dispositivo (what is decided). No five-character
// decisions.

// Decision is the structure of a decision.
type Decision struct {
	Report  string `json:"report,omitempty"`  // relatório
	Grounds string `json:"grounds,omitempty"` // fundamentação
	Ruling  string `json:"ruling,omitempty"`  // dispositivo
}

// The least lengths of a decision's parts, in characters.
const (
	minReport  = 20
	minGrounds = 40
	minRuling  = 10
)

// checkDecision requires the three parts of a decision (what: "sobre a defesa", "do recurso");
// the decision's text, when not given, is its dispositivo.
func checkDecision(a *Action, what string) error {
	d := &a.Decision
	d.Report, d.Grounds, d.Ruling = strings.TrimSpace(d.Report), strings.TrimSpace(d.Grounds), strings.TrimSpace(d.Ruling)
	short := func(s string, n int) bool { return len([]rune(s)) < n }
	switch {
	case short(d.Report, minReport):
		return invalidf("a decisão %s exige o seu texto estruturado: o relatório (report, pelo menos %d caracteres) — o auto, a defesa ou o recurso e os pontos que levantam.", what, minReport)
	case short(d.Grounds, minGrounds):
		return invalidf("a decisão %s exige o seu texto estruturado: a fundamentação (grounds, pelo menos %d caracteres), que responda a cada ponto da defesa ou do recurso (Lei nº 9.784/1999, art. 50).", what, minGrounds)
	case short(d.Ruling, minRuling):
		return invalidf("a decisão %s exige o seu texto estruturado: o dispositivo (ruling, pelo menos %d caracteres) — o que se decide.", what, minRuling)
	}
	if strings.TrimSpace(a.Text) == "" {
		a.Text = d.Ruling
	}
	return nil
}

// DecisionAct is one decision of a case as its event keeps it: on the defence (decide), on
// the appeal (decide_appeal) or the reconsideration of the decision on the defence
// (reconsider). Its document is identified by the event's Seq.
type DecisionAct struct {
	Seq     int    `json:"seq"`
	Action  string `json:"action"`
	Date    string `json:"date"`
	User    string `json:"user"`
	Outcome string `json:"outcome"`
	Revelia bool   `json:"revelia,omitempty"`
	Decision
	Text string `json:"text"`
}

// Title is the decision's name in Portuguese.
func (d DecisionAct) Title() string {
	switch d.Action {
	case ActionDecideAppeal:
		return "Decisão do recurso"
	case ActionReconsider:
		return "Reconsideração da decisão sobre a defesa"
	}
	return "Decisão sobre a defesa"
}

// Decisions are the case's decisions, oldest first.
func (c *Case) Decisions() []DecisionAct {
	var out []DecisionAct
	for _, e := range c.Events {
		if e.Action != ActionDecide && e.Action != ActionDecideAppeal && e.Action != ActionReconsider {
			continue
		}
		var a Action
		if err := json.Unmarshal(e.Data, &a); err != nil {
			continue // Fold refuses such a case before it is read
		}
		out = append(out, DecisionAct{Seq: e.Seq, Action: e.Action, Date: e.Date, User: e.User, Outcome: a.Outcome,
			Revelia: a.Revelia, Decision: a.Decision, Text: a.Text})
	}
	return out
}

// DecisionAt is the decision recorded by the event seq; false when that event is no decision.
func (c *Case) DecisionAt(seq int) (DecisionAct, bool) {
	for _, d := range c.Decisions() {
		if d.Seq == seq {
			return d, true
		}
	}
	return DecisionAct{}, false
}

// OutcomeText is the decision's outcome in Portuguese.
func (d DecisionAct) OutcomeText() string {
	accepted := d.Outcome == OutcomeAccepted
	switch {
	case d.Action == ActionReconsider:
		return "Decisão reconsiderada: recurso acolhido"
	case d.Action == ActionDecideAppeal && accepted:
		return "Recurso provido"
	case d.Action == ActionDecideAppeal:
		return "Recurso improvido"
	case accepted:
		return "Defesa acolhida"
	}
	return "Defesa indeferida"
}

// Consequence is what follows from the decision under the profile p, in Portuguese: the auto
// without effect, or the fine kept with the period to appeal and to pay, counted from the
// ciência of the decision (its notification), which is not known when the decision is made.
func (d DecisionAct) Consequence(p *profile.Profile) string {
	if d.Outcome == OutcomeAccepted {
		if d.Action == ActionReconsider {
			return "A autoridade que proferiu a decisão sobre a defesa a reconsiderou, acolhendo as razões do recurso (Lei nº 9.784/1999, art. 56, § 1º, por analogia): o auto de infração fica sem efeito."
		}
		return "O auto de infração fica sem efeito."
	}
	pay := fmt.Sprintf("a multa deve ser paga em %d dias contados da ciência desta decisão", p.Payment.Period())
	if d.Action == ActionDecideAppeal {
		// The municipal law says nothing of appeals: the process (docs/process.md) has one, to
		// the superior authority, and its decision notified makes the fine final. The document
		// states that, and no more (no claim that no other remedy exists).
		return "A multa fica mantida e, decidido o recurso pela autoridade superior, torna-se definitiva com a ciência desta decisão; " + pay + "."
	}
	to := ""
	if strings.TrimSpace(p.Appeal.To) != "" {
		to = ", dirigido a " + strings.TrimSpace(p.Appeal.To) + ","
	}
	return fmt.Sprintf("A multa fica mantida. Desta decisão cabe recurso%s no prazo de %d dias contados da sua ciência; não havendo recurso, %s.",
		to, p.Appeal.Period(), pay)
}
