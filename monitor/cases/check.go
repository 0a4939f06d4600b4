package cases

import (
	"slices"
	"strings"
	"time"

	"github.com/trenzinho/trenzinho/monitor/penalty"
	"github.com/trenzinho/trenzinho/profile"
)

// order is every act after issue, in the order of the process.
var order = []string{ActionDeliveryFailed, ActionNotify, ActionDefence, ActionDecide, ActionNotifyDecision,
	ActionAppeal, ActionReconsider, ActionDecideAppeal, ActionNotifyAppealDecision, ActionPay, ActionWaiver, ActionDividaAtiva, ActionSuspension, ActionAnnul}

var actionText = map[string]string{
	ActionIssue:                "emitir o auto",
	ActionDeliveryFailed:       "registrar a tentativa de entrega frustrada",
	ActionAnnul:                "anular o auto de ofício",
	ActionNotify:               "registrar a notificação",
	ActionDefence:              "registrar a defesa",
	ActionDecide:               "registrar a decisão sobre a defesa",
	ActionNotifyDecision:       "registrar a notificação da decisão",
	ActionAppeal:               "registrar o recurso",
	ActionDecideAppeal:         "registrar a decisão sobre o recurso",
	ActionReconsider:           "reconsiderar a decisão recorrida",
	ActionNotifyAppealDecision: "registrar a notificação da decisão do recurso",
	ActionPay:                  "registrar o pagamento",
	ActionWaiver:               "registrar a renúncia expressa à defesa e ao recurso",
	ActionDividaAtiva:          "inscrever a multa em dívida ativa",
	ActionSuspension:           "registrar a suspensão da licença",
}

// ActionText is what the act does, in Portuguese, as in "não é possível …".
func ActionText(action string) string { return actionText[action] }

// Allowed lists the acts the case's state admits, in the order of the process (their dates
// and deadlines are Check's).
func (c *Case) Allowed() []string {
	var out []string
	for _, a := range order {
		if c.stateAllows(a) {
			out = append(out, a)
		}
	}
	return out
}

// decisionToAppeal reports whether the decision on the defence confirmed the fine and was
// notified, and no appeal has been filed against it.
func (c *Case) decisionToAppeal() bool {
	return c.Outcome == OutcomeRejected && c.DecisionNotified != "" && c.Appealed == ""
}

// stateAllows reports whether the case's state admits the act (its dates aside).
func (c *Case) stateAllows(action string) bool {
	confirmed := c.State == penalty.StatusConfirmed || c.State == penalty.StatusDefenceRejected
	switch action {
	case ActionNotify, ActionDeliveryFailed:
		return c.State == penalty.StatusIssued
	case ActionDefence:
		return c.State == penalty.StatusNotified
	case ActionDecide:
		// With a defence, or without one (à revelia) once the period to defend ran out.
		return c.State == penalty.StatusDefenceFiled || c.State == penalty.StatusNotified
	case ActionNotifyDecision:
		return confirmed && c.Decided != "" && c.DecisionNotified == "" && c.Outcome == OutcomeRejected
	case ActionAppeal:
		return confirmed && c.decisionToAppeal()
	case ActionDecideAppeal:
		return c.State == penalty.StatusAppealFiled
	case ActionNotifyAppealDecision:
		return confirmed && c.AppealOutcome == OutcomeRejected && c.AppealNotified == ""
	case ActionAnnul:
		// At any point before payment (a paid fine is refunded by other means), unless the
		// auto is already without effect.
		return !c.Void() && c.State != penalty.StatusPaid
	case ActionPay:
		// A payment is recorded whenever it happens once the licensee knows of the fine, a
		// defence or appeal pending or not (paying ends the process).
		return slices.Contains([]penalty.Status{penalty.StatusNotified, penalty.StatusDefenceFiled, penalty.StatusConfirmed,
			penalty.StatusDefenceRejected, penalty.StatusAppealFiled, penalty.StatusDividaAtiva}, c.State)
	case ActionWaiver:
		return c.waiverAllowed()
	case ActionReconsider:
		return c.reconsiderAllowed()
	case ActionDividaAtiva:
		// Art. 51: only a fine the offender refused to pay "no prazo legal"; see checkDividaAtiva.
		return confirmed && !c.AppealPending()
	case ActionSuspension:
		// Art. 52: a suspension follows specific recidivism, which the calculus at issue found,
		// on a fine whose decision was notified and is not under appeal; see checkSuspension.
		return !c.Void() && c.Suspension == nil && c.suspensionRecommended() && c.DecisionNotified != "" && !c.AppealPending()
	}
	return false
}

