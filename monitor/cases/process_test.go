package cases

import (
	"errors"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/trenzinho/trenzinho/monitor/penalty"
	"github.com/trenzinho/trenzinho/profile"
)

// The process on the Piúma profile: defence 10 days from receipt, the day of receipt excluded,
// a last day that is no business day moved to the next; appeal 10 days, payment 30.

var sp = func() *time.Location { l, _ := time.LoadLocation("America/Sao_Paulo"); return l }()

func noon(day string) time.Time { return NoonOf(day, sp) }

// newCase is an auto issued on Friday 2 October 2026 by joao, with specific recidivism found.
func newCase() *Case {
	c := &Case{Notice: "AI-2026/0001", Issued: time.Date(2026, 10, 2, 10, 0, 0, 0, sp), CaseDoc: CaseDoc{IssuedBy: "joao"},
		Assessment: &penalty.Result{SuspensionRecommended: &penalty.SuspensionRecommendation{MinDays: 10, MaxDays: 45}}}
	c.Apply(Action{Action: ActionIssue}, "joao")
	return c
}

// step checks and applies an act on the day today, by user.
func step(c *Case, p *profile.Profile, today string, user string, a Action) error {
	a = structured(a)
	if msg := c.Impediment(a.Action, user); msg != "" {
		return &Error{Kind: Conflict, Msg: msg}
	}
	if _, err := c.Check(p, &a, noon(today)); err != nil {
		return err
	}
	c.Apply(a, user)
	return nil
}

// must applies acts that must be accepted.
func must(t *testing.T, c *Case, p *profile.Profile, today string, acts ...Action) *Case {
	t.Helper()
	for _, a := range acts {
		user := "fiscal2"
		if NeedsAuthority(a.Action) {
			user = "carla"
		}
		if a.Action == ActionDecideAppeal {
			user = "admin"
		}
		if err := step(c, p, today, user, a); err != nil {
			t.Fatalf("%s: %v", a.Action, err)
		}
	}
	return c
}

var (
	notifyMail = Action{Action: ActionNotify, Mode: penalty.ModeMail, Date: "2026-10-05", Proof: Proof{AR: "BR123456789BR", ARScan: 1}}
	defence    = Action{Action: ActionDefence, Date: "2026-10-09"}
	reject     = structured(Action{Action: ActionDecide, Outcome: OutcomeRejected, Date: "2026-10-16", Text: "Multa confirmada."})
	notifyDec  = Action{Action: ActionNotifyDecision, Date: "2026-10-19"}
)

