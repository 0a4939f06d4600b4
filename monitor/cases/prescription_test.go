package cases

import (
	"strings"
	"testing"
	"time"

	"github.com/trenzinho/trenzinho/monitor/penalty"
	"github.com/trenzinho/trenzinho/profile"
)

// The inscription in dívida ativa checks prescription too: the collection prescribes five
// years (prescription_years) after the last day to pay, and an auto issued after its facts
// prescribed is never inscribed.
func TestDividaAtivaChecksPrescription(t *testing.T) {
	p := profile.Piuma()
	decided := func(offence time.Time) *Case {
		c := newCase()
		c.Offence = offence
		// Notified 05/10, decided 16/10, decision notified 19/10: the last day to pay is 18/11/2026.
		return must(t, c, p, "2026-10-19", notifyMail, reject, notifyDec)
	}
	da := func(day string) Action { return Action{Action: ActionDividaAtiva, Date: day} }

	c := decided(time.Date(2026, 9, 30, 15, 0, 0, 0, sp))
	if err := step(c, p, "2031-11-19", "carla", da("2031-11-19")); err == nil ||
		!strings.Contains(err.Error(), "prescrita a pretensão de cobrança") || !strings.Contains(err.Error(), "terminou em 19/11/2031") {
		t.Errorf("inscribed once the collection prescribed: %v", err)
	}
	if err := step(c, p, "2031-11-18", "carla", da("2031-11-18")); err != nil || c.State != penalty.StatusDividaAtiva {
		t.Errorf("the last day before prescription: %v (%s)", err, c.State)
	}

	// Facts of September 2021, the auto of October 2026: issued after the power to fine
	// prescribed (30/09/2026).
	c = decided(time.Date(2021, 9, 30, 15, 0, 0, 0, sp))
	if err := step(c, p, "2026-11-19", "carla", da("2026-11-19")); err == nil || !strings.Contains(err.Error(), "prescrita a pretensão punitiva") {
		t.Errorf("inscribed an auto issued after prescription: %v", err)
	}

	if why := PrescribedAtIssue(p, "2021-09-30", "2026-09-29"); why != "" {
		t.Errorf("issued the day before the limit: %s", why)
	}
	if why := PrescribedAtIssue(p, "2021-09-30", "2026-09-30"); !strings.Contains(why, "terminou em 30/09/2026") {
		t.Errorf("issued on the limit: %q", why)
	}
}

// Every deadline ends on a business day of profile.BusinessDay: a ponto facultativo decreed
// (holidays.closed_days) moves the appeal's last day as a holiday does.
func TestDeadlineSkipsClosedDays(t *testing.T) {
	p := profile.Piuma()
	c := &Case{Notice: "AI-2027/0001", Status: Status{Outcome: OutcomeRejected, DecisionNotified: "2027-01-29"}}
	if last, _ := c.AppealDeadline(p); last != "2027-02-08" {
		t.Fatalf("without the decree: %s", last)
	}
	p.Holidays.ClosedDays = []profile.ClosedDay{{Date: "2027-02-08", Name: "Carnaval", Act: "Decreto nº 1/2027 (teste)"}}
	if last, why := c.AppealDeadline(p); last != "2027-02-09" || !strings.Contains(why, "09/02/2027") {
		t.Errorf("with Monday of Carnaval decreed: %s (%s)", last, why)
	}
}