// Check validates an act on the case on the day of now, in the profile's time zone, and
// completes it (the date of an edital, the last day or the days of a suspension, revelia). It
// returns the day of the act for its event, or an *Error.
func (c *Case) Check(p *profile.Profile, a *Action, now time.Time) (string, error) {
	if _, known := actionText[a.Action]; !known {
		return "", invalidf("ação desconhecida %q: use %s.", a.Action, strings.Join(order, ", "))
	}
	if err := c.checkState(p, a.Action); err != nil {
		return "", err
	}
	d := days{loc: p.Location(), today: DayOf(now, p.Location())}
	step := map[string]func(*profile.Profile, *Action, days) error{
		ActionNotify:               c.checkNotify,
		ActionDeliveryFailed:       c.checkDeliveryFailed,
		ActionDefence:              c.checkDefence,
		ActionDecide:               c.checkDecide,
		ActionNotifyDecision:       c.checkNotifyDecision,
		ActionAppeal:               c.checkAppeal,
		ActionDecideAppeal:         c.checkDecideAppeal,
		ActionNotifyAppealDecision: c.checkNotifyAppealDecision,
		ActionPay:                  c.checkPay,
		ActionWaiver:               c.checkWaiver,
		ActionReconsider:           c.checkReconsider,
		ActionDividaAtiva:          c.checkDividaAtiva,
		ActionSuspension:           c.checkSuspension,
		ActionAnnul:                c.checkAnnul,
	}[a.Action]
	if err := step(p, a, d); err != nil {
		return "", err
	}
	if a.Action == ActionSuspension {
		return a.From, nil
	}
	return a.Date, nil
}

// checkState refuses an act the case's state does not admit, saying why as precisely as it can.
func (c *Case) checkState(p *profile.Profile, action string) error {
	if c.stateAllows(action) {
		return nil
	}
	label := actionText[action]
	switch {
	case action == ActionSuspension && c.Suspension != nil:
		return conflictf("não é possível %s: já há suspensão registrada no auto %s (a partir de %s, %d dias).",
			label, c.Notice, br(c.Suspension.From), c.Suspension.Days)
	case action == ActionSuspension && !c.Void() && c.State != penalty.StatusIssued && !c.suspensionRecommended():
		return conflictf("não é possível %s: o cálculo da emissão do auto %s não constatou reincidência específica, condição da suspensão (Art. 52).",
			label, c.Notice)
	case (action == ActionSuspension || action == ActionDividaAtiva) && c.AppealPending() && !c.Void():
		return conflictf("não é possível %s: o auto %s tem recurso interposto no prazo em %s, pendente de decisão ou da sua notificação, que suspende a exigibilidade da multa.",
			label, c.Notice, br(c.Appealed))
	case (action == ActionSuspension || action == ActionDividaAtiva) &&
		(c.State == penalty.StatusNotified || c.State == penalty.StatusDefenceFiled && !c.TimelyDefence(p)):
		return conflictf("não é possível %s: a multa do auto %s só é exigível depois da decisão (sobre a defesa, ou à revelia), da sua notificação ao autuado e do prazo para pagamento (Art. 51: \"caso o infrator se recusar a pagá-la no prazo legal\").",
			label, c.Notice)
	case (action == ActionSuspension || action == ActionDividaAtiva) && c.State == penalty.StatusDefenceFiled:
		return conflictf("não é possível %s: o auto %s tem defesa apresentada no prazo e pendente de decisão, que suspende a exigibilidade da multa (Art. 57).",
			label, c.Notice)
	case action == ActionSuspension && c.DecisionNotified == "" && (c.State == penalty.StatusConfirmed || c.State == penalty.StatusDefenceRejected):
		return conflictf("não é possível %s: a decisão que confirmou a multa do auto %s ainda não foi notificada ao autuado.", label, c.Notice)
	case action == ActionAppeal && c.Appealed != "":
		return conflictf("não é possível %s: o auto %s já tem recurso, interposto em %s.", label, c.Notice, br(c.Appealed))
	case action == ActionAppeal && c.Outcome == OutcomeRejected && c.DecisionNotified == "" && !c.Void():
		return conflictf("não é possível %s: a decisão sobre a defesa do auto %s ainda não foi notificada; o prazo de recurso corre da notificação.", label, c.Notice)
	}
	return conflictf("não é possível %s: o auto %s está %s.", label, c.Notice, StateText(c.State))
}

// days reads the dates of an act against today, in the profile's time zone.
type days struct {
	loc   *time.Location
	today string
}

