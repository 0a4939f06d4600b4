package cases

import (
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/trenzinho/trenzinho/monitor/penalty"
	"github.com/trenzinho/trenzinho/profile"
)

// The process of an auto after issue (Lei nº 2.277/2018, Arts. 51–57; Lei nº 9.784/1999, arts.
// 56–59 and 63, by analogy, for the appeal), as docs/process.md tells it:
//
//	issued ─delivery_failed×N─▶ issued ─notify (in_person | mail | electronic | edital)─▶ notified
//	notified ─defence─▶ defence_filed ─decide─▶ confirmed | defence_accepted
//	notified ─decide (after the defence deadline: à revelia)─▶ confirmed | defence_accepted
//	confirmed ─notify_decision─▶ confirmed (the appeal and payment periods run)
//	confirmed ─appeal (timely)─▶ appeal_filed ─decide_appeal─▶ confirmed | appeal_accepted
//	confirmed ─notify_appeal_decision─▶ confirmed (the payment period runs again)
//	confirmed ─pay─▶ paid;  confirmed ─divida_ativa (after the payment deadline)─▶ dividaativa
//	any state before payment ─annul─▶ annulled
//
// A case's state is a penalty.Status; what happened on which day is in Status. The package
// checks an act against both and the day (Check), folds an accepted act into the status
// (Status.Apply), and says what comes next, by when and by whom (Case.Next). It reads no
// database: the Office (office.go) records the acts through a Ledger the store implements.

// Actions on a case: the kinds of its events.
const (
	ActionIssue       = "issue"        // the notice was issued (a draft or a manual notice)
	ActionImport      = "import"       // an earlier paper notice was imported as it stood
	ActionNotify      = "notify"       // delivered to the offender (Art. 54)
	ActionDefence     = "defence"      // a defence was filed (Art. 55, 56)
	ActionDecide      = "decide"       // the authority decided the defence (Art. 57)
	ActionPay         = "pay"          // the fine was paid
	ActionDividaAtiva = "divida_ativa" // the fine was entered as dívida ativa (Art. 51)
	ActionSuspension  = "suspension"   // a suspension of the licence was applied on it (Art. 52)
	// ActionNotifyDecision: the offender was notified of the decision on the defence; the
	// appeal and payment periods run from then.
	ActionNotifyDecision = "notify_decision"
	// ActionDeliveryFailed: an attempt to deliver the notice failed (Art. 54, § 1º: the edital
	// only once the means to find the offender are exhausted); Text says what happened.
	ActionDeliveryFailed = "delivery_failed"
	// ActionAnnul: the autoridade annulled the auto ex officio (Súmula 473 STF), with its
	// reason (Text), at any point before payment.
	ActionAnnul = "annul"
	// ActionAppeal: the offender appealed (recurso) against the decision, within the appeal
	// period from its notification (Lei nº 9.784/1999, art. 59, by analogy).
	ActionAppeal = "appeal"
	// ActionDecideAppeal: the superior authority decided the appeal.
	ActionDecideAppeal = "decide_appeal"
	// ActionNotifyAppealDecision: the offender was notified of the decision on the appeal;
	// the fine is final from then and the payment period runs again.
	ActionNotifyAppealDecision = "notify_appeal_decision"
)

// The outcomes of a decision on a defence or an appeal.
const (
	OutcomeAccepted = "accepted" // accepted: the notice has no effect
	OutcomeRejected = "rejected" // rejected: the fine is confirmed
)

// Kind is what kind of refusal an Error is; the API maps each to one HTTP status.
type Kind int

// The kinds of refusal.
const (
	// Invalid: the request is malformed (a missing or unreadable field).
	Invalid Kind = iota
	// Forbidden: the user's role may not take the act.
	Forbidden
	// Conflict: the act contradicts the case (a wrong state, a date before the previous step,
	// a deadline, an impediment), or an auto cannot be issued (Reasons).
	Conflict
)

// Error is an act the office refuses: Kind says why in general, Msg in Portuguese in
// particular; a refused issue carries every blocking reason (Reasons).
type Error struct {
	Kind    Kind
	Msg     string
	Reasons []Reason
}

func (e *Error) Error() string { return e.Msg }

func conflictf(format string, a ...any) error {
	return &Error{Kind: Conflict, Msg: fmt.Sprintf(format, a...)}
}

