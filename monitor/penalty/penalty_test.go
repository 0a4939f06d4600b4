package penalty

import (
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/trenzinho/trenzinho/profile"
)

// valuesLine is the first entry of fiscal_unit.values in the Piúma profile.
var valuesLine = regexp.MustCompile(`(?m)^(\s*)- \{from: "[0-9-]+", brl: .*$`)

// piuma returns the built-in Piúma profile with two values of the UFMP — R$ 4.2000 from
// 2026-01-01 and R$ 4.41234 from 2027-01-01 — and the given replacements made in its text.
func piuma(t *testing.T, replace ...string) *profile.Profile {
	t.Helper()
	y := string(profile.PiumaYAML())
	if !valuesLine.MatchString(y) {
		t.Fatal("piuma.yaml: no fiscal_unit.values entry to replace")
	}
	done := false
	y = valuesLine.ReplaceAllStringFunc(y, func(line string) string {
		if done {
			return ""
		}
		done = true
		indent := valuesLine.FindStringSubmatch(line)[1]
		return indent + `- {from: "2027-01-01", brl: "4.41234", note: test}` + "\n" +
			indent + `- {from: "2026-01-01", brl: "4.2000", note: test}`
	})
	for i := 0; i+1 < len(replace); i += 2 {
		if !strings.Contains(y, replace[i]) {
			t.Fatalf("piuma.yaml has no %q", replace[i])
		}
		y = strings.Replace(y, replace[i], replace[i+1], 1)
	}
	p, err := profile.Parse([]byte(y), "test.yaml")
	if err != nil {
		t.Fatal(err)
	}
	if len(p.FiscalUnit.Values) != 2 {
		t.Fatalf("want 2 fiscal unit values, got %+v", p.FiscalUnit.Values)
	}
	return p
}

var saoPaulo = mustLoad("America/Sao_Paulo")

func mustLoad(name string) *time.Location {
	loc, err := time.LoadLocation(name)
	if err != nil {
		panic(err)
	}
	return loc
}

// at parses a local time in Piúma: "2026-12-10 15:00" or a date "2026-12-10" (00:00).
func at(s string) time.Time {
	layout := time.DateOnly
	if len(s) > len(layout) {
		layout = "2006-01-02 15:04"
	}
	t, err := time.ParseInLocation(layout, s, saoPaulo)
	if err != nil {
		panic(err)
	}
	return t
}

// speeding is an earlier speeding notice of licensee L1: fact on offence, issued the next day,
// handed over on notified with status st.
func speeding(id, offence, notified string, st Status) Notice {
	n := Notice{ID: id, Vehicle: "PIU-001", Licensee: "L1", Articles: []string{"Art. 23"}, Penalty: "Art. 46, X",
		Offence: at(offence + " 16:00"), Issued: at(offence).AddDate(0, 0, 1), Status: st}
	if notified != "" {
		n.Notified, n.Mode = at(notified), ModeInPerson
	}
	return n
}

func with(n Notice, f func(*Notice)) Notice { f(&n); return n }