// day reads a required date that is not in the future.
func (d days) day(v, what string) (string, error) {
	if strings.TrimSpace(v) == "" {
		return "", invalidf("informe a data %s (AAAA-MM-DD).", what)
	}
	day, ok := ParseDay(v, d.loc)
	if !ok {
		return "", invalidf("data %s inválida: %q (use AAAA-MM-DD).", what, v)
	}
	if day > d.today {
		return "", invalidf("a data %s (%s) é futura: hoje é %s.", what, br(day), br(d.today))
	}
	return day, nil
}

// notBefore refuses a day before the reference day of an earlier step.
func notBefore(day, what, ref, refWhat string) error {
	if ref != "" && day < ref {
		return conflictf("a data %s (%s) é anterior à %s (%s).", what, br(day), refWhat, br(ref))
	}
	return nil
}

// dayAfter reads the required date of the act and refuses it before the earlier step.
func (d days) dayAfter(v *string, what, ref, refWhat string) error {
	day, err := d.day(*v, what)
	if err != nil {
		return err
	}
	*v = day
	return notBefore(day, what, ref, refWhat)
}

// text requires a text of at least min characters.
func text(v *string, min int, msg string) error {
	if *v = strings.TrimSpace(*v); len([]rune(*v)) < min {
		return invalidf("%s", msg)
	}
	return nil
}

// outcome requires accepted or rejected.
func outcome(v, what string) error {
	if v != OutcomeAccepted && v != OutcomeRejected {
		return invalidf("resultado da decisão %s (outcome) inválido %q: use accepted (acolhida/provido) ou rejected (indeferida/improvido).", what, v)
	}
	return nil
}

// checkNotify: the delivery by hand, by post (the receipt date on the AR), by electronic means
// where the profile enables them, or by edital only once the failed attempts the profile asks
// for are recorded (Art. 54, § 1º: "esgotados os meios para sua localização").
func (c *Case) checkNotify(p *profile.Profile, a *Action, d days) error {
	issued := DayOf(c.Issued, d.loc)
	switch a.Mode {
	case penalty.ModeInPerson, penalty.ModeMail, penalty.ModeElectronic:
		if a.Mode == penalty.ModeElectronic && !p.Notification.Electronic {
			return invalidf("a notificação eletrônica não está habilitada no perfil legal (notification.electronic): use in_person, mail ou edital.")
		}
		what := map[string]string{penalty.ModeInPerson: "da entrega em mãos", penalty.ModeMail: "do recebimento no aviso de recebimento (AR)",
			penalty.ModeElectronic: "da ciência da notificação eletrônica"}[a.Mode]
		if a.Published != "" {
			return invalidf("a data de publicação (published) é só da notificação por edital.")
		}
		if err := d.dayAfter(&a.Date, what, issued, "emissão do auto"); err != nil {
			return err
		}
	case penalty.ModeEdital:
		if err := c.checkAttemptsExhausted(p); err != nil {
			return err
		}
		if err := d.dayAfter(&a.Published, "de publicação do edital", issued, "emissão do auto"); err != nil {
			return err
		}
		if a.Date == "" {
			a.Date = a.Published
		}
		if err := d.dayAfter(&a.Date, "do edital", issued, "emissão do auto"); err != nil {
			return err
		}
		if a.Date > a.Published {
			return invalidf("a data do edital (%s) é posterior à sua publicação (%s).", br(a.Date), br(a.Published))
		}
	default:
		modes := "in_person (em mãos), mail (via postal com AR)"
		if p.Notification.Electronic {
			modes += ", electronic (meio eletrônico)"
		}
		return invalidf("forma de notificação (mode) inválida %q: use %s ou edital (Art. 54).", a.Mode, modes)
	}
	if a.RefusedToSign && a.Mode != penalty.ModeInPerson {
		return invalidf("a recusa em assinar (Art. 54, § 2º) só se registra na entrega em mãos.")
	}
	return c.checkProof(a)
}

// checkDeliveryFailed: an attempt to deliver, by hand or by post, that failed, described.
func (c *Case) checkDeliveryFailed(_ *profile.Profile, a *Action, d days) error {
	if a.Mode != penalty.ModeInPerson && a.Mode != penalty.ModeMail {
		return invalidf("forma da tentativa (mode) inválida %q: use in_person (em mãos) ou mail (via postal com AR).", a.Mode)
	}
	if err := text(&a.Text, 5, "descreva a tentativa frustrada (text): onde, e por que a entrega não foi possível."); err != nil {
		return err
	}
	return d.dayAfter(&a.Date, "da tentativa de entrega", DayOf(c.Issued, d.loc), "emissão do auto")
}

