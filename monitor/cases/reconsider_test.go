package cases

import (
	"errors"
	"strings"
	"testing"

	"github.com/trenzinho/trenzinho/monitor/penalty"
	"github.com/trenzinho/trenzinho/profile"
)

// The decision's author may reconsider it within five days of the appeal (Lei nº 9.784/1999,
// art. 56, § 1º): the appeal is granted and the auto has no effect. Nobody else, and not later:
// then the appeal is the superior authority's.
func TestReconsideration(t *testing.T) {
	p := profile.Piuma()
	appealed := func() *Case {
		// carla decided the defence (must); the appeal on Thursday 22/10: five days to Tuesday 27/10.
		return must(t, newCase(), p, "2026-11-29", notifyMail, reject, notifyDec, Action{Action: ActionAppeal, Date: "2026-10-22"})
	}
	reasons := "As razões do recurso procedem: o tacógrafo não estava aferido na data do fato."
	c := appealed()
	if !strings.Contains(strings.Join(c.Allowed(), ","), ActionReconsider) || RoleFor(p, ActionReconsider) != RoleAutoridade {
		t.Fatalf("appeal filed allows %v", c.Allowed())
	}
	for _, bad := range []struct {
		user    string
		a       Action
		msg     string
		invalid bool
	}{
		{"sofia", Action{Action: ActionReconsider, Date: "2026-10-23", Text: reasons}, "Somente quem proferiu a decisão sobre a defesa (carla)", false},
		{"carla", Action{Action: ActionReconsider, Date: "2026-10-23", Text: "Reconsidero."}, "fundamentação", true},
		{"carla", Action{Action: ActionReconsider, Date: "2026-10-21", Text: reasons}, "anterior à interposição do recurso", false},
		{"carla", Action{Action: ActionReconsider, Date: "2026-10-28", Text: reasons}, "terminou em 27/10/2026", false},
	} {
		err := step(appealed(), p, "2026-11-29", bad.user, bad.a)
		var e *Error
		if !errors.As(err, &e) || !strings.Contains(e.Msg, bad.msg) || (e.Kind == Invalid) != bad.invalid {
			t.Errorf("%s %+v: %v, want %q", bad.user, bad.a, err, bad.msg)
		}
	}
	if err := step(c, p, "2026-11-29", "carla", Action{Action: ActionReconsider, Date: "2026-10-27", Text: reasons}); err != nil {
		t.Fatal(err)
	}
	if c.State != penalty.StatusAppealAccepted || !c.Reconsidered || c.AppealDecidedBy != "carla" || !c.Void() || len(c.Allowed()) != 0 {
		t.Errorf("reconsidered: %+v, allows %v", c.Status, c.Allowed())
	}
	if _, _, ok := c.FinalFrom(p); ok {
		t.Error("a reconsidered fine is final")
	}
	// Decided by the superior authority, there is nothing left to reconsider.
	d := must(t, appealed(), p, "2026-11-29", Action{Action: ActionDecideAppeal, Outcome: OutcomeRejected, Date: "2026-10-26", Text: "Recurso improvido."})
	if err := step(d, p, "2026-11-29", "carla", Action{Action: ActionReconsider, Date: "2026-10-27", Text: reasons}); err == nil {
		t.Error("reconsidered after the appeal's decision")
	}
}