func TestFineFirstOffence(t *testing.T) {
	p := piuma(t)
	cases := []struct {
		rule, issue      string
		base             float64
		penalty          string
		unit, unitFrom   string
		totalBRL         string
		issueUTC         time.Time // instead of issue, when set
		offence          string
		wantExplanations []string
	}{
		{rule: "speed", issue: "2026-12-14", base: 400, penalty: "Art. 46, X", unit: "4.2000", unitFrom: "2026-01-01", totalBRL: "1680.00",
			wantExplanations: []string{"Art. 23", "Art. 46, X", "R$ 1.680,00", "Sem reincidência"}},
		{rule: "sensitive_zone_sound", issue: "2026-12-14", base: 300, penalty: "Art. 45, VII", unit: "4.2000", unitFrom: "2026-01-01", totalBRL: "1260.00"},
		{rule: "noise_limit", issue: "2026-12-14", base: 300, penalty: "Art. 45, VII", unit: "4.2000", unitFrom: "2026-01-01", totalBRL: "1260.00"},
		{rule: "hours", issue: "2026-12-14", base: 250, penalty: "Art. 47", unit: "4.2000", unitFrom: "2026-01-01", totalBRL: "1050.00"},
		// Art. 44: the value in force on the day of issue, not on the day of the fact.
		// 400 × 4.41234 = 1764.936 → 1764.94.
		{rule: "speed", issue: "2027-01-04", base: 400, penalty: "Art. 46, X", unit: "4.41234", unitFrom: "2027-01-01", totalBRL: "1764.94",
			wantExplanations: []string{"R$ 4,41234, desde 01/01/2027", "R$ 1.764,94"}},
		// 250 × 4.41234 = 1103.085: half a centavo goes up (half-even would give 1103.08).
		{rule: "hours", issue: "2027-01-04", base: 250, penalty: "Art. 47", unit: "4.41234", unitFrom: "2027-01-01", totalBRL: "1103.09"},
		// 300 × 4.41234 = 1323.702 → 1323.70.
		{rule: "boarding_sound", issue: "2027-01-04", base: 300, penalty: "Art. 45, VII", unit: "4.41234", unitFrom: "2027-01-01", totalBRL: "1323.70"},
		// 01:30 UTC on 1 January 2027 is still 31 December 2026 in Piúma.
		{rule: "speed", issueUTC: time.Date(2027, 1, 1, 1, 30, 0, 0, time.UTC), base: 400, penalty: "Art. 46, X", unit: "4.2000", unitFrom: "2026-01-01", totalBRL: "1680.00"},
	}
	for _, c := range cases {
		issue := c.issueUTC
		if issue.IsZero() {
			issue = at(c.issue + " 10:00")
		}
		r, err := Fine(p, c.rule, at("2026-12-10 15:00"), issue, nil, "L1")
		if err != nil {
			t.Fatalf("%s %s: %v", c.rule, issue, err)
		}
		if r.BaseUFMP != c.base || r.TotalUFMP != c.base || r.Factor != 1 || r.Recidivist || r.Penalty != c.penalty ||
			r.UnitValueBRL != c.unit || r.UnitValueFrom != c.unitFrom || r.TotalBRL != c.totalBRL ||
			r.SuspensionRecommended != nil || r.CassacaoRecommended != nil || r.Warning || r.FiscalUnit != "UFMP" {
			t.Errorf("%s issued %s: got %+v", c.rule, issue, r)
		}
		text := strings.Join(r.Explanation, "\n")
		for _, w := range c.wantExplanations {
			if !strings.Contains(text, w) {
				t.Errorf("%s issued %s: explanation lacks %q:\n%s", c.rule, issue, w, text)
			}
		}
	}
}

