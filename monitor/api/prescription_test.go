package api_test

import (
	"net/http"
	"strings"
	"testing"
)

// An imported paper notice issued after its facts prescribed is refused unless it stands
// annulled (it would count for recidivism), and so is one inscribed in dívida ativa after its
// collection prescribed; the others are imported.
func TestImportChecksPrescription(t *testing.T) {
	cf := newCaseFixture(t)
	cf.setClock(at(2026, 11, 29, 15))
	row := func(number, offence, issue, status string, extra map[string]any) []map[string]any {
		r := map[string]any{"number": number, "offence_date": offence, "issue_date": issue, "licensee": "L1",
			"articles": []string{"Art. 23"}, "penalty": "Art. 46, X", "status": status, "notified_date": issue, "notified_mode": "in_person"}
		for k, v := range extra {
			r[k] = v
		}
		return []map[string]any{r}
	}
	for _, c := range []struct {
		name string
		rows []map[string]any
		code int
		want string
	}{
		{"issued after prescription", row("0001/2020", "2015-03-01", "2020-03-02", "confirmed", nil), http.StatusBadRequest,
			"depois de prescrita a pretensão punitiva: os fatos são de 01/03/2015 e o prazo de 5 anos (Decreto nº 20.910/1932, art. 1º) terminou em 01/03/2020"},
		{"issued after prescription, annulled", row("0002/2020", "2015-03-01", "2020-03-02", "annulled", nil), http.StatusCreated, ""},
		{"issued the day before the limit", row("0003/2020", "2015-03-01", "2020-02-29", "confirmed", nil), http.StatusCreated, ""},
		{"inscribed after the collection prescribed", row("0004/2016", "2016-03-01", "2016-03-02", "dividaativa",
			map[string]any{"final_date": "2016-05-01", "divida_ativa_date": "2021-05-01"}), http.StatusBadRequest, "prescrição da cobrança"},
		{"inscribed in time", row("0005/2016", "2016-03-01", "2016-03-02", "dividaativa",
			map[string]any{"final_date": "2016-05-01", "divida_ativa_date": "2021-04-30"}), http.StatusCreated, ""},
	} {
		t.Run(c.name, func(t *testing.T) {
			code, body, _ := cf.do("POST", "/api/v1/notices/import", c.rows, session{bearer: cf.super})
			if code != c.code || (c.want != "" && !strings.Contains(errorMessage(t, body), c.want)) {
				t.Errorf("%d %s", code, body)
			}
		})
	}
}

// A ponto facultativo decreed (holidays.closed_days) is no business day: the defence deadline
// the API shows moves past it, and says why.
func TestDefenceDeadlineSkipsClosedDay(t *testing.T) {
	cf := newCaseFixtureEdit(t, func(y string) string {
		out := strings.Replace(y, "  dates: []\n", "  dates: []\n  closed_days:\n    - {date: \"2026-12-10\", name: Dia sem expediente (teste), act: \"Decreto nº 9/2026 (teste)\"}\n", 1)
		if out == y {
			t.Fatal("profile unchanged")
		}
		return confirmUFMP(t, out)
	})
	id := cf.draft(t, "PIU-001", "L1", "hours", at(2026, 11, 28, 23))
	cf.issue(t, id, at(2026, 11, 29, 15))
	cf.setClock(at(2026, 11, 30, 15))
	v := cf.mustAct(t, id, map[string]any{"action": "notify", "mode": "in_person", "date": "2026-11-30"})
	// Ten days from Monday 30/11, the receipt day excluded: Thursday 10/12, decreed closed.
	if v.Deadline == nil || v.Deadline.Date != "2026-12-11" || !strings.Contains(v.Deadline.Explanation, "ponto facultativo: Dia sem expediente (teste)") {
		t.Errorf("deadline %+v", v.Deadline)
	}
}

// The inscription in dívida ativa through the API checks the prescription of the collection:
// five years (prescription_years) after the last day to pay, here 18/11/2026 (the decision
// notified on 19/10/2026), the inscription is refused with its reason; the day before it is
// recorded.
func TestDividaAtivaPrescriptionThroughTheAPI(t *testing.T) {
	cf := newCaseFixture(t)
	id := cf.draft(t, "PIU-001", "L1", "speed", at(2026, 9, 30, 15))
	cf.issue(t, id, at(2026, 10, 1, 10))
	cf.setClock(at(2026, 10, 20, 10))
	cf.mustAct(t, id, map[string]any{"action": "notify", "mode": "in_person", "date": "2026-10-05"})
	cf.mustAct(t, id, map[string]any{"action": "decide", "outcome": "rejected", "date": "2026-10-16",
		"text": "Julgamento à revelia: sem defesa no prazo, auto mantido."})
	cf.mustAct(t, id, map[string]any{"action": "notify_decision", "date": "2026-10-19"})

	cf.setClock(at(2031, 11, 20, 10))
	code, _, body := cf.act(t, id, map[string]any{"action": "divida_ativa", "date": "2031-11-19"})
	if msg := errorMessage(t, body); code != http.StatusConflict || !strings.Contains(msg, "prescrita a pretensão de cobrança") || !strings.Contains(msg, "terminou em 19/11/2031") {
		t.Errorf("inscribed once the collection prescribed: %d %s", code, body)
	}
	if v := cf.mustAct(t, id, map[string]any{"action": "divida_ativa", "date": "2031-11-18"}); v.State != "dividaativa" {
		t.Errorf("the last day before prescription: %+v", v.CaseStatus)
	}
}