func invalidf(format string, a ...any) error {
	return &Error{Kind: Invalid, Msg: fmt.Sprintf(format, a...)}
}

func forbidden(msg string) error { return &Error{Kind: Forbidden, Msg: msg} }

// refusal is an act refused for one reason, with its code.
func refusal(k Kind, code, msg string) error {
	return &Error{Kind: k, Msg: msg, Reasons: []Reason{{Code: code, Text: msg}}}
}

// Action is an act on a case after issue, as the API receives it and as its event keeps it.
// Dates are calendar days, "YYYY-MM-DD", in the profile's time zone.
type Action struct {
	Action string `json:"action"`
	// Date is the day of the act: of delivery by hand, of receipt on the return receipt (AR),
	// or of the acknowledgement of an electronic notice (notify), of filing (defence, appeal),
	// of the decision (decide, decide_appeal), of payment (pay), of the entry as dívida ativa
	// (divida_ativa). For an edital it defaults to Published.
	Date string `json:"date,omitempty"`
	// Mode is how the notice was delivered (notify): in_person, mail, electronic (when the
	// profile enables it) or edital.
	Mode string `json:"mode,omitempty"`
	// Published is the day an edital was published (notify, mode edital; Art. 54, § 1º).
	Published string `json:"published,omitempty"`
	// RefusedToSign: the offender refused to sign and the agent noted it (Art. 54, § 2º).
	RefusedToSign bool `json:"refused_to_sign,omitempty"`
	// Proof is how the delivery is proven (notify; proofs.go): whom the auto was handed to
	// (in_person), the AR and its scan (mail), the edital's publication (edital).
	Proof
	// AtSeat: a failed attempt (delivery_failed) was made at the licensee's registered seat.
	AtSeat bool `json:"at_seat,omitempty"`
	// Decision is the structure of a decision (decide, decide_appeal; decision.go):
	// relatório, fundamentação and dispositivo.
	Decision
	// Outcome of a decision: accepted or rejected; Text is the decision (decide,
	// decide_appeal), the reason (annul) or what happened (delivery_failed).
	Outcome string `json:"outcome,omitempty"`
	Text    string `json:"text,omitempty"`
	// From, To and Days are the suspension applied (suspension): its first and last days,
	// both counted; give To or Days (or both, consistent).
	From string `json:"from,omitempty"`
	To   string `json:"to,omitempty"`
	Days int    `json:"days,omitempty"`
	// Revelia: a decision made without a defence once the period to defend ran out
	// ("julgamento à revelia"); set by Check, not the caller.
	Revelia bool `json:"revelia,omitempty"`
	// Note is free text kept with the event.
	Note string `json:"note,omitempty"`
}

// AppliedSuspension is a suspension of the licence applied on a notice (Art. 52).
type AppliedSuspension struct {
	From string `json:"from"`
	To   string `json:"to"`
	Days int    `json:"days"`
}