func TestRecidivism(t *testing.T) {
	// The fact: speeding on Thursday 2026-12-10 at 15:00, issued on Monday 2026-12-14.
	// n1: fact 2026-10-01, handed over Monday 2026-10-05: deadline Thursday 2026-10-15.
	n1 := speeding("1/2026", "2026-10-01", "2026-10-05", StatusConfirmed)
	hours := Notice{ID: "2/2026", Licensee: "L1", Articles: []string{"Art. 29"}, Penalty: "Art. 47",
		Offence: at("2026-10-01 23:40"), Issued: at("2026-10-02"), Notified: at("2026-10-05"), Mode: ModeInPerson, Status: StatusConfirmed}
	// Handed over on Tuesday 2026-11-03: deadline Friday 2026-11-13.
	defended := speeding("3/2026", "2026-11-01", "2026-11-03", StatusDefenceFiled)
	defended.DefenceFiled = at("2026-11-10")

	cases := []struct {
		name        string
		basis, same string
		history     []Notice
		recidivist  bool
		totalBRL    string
		relying     []string
		suspension  bool
		explains    string // a fragment of the explanation
	}{
		{name: "first offence", totalBRL: "1680.00"},
		{name: "confirmed, same article", history: []Notice{n1}, recidivist: true, totalBRL: "3360.00", relying: []string{"1/2026"}, suspension: true,
			explains: "prazo de defesa esgotado em 15/10/2026 sem defesa"},
		{name: "dismissed never counts", history: []Notice{with(n1, func(n *Notice) { n.Status = StatusDismissed })}, totalBRL: "1680.00",
			explains: "foi arquivado"},
		{name: "dismissed never counts, basis issued", basis: "issued", history: []Notice{with(n1, func(n *Notice) { n.Status = StatusDismissed })}, totalBRL: "1680.00"},
		{name: "annulled never counts", basis: "issued", history: []Notice{with(n1, func(n *Notice) { n.Status = StatusAnnulled })}, totalBRL: "1680.00",
			explains: "foi anulado"},
		{name: "defence accepted never counts", basis: "issued", history: []Notice{with(n1, func(n *Notice) { n.Status = StatusDefenceAccepted })}, totalBRL: "1680.00",
			explains: "defesa foi acolhida"},
		{name: "a fact after this one never counts", basis: "issued", history: []Notice{speeding("9/2026", "2026-12-11", "2026-12-11", StatusConfirmed)}, totalBRL: "1680.00"},
		{name: "an earlier fact the same day", basis: "issued", history: []Notice{with(n1, func(n *Notice) {
			n.Offence, n.Issued = at("2026-12-10 09:00"), at("2026-12-10 11:00")
		})}, totalBRL: "1680.00", explains: "emitido em 10/12/2026, data não anterior"},
		{name: "another licensee", history: []Notice{with(n1, func(n *Notice) { n.Licensee = "L2" })}, totalBRL: "1680.00"},
		// Handed over 2026-12-03: day 10 is Sunday 2026-12-13, the deadline Monday 2026-12-14,
		// after the fact.
		{name: "notified, period running, basis confirmed", history: []Notice{speeding("4/2026", "2026-12-01", "2026-12-03", StatusNotified)}, totalBRL: "1680.00",
			explains: "prazo de defesa esgotado em 14/12/2026 sem defesa, data não anterior"},
		{name: "notified, period running, basis issued", basis: "issued", history: []Notice{speeding("4/2026", "2026-12-01", "2026-12-03", StatusNotified)},
			recidivist: true, totalBRL: "3360.00", relying: []string{"4/2026"}, suspension: true},
		// Handed over Wednesday 2026-11-25: day 10 is Saturday 2026-12-05 → Monday 2026-12-07.
		{name: "notified, period over before the fact", history: []Notice{speeding("5/2026", "2026-11-20", "2026-11-25", StatusNotified)},
			recidivist: true, totalBRL: "3360.00", relying: []string{"5/2026"}, suspension: true, explains: "esgotado em 07/12/2026"},
		{name: "issued, not notified, basis confirmed", history: []Notice{speeding("6/2026", "2026-11-01", "", StatusIssued)}, totalBRL: "1680.00",
			explains: "ainda não notificado"},
		{name: "issued, not notified, basis issued", basis: "issued", history: []Notice{speeding("6/2026", "2026-11-01", "", StatusIssued)},
			recidivist: true, totalBRL: "3360.00", relying: []string{"6/2026"}, suspension: true},
		{name: "timely defence pending", history: []Notice{defended}, totalBRL: "1680.00", explains: "Art. 57"},
		{name: "timely defence pending, basis issued", basis: "issued", history: []Notice{defended}, recidivist: true, totalBRL: "3360.00",
			relying: []string{"3/2026"}, suspension: true},
		{name: "defence rejected before the fact", history: []Notice{with(defended, func(n *Notice) {
			n.Status, n.Decided, n.DecisionNotified = StatusDefenceRejected, at("2026-11-30"), at("2026-12-02")
		})}, recidivist: true, totalBRL: "3360.00", relying: []string{"3/2026"}, suspension: true, explains: "defesa indeferida em 30/11/2026, decisão notificada em 02/12/2026"},
		// Finality counts from the decision's notification, not from the decision.
		{name: "defence rejected, decision not notified", history: []Notice{with(defended, func(n *Notice) {
			n.Status, n.Decided = StatusDefenceRejected, at("2026-11-30")
		})}, totalBRL: "1680.00", explains: "decisão ainda não notificada ao autuado"},
		{name: "defence rejected before, notified on the day of the fact", history: []Notice{with(defended, func(n *Notice) {
			n.Status, n.Decided, n.DecisionNotified = StatusDefenceRejected, at("2026-11-30"), at("2026-12-10")
		})}, totalBRL: "1680.00", explains: "data não anterior à deste fato"},
		{name: "defence rejected the day of the fact", history: []Notice{with(defended, func(n *Notice) {
			n.Status, n.Decided = StatusDefenceRejected, at("2026-12-10")
		})}, totalBRL: "1680.00"},
		{name: "defence rejected without a date", history: []Notice{with(defended, func(n *Notice) { n.Status = StatusConfirmed })}, totalBRL: "1680.00",
			explains: "sem data de decisão"},
		{name: "late defence does not hold the period", history: []Notice{with(defended, func(n *Notice) { n.DefenceFiled = at("2026-11-16") })},
			recidivist: true, totalBRL: "3360.00", relying: []string{"3/2026"}, suspension: true, explains: "fora do prazo, em 16/11/2026"},
		{name: "paid, final date recorded", history: []Notice{with(speeding("7/2026", "2026-09-01", "", StatusPaid), func(n *Notice) { n.Final = at("2026-09-10") })},
			recidivist: true, totalBRL: "3360.00", relying: []string{"7/2026"}, suspension: true},
		{name: "confirmed without a notification date", history: []Notice{speeding("8/2026", "2026-09-01", "", StatusConfirmed)}, totalBRL: "1680.00",
			explains: "data da notificação desconhecida"},
		// By edital published Friday 2026-11-20: deadline Monday 2026-11-30.
		{name: "edital, period over", history: []Notice{with(speeding("10/2026", "2026-11-01", "", StatusNotified), func(n *Notice) {
			n.Mode, n.Notified, n.Published = ModeEdital, at("2026-11-18"), at("2026-11-20")
		})}, recidivist: true, totalBRL: "3360.00", relying: []string{"10/2026"}, suspension: true, explains: "esgotado em 30/11/2026"},
		{name: "edital, published too late", history: []Notice{with(speeding("10/2026", "2026-11-01", "", StatusNotified), func(n *Notice) {
			n.Mode, n.Notified, n.Published = ModeEdital, at("2026-11-18"), at("2026-12-01")
		})}, totalBRL: "1680.00"},
		{name: "a preliminary notice is not a fine", basis: "issued", history: []Notice{with(n1, func(n *Notice) { n.Warning = true })}, totalBRL: "1680.00",
			explains: "notificação preliminar"},
		{name: "another article, same: article", history: []Notice{hours}, totalBRL: "1680.00"},
		{name: "another article, same: any", same: "any", history: []Notice{hours}, recidivist: true, totalBRL: "3360.00", relying: []string{"2/2026"},
			explains: "por qualquer preceito"},
		{name: "both, same: any", same: "any", history: []Notice{n1, hours}, recidivist: true, totalBRL: "3360.00", relying: []string{"1/2026", "2/2026"}, suspension: true},
		{name: "both, same: article", history: []Notice{hours, n1}, recidivist: true, totalBRL: "3360.00", relying: []string{"1/2026"}, suspension: true},
		{name: "precept spelt differently", history: []Notice{with(n1, func(n *Notice) { n.Articles = []string{"art 23"} })},
			recidivist: true, totalBRL: "3360.00", relying: []string{"1/2026"}, suspension: true},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			var replace []string
			if c.basis != "" {
				replace = append(replace, "basis: confirmed", "basis: "+c.basis)
			}
			if c.same != "" {
				replace = append(replace, "same: article", "same: "+c.same)
			}
			p := piuma(t, replace...)
			r, err := Fine(p, "speed", at("2026-12-10 15:00"), at("2026-12-14 10:00"), c.history, "L1")
			if err != nil {
				t.Fatal(err)
			}
			var relying []string
			for _, n := range r.RelyingOn {
				relying = append(relying, n.ID)
			}
			want := 400.0
			if c.recidivist {
				want = 800
			}
			if r.Recidivist != c.recidivist || r.TotalUFMP != want || r.TotalBRL != c.totalBRL || !slices.Equal(relying, c.relying) {
				t.Errorf("recidivist %v, %v UFMP, R$ %s, relying on %v; want %v, %v, %s, %v",
					r.Recidivist, r.TotalUFMP, r.TotalBRL, relying, c.recidivist, want, c.totalBRL, c.relying)
			}
			if c.recidivist && r.Factor != 2 || !c.recidivist && r.Factor != 1 {
				t.Errorf("factor %v", r.Factor)
			}
			if s := r.SuspensionRecommended; (s != nil) != c.suspension {
				t.Errorf("suspension recommended: %+v, want %v", s, c.suspension)
			} else if s != nil && (s.MinDays != 10 || s.MaxDays != 45 || !strings.Contains(s.Reason, "Art. 52")) {
				t.Errorf("suspension %+v, want 10–45 days citing Art. 52", s)
			}
			text := strings.Join(r.Explanation, "\n")
			if c.explains != "" && !strings.Contains(text, c.explains) {
				t.Errorf("explanation lacks %q:\n%s", c.explains, text)
			}
			for _, id := range c.relying {
				if !strings.Contains(text, "auto "+id) {
					t.Errorf("explanation does not name %s:\n%s", id, text)
				}
			}
		})
	}
}