func TestTransitions(t *testing.T) {
	p := profile.Piuma()
	type tc struct {
		name    string
		before  []Action
		a       Action
		today   string
		user    string
		state   penalty.Status // after, when accepted
		err     string         // refused: a part of the message
		invalid bool           // refused as invalid input (400), not a conflict
	}
	failed := func(d string) Action {
		return Action{Action: ActionDeliveryFailed, Mode: penalty.ModeMail, Date: d, Text: "AR devolvido: mudou-se."}
	}
	edital := Action{Action: ActionNotify, Mode: penalty.ModeEdital, Published: "2026-10-20", Proof: Proof{Publication: "Diário Oficial do Município nº 1234, pág. 5"}}
	appeal := func(d string) Action { return Action{Action: ActionAppeal, Date: d} }
	rejectAppeal := Action{Action: ActionDecideAppeal, Outcome: OutcomeRejected, Date: "2026-11-10", Text: "Recurso improvido."}
	for _, c := range []tc{
		{name: "notify by post", a: notifyMail, today: "2026-10-06", state: penalty.StatusNotified},
		{name: "notify in the future", a: notifyMail, today: "2026-10-04", err: "é futura", invalid: true},
		{name: "notify before the issue", a: Action{Action: ActionNotify, Mode: penalty.ModeInPerson, Date: "2026-10-01"}, today: "2026-10-06", err: "anterior à emissão"},
		{name: "electronic not enabled", a: Action{Action: ActionNotify, Mode: penalty.ModeElectronic, Date: "2026-10-05"}, today: "2026-10-06", err: "notification.electronic", invalid: true},
		{name: "edital with no failed attempt", a: edital, today: "2026-10-21", err: "(0 de 2)"},
		{name: "edital after one failed attempt", before: []Action{failed("2026-10-05")}, a: edital, today: "2026-10-21", err: "(1 de 2)"},
		{name: "edital after two failed attempts", before: []Action{failed("2026-10-05"), failed("2026-10-08")}, a: edital, today: "2026-10-21", state: penalty.StatusNotified},
		{name: "defence", before: []Action{notifyMail}, a: defence, today: "2026-10-09", state: penalty.StatusDefenceFiled},
		{name: "defence before the notice", before: []Action{notifyMail}, a: Action{Action: ActionDefence, Date: "2026-10-04"}, today: "2026-10-09", err: "anterior à notificação"},
		{name: "revelia on the last day to defend", before: []Action{notifyMail}, a: Action{Action: ActionDecide, Outcome: OutcomeRejected, Date: "2026-10-15", Text: "À revelia."}, today: "2026-10-16", err: "termina em 15/10/2026"},
		{name: "revelia the day after", before: []Action{notifyMail}, a: reject, today: "2026-10-16", state: penalty.StatusConfirmed},
		{name: "the issuer decides", before: []Action{notifyMail, defence}, a: reject, today: "2026-10-16", user: "joao", err: "Impedimento"},
		{name: "decision without text", before: []Action{notifyMail, defence}, a: Action{Action: ActionDecide, Outcome: OutcomeRejected, Date: "2026-10-16"}, today: "2026-10-16", err: "texto", invalid: true},
		{name: "appeal before the decision is notified", before: []Action{notifyMail, reject}, a: appeal("2026-10-19"), today: "2026-10-20", err: "ainda não foi notificada"},
		{name: "timely appeal (last day)", before: []Action{notifyMail, reject, notifyDec}, a: appeal("2026-10-29"), today: "2026-10-29", state: penalty.StatusAppealFiled},
		{name: "late appeal", before: []Action{notifyMail, reject, notifyDec}, a: appeal("2026-10-30"), today: "2026-10-30", err: "recurso intempestivo"},
		{name: "a second appeal", before: []Action{notifyMail, reject, notifyDec, appeal("2026-10-20")}, a: appeal("2026-10-21"), today: "2026-10-21", err: "já tem recurso"},
		{name: "the defence's judge decides the appeal", before: []Action{notifyMail, reject, notifyDec, appeal("2026-10-20")}, a: rejectAppeal, today: "2026-11-10", user: "carla", err: "quem decidiu a defesa"},
		{name: "the issuer decides the appeal", before: []Action{notifyMail, reject, notifyDec, appeal("2026-10-20")}, a: rejectAppeal, today: "2026-11-10", user: "joao", err: "Impedimento"},
		{name: "appeal granted", before: []Action{notifyMail, reject, notifyDec, appeal("2026-10-20")}, a: Action{Action: ActionDecideAppeal, Outcome: OutcomeAccepted, Date: "2026-11-10", Text: "Recurso provido."}, today: "2026-11-10", user: "admin", state: penalty.StatusAppealAccepted},
		{name: "dívida ativa while the appeal is pending", before: []Action{notifyMail, reject, notifyDec, appeal("2026-10-20")}, a: Action{Action: ActionDividaAtiva, Date: "2026-12-20"}, today: "2026-12-20", err: "recurso interposto no prazo"},
		{name: "dívida ativa before the decision is notified", before: []Action{notifyMail, reject}, a: Action{Action: ActionDividaAtiva, Date: "2026-12-20"}, today: "2026-12-20", err: "ainda não foi notificada"},
		{name: "dívida ativa on the last day to pay", before: []Action{notifyMail, reject, notifyDec}, a: Action{Action: ActionDividaAtiva, Date: "2026-11-18"}, today: "2026-11-18", err: "termina em 18/11/2026"},
		{name: "dívida ativa the day after", before: []Action{notifyMail, reject, notifyDec}, a: Action{Action: ActionDividaAtiva, Date: "2026-11-19"}, today: "2026-11-19", state: penalty.StatusDividaAtiva},
		{name: "dívida ativa after the appeal's decision, within the new payment period", before: []Action{notifyMail, reject, notifyDec, appeal("2026-10-20"), rejectAppeal, {Action: ActionNotifyAppealDecision, Date: "2026-11-12"}},
			a: Action{Action: ActionDividaAtiva, Date: "2026-12-12"}, today: "2026-12-20", err: "termina em 14/12/2026"},
		{name: "suspension before the decision is notified", before: []Action{notifyMail, reject}, a: Action{Action: ActionSuspension, From: "2026-10-20", Days: 10}, today: "2026-10-20", err: "ainda não foi notificada"},
		{name: "suspension within the appeal period", before: []Action{notifyMail, reject, notifyDec}, a: Action{Action: ActionSuspension, From: "2026-10-19", Days: 10}, today: "2026-10-20", err: "prazo de recurso em curso até 29/10/2026"},
		{name: "suspension before final", before: []Action{notifyMail, reject, notifyDec}, a: Action{Action: ActionSuspension, From: "2026-10-29", Days: 10}, today: "2026-11-05", err: "definitiva a partir de 30/10/2026"},
		{name: "suspension", before: []Action{notifyMail, reject, notifyDec}, a: Action{Action: ActionSuspension, From: "2026-10-30", Days: 10}, today: "2026-11-05", state: penalty.StatusConfirmed},
		{name: "annul without a reason", before: []Action{notifyMail}, a: Action{Action: ActionAnnul, Date: "2026-10-06", Text: "erro"}, today: "2026-10-06", err: "motivo", invalid: true},
		{name: "annul with an appeal pending", before: []Action{notifyMail, reject, notifyDec, appeal("2026-10-20")}, a: Action{Action: ActionAnnul, Date: "2026-10-21", Text: "Placa do veículo trocada no auto."}, today: "2026-10-21", state: penalty.StatusAnnulled},
		{name: "annul after payment", before: []Action{notifyMail, {Action: ActionPay, Date: "2026-10-06"}}, a: Action{Action: ActionAnnul, Date: "2026-10-07", Text: "Placa do veículo trocada no auto."}, today: "2026-10-07", err: "está pago"},
		{name: "unknown", a: Action{Action: "recurso"}, today: "2026-10-07", err: "ação desconhecida", invalid: true},
	} {
		t.Run(c.name, func(t *testing.T) {
			k := must(t, newCase(), p, "2026-11-29", c.before...)
			user := c.user
			if user == "" {
				user = "carla"
				if c.a.Action == ActionDecideAppeal {
					user = "admin"
				}
			}
			err := step(k, p, c.today, user, c.a)
			var e *Error
			switch {
			case c.err == "" && err != nil:
				t.Fatalf("refused: %v", err)
			case c.err == "" && k.State != c.state:
				t.Fatalf("state %s, want %s", k.State, c.state)
			case c.err != "" && (!errors.As(err, &e) || !strings.Contains(e.Msg, c.err) || (e.Kind == Conflict) == c.invalid):
				t.Fatalf("got %v, want %q (invalid %v)", err, c.err, c.invalid)
			}
		})
	}
}