// checkDefence: filed on or after the notification (a late defence is recorded: the decision
// says it was late, and it does not suspend the fine, Art. 57).
func (c *Case) checkDefence(_ *profile.Profile, a *Action, d days) error {
	ref, refWhat := c.Notified, "notificação"
	if c.Published > ref {
		ref, refWhat = c.Published, "publicação do edital"
	}
	return d.dayAfter(&a.Date, "da apresentação da defesa", ref, refWhat)
}

// checkDecide: the decision on the defence, or à revelia only after the defence deadline.
func (c *Case) checkDecide(p *profile.Profile, a *Action, d days) error {
	if err := outcome(a.Outcome, "sobre a defesa"); err != nil {
		return err
	}
	if err := checkDecision(a, "sobre a defesa"); err != nil {
		return err
	}
	if err := text(&a.Text, 5, "a decisão exige o seu texto (text)."); err != nil {
		return err
	}
	if err := d.dayAfter(&a.Date, "da decisão", c.DefenceFiled, "apresentação da defesa"); err != nil {
		return err
	}
	a.Revelia = c.State == penalty.StatusNotified
	if !a.Revelia {
		return nil
	}
	deadline, _ := c.DefenceDeadline(p)
	if deadline.IsZero() {
		return conflictf("não é possível %s: o prazo de defesa do auto %s não pode ser calculado.", actionText[a.Action], c.Notice)
	}
	if last := deadline.Format(time.DateOnly); a.Date <= last {
		return conflictf("não é possível %s à revelia em %s: o prazo de defesa do auto %s termina em %s (Art. 55).",
			actionText[a.Action], br(a.Date), c.Notice, br(last))
	}
	return nil
}

// checkNotifyDecision: the decision is notified on or after its day.
func (c *Case) checkNotifyDecision(_ *profile.Profile, a *Action, d days) error {
	return d.dayAfter(&a.Date, "da notificação da decisão", c.Decided, "decisão sobre a defesa")
}

// checkAppeal: filed on or after the notification of the decision and within the appeal
// period; a late appeal is not admitted (Lei nº 9.784/1999, art. 63, I, by analogy).
func (c *Case) checkAppeal(p *profile.Profile, a *Action, d days) error {
	if err := d.dayAfter(&a.Date, "da interposição do recurso", c.DecisionNotified, "notificação da decisão"); err != nil {
		return err
	}
	last, _ := c.AppealDeadline(p)
	if a.Date > last {
		return conflictf("recurso intempestivo: interposto em %s, o prazo de %d dias da notificação da decisão (%s) terminou em %s; o recurso não é conhecido (Lei nº 9.784/1999, art. 63, I, por analogia).",
			br(a.Date), p.Appeal.Period(), br(c.DecisionNotified), br(last))
	}
	return nil
}

// checkDecideAppeal: the decision of the superior authority, on or after the appeal.
func (c *Case) checkDecideAppeal(_ *profile.Profile, a *Action, d days) error {
	if err := outcome(a.Outcome, "sobre o recurso"); err != nil {
		return err
	}
	if err := checkDecision(a, "do recurso"); err != nil {
		return err
	}
	if err := text(&a.Text, 5, "a decisão do recurso exige o seu texto (text)."); err != nil {
		return err
	}
	return d.dayAfter(&a.Date, "da decisão do recurso", c.Appealed, "interposição do recurso")
}

// checkNotifyAppealDecision: the appeal's decision is notified on or after its day.
func (c *Case) checkNotifyAppealDecision(_ *profile.Profile, a *Action, d days) error {
	return d.dayAfter(&a.Date, "da notificação da decisão do recurso", c.AppealDecided, "decisão do recurso")
}

// checkPay: a payment on or after the latest step.
func (c *Case) checkPay(_ *profile.Profile, a *Action, d days) error {
	last, lastWhat := c.lastStep(d.loc)
	return d.dayAfter(&a.Date, "do pagamento", last, lastWhat)
}