func TestAssessDraftOfSeveralFacts(t *testing.T) {
	p := piuma(t)
	// Music near a school (Art. 28) and above the NBR limit (Art. 27), both Art. 45, VII: one
	// fine; an earlier fine for Art. 27 is specific recidivism.
	earlier := Notice{ID: "11/2026", Licensee: "L1", Articles: []string{"Art. 27"}, Penalty: "Art. 45, VII",
		Offence: at("2026-09-05 20:00"), Issued: at("2026-09-08"), Notified: at("2026-09-09"), Mode: ModeMail, Status: StatusConfirmed}
	r, err := Assess(p, Offence{Rules: []string{"sensitive_zone_sound", "noise_limit"}, Licensee: "L1",
		Date: at("2026-12-10 15:00"), Issue: at("2026-12-14")}, []Notice{earlier}, Options{})
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(r.Articles, []string{"Art. 28", "Art. 27"}) || r.Penalty != "Art. 45, VII" || !r.Recidivist ||
		r.TotalUFMP != 600 || r.TotalBRL != "2520.00" || r.SuspensionRecommended == nil {
		t.Errorf("got %+v", r)
	}
	// The same precept cited twice is one article.
	r, err = Assess(p, Offence{Rules: []string{"sensitive_zone_sound", "boarding_sound"}, Licensee: "L1",
		Date: at("2026-12-10 15:00"), Issue: at("2026-12-14")}, nil, Options{})
	if err != nil || !slices.Equal(r.Articles, []string{"Art. 28"}) || r.TotalBRL != "1260.00" {
		t.Errorf("got %+v, %v", r, err)
	}
}