func TestDeadlinesAndFinality(t *testing.T) {
	p := profile.Piuma()
	c := must(t, newCase(), p, "2026-11-29", notifyMail)
	if d, _ := c.DefenceDeadline(p); d.Format(time.DateOnly) != "2026-10-15" {
		t.Errorf("defence deadline %s", d)
	}
	if _, why, ok := c.FinalFrom(p); ok || !strings.Contains(why, "sem decisão") {
		t.Errorf("final without a decision: %q", why)
	}
	must(t, c, p, "2026-11-29", reject)
	if _, why, ok := c.FinalFrom(p); ok || !strings.Contains(why, "ainda não notificada") {
		t.Errorf("final before the decision's notice: %q", why)
	}
	if !c.Revelia {
		t.Error("a decision without a defence is not marked à revelia")
	}
	must(t, c, p, "2026-11-29", notifyDec)
	// Not final on the decision's notice: while the appeal period runs, an appeal can change
	// it. Final the day after the period ran out without an appeal.
	if d, why, ok := c.FinalFrom(p); d != "2026-10-30" || !ok || !strings.Contains(why, "sem recurso até 29/10/2026") {
		t.Errorf("final from %s (%q), want the day after the appeal period", d, why)
	}
	if _, why, ok := c.FinalOn(p, "2026-10-29"); ok || !strings.Contains(why, "prazo de recurso em curso até 29/10/2026") {
		t.Errorf("final on the last day to appeal: %q", why)
	}
	if d, _, ok := c.FinalOn(p, "2026-10-30"); !ok || d != "2026-10-30" {
		t.Errorf("not final once the appeal period ran out: %s", d)
	}
	if d, why := c.AppealDeadline(p); d != "2026-10-29" || !strings.Contains(why, "art. 59") {
		t.Errorf("appeal deadline %s %q", d, why)
	}
	if d, _ := c.PaymentDeadline(p); d != "2026-11-18" {
		t.Errorf("payment deadline %s", d)
	}
	// A timely appeal suspends the fine and its finality until its decision is notified.
	must(t, c, p, "2026-11-29", Action{Action: ActionAppeal, Date: "2026-10-22"})
	if ok, why := c.Suspended(p, "2026-10-25"); !ok || !strings.Contains(why, "Recurso interposto no prazo") {
		t.Errorf("appeal does not suspend: %q", why)
	}
	if _, _, ok := c.FinalFrom(p); ok {
		t.Error("final with an appeal pending")
	}
	if d, _ := c.PaymentDeadline(p); d != "" {
		t.Errorf("payment deadline %s with an appeal pending", d)
	}
	must(t, c, p, "2026-11-29", Action{Action: ActionDecideAppeal, Outcome: OutcomeRejected, Date: "2026-11-10", Text: "Improvido."},
		Action{Action: ActionNotifyAppealDecision, Date: "2026-11-12"})
	if d, _, ok := c.FinalFrom(p); !ok || d != "2026-11-12" {
		t.Errorf("final from %s after the appeal, want its decision's notice", d)
	}
	// 30 days from 12/11 end on Saturday 12/12: Monday 14/12.
	if d, why := c.PaymentDeadline(p); d != "2026-12-14" || !strings.Contains(why, "primeiro dia útil") {
		t.Errorf("payment deadline %s %q", d, why)
	}
	if ok, _ := c.Suspended(p, "2026-11-13"); ok {
		t.Error("suspended after the appeal's decision was notified")
	}
	// Payment is not a waiver: a fine paid before any decision is not final; an express
	// written waiver recorded as such makes it final from its day.
	paid := must(t, newCase(), p, "2026-11-29", notifyMail, Action{Action: ActionPay, Date: "2026-10-07"})
	if d, why, ok := paid.FinalFrom(p); ok || !strings.Contains(why, "o pagamento não é renúncia") {
		t.Errorf("paid: final from %s (%q)", d, why)
	}
	if n := paid.Next(p, NoonOf("2026-11-29", p.Location())); !strings.Contains(n.Step, "não é renúncia") ||
		!slices.ContainsFunc(n.Acts, func(a Act) bool { return a.Action == ActionWaiver && a.Role == RoleFiscal }) {
		t.Errorf("paid, next: %+v", n)
	}
	for _, bad := range []struct {
		a   Action
		msg string
	}{
		{Action{Action: ActionWaiver, Date: "2026-10-08", Text: "curta"}, "renúncia expressa exige"},
		{Action{Action: ActionWaiver, Date: "2026-10-06", Text: "Termo de renúncia assinado, protocolo 123."}, "anterior à data do pagamento"},
	} {
		var e *Error
		if _, err := paid.Check(p, &bad.a, NoonOf("2026-11-29", p.Location())); !errors.As(err, &e) || !strings.Contains(e.Msg, bad.msg) {
			t.Errorf("waiver %+v: %v, want %q", bad.a, err, bad.msg)
		}
	}
	must(t, paid, p, "2026-11-29", Action{Action: ActionWaiver, Date: "2026-10-09", Text: "Termo de renúncia assinado, protocolo 123."})
	if d, _, ok := paid.FinalFrom(p); !ok || d != "2026-10-09" {
		t.Errorf("waived: final from %s", d)
	}
	if slices.Contains(paid.Allowed(), ActionWaiver) {
		t.Error("a second waiver is allowed")
	}
	// A fine paid within the appeal period is final as any other: when the period ran out.
	paidLate := must(t, newCase(), p, "2026-11-29", notifyMail, reject, notifyDec, Action{Action: ActionPay, Date: "2026-10-20"})
	if d, _, ok := paidLate.FinalFrom(p); !ok || d != "2026-10-30" {
		t.Errorf("paid after the decision's notice: final from %s", d)
	}
}

