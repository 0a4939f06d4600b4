package penalty

import (
	"strings"
	"testing"
	"time"
)

func TestDefenceDeadline(t *testing.T) {
	cases := []struct {
		name        string
		replace     []string // in the profile's text
		notified    time.Time
		mode        string
		publication time.Time
		want        string // YYYY-MM-DD; "" for none
		explains    []string
	}{
		// Thursday 2026-11-12 + 10 days = Sunday 2026-11-22 → Monday 2026-11-23.
		{name: "over a weekend", notified: at("2026-11-12 10:00"), mode: ModeInPerson, want: "2026-11-23",
			explains: []string{"10 dias corridos", "12/11/2026", "excluído o dia do recebimento", "22/11/2026 (domingo)", "23/11/2026 (segunda-feira)"}},
		// Tuesday 2026-11-10 + 10 = Friday 2026-11-20, a national holiday → Monday 2026-11-23.
		{name: "over a holiday", notified: at("2026-11-10 09:00"), mode: ModeMail, want: "2026-11-23",
			explains: []string{"recebimento do auto pelo correio", "20/11/2026 (sexta-feira, feriado: Dia Nacional de Zumbi e da Consciência Negra)"}},
		// Tuesday 2026-03-24 + 10 = Friday 2026-04-03, Good Friday (Easter 2026-04-05) → Monday.
		{name: "over Good Friday", notified: at("2026-03-24"), mode: ModeInPerson, want: "2026-04-06"},
		// Tuesday 2026-12-22 + 10 = Friday 2027-01-01 → Monday 2027-01-04.
		{name: "over New Year", notified: at("2026-12-22"), mode: ModeInPerson, want: "2027-01-04"},
		{name: "a business day", notified: at("2026-10-05"), mode: ModeInPerson, want: "2026-10-15",
			explains: []string{"15/10/2026 (quinta-feira)."}},
		// 01:30 UTC on the 13th is 22:30 on the 12th in Piúma: received on the 12th.
		{name: "the local day of receipt", notified: time.Date(2026, 11, 13, 1, 30, 0, 0, time.UTC), mode: ModeInPerson, want: "2026-11-23"},
		// Edital published Tuesday 2026-12-01: + 10 = Friday 2026-12-11.
		{name: "edital, from its publication", notified: at("2026-11-25"), mode: ModeEdital, publication: at("2026-12-01"), want: "2026-12-11",
			explains: []string{"publicação do edital em 01/12/2026"}},
		{name: "edital, from the notification", replace: []string{"edital_from_publication: true", "edital_from_publication: false"},
			notified: at("2026-11-25"), mode: ModeEdital, publication: at("2026-12-01"), want: "2026-12-07"},
		{name: "edital without publication", notified: at("2026-11-25"), mode: ModeEdital, explains: []string{"publicação do edital desconhecida"}},
		// Wednesday 2026-11-04, the day of receipt counted: day 10 is Friday 2026-11-13.
		{name: "day of receipt counted", replace: []string{"exclude_receipt_day: true", "exclude_receipt_day: false"},
			notified: at("2026-11-04"), mode: ModeInPerson, want: "2026-11-13", explains: []string{"incluído o dia do recebimento"}},
		// Excluded: day 10 is Saturday 2026-11-14; Sunday the 15th is a holiday too → Monday.
		{name: "day of receipt excluded", notified: at("2026-11-04"), mode: ModeInPerson, want: "2026-11-16"},
		{name: "without moving to a business day", replace: []string{"next_business_day: true", "next_business_day: false"},
			notified: at("2026-11-12"), mode: ModeInPerson, want: "2026-11-22"},
		{name: "another period", replace: []string{"days: 10           # Art. 55", "days: 15"},
			notified: at("2026-11-12"), mode: ModeInPerson, want: "2026-11-27"},
		{name: "unknown mode", notified: at("2026-11-12"), mode: "pigeon", explains: []string{`"pigeon"`}},
		{name: "no date", mode: ModeInPerson, explains: []string{"desconhecida"}},
	}
	for _, c := range cases {
		p := piuma(t, c.replace...)
		got, why := DefenceDeadline(p, c.notified, c.mode, c.publication)
		switch {
		case c.want == "" && !got.IsZero():
			t.Errorf("%s: deadline %s, want none", c.name, got)
		case c.want != "" && (got.Format(time.DateOnly) != c.want || got.Location() != p.Location() || got.Hour() != 0):
			t.Errorf("%s: deadline %s, want %s 00:00 in %s", c.name, got, c.want, p.Location())
		}
		for _, e := range c.explains {
			if !strings.Contains(why, e) {
				t.Errorf("%s: explanation %q lacks %q", c.name, why, e)
			}
		}
	}
}

