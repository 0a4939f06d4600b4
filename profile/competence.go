package profile

import "strings"

// Competence are the acts of the Executive an auto rests on, which the law leaves to it and only
// the municipality can name: the act that designates the fiscal organ (Art. 1, § 2º; Art. 34),
// the act that designates the authorities that decide defences and appeals (Art. 57's
// "autoridade competente"; Art. 59) and the act that adopts the on-board telemetry as a means of
// proof (Art. 20, § 1º; Art. 59). Each is printed in the auto; without all three no auto is
// issued (cases.ReasonCompetenceUnproven).
type Competence struct {
	FiscalOrganAct string `yaml:"fiscal_organ_act"`
	AuthoritiesAct string `yaml:"authorities_act"`
	TelemetryAct   string `yaml:"telemetry_act"`
}

// CompetenceAct is one act of Competence: its key, what it does (pt-BR), the provisions that
// leave it to the Executive, and the act as the profile names it ("" when not named).
type CompetenceAct struct {
	Key, What, Provisions, Act string
}

// Acts are the three acts of Competence, in the order an auto prints them.
func (c Competence) Acts() []CompetenceAct {
	return []CompetenceAct{
		{"competence.fiscal_organ_act", "designação do órgão fiscalizador e dos seus agentes", "Art. 1, § 2º, e Art. 34", strings.TrimSpace(c.FiscalOrganAct)},
		{"competence.authorities_act", "designação das autoridades que julgam a defesa e o recurso", "Art. 57 e Art. 59", strings.TrimSpace(c.AuthoritiesAct)},
		{"competence.telemetry_act", "adoção da telemetria embarcada como meio de prova", "Art. 20, § 1º, e Art. 59", strings.TrimSpace(c.TelemetryAct)},
	}
}

// Missing are the keys of the acts not named.
func (c Competence) Missing() []string {
	var out []string
	for _, a := range c.Acts() {
		if a.Act == "" {
			out = append(out, a.Key)
		}
	}
	return out
}

// competenceWarning is Problems' warning while an act of competence is not named.
func (p *Profile) competenceWarning() (Warning, bool) {
	missing := p.Competence.Missing()
	if len(missing) == 0 {
		return Warning{}, false
	}
	return Warning{
		Text:        "atos de competência não cadastrados (" + strings.Join(missing, ", ") + "): nenhum auto pode ser emitido",
		Blocks:      "A emissão de todo auto de infração (recusa competence_unproven): o auto deve provar a competência de quem o lavra e de quem o julga e a admissibilidade da telemetria como prova (Art. 1, § 2º, Art. 34, Art. 20, § 1º, Art. 57 e Art. 59).",
		BlocksIssue: true,
		Keys:        missing,
	}, true
}
