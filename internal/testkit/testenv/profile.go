package testenv

import (
	"fmt"
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

// The years whose municipal holidays the test profiles confirm: every date a test issues on.
const testHolidaysFrom, testHolidaysTo = 2015, 2040

// ConfirmedProfile sets on p the fiscal unit's confirmation, the acts of competence and the
// confirmation of the municipal holidays of every year a test issues in, with test values, and
// returns p.
func ConfirmedProfile(p *profile.Profile) *profile.Profile {
	p.FiscalUnit.ConfirmedBy, p.FiscalUnit.Act = "Secretaria de Finanças (teste)", "Decreto nº 1/2026 (teste)"
	p.Competence = profile.Competence{FiscalOrganAct: testFiscalOrganAct, AuthoritiesAct: testAuthoritiesAct, TelemetryAct: testTelemetryAct}
	p.Holidays.Confirmed = nil
	for y := testHolidaysFrom; y <= testHolidaysTo; y++ {
		p.Holidays.Confirmed = append(p.Holidays.Confirmed, profile.HolidaysConfirmation{Year: y, By: "Secretaria de Administração (teste)", Act: "calendário de teste"})
	}
	return p
}

// CompetenceYAML names the acts of competence and confirms the municipal holidays of every year
// a test issues in, with test values, in a profile's text whose keys are empty as in the
// built-in piuma.yaml; the text is unchanged otherwise.
func CompetenceYAML(y string) string {
	y = strings.Replace(y, "competence:\n  fiscal_organ_act: \"\"\n  authorities_act: \"\"\n  telemetry_act: \"\"\n",
		"competence:\n  fiscal_organ_act: \""+testFiscalOrganAct+"\"\n  authorities_act: \""+testAuthoritiesAct+
			"\"\n  telemetry_act: \""+testTelemetryAct+"\"\n", 1)
	var b strings.Builder
	b.WriteString("  confirmed:\n")
	for yr := testHolidaysFrom; yr <= testHolidaysTo; yr++ {
		fmt.Fprintf(&b, "    - {year: %d, by: Secretaria de Administração (teste), act: calendário de teste}\n", yr)
	}
	return strings.Replace(y, "  confirmed: []\n", b.String(), 1)
}