func TestNoticeDeadlineRefusedToSign(t *testing.T) {
	p := piuma(t)
	n := Notice{ID: "1", Notified: at("2026-11-12"), Mode: ModeInPerson, RefusedToSign: true}
	d, why := n.DefenceDeadline(p)
	if d.Format(time.DateOnly) != "2026-11-23" || !strings.Contains(why, "Art. 54, § 2º") {
		t.Errorf("%s %q", d, why)
	}
}

func TestDefenceTimely(t *testing.T) {
	p := piuma(t)
	deadline, _ := DefenceDeadline(p, at("2026-11-12"), ModeInPerson, time.Time{})
	cases := []struct {
		filed time.Time
		want  bool
	}{
		{at("2026-11-13 09:00"), true},
		{at("2026-11-23 23:59"), true},
		{time.Date(2026, 11, 24, 2, 30, 0, 0, time.UTC), true}, // 23:30 on the 23rd in Piúma
		{at("2026-11-24 00:00"), false},
		{at("2026-12-01"), false},
		{time.Time{}, false},
	}
	for _, c := range cases {
		if got := DefenceTimely(deadline, c.filed); got != c.want {
			t.Errorf("filed %s: timely %v, want %v", c.filed, got, c.want)
		}
	}
	if DefenceTimely(time.Time{}, at("2026-11-13")) {
		t.Error("timely against no deadline")
	}
}

func TestFineSuspended(t *testing.T) {
	p := piuma(t)
	// Handed over Thursday 2026-11-12: deadline Monday 2026-11-23.
	n := Notice{ID: "1", Licensee: "L1", Notified: at("2026-11-12"), Mode: ModeInPerson, Status: StatusDefenceFiled, DefenceFiled: at("2026-11-20")}
	cases := []struct {
		name string
		n    Notice
		on   string
		want bool
		why  string
	}{
		{"pending", n, "2026-12-01", true, "Art. 57"},
		{"before the defence", n, "2026-11-19", false, "Nenhuma defesa"},
		{"the day it is filed", n, "2026-11-20", true, "Art. 57"},
		{"decided", with(n, func(n *Notice) { n.Status, n.Decided = StatusDefenceRejected, at("2026-12-05") }), "2026-12-05", false, "decidida em 05/12/2026"},
		{"before the decision", with(n, func(n *Notice) { n.Status, n.Decided = StatusDefenceRejected, at("2026-12-05") }), "2026-12-04", true, "Art. 57"},
		{"late", with(n, func(n *Notice) { n.DefenceFiled = at("2026-11-24") }), "2026-12-01", false, "após o prazo"},
		{"no defence", with(n, func(n *Notice) { n.DefenceFiled, n.Status = time.Time{}, StatusNotified }), "2026-12-01", false, "Nenhuma defesa"},
		{"annulled", with(n, func(n *Notice) { n.Status = StatusAnnulled }), "2026-12-01", false, "sem multa"},
		{"decided without a date", with(n, func(n *Notice) { n.Status = StatusConfirmed }), "2026-12-01", false, "não registrada"},
	}
	for _, c := range cases {
		got, why := FineSuspended(p, c.n, at(c.on))
		if got != c.want || !strings.Contains(why, c.why) {
			t.Errorf("%s: %v %q, want %v and %q", c.name, got, why, c.want, c.why)
		}
	}
}