// Status is the state of a case as its events make it.
type Status struct {
	State         penalty.Status `json:"state"`
	Notified      string         `json:"notified,omitempty"`
	Mode          string         `json:"mode,omitempty"`
	Published     string         `json:"published,omitempty"`
	RefusedToSign bool           `json:"refused_to_sign,omitempty"`
	// Proof is how the delivery was proven (proofs.go).
	Proof        `json:"proof,omitzero"`
	DefenceFiled string `json:"defence_filed,omitempty"`
	Decided      string `json:"decided,omitempty"`
	// DecidedBy is the user who decided the defence (who may not decide the appeal).
	DecidedBy string `json:"decided_by,omitempty"`
	// Revelia: the decision was made without a defence (julgamento à revelia).
	Revelia bool `json:"revelia,omitempty"`
	// DecisionNotified is the day the decision was notified to the offender.
	DecisionNotified string `json:"decision_notified,omitempty"`
	// FailedDeliveries are the days of the recorded failed attempts to deliver the notice, and
	// FailedAttempts the attempts themselves (day, means, at the registered seat).
	FailedDeliveries []string  `json:"failed_deliveries,omitempty"`
	FailedAttempts   []Attempt `json:"failed_attempts,omitempty"`
	// Annulled is the day the auto was annulled ex officio, and AnnulReason why.
	Annulled     string `json:"annulled,omitempty"`
	AnnulReason  string `json:"annul_reason,omitempty"`
	Outcome      string `json:"outcome,omitempty"`
	DecisionText string `json:"decision_text,omitempty"`
	// Appealed is the day a (timely) appeal was filed; AppealDecided, AppealDecidedBy,
	// AppealOutcome and AppealText its decision; AppealNotified the day it was notified.
	Appealed        string `json:"appealed,omitempty"`
	AppealDecided   string `json:"appeal_decided,omitempty"`
	AppealDecidedBy string `json:"appeal_decided_by,omitempty"`
	AppealOutcome   string `json:"appeal_outcome,omitempty"`
	AppealText      string `json:"appeal_text,omitempty"`
	AppealNotified  string `json:"appeal_notified,omitempty"`
	// DecisionParts and AppealDecisionParts are the structured decisions (decision.go).
	DecisionParts       Decision `json:"decision,omitzero"`
	AppealDecisionParts Decision `json:"appeal_decision,omitzero"`
	// Reconsidered: the appeal was granted by the decision's author reconsidering it.
	Reconsidered bool   `json:"reconsidered,omitempty"`
	Paid         string `json:"paid,omitempty"`
	// Waived is the day the offender's express written waiver of the defence and the appeal
	// was recorded, and WaiverText what it says (finality.go).
	Waived      string             `json:"waived,omitempty"`
	WaiverText  string             `json:"waiver_text,omitempty"`
	DividaAtiva string             `json:"divida_ativa,omitempty"`
	Final       string             `json:"final,omitempty"` // known directly (imported records)
	Suspension  *AppliedSuspension `json:"suspension,omitempty"`
}

// Apply changes the status by an act that Check accepted, recorded by user.
func (s *Status) Apply(a Action, user string) {
	switch a.Action {
	case ActionIssue:
		s.State = penalty.StatusIssued
	case ActionNotify:
		s.State, s.Notified, s.Mode, s.Published, s.RefusedToSign = penalty.StatusNotified, a.Date, a.Mode, a.Published, a.RefusedToSign
		s.Proof = a.Proof
	case ActionDefence:
		s.State, s.DefenceFiled = penalty.StatusDefenceFiled, a.Date
	case ActionDecide:
		s.Decided, s.DecidedBy, s.Outcome, s.DecisionText, s.Revelia = a.Date, user, a.Outcome, a.Text, a.Revelia
		s.DecisionParts = a.Decision
		s.State = penalty.StatusConfirmed
		if a.Outcome == OutcomeAccepted {
			s.State = penalty.StatusDefenceAccepted
		}
	case ActionNotifyDecision:
		s.DecisionNotified = a.Date
	case ActionAppeal:
		s.State, s.Appealed = penalty.StatusAppealFiled, a.Date
	case ActionDecideAppeal:
		s.AppealDecided, s.AppealDecidedBy, s.AppealOutcome, s.AppealText = a.Date, user, a.Outcome, a.Text
		s.AppealDecisionParts = a.Decision
		s.State = penalty.StatusConfirmed
		if a.Outcome == OutcomeAccepted {
			s.State = penalty.StatusAppealAccepted
		}
	case ActionNotifyAppealDecision:
		s.AppealNotified = a.Date
	case ActionReconsider:
		// The decision reconsidered by its author on the appeal: the appeal granted.
		s.AppealDecided, s.AppealDecidedBy, s.AppealOutcome, s.AppealText = a.Date, user, OutcomeAccepted, a.Text
		s.State, s.Reconsidered = penalty.StatusAppealAccepted, true
	case ActionDeliveryFailed:
		s.FailedDeliveries = append(slices.Clip(s.FailedDeliveries), a.Date)
		s.FailedAttempts = append(slices.Clip(s.FailedAttempts), Attempt{Date: a.Date, Mode: a.Mode, AtSeat: a.AtSeat})
	case ActionAnnul:
		s.State, s.Annulled, s.AnnulReason = penalty.StatusAnnulled, a.Date, a.Text
	case ActionPay:
		s.State, s.Paid = penalty.StatusPaid, a.Date
	case ActionDividaAtiva:
		s.State, s.DividaAtiva = penalty.StatusDividaAtiva, a.Date
	case ActionSuspension:
		s.Suspension = &AppliedSuspension{From: a.From, To: a.To, Days: a.Days}
	case ActionWaiver:
		s.Waived, s.WaiverText = a.Date, a.Text
	}
}

