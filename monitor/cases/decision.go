package cases

import "strings"

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