func TestAssessErrors(t *testing.T) {
	p := piuma(t)
	o := Offence{Rules: []string{"speed"}, Licensee: "L1", Date: at("2026-12-10 15:00"), Issue: at("2026-12-14")}
	cases := []struct {
		name    string
		p       *profile.Profile
		o       func(*Offence)
		history []Notice
		want    string
	}{
		{name: "different penalties", o: func(o *Offence) { o.Rules = []string{"speed", "hours"} }, want: "different penalties"},
		{name: "unknown rule", o: func(o *Offence) { o.Rules = []string{"flying"} }, want: `"flying"`},
		{name: "not an infraction", o: func(o *Offence) { o.Rules = []string{"telemetry_fault"} }, want: "rules.telemetry_fault.infraction"},
		{name: "no rule", o: func(o *Offence) { o.Rules = nil }, want: "without a rule"},
		{name: "no date", o: func(o *Offence) { o.Date = time.Time{} }, want: "without a date"},
		{name: "issued before the fact", o: func(o *Offence) { o.Issue = at("2026-12-09") }, want: "before the offence"},
		{name: "no unit value in force", o: func(o *Offence) { o.Date, o.Issue = at("2025-12-30"), at("2025-12-31") }, want: "fiscal_unit.values"},
		{name: "unknown status", history: []Notice{{ID: "x", Licensee: "L1", Status: "lost"}}, want: `unknown status "lost"`},
		{name: "profile not parsed", p: &profile.Profile{}, want: "profile not loaded"},
		{name: "unknown mode", history: []Notice{{ID: "x", Licensee: "L1", Status: StatusNotified, Mode: "pigeon"}}, want: `unknown mode "pigeon"`},
		{name: "no factor", p: piuma(t, "factor: 2", "factor: 0"), want: "recidivism.factor"},
		{name: "no cassação period", p: piuma(t, "within_months: 12", "within_months: 0"), want: "cassacao"},
		{name: "two values from one date", p: func() *profile.Profile {
			p := piuma(t)
			p.FiscalUnit.Values = append(p.FiscalUnit.Values, profile.UnitValue{From: "2026-01-01", BRL: "5"})
			return p
		}(), want: "fiscal_unit.values[2].from"},
		{name: "a value that is not a plain decimal", p: func() *profile.Profile {
			p := piuma(t)
			p.FiscalUnit.Values[1].BRL = "4.2e0"
			return p
		}(), want: "fiscal_unit.values[1].brl"},
	}
	for _, c := range cases {
		o := o
		if c.o != nil {
			c.o(&o)
		}
		pp := p
		if c.p != nil {
			pp = c.p
		}
		if _, err := Assess(pp, o, c.history, Options{}); err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: error %v, want one with %q", c.name, err, c.want)
		}
	}
	// A notice of another licensee is not read at all.
	if _, err := Assess(p, o, []Notice{{ID: "x", Licensee: "L2", Status: "lost"}}, Options{}); err != nil {
		t.Errorf("another licensee's notice: %v", err)
	}
}