// Void reports whether the case carries no fine: dismissed, annulled, or its defence or
// appeal accepted.
func (c *Case) Void() bool {
	switch c.State {
	case penalty.StatusDismissed, penalty.StatusAnnulled, penalty.StatusDefenceAccepted, penalty.StatusAppealAccepted:
		return true
	}
	return false
}

// AppealPending reports whether an appeal was filed whose decision is not yet notified (or
// was accepted): the fine is not final and not payable meanwhile.
func (c *Case) AppealPending() bool { return c.Appealed != "" && c.AppealNotified == "" }

// DefenceDeadline is the last day to file a defence (Art. 55) as the profile counts it, and how
// it was counted; the zero time (and why) before the notice is delivered.
func (c *Case) DefenceDeadline(p *profile.Profile) (time.Time, string) {
	if c.Notified == "" && c.Published == "" {
		return time.Time{}, "O prazo de defesa (Art. 55) corre a partir da notificação do autuado, ainda não registrada."
	}
	loc := p.Location()
	n := penalty.Notice{Notified: noonOf(c.Notified, loc), Mode: c.Mode, Published: noonOf(c.Published, loc), RefusedToSign: c.RefusedToSign}
	return n.DefenceDeadline(p)
}

// TimelyDefence reports whether a defence was filed within the deadline (Art. 55, 57).
func (c *Case) TimelyDefence(p *profile.Profile) bool {
	if c.DefenceFiled == "" {
		return false
	}
	deadline, _ := c.DefenceDeadline(p)
	return penalty.DefenceTimely(deadline, noonOf(c.DefenceFiled, p.Location()))
}

// period counts days from the day of a notice as Lei nº 9.784/1999, art. 66 does and the
// profile counts the defence: the day of the notice excluded, the last day included, moved to
// the next business day (not a Saturday, Sunday or holiday of the profile) when
// defence.next_business_day is set. It returns the last day and a pt-BR sentence.
func period(p *profile.Profile, from string, days int, what string) (string, string) {
	d, err := time.Parse(time.DateOnly, from)
	if err != nil {
		return "", ""
	}
	last := d.AddDate(0, 0, days)
	why := fmt.Sprintf("%s: %d dias corridos contados da notificação em %s, excluído o dia do começo; o último dia é %s.",
		what, days, br(from), last.Format("02/01/2006"))
	if p.Defence.NextBusinessDay && !businessDay(p, last) {
		for !businessDay(p, last) {
			last = last.AddDate(0, 0, 1)
		}
		why += fmt.Sprintf(" Não sendo dia útil, o prazo termina no primeiro dia útil seguinte: %s.", last.Format("02/01/2006"))
	}
	return last.Format(time.DateOnly), why
}

// businessDay reports whether the day d (a date at 00:00 UTC) is a business day
// (profile.BusinessDay: Monday to Friday, no holiday, no ponto facultativo).
func businessDay(p *profile.Profile, d time.Time) bool {
	ok, _ := p.BusinessDay(d)
	return ok
}

// AppealDeadline is the last day to appeal against the decision on the defence: appeal.days
// (default 10) from its notification (Lei nº 9.784/1999, art. 59, by analogy); "" before it is
// notified, and for an accepted defence (nothing to appeal).
func (c *Case) AppealDeadline(p *profile.Profile) (string, string) {
	if c.DecisionNotified == "" || c.Outcome != OutcomeRejected {
		return "", ""
	}
	return period(p, c.DecisionNotified, p.Appeal.Period(), "Prazo de recurso (Lei nº 9.784/1999, art. 59, por analogia)")
}

// PaymentDeadline is the last day to pay the fine: payment.days (default 30) from the
// notification of the last decision (on the appeal, when a timely appeal was filed and
// rejected; else on the defence); "" while there is none (or an appeal is pending).
func (c *Case) PaymentDeadline(p *profile.Profile) (string, string) {
	switch {
	case c.Void() || c.Outcome != OutcomeRejected:
		return "", ""
	case c.Appealed != "" && c.AppealOutcome == OutcomeRejected && c.AppealNotified != "":
		return period(p, c.AppealNotified, p.Payment.Period(), "Prazo de pagamento (Art. 51), da notificação da decisão do recurso")
	case c.Appealed != "" || c.DecisionNotified == "":
		return "", ""
	}
	return period(p, c.DecisionNotified, p.Payment.Period(), "Prazo de pagamento (Art. 51), da notificação da decisão")
}

