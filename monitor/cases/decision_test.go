package cases

import (
	"errors"
	"strings"
	"testing"

	"github.com/trenzinho/trenzinho/profile"
)

// A decision states its relatório, its fundamentação and its dispositivo; a five-character
// decision is refused, of the defence and of the appeal alike.
func TestStructuredDecisions(t *testing.T) {
	p := profile.Piuma()
	report := "Auto AI-2026/0001, velocidade (Art. 23); defesa alega tacógrafo sem aferição."
	grounds := "O certificado de aferição do tacógrafo, de 02/03/2026, consta do pacote; a alegação não procede."
	ruling := "Indefiro a defesa e confirmo a multa."
	for _, c := range []struct {
		d   Decision
		msg string
	}{
		{Decision{}, "relatório (report"},
		{Decision{Report: report, Grounds: "Não procede.", Ruling: ruling}, "fundamentação (grounds"},
		{Decision{Report: report, Grounds: grounds, Ruling: "Indefiro."}, "dispositivo (ruling"},
	} {
		for _, a := range []Action{
			{Action: ActionDecide, Outcome: OutcomeRejected, Date: "2026-10-16", Text: "Ok.", Decision: c.d},
		} {
			k := must(t, newCase(), p, "2026-11-29", notifyMail, defence)
			var e *Error
			if _, err := k.Check(p, &a, noon("2026-11-29")); !errors.As(err, &e) || e.Kind != Invalid || !strings.Contains(e.Msg, c.msg) {
				t.Errorf("%+v: %v, want %q", c.d, err, c.msg)
			}
		}
	}
	k := must(t, newCase(), p, "2026-11-29", notifyMail, defence)
	a := Action{Action: ActionDecide, Outcome: OutcomeRejected, Date: "2026-10-16", Decision: Decision{Report: report, Grounds: grounds, Ruling: ruling}}
	if err := step(k, p, "2026-11-29", "carla", a); err != nil {
		t.Fatal(err)
	}
	if k.DecisionText != ruling || k.DecisionParts.Grounds != grounds {
		t.Errorf("decided: %q %+v", k.DecisionText, k.DecisionParts)
	}
	// The appeal's decision too.
	must(t, k, p, "2026-11-29", notifyDec, Action{Action: ActionAppeal, Date: "2026-10-22"})
	bad := Action{Action: ActionDecideAppeal, Outcome: OutcomeRejected, Date: "2026-10-26", Text: "Nego."}
	var e *Error
	if _, err := k.Check(p, &bad, noon("2026-11-29")); !errors.As(err, &e) || !strings.Contains(e.Msg, "decisão do recurso exige o seu texto estruturado") {
		t.Errorf("a five-character appeal decision: %v", err)
	}
}