func TestUnknownLicensee(t *testing.T) {
	p := piuma(t)
	n := speeding("1/2026", "2026-10-01", "2026-10-05", StatusConfirmed)
	n.Licensee = ""
	r, err := Fine(p, "speed", at("2026-12-10 15:00"), at("2026-12-14"), []Notice{n}, " ")
	if err != nil {
		t.Fatal(err)
	}
	if r.Recidivist || r.TotalBRL != "1680.00" || !strings.Contains(strings.Join(r.Explanation, " "), "não identificado") {
		t.Errorf("got %+v", r)
	}
}

func TestWarningFirstRule(t *testing.T) {
	p := piuma(t)
	opt := Options{Repeat: map[string]RepeatFine{"route_deviation": {Penalty: "Art. 47", UFMP: 250}}}
	o := Offence{Rules: []string{"route_deviation"}, Licensee: "L1", Date: at("2026-12-10 15:00"), Issue: at("2026-12-14")}
	warning := Notice{ID: "12/2026", Licensee: "L1", Articles: []string{"Art. 38"}, Penalty: "Art. 41, I", Warning: true,
		Offence: at("2026-11-01 19:00"), Issued: at("2026-11-01"), Notified: at("2026-11-03"), Mode: ModeInPerson, Status: StatusNotified}
	fined := Notice{ID: "13/2026", Licensee: "L1", Articles: []string{"Art. 38"}, Penalty: "Art. 47",
		Offence: at("2026-11-06 19:00"), Issued: at("2026-11-07"), Notified: at("2026-11-09"), Mode: ModeInPerson, Status: StatusConfirmed}
	cases := []struct {
		name       string
		opt        Options
		history    []Notice
		warning    bool
		penalty    string
		total      float64
		totalBRL   string
		recidivist bool
		repeatOf   int
	}{
		{name: "first offence", history: []Notice{with(warning, func(n *Notice) { n.Licensee = "L2" })}, opt: opt, warning: true, penalty: "Art. 41, I", totalBRL: "0.00"},
		{name: "dismissed warning", opt: opt, history: []Notice{with(warning, func(n *Notice) { n.Status = StatusDismissed })},
			warning: true, penalty: "Art. 41, I", totalBRL: "0.00"},
		{name: "after a warning", opt: opt, history: []Notice{warning}, penalty: "Art. 47", total: 250, totalBRL: "1050.00", repeatOf: 1},
		// Art. 54: notified "mediante a entrega". A warning issued but never delivered, or
		// delivered on the day of the new fact or after, does not make it a repeat.
		{name: "undelivered warning", opt: opt, history: []Notice{with(warning, func(n *Notice) { n.Status, n.Notified, n.Mode = StatusIssued, time.Time{}, "" })},
			warning: true, penalty: "Art. 41, I", totalBRL: "0.00"},
		{name: "warning delivered on the day of the fact", opt: opt, history: []Notice{with(warning, func(n *Notice) { n.Notified = at("2026-12-10") })},
			warning: true, penalty: "Art. 41, I", totalBRL: "0.00"},
		{name: "warning by edital published before", opt: opt, history: []Notice{with(warning, func(n *Notice) {
			n.Notified, n.Mode, n.Published = time.Time{}, ModeEdital, at("2026-11-20")
		})}, penalty: "Art. 47", total: 250, totalBRL: "1050.00", repeatOf: 1},
		// Deadline of the fine: 2026-11-19; final before the fact: doubled and specific.
		{name: "after a final fine", opt: opt, history: []Notice{warning, fined}, penalty: "Art. 47", total: 500, totalBRL: "2100.00",
			recidivist: true, repeatOf: 2},
	}
	if _, err := Assess(p, o, []Notice{warning}, Options{}); err == nil || !strings.Contains(err.Error(), "rules.route_deviation.fine is 0") {
		t.Errorf("without a repeat fine: %v", err)
	}
	for _, c := range cases {
		r, err := Assess(p, o, c.history, c.opt)
		if err != nil {
			t.Fatalf("%s: %v", c.name, err)
		}
		if r.Warning != c.warning || r.Penalty != c.penalty || r.TotalUFMP != c.total || r.TotalBRL != c.totalBRL ||
			r.Recidivist != c.recidivist || len(r.RepeatOf) != c.repeatOf || (r.SuspensionRecommended != nil) != c.recidivist {
			t.Errorf("%s: got %+v", c.name, r)
		}
		if c.warning && !strings.Contains(strings.Join(r.Explanation, " "), "Art. 41, I") {
			t.Errorf("%s: explanation %q", c.name, r.Explanation)
		}
	}
}