// Suspended reports whether, on the day today, the fine may not be demanded, and why (pt-BR):
// a timely defence until its decision (Art. 57), a timely appeal until its decision is
// notified (decided here: the appeal suspends, as the defence does, by analogy with Art. 57 and
// with CTN art. 151, III).
func (c *Case) Suspended(p *profile.Profile, today string) (bool, string) {
	switch {
	case c.Void():
		return false, "Auto sem multa (" + StateText(c.State) + ")."
	case c.AppealPending() && c.Appealed <= today:
		return true, fmt.Sprintf("Recurso interposto no prazo, em %s: a exigibilidade da multa está suspensa até a notificação da decisão do recurso.", br(c.Appealed))
	case c.DefenceFiled != "" && c.DefenceFiled <= today && c.Decided == "" && c.TimelyDefence(p):
		return true, fmt.Sprintf("Defesa apresentada no prazo, em %s: a exigibilidade da multa está suspensa até a decisão da autoridade competente (Art. 57).", br(c.DefenceFiled))
	case c.DefenceFiled != "" && c.DefenceFiled <= today && c.Decided == "":
		deadline, _ := c.DefenceDeadline(p)
		return false, fmt.Sprintf("Defesa apresentada em %s, após o prazo (%s): não suspende a exigibilidade da multa (Art. 57).",
			br(c.DefenceFiled), deadline.Format("02/01/2006"))
	}
	return false, "Nenhuma defesa ou recurso no prazo pendente de decisão."
}

// StateText describes a state in Portuguese, as in "o auto está …".
func StateText(s penalty.Status) string {
	switch s {
	case penalty.StatusIssued:
		return "emitido, ainda não notificado"
	case penalty.StatusNotified:
		return "notificado, sem defesa registrada"
	case penalty.StatusDefenceFiled:
		return "com defesa pendente de decisão"
	case penalty.StatusDefenceRejected:
		return "com defesa indeferida"
	case penalty.StatusDefenceAccepted:
		return "com defesa acolhida (auto sem efeito)"
	case penalty.StatusConfirmed:
		return "com multa confirmada"
	case penalty.StatusAppealFiled:
		return "com recurso pendente de decisão"
	case penalty.StatusAppealAccepted:
		return "com recurso provido (auto sem efeito)"
	case penalty.StatusPaid:
		return "pago"
	case penalty.StatusDividaAtiva:
		return "inscrito em dívida ativa"
	case penalty.StatusDismissed:
		return "arquivado"
	case penalty.StatusAnnulled:
		return "anulado"
	}
	return string(s)
}

// noonOf is noon of a calendar day "YYYY-MM-DD" in loc; the zero time for "" (or a bad day).
func noonOf(day string, loc *time.Location) time.Time {
	d, err := time.Parse(time.DateOnly, day)
	if err != nil {
		return time.Time{}
	}
	return time.Date(d.Year(), d.Month(), d.Day(), 12, 0, 0, 0, loc)
}

// NoonOf is noon of a calendar day "YYYY-MM-DD" in loc, as the penalty calculus reads the
// days of a case; the zero time for "".
func NoonOf(day string, loc *time.Location) time.Time { return noonOf(day, loc) }

// DayOf is the calendar day of t in loc, "YYYY-MM-DD".
func DayOf(t time.Time, loc *time.Location) string { return t.In(loc).Format(time.DateOnly) }

// br writes a day "YYYY-MM-DD" as dd/mm/aaaa.
func br(day string) string {
	d, err := time.Parse(time.DateOnly, day)
	if err != nil {
		return day
	}
	return d.Format("02/01/2006")
}

// ParseDay reads a calendar day: "YYYY-MM-DD", or an RFC 3339 time whose day in loc is taken.
func ParseDay(s string, loc *time.Location) (string, bool) {
	s = strings.TrimSpace(s)
	if d, err := time.Parse(time.DateOnly, s); err == nil {
		return d.Format(time.DateOnly), true
	}
	if t, err := time.Parse(time.RFC3339, s); err == nil {
		return DayOf(t, loc), true
	}
	return "", false
}