// checkDividaAtiva: Art. 51, only once the offender refused to pay "no prazo legal": the
// decision notified, no appeal pending (checkState), and the payment period run out.
func (c *Case) checkDividaAtiva(p *profile.Profile, a *Action, d days) error {
	label := actionText[a.Action]
	last, lastWhat := c.lastStep(d.loc)
	if err := d.dayAfter(&a.Date, "da inscrição em dívida ativa", last, lastWhat); err != nil {
		return err
	}
	if c.DecisionNotified == "" {
		return conflictf("não é possível %s: a decisão sobre a defesa do auto %s ainda não foi notificada ao autuado; o prazo para pagamento corre da notificação (Art. 51).",
			label, c.Notice)
	}
	deadline, _ := c.PaymentDeadline(p)
	if deadline == "" {
		return conflictf("não é possível %s: o prazo para pagamento do auto %s ainda não corre.", label, c.Notice)
	}
	if a.Date <= deadline {
		return conflictf("não é possível %s em %s: o prazo para pagamento do auto %s (%d dias da notificação da decisão) termina em %s (Art. 51: \"caso o infrator se recusar a pagá-la no prazo legal\").",
			label, br(a.Date), c.Notice, p.Payment.Period(), br(deadline))
	}
	return c.checkPrescription(p, a.Date)
}

// checkSuspension: the suspension applied (Art. 52) starts once the fine is final, and lasts
// within the profile's bounds (Art. 52, parágrafo único).
func (c *Case) checkSuspension(p *profile.Profile, a *Action, d days) error {
	label := actionText[a.Action]
	if err := d.dayAfter(&a.From, "de início da suspensão", DayOf(c.Issued, d.loc), "emissão do auto"); err != nil {
		return err
	}
	final, why, ok := c.FinalOn(p, d.today)
	if !ok {
		return conflictf("não é possível %s: %s.", label, why)
	}
	if a.From < final {
		return conflictf("não é possível %s a partir de %s: a multa do auto %s só é definitiva a partir de %s (Art. 51).",
			label, br(a.From), c.Notice, br(final))
	}
	from, _ := time.Parse(time.DateOnly, a.From)
	switch {
	case a.To == "" && a.Days <= 0:
		return invalidf("informe o último dia (to) ou o número de dias (days) da suspensão.")
	case a.To != "":
		to, ok := ParseDay(a.To, d.loc)
		if !ok {
			return invalidf("data de fim da suspensão inválida: %q (use AAAA-MM-DD).", a.To)
		}
		t, _ := time.Parse(time.DateOnly, to)
		n := int(t.Sub(from).Hours()/24) + 1
		if n < 1 {
			return invalidf("o fim da suspensão (%s) é anterior ao início (%s).", br(to), br(a.From))
		}
		if a.Days != 0 && a.Days != n {
			return invalidf("de %s a %s são %d dias, não %d.", br(a.From), br(to), n, a.Days)
		}
		a.To, a.Days = to, n
	default:
		a.To = from.AddDate(0, 0, a.Days-1).Format(time.DateOnly)
	}
	if s := p.Suspension; a.Days < s.MinDays || a.Days > s.MaxDays {
		return invalidf("a suspensão deve durar de %d a %d dias (Art. 52, parágrafo único); informados %d.", s.MinDays, s.MaxDays, a.Days)
	}
	return nil
}

// checkAnnul: the annulment ex officio states its reason and is not before the latest step.
func (c *Case) checkAnnul(_ *profile.Profile, a *Action, d days) error {
	if err := text(&a.Text, 10, "a anulação de ofício exige o seu motivo (text, pelo menos 10 caracteres)."); err != nil {
		return err
	}
	last, lastWhat := c.lastStep(d.loc)
	return d.dayAfter(&a.Date, "da anulação", last, lastWhat)
}

// lastStep is the day of the latest step of the process: the issue, the notification, the
// defence, the decisions, their notifications, the appeal or the entry as dívida ativa.
func (c *Case) lastStep(loc *time.Location) (day, what string) {
	day, what = DayOf(c.Issued, loc), "emissão do auto"
	for _, s := range []struct{ day, what string }{
		{c.Notified, "notificação"}, {c.Published, "publicação do edital"}, {c.DefenceFiled, "apresentação da defesa"},
		{c.Decided, "decisão sobre a defesa"}, {c.DecisionNotified, "notificação da decisão"},
		{c.Appealed, "interposição do recurso"}, {c.AppealDecided, "decisão do recurso"},
		{c.AppealNotified, "notificação da decisão do recurso"}, {c.DividaAtiva, "inscrição em dívida ativa"},
	} {
		if s.day > day {
			day, what = s.day, s.what
		}
	}
	return day, what
}

// Fileable is the act the licensee may file online on the case today, ActionDefence or
// ActionAppeal, as the case's state admits it — the same gate as the control room's
// (stateAllows); "" when neither. Its date and deadline are Check's, as for every act.
func (c *Case) Fileable() string {
	for _, a := range []string{ActionDefence, ActionAppeal} {
		if c.stateAllows(a) {
			return a
		}
	}
	return ""
}