func TestCassacao(t *testing.T) {
	p := piuma(t)
	// Suspensions applied on earlier notices of another precept (hours, Art. 29): the fact of
	// 2026-12-10 is a first speeding offence; the notice is issued on 2026-12-14.
	susp := func(id, from string, st Status) Notice {
		return Notice{ID: id, Licensee: "L1", Articles: []string{"Art. 29"}, Penalty: "Art. 47", Offence: at(from).AddDate(0, -1, 0),
			Issued: at(from).AddDate(0, -1, 1), Status: st, Suspension: &Suspension{From: at(from), Days: 10}}
	}
	cases := []struct {
		name    string
		history []Notice
		want    []string // the notices whose suspensions are cited
	}{
		{name: "one suspension", history: []Notice{susp("a", "2026-09-01", StatusConfirmed)}},
		{name: "two within 12 months", history: []Notice{susp("b", "2026-09-01", StatusConfirmed), susp("a", "2026-03-01", StatusPaid)},
			want: []string{"a", "b"}},
		{name: "the first exactly 12 months before", history: []Notice{susp("a", "2025-12-14", StatusConfirmed), susp("b", "2026-09-01", StatusConfirmed)}},
		{name: "the first 12 months less a day before", history: []Notice{susp("a", "2025-12-15", StatusConfirmed), susp("b", "2026-09-01", StatusConfirmed)},
			want: []string{"a", "b"}},
		{name: "one annulled", history: []Notice{susp("a", "2026-03-01", StatusAnnulled), susp("b", "2026-09-01", StatusConfirmed)}},
		{name: "one not yet begun", history: []Notice{susp("a", "2026-03-01", StatusConfirmed), susp("b", "2026-12-20", StatusConfirmed)}},
		{name: "the day of issue", history: []Notice{susp("a", "2026-03-01", StatusConfirmed), susp("b", "2026-12-14", StatusConfirmed)},
			want: []string{"a", "b"}},
		{name: "another licensee", history: []Notice{susp("a", "2026-03-01", StatusConfirmed), with(susp("b", "2026-09-01", StatusConfirmed), func(n *Notice) { n.Licensee = "L2" })}},
	}
	for _, c := range cases {
		r, err := Fine(p, "speed", at("2026-12-10 15:00"), at("2026-12-14 10:00"), c.history, "L1")
		if err != nil {
			t.Fatalf("%s: %v", c.name, err)
		}
		if r.Recidivist || r.SuspensionRecommended != nil {
			t.Errorf("%s: recidivism from another precept: %+v", c.name, r)
		}
		var got []string
		if cr := r.CassacaoRecommended; cr != nil {
			for _, s := range cr.Suspensions {
				got = append(got, s.NoticeID)
			}
			if !strings.Contains(cr.Reason, "Art. 53, III") || !strings.Contains(strings.Join(r.Explanation, " "), cr.Reason) {
				t.Errorf("%s: reason %q", c.name, cr.Reason)
			}
		}
		if !slices.Equal(got, c.want) {
			t.Errorf("%s: cassação on %v, want %v", c.name, got, c.want)
		}
	}
}