func TestNextAndWhoMayAct(t *testing.T) {
	p := profile.Piuma()
	c := newCase()
	n := c.Next(p, noon("2026-10-03"))
	if !strings.Contains(n.Step, "Aguardando a notificação") || acts(n) != "delivery_failed:fiscal,notify:fiscal,annul:autoridade" {
		t.Errorf("issued: %+v", n)
	}
	must(t, c, p, "2026-11-29", notifyMail)
	if n := c.Next(p, noon("2026-10-10")); n.Deadline != "2026-10-15" || !strings.Contains(n.Step, "Prazo de defesa em curso") {
		t.Errorf("notified: %+v", n)
	}
	if n := c.Next(p, noon("2026-10-16")); n.Deadline != "" || !strings.Contains(n.Step, "revelia pela Autoridade Julgadora de Posturas") {
		t.Errorf("after the defence deadline: %+v", n)
	}
	must(t, c, p, "2026-11-29", reject, notifyDec)
	n = c.Next(p, noon("2026-10-20"))
	if n.Deadline != "2026-10-29" || !strings.Contains(n.Step, "prazo de recurso em curso") || n.Final != "" ||
		!strings.Contains(n.FinalText, "será definitiva a partir de 30/10/2026") {
		t.Errorf("decision notified: %+v", n)
	}
	if n := c.Next(p, noon("2026-11-05")); n.Deadline != "2026-11-18" || !strings.Contains(n.Step, "sem recurso no prazo") || n.Final != "2026-10-30" {
		t.Errorf("after the appeal period: %+v", n)
	}
	if n := c.Next(p, noon("2026-11-19")); !strings.Contains(n.Step, "cabe a inscrição em dívida ativa") {
		t.Errorf("after the payment period: %+v", n)
	}
	must(t, c, p, "2026-11-29", Action{Action: ActionAppeal, Date: "2026-10-20"})
	n = c.Next(p, noon("2026-10-21"))
	var decide Act
	for _, a := range n.Acts {
		if a.Action == ActionDecideAppeal {
			decide = a
		}
	}
	// The superior authority: the role the profile names (autoridade by default), another
	// person than who issued the auto and who decided the defence; never admin, an IT role.
	if decide.Role != "autoridade" || !slices.Equal(decide.NotBy, []string{"joao", "carla"}) || !strings.Contains(n.Step, "autoridade superior") {
		t.Errorf("appeal pending: %+v", n)
	}
	var e *Error
	if err := MayAct(p, RoleAdmin, ActionDecideAppeal); !errors.As(err, &e) || e.Kind != Forbidden || !strings.Contains(e.Msg, "não decide recursos") {
		t.Errorf("admin decides the appeal: %v", err)
	}
	if err := MayAct(p, RoleAutoridade, ActionDecideAppeal); err != nil {
		t.Errorf("the superior authority may not decide the appeal: %v", err)
	}
	if err := MayAct(p, RoleAdmin, ActionDecide); err != nil {
		t.Errorf("admin (above autoridade) may not decide a defence: %v", err)
	}
	if r := RoleFor(p, ActionPay); r != RoleFiscal {
		t.Errorf("pay by %s", r)
	}
}

