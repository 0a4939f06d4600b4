package api_test

import (
	"bytes"
	"encoding/json"
	"net/http"
	"net/url"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/trenzinho/trenzinho/monitor/api"
	"github.com/trenzinho/trenzinho/monitor/cases"
)

// The whole administrative process through the HTTP API on a real SQLite store, with dates, on
// the Piúma profile (defence 10 days from receipt or from the edital's publication, the first
// day excluded, a last day that is no business day moved to the next; appeal 10 days, payment
// 30, both from the notice of the decision; appeals decided by the superior authority, another
// autoridade, never admin).
func TestFullProcessThroughTheAPI(t *testing.T) {
	cf := newCaseFixture(t)
	_, admin := cf.login("admin", adminPassword)
	as := func(token, draft string, a map[string]any) (int, api.CaseView, string) {
		t.Helper()
		code, body, _ := cf.do("POST", "/api/v1/drafts/"+draft+"/case", cf.proven(t, draft, a), session{bearer: token})
		var v api.CaseView
		if code == http.StatusOK {
			if err := json.Unmarshal(body, &v); err != nil {
				t.Fatal(err)
			}
			return code, v, ""
		}
		return code, v, errorMessage(t, body)
	}
	ok := func(token, draft string, a map[string]any) api.CaseView {
		t.Helper()
		code, v, msg := as(token, draft, a)
		if code != http.StatusOK {
			t.Fatalf("%v: %d %s", a, code, msg)
		}
		return v
	}
	refused := func(token, draft string, a map[string]any, want int, text string) {
		t.Helper()
		if code, _, msg := as(token, draft, a); code != want || !strings.Contains(msg, text) {
			t.Errorf("%v: %d %q, want %d %q", a, code, msg, want, text)
		}
	}
	view := func(id int64) api.CaseView {
		t.Helper()
		code, body, _ := cf.do("GET", "/api/v1/cases/"+strconv.FormatInt(id, 10), nil, session{bearer: cf.viewer})
		var v api.CaseView
		if code != http.StatusOK || json.Unmarshal(body, &v) != nil {
			t.Fatalf("case %d: %d %s", id, code, body)
		}
		return v
	}

	// A: delivery fails twice, edital, no defence, judged à revelia, appeal in time (it
	// suspends the fine), rejected by the superior authority, dívida ativa after the new period.
	a := cf.draft(t, "PIU-001", "L1", "speed", at(2026, 10, 1, 15))
	id := cf.issue(t, a, at(2026, 10, 2, 10)).Case.ID
	cf.setClock(at(2026, 10, 6, 12))
	if v := view(id); v.State != "issued" || !strings.Contains(v.Next.Step, "Aguardando a notificação") ||
		!slices.ContainsFunc(v.Next.Acts, func(x cases.Act) bool { return x.Action == "notify" && x.Role == "fiscal" }) {
		t.Errorf("issued: %+v", v.Next)
	}
	ok(cf.fiscal, a, map[string]any{"action": "delivery_failed", "mode": "mail", "date": "2026-10-05", "text": "AR devolvido: mudou-se."})
	edital := map[string]any{"action": "notify", "mode": "edital", "published": "2026-10-13"}
	cf.setClock(at(2026, 10, 13, 12))
	refused(cf.fiscal, a, edital, http.StatusConflict, "(1 de 2)")
	ok(cf.fiscal, a, map[string]any{"action": "delivery_failed", "mode": "in_person", "date": "2026-10-08", "text": "Sede fechada; ninguém atendeu."})
	v := ok(cf.fiscal, a, edital)
	// From the publication on 13/10: 10 days, the 13th excluded, to Friday 23/10.
	if v.State != "notified" || v.Deadline == nil || v.Deadline.Date != "2026-10-23" || v.Next.Deadline != "2026-10-23" {
		t.Fatalf("edital: %+v %+v", v.Deadline, v.Next)
	}
	cf.setClock(at(2026, 10, 27, 12))
	revelia := map[string]any{"action": "decide", "outcome": "rejected", "date": "2026-10-23", "text": "Julgado à revelia: multa confirmada."}
	refused(cf.auth, a, revelia, http.StatusConflict, "termina em 23/10/2026")
	refused(cf.fiscal, a, revelia, http.StatusForbidden, "Somente a Autoridade Julgadora de Posturas")
	revelia["date"] = "2026-10-26"
	if v = ok(cf.auth, a, revelia); !v.Revelia || v.State != "confirmed" || v.DecidedBy != "carla" {
		t.Fatalf("revelia: %+v", v.CaseStatus)
	}
	refused(cf.auth, a, map[string]any{"action": "divida_ativa", "date": "2026-10-27"}, http.StatusConflict, "ainda não foi notificada")
	v = ok(cf.fiscal, a, map[string]any{"action": "notify_decision", "date": "2026-10-27"})
	// Not final on the decision's notice: the appeal period runs (to 06/11).
	if v.AppealDeadline != "2026-11-06" || v.PaymentDeadline != "2026-11-26" || v.Next.Final != "" ||
		!strings.Contains(v.Next.FinalText, "será definitiva a partir de 07/11/2026") {
		t.Errorf("decision notified: appeal to %s, payment to %s, final %s %q", v.AppealDeadline, v.PaymentDeadline, v.Next.Final, v.Next.FinalText)
	}
	cf.setClock(at(2026, 11, 5, 12))
	refused(cf.auth, a, map[string]any{"action": "divida_ativa", "date": "2026-11-05"}, http.StatusConflict, "termina em 26/11/2026")
	v = ok(cf.fiscal, a, map[string]any{"action": "appeal", "date": "2026-11-05"})
	if v.State != "appeal_filed" || !v.FineSuspended.Suspended || !strings.Contains(v.Next.Step, "Recurso interposto em 05/11/2026") {
		t.Fatalf("appeal: %s %+v %+v", v.State, v.FineSuspended, v.Next)
	}
	// The appeal is the superior authority's (appeal.decided_by: autoridade), never the
	// defence's judge's nor the issuer's, and never admin's, an IT role.
	for _, x := range v.Next.Acts {
		if x.Action == "decide_appeal" && (x.Role != "autoridade" || !slices.Contains(x.NotBy, "carla") || !slices.Contains(x.NotBy, "joao")) {
			t.Errorf("who decides the appeal: %+v", x)
		}
	}
	cf.setClock(at(2026, 11, 27, 12))
	// Past the first payment deadline, but the appeal is pending: no dívida ativa.
	refused(cf.auth, a, map[string]any{"action": "divida_ativa", "date": "2026-11-27"}, http.StatusConflict, "recurso interposto no prazo")
	decideAppeal := map[string]any{"action": "decide_appeal", "outcome": "rejected", "date": "2026-11-27", "text": "Recurso improvido."}
	refused(cf.auth, a, decideAppeal, http.StatusConflict, "quem decidiu a defesa (carla) não pode decidir o recurso")
	refused(admin, a, decideAppeal, http.StatusForbidden, "não decide recursos")
	refused(cf.super, a, decideAppeal, http.StatusForbidden, "decidir o recurso")
	v = ok(cf.sup, a, decideAppeal)
	if v.State != "confirmed" || v.AppealOutcome != "rejected" || v.AppealDecidedBy != "sofia" {
		t.Fatalf("appeal decided: %+v", v.CaseStatus)
	}
	// Each decision has its document, frozen: the same bytes after the profile changed.
	decisionText := func(v api.CaseView, i int) (string, []byte) {
		t.Helper()
		if len(v.Decisions) <= i {
			t.Fatalf("the case's decisions: %+v", v.Decisions)
		}
		code, b, _ := cf.do("GET", v.Decisions[i].PDF, nil, session{bearer: cf.viewer})
		if code != http.StatusOK {
			t.Fatalf("GET %s: %d", v.Decisions[i].PDF, code)
		}
		return flat(pdfText(t, b)), b
	}
	revText, revPDF := decisionText(v, 0)
	appText, appPDF := decisionText(v, 1)
	for _, want := range []string{"Decisão sobre a defesa", "julgamento à revelia", "cabe recurso"} {
		if !strings.Contains(revText, want) {
			t.Errorf("the decision à revelia lacks %q:\n%s", want, revText)
		}
	}
	for _, want := range []string{"Decisão do recurso", "Recurso improvido", "definitiva com a ciência desta decisão", "paga em 30 dias"} {
		if !strings.Contains(appText, want) {
			t.Errorf("the appeal's decision lacks %q:\n%s", want, appText)
		}
	}
	days := cf.p.Payment.Days
	cf.p.Payment.Days = 45
	if _, b := decisionText(v, 1); !bytes.Equal(b, appPDF) {
		t.Error("the appeal decision's document changed with the profile")
	}
	if _, b := decisionText(v, 0); !bytes.Equal(b, revPDF) {
		t.Error("the decision à revelia's document changed with the profile")
	}
	cf.p.Payment.Days = days
	refused(cf.auth, a, map[string]any{"action": "divida_ativa", "date": "2026-11-27"}, http.StatusConflict, "recurso interposto no prazo")
	cf.setClock(at(2026, 11, 30, 12))
	v = ok(cf.fiscal, a, map[string]any{"action": "notify_appeal_decision", "date": "2026-11-30"})
	if v.PaymentDeadline != "2026-12-30" || v.Next.Final != "2026-11-30" || v.FineSuspended.Suspended {
		t.Errorf("appeal decision notified: payment to %s, final %s, %+v", v.PaymentDeadline, v.Next.Final, v.FineSuspended)
	}
	cf.setClock(at(2027, 1, 5, 12))
	refused(cf.auth, a, map[string]any{"action": "divida_ativa", "date": "2026-12-30"}, http.StatusConflict, "termina em 30/12/2026")
	if v = ok(cf.auth, a, map[string]any{"action": "divida_ativa", "date": "2026-12-31"}); v.State != "dividaativa" || !strings.Contains(v.Next.Step, "dívida ativa") {
		t.Errorf("dívida ativa: %s %+v", v.State, v.Next)
	}

	// Every transition is audited, with the case before and after.
	code, body, _ := cf.do("GET", "/api/v1/audit?object="+url.QueryEscape("case:AI-2026/0001")+"&limit=50", nil, session{bearer: admin})
	var audit struct {
		Items []struct {
			Action string          `json:"action"`
			User   string          `json:"user"`
			Before json.RawMessage `json:"before"`
		}
	}
	if code != http.StatusOK || json.Unmarshal(body, &audit) != nil {
		t.Fatalf("audit: %d %s", code, body)
	}
	var got []string
	for i := len(audit.Items) - 1; i >= 0; i-- {
		got = append(got, audit.Items[i].Action+":"+audit.Items[i].User)
	}
	want := []string{"case.issue:joao", "case.delivery_failed:joao", "case.delivery_failed:joao", "case.notify:joao", "case.decide:carla",
		"case.notify_decision:joao", "case.appeal:joao", "case.decide_appeal:sofia", "case.notify_appeal_decision:joao", "case.divida_ativa:carla"}
	if !slices.Equal(got, want) {
		t.Errorf("audit:\n%v\nwant\n%v", got, want)
	}

	// B: a timely defence, rejected; a late appeal is refused; payment ends the process; no
	// annulment after payment.
	cf.setClock(at(2026, 10, 5, 10))
	b := cf.draft(t, "PIU-001", "L1", "speed", at(2026, 10, 3, 15))
	cf.issue(t, b, at(2026, 10, 5, 10))
	cf.setClock(at(2026, 11, 4, 12))
	ok(cf.fiscal, b, map[string]any{"action": "notify", "mode": "in_person", "date": "2026-10-06"})
	if v = ok(cf.fiscal, b, map[string]any{"action": "defence", "date": "2026-10-09"}); !v.FineSuspended.Suspended {
		t.Errorf("timely defence: %+v", v.FineSuspended)
	}
	ok(cf.auth, b, map[string]any{"action": "decide", "outcome": "rejected", "date": "2026-10-20", "text": "Defesa indeferida."})
	// 10 days from 21/10 end on Saturday 31/10; Monday 2/11 is Finados: Tuesday 3/11.
	if v = ok(cf.fiscal, b, map[string]any{"action": "notify_decision", "date": "2026-10-21"}); v.AppealDeadline != "2026-11-03" || v.Revelia {
		t.Errorf("appeal deadline %s", v.AppealDeadline)
	}
	refused(cf.fiscal, b, map[string]any{"action": "appeal", "date": "2026-11-04"}, http.StatusConflict, "recurso intempestivo")
	ok(cf.fiscal, b, map[string]any{"action": "pay", "date": "2026-11-04"})
	refused(cf.auth, b, map[string]any{"action": "annul", "date": "2026-11-04", "text": "Placa trocada no auto."}, http.StatusConflict, "está pago")

	// C: annulled ex officio by the autoridade, with its reason; nothing follows.
	c := cf.draft(t, "PIU-001", "L1", "speed", at(2026, 10, 4, 15))
	cf.issue(t, c, at(2026, 10, 6, 10))
	cf.setClock(at(2026, 10, 12, 12))
	ok(cf.fiscal, c, map[string]any{"action": "notify", "mode": "mail", "date": "2026-10-08"})
	annul := map[string]any{"action": "annul", "date": "2026-10-09", "text": "curto"}
	refused(cf.fiscal, c, annul, http.StatusForbidden, "anular o auto de ofício")
	refused(cf.auth, c, annul, http.StatusBadRequest, "motivo")
	annul["text"] = "A placa do veículo no auto não é a do veículo fiscalizado."
	if v = ok(cf.auth, c, annul); v.State != "annulled" || v.AnnulReason == "" || len(v.Next.Acts) != 0 {
		t.Errorf("annulled: %+v %+v", v.CaseStatus, v.Next)
	}
	refused(cf.fiscal, c, map[string]any{"action": "pay", "date": "2026-10-10"}, http.StatusConflict, "está anulado")

	// D: a defence accepted: the auto has no effect, nothing follows.
	d := cf.draft(t, "PIU-001", "L1", "speed", at(2026, 10, 5, 15))
	cf.issue(t, d, at(2026, 10, 7, 10))
	cf.setClock(at(2026, 10, 21, 12))
	ok(cf.fiscal, d, map[string]any{"action": "notify", "mode": "mail", "date": "2026-10-09"})
	ok(cf.fiscal, d, map[string]any{"action": "defence", "date": "2026-10-13"})
	if v = ok(cf.auth, d, map[string]any{"action": "decide", "outcome": "accepted", "date": "2026-10-20", "text": "Defesa acolhida: tacógrafo sem aferição."}); v.State != "defence_accepted" || len(v.Next.Acts) != 0 {
		t.Errorf("defence accepted: %s %+v", v.State, v.Next)
	}
	if text, _ := decisionText(v, 0); !strings.Contains(text, "Defesa acolhida") || !strings.Contains(text, "O auto de infração fica sem efeito.") || strings.Contains(text, "cabe recurso") {
		t.Errorf("the accepted defence's document:\n%s", text)
	}
	refused(cf.fiscal, d, map[string]any{"action": "notify_decision", "date": "2026-10-21"}, http.StatusConflict, "defesa acolhida")

	// E: paid before any decision: payment is not a waiver, the fine is not final; an express
	// written waiver, recorded as such, makes it final from its day.
	e := cf.draft(t, "PIU-001", "L1", "speed", at(2026, 10, 6, 15))
	cf.issue(t, e, at(2026, 10, 8, 10))
	cf.setClock(at(2026, 10, 20, 12))
	ok(cf.fiscal, e, map[string]any{"action": "notify", "mode": "mail", "date": "2026-10-09"})
	if v = ok(cf.fiscal, e, map[string]any{"action": "pay", "date": "2026-10-12"}); v.Next.Final != "" ||
		!strings.Contains(v.Next.FinalText, "o pagamento não é renúncia") ||
		!slices.ContainsFunc(v.Next.Acts, func(x cases.Act) bool { return x.Action == "waiver" }) {
		t.Errorf("paid: %+v", v.Next)
	}
	refused(cf.fiscal, e, map[string]any{"action": "waiver", "date": "2026-10-14", "text": "sim"}, http.StatusBadRequest, "renúncia expressa exige")
	refused(cf.fiscal, e, map[string]any{"action": "waiver", "date": "2026-10-11", "text": "Termo de renúncia assinado pelo representante, protocolo 77."}, http.StatusConflict, "anterior à data do pagamento")
	if v = ok(cf.fiscal, e, map[string]any{"action": "waiver", "date": "2026-10-14", "text": "Termo de renúncia assinado pelo representante, protocolo 77."}); v.Next.Final != "2026-10-14" {
		t.Errorf("waived: %+v", v.Next)
	}

	// G: the decision's author reconsiders it on the appeal, within five days of it (Lei nº
	// 9.784/1999, art. 56, § 1º): the appeal is granted, the auto void. Nobody else, and not
	// after the five days.
	g := cf.draft(t, "PIU-001", "L1", "speed", at(2026, 10, 7, 15))
	cf.issue(t, g, at(2026, 10, 9, 10))
	cf.setClock(at(2026, 11, 10, 12))
	ok(cf.fiscal, g, map[string]any{"action": "notify", "mode": "mail", "date": "2026-10-09"})
	ok(cf.auth, g, map[string]any{"action": "decide", "outcome": "rejected", "date": "2026-10-20", "text": "Julgado à revelia: multa confirmada."})
	ok(cf.fiscal, g, map[string]any{"action": "notify_decision", "date": "2026-10-21"})
	ok(cf.fiscal, g, map[string]any{"action": "appeal", "date": "2026-10-23"})
	reconsider := map[string]any{"action": "reconsider", "date": "2026-10-28", "text": "As razões do recurso procedem: o tacógrafo não estava aferido."}
	refused(cf.sup, g, reconsider, http.StatusConflict, "Somente quem proferiu a decisão sobre a defesa (carla)")
	refused(cf.fiscal, g, reconsider, http.StatusForbidden, "reconsiderar a decisão")
	reconsider["date"] = "2026-10-29"
	refused(cf.auth, g, reconsider, http.StatusConflict, "terminou em 28/10/2026")
	reconsider["date"] = "2026-10-28"
	if v = ok(cf.auth, g, reconsider); v.State != "appeal_accepted" || !v.Reconsidered || v.AppealDecidedBy != "carla" || len(v.Next.Acts) != 0 {
		t.Errorf("reconsidered: %+v %+v", v.CaseStatus, v.Next)
	}

	// F: a new fact after A and B became final: specific recidivism, a suspension recommended;
	// the suspension once the fine is final, from its first final day.
	f := cf.draft(t, "PIU-001", "L1", "speed", at(2026, 12, 1, 15))
	ans := cf.issue(t, f, at(2026, 12, 2, 10))
	if a := ans.Case.Assessment; !a.Recidivist || a.SuspensionRecommended == nil {
		t.Fatalf("recidivism after A and B: %+v", a)
	}
	cf.setClock(at(2026, 12, 20, 12))
	ok(cf.fiscal, f, map[string]any{"action": "notify", "mode": "in_person", "date": "2026-12-03"})
	suspension := map[string]any{"action": "suspension", "from": "2026-12-15", "days": 10}
	refused(cf.auth, f, suspension, http.StatusConflict, "só é exigível depois da decisão")
	// Day 10 is Sunday 13/12: the defence runs to Monday 14/12.
	ok(cf.auth, f, map[string]any{"action": "decide", "outcome": "rejected", "date": "2026-12-15", "text": "Julgado à revelia: multa confirmada."})
	refused(cf.auth, f, suspension, http.StatusConflict, "ainda não foi notificada")
	ok(cf.fiscal, f, map[string]any{"action": "notify_decision", "date": "2026-12-16"})
	// Final the day after the appeal period: 10 days from 16/12 end on Saturday 26/12, so
	// Monday 28/12; from Tuesday 29/12.
	refused(cf.auth, f, suspension, http.StatusConflict, "prazo de recurso em curso até 28/12/2026")
	cf.setClock(at(2027, 1, 5, 12))
	suspension["from"] = "2026-12-28"
	refused(cf.auth, f, suspension, http.StatusConflict, "só é definitiva a partir de 29/12/2026")
	suspension["from"] = "2026-12-29"
	if v = ok(cf.auth, f, suspension); v.Suspension == nil || v.Suspension.To != "2027-01-07" {
		t.Errorf("suspension: %+v", v.Suspension)
	}
}