// TestSecondSuspension: specific recidivism recommends a suspension; once a second suspension
// has been applied within 12 months, the next notice recommends the cassação.
func TestSecondSuspension(t *testing.T) {
	p := piuma(t)
	first := speeding("20/2026", "2026-02-01", "2026-02-04", StatusConfirmed)
	first.Suspension = &Suspension{From: at("2026-03-02"), Days: 10}
	second := speeding("21/2026", "2026-08-01", "2026-08-04", StatusConfirmed)
	second.Suspension = &Suspension{From: at("2026-09-01"), Days: 20, NoticeID: "21/2026"}
	r, err := Fine(p, "speed", at("2026-12-10 15:00"), at("2026-12-14"), []Notice{first, second}, "L1")
	if err != nil {
		t.Fatal(err)
	}
	if !r.Recidivist || r.SuspensionRecommended == nil || r.CassacaoRecommended == nil || len(r.CassacaoRecommended.Suspensions) != 2 ||
		r.CassacaoRecommended.Suspensions[0].NoticeID != "20/2026" {
		t.Errorf("got %+v", r)
	}
	// With only the first, no cassação.
	r, err = Fine(p, "speed", at("2026-12-10 15:00"), at("2026-12-14"), []Notice{first}, "L1")
	if err != nil || r.SuspensionRecommended == nil || r.CassacaoRecommended != nil {
		t.Errorf("got %+v, %v", r, err)
	}
}

// Recidivism has a window (recidivism.window_years, 5 by default): a fine final six years
// before the fact — or eight, paid — is ignored; one final four years before counts.
func TestRecidivismWindow(t *testing.T) {
	p := piuma(t)
	if p.Recidivism.Window() != 5 {
		t.Fatalf("window %d", p.Recidivism.Window())
	}
	o := Offence{Rules: []string{"speed"}, Licensee: "L1", Date: at("2026-12-10 15:00"), Issue: at("2026-12-14")}
	for _, c := range []struct {
		name       string
		n          Notice
		recidivist bool
	}{
		{"final 6 years before", speeding("1/2020", "2020-10-01", "2020-10-05", StatusConfirmed), false},
		{"paid 8 years before", with(speeding("1/2018", "2018-10-01", "2018-10-05", StatusPaid), func(n *Notice) { n.Final = at("2018-10-20") }), false},
		{"final 4 years before", speeding("1/2022", "2022-10-01", "2022-10-05", StatusConfirmed), true},
		{"final 5 years before, to the day", with(speeding("1/2021", "2021-11-20", "2021-11-25", StatusConfirmed), func(n *Notice) { n.Final = at("2021-12-10") }), true},
	} {
		r, err := Fine(p, "speed", o.Date, o.Issue, []Notice{c.n}, "L1")
		if err != nil {
			t.Fatal(err)
		}
		if r.Recidivist != c.recidivist || (r.SuspensionRecommended != nil) != c.recidivist {
			t.Errorf("%s: recidivist %v, suspension %v", c.name, r.Recidivist, r.SuspensionRecommended != nil)
		}
		if !c.recidivist && !strings.Contains(strings.Join(r.Explanation, " "), "Decreto nº 6.514/2008") {
			t.Errorf("%s: explanation %q", c.name, r.Explanation)
		}
	}
}