func acts(n Next) string {
	var s []string
	for _, a := range n.Acts {
		s = append(s, a.Action+":"+string(a.Role))
	}
	return strings.Join(s, ",")
}

// Electronic notice where the profile enables it: the defence runs from the acknowledgement.
func TestElectronicNotice(t *testing.T) {
	p := *profile.Piuma()
	p.Notification.Electronic = true
	c := must(t, newCase(), &p, "2026-11-29", Action{Action: ActionNotify, Mode: penalty.ModeElectronic, Date: "2026-10-05"})
	if d, why := c.DefenceDeadline(&p); d.Format(time.DateOnly) != "2026-10-15" || !strings.Contains(why, "notificação eletrônica") {
		t.Errorf("deadline %s %q", d, why)
	}
	if err := step(newCase(), &p, "2026-10-06", "fiscal2", Action{Action: ActionNotify, Mode: penalty.ModeElectronic, Date: "2026-10-05", RefusedToSign: true}); err == nil {
		t.Error("a refusal to sign an electronic notice")
	}
}

// TestFileable: the licensee files online what the state admits, as the control room records
// it: a defence once notified, an appeal once the rejecting decision is notified, nothing after.
func TestFileable(t *testing.T) {
	p := profile.Piuma()
	c := newCase()
	for _, s := range []struct {
		act  *Action
		want string
	}{
		{nil, ""},
		{&notifyMail, ActionDefence},
		{&defence, ""},
		{&reject, ""},
		{&notifyDec, ActionAppeal},
		{&Action{Action: ActionAppeal, Date: "2026-10-20"}, ""},
	} {
		if s.act != nil {
			must(t, c, p, "2026-10-21", *s.act)
		}
		if got := c.Fileable(); got != s.want {
			t.Errorf("state %s: fileable %q, want %q", c.State, got, s.want)
		}
		if s.want != "" && !c.stateAllows(s.want) {
			t.Errorf("state %s: fileable %q the control room would refuse", c.State, s.want)
		}
	}
}

// structured completes a fixture's decision given by its text with the relatório and the
// fundamentação a decision needs (decision.go); a decision without a text is left as it is.
func structured(a Action) Action {
	if (a.Action == ActionDecide || a.Action == ActionDecideAppeal) && a.Text != "" && a.Report == "" {
		a.Report = "Auto de infração por velocidade acima da permitida (Art. 23), com defesa ou sem ela."
		a.Grounds = "A medição do tacógrafo consta do pacote de evidências selado e não foi infirmada pelas razões apresentadas."
		a.Ruling = a.Text + " (dispositivo)"
	}
	return a
}
