package testenv

import (
	"strings"

	"github.com/trenzinho/trenzinho/profile"
)

// The acts only the municipality can name, which the built-in profile ships empty and the issue
// of an auto requires, with test values: fixtures that issue autos use ConfirmedProfile or
// CompetenceYAML rather than setting each.
const (
	testFiscalOrganAct = "Decreto nº 100/2026 (teste), designa a Fiscalização de Posturas"
	testAuthoritiesAct = "Decreto nº 101/2026 (teste), designa a Autoridade Julgadora de Posturas"
	testTelemetryAct   = "Decreto nº 102/2026 (teste), adota a telemetria embarcada como meio de prova"
)

// ConfirmedProfile sets on p the fiscal unit's confirmation and the acts of competence, with
// test values, and returns p.
func ConfirmedProfile(p *profile.Profile) *profile.Profile {
	p.FiscalUnit.ConfirmedBy, p.FiscalUnit.Act = "Secretaria de Finanças (teste)", "Decreto nº 1/2026 (teste)"
	p.Competence = profile.Competence{FiscalOrganAct: testFiscalOrganAct, AuthoritiesAct: testAuthoritiesAct, TelemetryAct: testTelemetryAct}
	return p
}

// CompetenceYAML names the acts of competence, with test values, in a profile's text whose
// competence keys are empty as in the built-in piuma.yaml; the text is unchanged otherwise.
func CompetenceYAML(y string) string {
	return strings.Replace(y, "competence:\n  fiscal_organ_act: \"\"\n  authorities_act: \"\"\n  telemetry_act: \"\"\n",
		"competence:\n  fiscal_organ_act: \""+testFiscalOrganAct+"\"\n  authorities_act: \""+testAuthoritiesAct+
			"\"\n  telemetry_act: \""+testTelemetryAct+"\"\n", 1)
}
