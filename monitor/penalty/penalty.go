// Package penalty is the penalty calculus of Lei 2.277/2018 of Piúma-ES (Art. 41–57) as pure
// functions over the legal profile: the fine of an offence in fiscal units and in reais at the
// value in force on the day of issue (Art. 44), recidivism (Art. 48), the recommendations of a
// suspension (Art. 52) and of cassação (Art. 53, III), and the defence deadline and its effect
// (Art. 54, 55 and 57).
//
// The calculus is made when the agent issues a notice, not when the machine drafts it: the
// earlier notices it is given are as they stand at that moment. Every number comes from the
// profile. The explanations are in Portuguese, for the people who read the notice; docs/penalty.md
// states each rule with its article and every choice made where the law is silent.
package penalty

import (
	"cmp"
	"errors"
	"fmt"
	"math/big"
	"slices"
	"strings"
	"time"

	"github.com/trenzinho/trenzinho/profile"
)

// Status is the state of a notice (auto de infração) in its administrative process.
type Status string

// The statuses of a notice.
const (
	StatusIssued          Status = "issued"           // issued by the agent, not yet delivered
	StatusNotified        Status = "notified"         // delivered (Art. 54); the defence period runs
	StatusDefenceFiled    Status = "defence_filed"    // a defence was filed and awaits decision
	StatusDefenceRejected Status = "defence_rejected" // the authority rejected the defence
	StatusDefenceAccepted Status = "defence_accepted" // the authority accepted the defence: no fine
	StatusConfirmed       Status = "confirmed"        // final: the period ran out or the defence failed
	StatusPaid            Status = "paid"             // the fine was paid
	StatusDividaAtiva     Status = "dividaativa"      // entered as dívida ativa (Art. 51)
	StatusDismissed       Status = "dismissed"        // dismissed (arquivado): no fine
	StatusAnnulled        Status = "annulled"         // annulled: no fine
	// StatusAppealFiled: a timely appeal (recurso) against the decision awaits the superior
	// authority; the fine is not final and not payable meanwhile.
	StatusAppealFiled Status = "appeal_filed"
	// StatusAppealAccepted: the superior authority granted the appeal: no fine.
	StatusAppealAccepted Status = "appeal_accepted"
)

var statuses = []Status{StatusIssued, StatusNotified, StatusDefenceFiled, StatusDefenceRejected,
	StatusDefenceAccepted, StatusConfirmed, StatusPaid, StatusDividaAtiva, StatusDismissed,
	StatusAnnulled, StatusAppealFiled, StatusAppealAccepted}

// void reports whether a notice in status s carries no fine at all, whatever its dates say.
func (s Status) void() bool {
	return s == StatusDismissed || s == StatusAnnulled || s == StatusDefenceAccepted || s == StatusAppealAccepted
}

// decided reports whether status s follows a decision on the defence, when there was one.
func (s Status) decided() bool {
	return s == StatusDefenceRejected || s == StatusConfirmed || s == StatusPaid || s == StatusDividaAtiva
}

// The ways a notice reaches the offender (Art. 54).
const (
	ModeInPerson = "in_person" // handed over by the agent (with the offender's signature or the refusal noted)
	ModeMail     = "mail"      // by post: the date of receipt on the return receipt (AR)
	ModeEdital   = "edital"    // by edital in the official gazette or a newspaper (Art. 54, § 1º)
	// ModeElectronic: by electronic means the profile enables (notification.electronic); the
	// day the offender acknowledged it.
	ModeElectronic = "electronic"
)

// Notice is an auto de infração (or a notificação preliminar) as the penalty calculus needs it.
// Its dates are calendar dates, read in the profile's time zone; the time of day is ignored.
type Notice struct {
	ID       string `json:"id"` // the notice's number
	Vehicle  string `json:"vehicle,omitempty"`
	Licensee string `json:"licensee"`
	// Articles are the precepts the notice says were violated (e.g. "Art. 23"): one draft may
	// cite several articles fined by one penalty (Art. 27 and Art. 28, both Art. 45, VII).
	Articles []string `json:"articles"`
	Penalty  string   `json:"penalty"` // the article that fines it, e.g. "Art. 46, X"
	// Warning: the notice is a notificação preliminar (Art. 41, I), not a fine. It never makes
	// recidivism; it makes a later offence of a warning-first rule a repeat (Options.Repeat).
	Warning bool      `json:"warning,omitempty"`
	Offence time.Time `json:"offence"` // when the fact happened
	Issued  time.Time `json:"issued"`  // when the agent issued the notice
	Status  Status    `json:"status"`
	// Notified is the day the offender received the notice: the day of delivery by hand (also
	// when the offender refused to sign, Art. 54, § 2º), or the day of receipt by post.
	Notified time.Time `json:"notified,omitzero"`
	Mode     string    `json:"mode,omitempty"` // ModeInPerson, ModeMail or ModeEdital
	// Published is the day an edital was published (Art. 54, § 1º).
	Published     time.Time `json:"published,omitzero"`
	RefusedToSign bool      `json:"refused_to_sign,omitempty"` // noted by the agent (Art. 54, § 2º)
	DefenceFiled  time.Time `json:"defence_filed,omitzero"`
	Decided       time.Time `json:"decided,omitzero"` // the decision on the defence
	// DecisionNotified is the day the offender was notified of the decision: a fine whose
	// defence was rejected is final from then, not from the decision.
	DecisionNotified time.Time `json:"decision_notified,omitzero"`
	// Final is the day the fine became final when the record knows it directly (e.g. it was
	// paid on that day without a defence); when zero it is derived from the dates above.
	Final time.Time `json:"final,omitzero"`
	// Pending, when set, says (pt-BR) why the fine is not final: the administrative process
	// (monitor/cases) knows it and its word replaces the derivation from the dates.
	Pending string `json:"pending,omitempty"`
	// Suspension is the suspension of the licence applied on this notice (Art. 52), if any.
	Suspension *Suspension `json:"suspension,omitempty"`
}

// Suspension is a suspension of the licence that was applied (Art. 52).
type Suspension struct {
	From     time.Time `json:"from"` // the first day of the suspension
	Days     int       `json:"days"`
	NoticeID string    `json:"notice_id"` // the notice it was applied on
}

// SuspensionRecommendation recommends to the agent a suspension of the licence (Art. 52).
type SuspensionRecommendation struct {
	MinDays int    `json:"min_days"`
	MaxDays int    `json:"max_days"`
	Reason  string `json:"reason"` // pt-BR
}

// CassacaoRecommendation recommends to the agent the cassação of the licence (Art. 53, III):
// never automatic.
type CassacaoRecommendation struct {
	Reason      string       `json:"reason"` // pt-BR
	Suspensions []Suspension `json:"suspensions"`
}

// Result is the penalty of one offence, as the draft shows it.
type Result struct {
	Rules      []string `json:"rules"`
	Articles   []string `json:"articles"` // the precepts violated
	Penalty    string   `json:"penalty"`  // the article whose fine applies
	FiscalUnit string   `json:"fiscal_unit"`
	// Warning: no fine, a notificação preliminar (Art. 41, I): the first offence of a rule the
	// profile fines only on repeat. The amounts are then zero.
	Warning    bool    `json:"warning,omitempty"`
	BaseUFMP   float64 `json:"base_ufmp"`
	Recidivist bool    `json:"recidivist"`
	Factor     float64 `json:"factor"` // 1, or the profile's recidivism factor
	TotalUFMP  float64 `json:"total_ufmp"`
	// UnitValueBRL is the value of the fiscal unit in force on the day of issue, as the profile
	// writes it ("4.2000"), and UnitValueFrom the day it has been in force since.
	UnitValueBRL  string `json:"unit_value_brl,omitempty"`
	UnitValueFrom string `json:"unit_value_from,omitempty"`
	// TotalBRL is TotalUFMP × UnitValueBRL computed exactly and rounded half-up to the centavo,
	// with a point and two decimals ("3360.00").
	TotalBRL string `json:"total_brl"`
	// RelyingOn are the earlier notices that make the offence a recidivism, oldest first.
	RelyingOn []Notice `json:"relying_on,omitempty"`
	// RepeatOf are the earlier notices that make the offence of a warning-first rule a repeat.
	RepeatOf              []Notice                  `json:"repeat_of,omitempty"`
	SuspensionRecommended *SuspensionRecommendation `json:"suspension_recommended,omitempty"`
	CassacaoRecommended   *CassacaoRecommendation   `json:"cassacao_recommended,omitempty"`
	// Explanation are the sentences a person reads on the draft, in Portuguese.
	Explanation []string `json:"explanation"`
}

// Offence is the fact being fined: the facts of one draft, of one vehicle, that share one
// penalty (docs/penalty.md).
type Offence struct {
	Rules    []string  // the rule ids of the facts; all must share the penalty and the fine
	Licensee string    // the licensee responsible for the fine (Art. 48, § 2º)
	Date     time.Time // when the fact happened (the start of the first fact)
	Issue    time.Time // when the agent issues the notice
}

// Options are settings of the calculus the profile does not hold yet.
type Options struct {
	// Repeat gives, by rule id, the fine of a rule whose first offence is a notificação
	// preliminar (Art. 41, I; its rules.<id>.fine is 0) and whose repeat is fined: for Piúma,
	// route_deviation → Art. 47, 250 UFMP. Assessing a rule with fine 0 that is not here is an
	// error: the profile does not say what it costs.
	Repeat map[string]RepeatFine
}

// RepeatFine is the fine of a warning-first rule on repeat.
type RepeatFine struct {
	Penalty string  // e.g. "Art. 47"
	UFMP    float64 // e.g. 250
}

// Fine computes the penalty of an offence of one rule committed at offence by licensee and issued
// on issueDate, given the licensee's earlier notices (notices of other licensees in history are
// ignored). It is Assess with one rule and no Options.
func Fine(p *profile.Profile, rule string, offence time.Time, issueDate time.Time, history []Notice, licensee string) (Result, error) {
	return Assess(p, Offence{Rules: []string{rule}, Licensee: licensee, Date: offence, Issue: issueDate}, history, Options{})
}

// Assess computes the penalty of an offence given the earlier notices of its licensee:
//
//   - the fine of the rules' penalty in fiscal units (rules.<id>.fine);
//   - doubled (recidivism.factor) when the licensee had already been fined, before the date of
//     the fact, for the same precept (recidivism.same: article) or for any (any), counting the
//     earlier fines by recidivism.basis (Art. 48);
//   - in reais at the value of the fiscal unit in force on the day of issue (Art. 44);
//   - a suspension of suspension.min_days to max_days recommended on specific recidivism
//     (Art. 52), and the cassação recommended when more than cassacao.suspensions_more_than
//     suspensions were applied in the cassacao.within_months months up to the day of issue
//     (Art. 53, III).
//
// docs/penalty.md states each rule precisely.
func Assess(p *profile.Profile, o Offence, history []Notice, opt Options) (Result, error) {
	a, err := newAssessment(p, o)
	if err != nil {
		return Result{}, err
	}
	if err := a.penalty(); err != nil {
		return Result{}, err
	}
	if err := a.notices(history); err != nil {
		return Result{}, err
	}
	a.ex("Infração: %s (%s), punida pelo %s.", joinPT(a.res.Articles), a.first.Text, a.first.Penalty)
	if a.licensee == "" {
		a.ex("Prestador do serviço não identificado: não é possível verificar reincidência (Art. 48) nem suspensões anteriores (Art. 53, III).")
	}
	if a.res.BaseUFMP == 0 {
		warning, err := a.repeat(opt)
		if err != nil {
			return Result{}, err
		}
		if warning {
			a.res.CassacaoRecommended = cassacao(p, a.all, a.issueDay, a.ex)
			return a.res, nil
		}
	} else {
		a.ex("Multa prevista: %s %s (%s).", formatUFMP(a.res.BaseUFMP), a.unit, a.res.Penalty)
	}
	total, specific := a.recidivism()
	if err := a.inReais(total); err != nil {
		return Result{}, err
	}
	a.suspension(specific)
	a.res.CassacaoRecommended = cassacao(p, a.all, a.issueDay, a.ex)
	return a.res, nil
}

// assessment is the state of one Assess: the offence, its days, the licensee's notices and the
// result so far, whose Explanation ex appends to, step by step.
type assessment struct {
	p                    *profile.Profile
	o                    Offence
	loc                  *time.Location
	rec                  profile.Recidivism
	unit                 string // the fiscal unit's name
	offenceDay, issueDay time.Time
	first                profile.Rule // the profile's rule of o.Rules[0]
	licensee             string
	all, mine            []Notice // the licensee's notices; those of facts before this one, oldest first
	res                  Result
}

func (a *assessment) ex(format string, args ...any) {
	a.res.Explanation = append(a.res.Explanation, fmt.Sprintf(format, args...))
}

// newAssessment checks the offence and the parts of the profile the calculus reads.
func newAssessment(p *profile.Profile, o Offence) (*assessment, error) {
	if p == nil || p.Location() == nil {
		return nil, errors.New("penalty: profile not loaded (use profile.Load or profile.Parse)")
	}
	loc := p.Location()
	if len(o.Rules) == 0 {
		return nil, errors.New("penalty: offence without a rule")
	}
	if o.Date.IsZero() {
		return nil, errors.New("penalty: offence without a date")
	}
	if o.Issue.IsZero() {
		return nil, errors.New("penalty: offence without a date of issue")
	}
	offenceDay, issueDay := dayOf(o.Date, loc), dayOf(o.Issue, loc)
	if issueDay.Before(offenceDay) {
		return nil, fmt.Errorf("penalty: issued on %s, before the offence on %s",
			issueDay.Format(time.DateOnly), offenceDay.Format(time.DateOnly))
	}
	rec := p.Recidivism
	if rec.Basis != "confirmed" && rec.Basis != "issued" {
		return nil, fmt.Errorf("penalty: recidivism.basis: want confirmed or issued, got %q", rec.Basis)
	}
	if rec.Same != "article" && rec.Same != "any" {
		return nil, fmt.Errorf("penalty: recidivism.same: want article or any, got %q", rec.Same)
	}
	if !(rec.Factor > 0) {
		return nil, fmt.Errorf("penalty: recidivism.factor: must be > 0, got %v", rec.Factor)
	}
	if s := p.Suspension; s.MinDays <= 0 || s.MaxDays < s.MinDays {
		return nil, fmt.Errorf("penalty: suspension: want 0 < min_days ≤ max_days, got %d–%d", s.MinDays, s.MaxDays)
	}
	if c := p.Cassacao; c.WithinMonths <= 0 || c.MoreThan < 0 {
		return nil, fmt.Errorf("penalty: cassacao: want within_months > 0 and suspensions_more_than ≥ 0, got %d and %d",
			c.WithinMonths, c.MoreThan)
	}
	return &assessment{p: p, o: o, loc: loc, rec: rec, unit: p.FiscalUnit.Name, offenceDay: offenceDay, issueDay: issueDay,
		res: Result{FiscalUnit: p.FiscalUnit.Name, Factor: 1}}, nil
}

// penalty finds the one penalty the offence's rules share (Art. 41, § 3º: different penalties
// are fined apart) and the precepts they violate.
func (a *assessment) penalty() error {
	for i, id := range a.o.Rules {
		r, ok := a.p.Rules[id]
		switch {
		case !ok:
			return fmt.Errorf("penalty: rule %q is not in the profile", id)
		case !r.Infraction:
			return fmt.Errorf("penalty: rule %q is not an infraction (rules.%s.infraction)", id, id)
		case !(r.FineUFMP >= 0):
			return fmt.Errorf("penalty: rules.%s.fine: must be ≥ 0, got %v", id, r.FineUFMP)
		case i == 0:
			a.first = r
		case r.Penalty != a.first.Penalty || r.FineUFMP != a.first.FineUFMP:
			return fmt.Errorf("penalty: rules %q and %q have different penalties (%s, %v; %s, %v): fine them apart (Art. 41, § 3º)",
				a.o.Rules[0], id, a.first.Penalty, a.first.FineUFMP, r.Penalty, r.FineUFMP)
		}
		a.res.Rules = append(a.res.Rules, id)
		if !slices.ContainsFunc(a.res.Articles, func(s string) bool { return samePrecept(s, r.Article) }) {
			a.res.Articles = append(a.res.Articles, r.Article)
		}
	}
	a.res.Penalty, a.res.BaseUFMP = a.first.Penalty, a.first.FineUFMP
	return nil
}

// notices keeps the licensee's notices of history (none when the licensee is unknown), and
// those of facts before this one, oldest first.
func (a *assessment) notices(history []Notice) error {
	a.licensee = strings.TrimSpace(a.o.Licensee)
	for _, n := range history {
		if a.licensee == "" || strings.TrimSpace(n.Licensee) != a.licensee {
			continue
		}
		if err := n.check(); err != nil {
			return err
		}
		a.all = append(a.all, n)
		if !n.Offence.IsZero() && n.Offence.Before(a.o.Date) {
			a.mine = append(a.mine, n)
		}
	}
	slices.SortStableFunc(a.mine, func(x, y Notice) int {
		return cmp.Or(x.Offence.Compare(y.Offence), strings.Compare(x.ID, y.ID))
	})
	return nil
}

// repeat assesses a rule fined only on repeat (Art. 41, I): the first offence is a notificação
// preliminar (warning true: the result is complete but for the cassação), a repeat is fined
// with the repeat fine of opt.
func (a *assessment) repeat(opt Options) (warning bool, err error) {
	rule := a.o.Rules[0]
	rep, ok := opt.Repeat[rule]
	if !ok {
		return false, fmt.Errorf("penalty: rule %q has no fine (rules.%s.fine is 0) and no repeat fine in the options; the profile says: %q",
			rule, rule, a.first.Notice)
	}
	if !(rep.UFMP > 0) || strings.TrimSpace(rep.Penalty) == "" {
		return false, fmt.Errorf("penalty: repeat fine of rule %q: want a penalty and an amount > 0, got %q and %v",
			rule, rep.Penalty, rep.UFMP)
	}
	// A notificação preliminar counts once delivered before the new fact: the offender is
	// notified "mediante a entrega" (Art. 54), or by the edital's publication (§ 1º).
	for _, n := range a.mine {
		if n.Status.void() || !sharesPrecept(n.Articles, a.res.Articles) {
			continue
		}
		delivered := n.Notified
		if n.Mode == ModeEdital && !n.Published.IsZero() {
			delivered = n.Published
		}
		if delivered.IsZero() || !dayOf(delivered, a.loc).Before(a.offenceDay) {
			a.ex("Não considerado como repetição: o auto %s (fato de %s) não foi entregue ao autuado antes deste fato (Art. 54).",
				n.ID, dateBR(n.Offence, a.loc))
			continue
		}
		a.res.RepeatOf = append(a.res.RepeatOf, n)
	}
	if len(a.res.RepeatOf) == 0 {
		a.res.Warning, a.res.TotalBRL = true, "0.00"
		a.ex("Primeira ocorrência: notificação preliminar (Art. 41, I), sem multa; a repetição é punida com multa de %s %s (%s).",
			formatUFMP(rep.UFMP), a.unit, rep.Penalty)
		if a.first.Notice != "" {
			a.ex("Providência prevista no perfil: %s.", a.first.Notice)
		}
		return true, nil
	}
	a.res.Penalty, a.res.BaseUFMP = rep.Penalty, rep.UFMP
	a.ex("Repetição da infração já notificada anteriormente pelo mesmo preceito (%s): aplica-se a multa do %s, de %s %s.",
		noticeList(a.res.RepeatOf, a.loc), rep.Penalty, formatUFMP(rep.UFMP), a.unit)
	return false, nil
}

// recidivism applies Art. 48: the earlier fines that count make the fine the profile's factor
// times the base. It returns the total in fiscal units and the earlier fines for the same
// precept (specific recidivism, Art. 52).
func (a *assessment) recidivism() (total *big.Rat, specific []Notice) {
	rec, loc, offenceDay := a.rec, a.loc, a.offenceDay
	var grounds, reasons []string
	for _, n := range a.mine {
		same := sharesPrecept(n.Articles, a.res.Articles)
		if rec.Same == "article" && !same {
			continue
		}
		if n.Warning {
			if same {
				reasons = append(reasons, fmt.Sprintf("o auto %s é notificação preliminar (Art. 41, I), não multa", n.ID))
			}
			continue
		}
		event, what, ok := countsFrom(a.p, rec.Basis, n)
		if !ok {
			reasons = append(reasons, fmt.Sprintf("o auto %s (fato de %s) não conta: %s", n.ID, dateBR(n.Offence, loc), what))
			continue
		}
		if limit := offenceDay.AddDate(-rec.Window(), 0, 0); event.Before(limit) {
			reasons = append(reasons, fmt.Sprintf("o auto %s (fato de %s) não conta: %s, mais de %d anos antes deste fato (recidivism.window_years; Decreto nº 6.514/2008, art. 11, por analogia)",
				n.ID, dateBR(n.Offence, loc), what, rec.Window()))
			continue
		}
		if !event.Before(offenceDay) {
			reasons = append(reasons, fmt.Sprintf("o auto %s (fato de %s) não conta: %s, data não anterior à deste fato (%s)",
				n.ID, dateBR(n.Offence, loc), what, offenceDay.Format(dateLayoutBR)))
			continue
		}
		a.res.RelyingOn = append(a.res.RelyingOn, n)
		grounds = append(grounds, fmt.Sprintf("auto %s (fato de %s; %s)", n.ID, dateBR(n.Offence, loc), what))
		if same {
			specific = append(specific, n)
		}
	}
	basis := "multas definitivas — prazo de defesa esgotado sem defesa tempestiva, ou defesa indeferida — antes da data do fato"
	if rec.Basis == "issued" {
		basis = "autos de multa emitidos antes da data do fato, salvo os arquivados, anulados ou com defesa acolhida"
	}
	scope := "pelo mesmo preceito (" + joinPT(a.res.Articles) + ")"
	if rec.Same == "any" {
		scope = "por qualquer preceito desta lei"
	}
	total = ratFromFloat(a.res.BaseUFMP)
	if len(a.res.RelyingOn) > 0 {
		a.res.Recidivist, a.res.Factor = true, rec.Factor
		total.Mul(total, ratFromFloat(rec.Factor))
		a.ex("Reincidência (Art. 48, § 1º): o prestador %s já havia sido multado %s — %s. Contam %s.",
			a.licensee, scope, joinPT(grounds), basis)
		how := "aplicada em dobro (Art. 48)"
		if rec.Factor != 2 {
			how = "multiplicada pelo fator de reincidência do perfil (o Art. 48 diz em dobro)"
		}
		a.ex("Em caso de reincidência a multa é %s: %s × %s = %s %s.",
			how, formatUFMP(a.res.BaseUFMP), formatUFMP(rec.Factor), formatRat(total), a.unit)
	} else if a.licensee != "" {
		a.ex("Sem reincidência (Art. 48): nenhuma multa anterior do prestador %s %s que conte (contam %s).", a.licensee, scope, basis)
	}
	for _, r := range reasons {
		a.ex("Não considerado para reincidência: %s.", r)
	}
	a.res.TotalUFMP, _ = total.Float64()
	return total, specific
}

// inReais converts total fiscal units to reais at the value in force on the day of issue
// (Art. 44), exactly, rounded half-up to the centavo.
func (a *assessment) inReais(total *big.Rat) error {
	v, value, err := unitValue(a.p, a.issueDay)
	if err != nil {
		return err
	}
	a.res.UnitValueBRL, a.res.UnitValueFrom = v.BRL, v.From
	brl := new(big.Rat).Mul(total, value)
	cents := roundCents(brl)
	a.res.TotalBRL = formatCents(cents, false)
	from, _ := time.Parse(time.DateOnly, v.From)
	a.ex("Valor da %s vigente na data de emissão, %s: R$ %s, desde %s (Art. 44).",
		a.unit, a.issueDay.Format(dateLayoutBR), strings.Replace(v.BRL, ".", ",", 1), from.Format(dateLayoutBR))
	a.ex("Valor da multa: %s %s × R$ %s = %s (calculado exatamente e arredondado ao centavo, meio centavo para cima).",
		formatRat(total), a.unit, strings.Replace(v.BRL, ".", ",", 1), formatCents(cents, true))
	return nil
}

// suspension recommends a suspension of the licence on specific recidivism (Art. 52).
func (a *assessment) suspension(specific []Notice) {
	if len(specific) == 0 {
		return
	}
	s := a.p.Suspension
	a.res.SuspensionRecommended = &SuspensionRecommendation{MinDays: s.MinDays, MaxDays: s.MaxDays,
		Reason: fmt.Sprintf("Reincidência específica (Art. 52): o prestador %s já havia sido multado pelo mesmo preceito (%s) — %s. "+
			"Recomenda-se ao agente a suspensão da licença por %d a %d dias (Art. 52, parágrafo único); a decisão é da autoridade competente.",
			a.licensee, joinPT(a.res.Articles), noticeList(specific, a.loc), s.MinDays, s.MaxDays)}
	a.ex("%s", a.res.SuspensionRecommended.Reason)
}

// check reports a notice whose status or mode is not one this package knows.
func (n Notice) check() error {
	if !slices.Contains(statuses, n.Status) {
		return fmt.Errorf("penalty: notice %q: unknown status %q", n.ID, n.Status)
	}
	if n.Mode != "" && n.Mode != ModeInPerson && n.Mode != ModeMail && n.Mode != ModeEdital && n.Mode != ModeElectronic {
		return fmt.Errorf("penalty: notice %q: unknown mode %q", n.ID, n.Mode)
	}
	return nil
}

// countsFrom returns the day from the end of which an earlier notice counts for recidivism under
// basis, with a pt-BR description of that event; or false and why it cannot count.
func countsFrom(p *profile.Profile, basis string, n Notice) (day time.Time, what string, ok bool) {
	loc := p.Location()
	switch n.Status {
	case StatusDismissed:
		return time.Time{}, "foi arquivado", false
	case StatusAnnulled:
		return time.Time{}, "foi anulado", false
	case StatusDefenceAccepted:
		return time.Time{}, "a defesa foi acolhida", false
	case StatusAppealAccepted:
		return time.Time{}, "o recurso foi provido", false
	}
	if basis == "issued" {
		if n.Issued.IsZero() {
			return time.Time{}, "data de emissão desconhecida", false
		}
		return dayOf(n.Issued, loc), "emitido em " + dateBR(n.Issued, loc), true
	}
	// basis confirmed: the fine must be final.
	if n.Status == StatusIssued {
		return time.Time{}, "emitido e ainda não notificado ao autuado: a multa não é definitiva", false
	}
	if !n.Final.IsZero() {
		return dayOf(n.Final, loc), "multa definitiva em " + dateBR(n.Final, loc), true
	}
	if n.Pending != "" {
		return time.Time{}, n.Pending, false
	}
	deadline, _ := n.DefenceDeadline(p)
	filed := !n.DefenceFiled.IsZero()
	hasDefence := filed || n.Status == StatusDefenceFiled || n.Status == StatusDefenceRejected
	late := filed && !deadline.IsZero() && !DefenceTimely(deadline, n.DefenceFiled)
	if hasDefence && !late {
		// A timely defence (or one whose timeliness cannot be known) suspends the fine until
		// the decision (Art. 57): the fine is final when the defence is rejected.
		if n.Status.decided() {
			if n.Decided.IsZero() {
				return time.Time{}, "defesa decidida sem data de decisão registrada", false
			}
			if n.DecisionNotified.IsZero() {
				return time.Time{}, "defesa indeferida em " + dateBR(n.Decided, loc) +
					", decisão ainda não notificada ao autuado: a multa não é definitiva", false
			}
			return dayOf(n.DecisionNotified, loc), "defesa indeferida em " + dateBR(n.Decided, loc) +
				", decisão notificada em " + dateBR(n.DecisionNotified, loc), true
		}
		if filed {
			return time.Time{}, "defesa apresentada em " + dateBR(n.DefenceFiled, loc) +
				", pendente de decisão: a exigibilidade da multa está suspensa (Art. 57)", false
		}
		return time.Time{}, "defesa pendente de decisão (Art. 57)", false
	}
	if deadline.IsZero() {
		return time.Time{}, "data da notificação desconhecida: não se sabe quando a multa se tornou definitiva", false
	}
	what = "prazo de defesa esgotado em " + dateBR(deadline, loc) + " sem defesa"
	if late {
		what = "prazo de defesa esgotado em " + dateBR(deadline, loc) + " (defesa apresentada fora do prazo, em " +
			dateBR(n.DefenceFiled, loc) + ")"
	}
	return dayOf(deadline, loc), what, true
}

// cassacao recommends the cassação when more than cassacao.suspensions_more_than suspensions
// were applied (their first day) within the cassacao.within_months months up to issueDay
// (Art. 53, III).
func cassacao(p *profile.Profile, notices []Notice, issueDay time.Time, ex func(string, ...any)) *CassacaoRecommendation {
	loc, c := p.Location(), p.Cassacao
	since := issueDay.AddDate(0, -c.WithinMonths, 0)
	var applied []Suspension
	for _, n := range notices {
		if n.Suspension == nil || n.Suspension.From.IsZero() || n.Status.void() {
			continue
		}
		s := *n.Suspension
		if s.NoticeID == "" {
			s.NoticeID = n.ID
		}
		if d := dayOf(s.From, loc); d.After(since) && !d.After(issueDay) {
			applied = append(applied, s)
		}
	}
	if len(applied) <= c.MoreThan {
		return nil
	}
	slices.SortStableFunc(applied, func(a, b Suspension) int { return a.From.Compare(b.From) })
	var list []string
	for _, s := range applied {
		list = append(list, fmt.Sprintf("a partir de %s por %d dias (auto %s)", dateBR(s.From, loc), s.Days, s.NoticeID))
	}
	r := &CassacaoRecommendation{Suspensions: applied, Reason: fmt.Sprintf(
		"O prestador teve a atividade suspensa %d vezes nos %d meses até %s — %s; mais de %d vez(es) em %d meses dá lugar à cassação da licença (Art. 53, III). "+
			"Recomendação ao agente: a cassação não é automática.",
		len(applied), c.WithinMonths, issueDay.Format(dateLayoutBR), strings.Join(list, "; "), c.MoreThan, c.WithinMonths)}
	ex("%s", r.Reason)
	return r
}

// unitValue returns the value of the fiscal unit in force on day: the one with the latest
// from on or before it.
func unitValue(p *profile.Profile, day time.Time) (profile.UnitValue, *big.Rat, error) {
	d := day.Format(time.DateOnly)
	best := -1
	for i, v := range p.FiscalUnit.Values {
		if _, err := time.Parse(time.DateOnly, v.From); err != nil {
			return profile.UnitValue{}, nil, fmt.Errorf("penalty: fiscal_unit.values[%d].from: want YYYY-MM-DD, got %q", i, v.From)
		}
		for j := range i {
			if p.FiscalUnit.Values[j].From == v.From {
				return profile.UnitValue{}, nil, fmt.Errorf("penalty: fiscal_unit.values[%d].from: %s is also the date of fiscal_unit.values[%d]", i, v.From, j)
			}
		}
		if v.From <= d && (best < 0 || v.From > p.FiscalUnit.Values[best].From) {
			best = i
		}
	}
	if best < 0 {
		return profile.UnitValue{}, nil, fmt.Errorf("penalty: no value of the %s in force on %s (fiscal_unit.values)", p.FiscalUnit.Name, d)
	}
	v := p.FiscalUnit.Values[best]
	r, err := parseDecimal(v.BRL)
	if err != nil || r.Sign() <= 0 {
		return profile.UnitValue{}, nil, fmt.Errorf("penalty: fiscal_unit.values[%d].brl: want a positive decimal such as 4.2000, got %q", best, v.BRL)
	}
	return v, r, nil
}

// samePrecept reports whether two citations name the same precept, ignoring case, spaces,
// dots and ordinal signs: "Art. 46, X" = "art 46,X"; "Art. 22, III" ≠ "Art. 22".
func samePrecept(a, b string) bool { return preceptKey(a) == preceptKey(b) }

func preceptKey(s string) string {
	return strings.Map(func(r rune) rune {
		switch r {
		case ' ', '\t', '.', 'º', '°', 'ª':
			return -1
		}
		return r
	}, strings.ToLower(s))
}

// sharesPrecept reports whether two lists of citations have a precept in common.
func sharesPrecept(a, b []string) bool {
	for _, x := range a {
		if slices.ContainsFunc(b, func(y string) bool { return samePrecept(x, y) }) {
			return true
		}
	}
	return false
}

// noticeList describes notices in Portuguese: "auto 12/2026 (fato de 01/10/2026)".
func noticeList(ns []Notice, loc *time.Location) string {
	var s []string
	for _, n := range ns {
		s = append(s, fmt.Sprintf("auto %s (fato de %s)", n.ID, dateBR(n.Offence, loc)))
	}
	return joinPT(s)
}

// joinPT joins a list the Portuguese way: "a", "a e b", "a, b e c".
func joinPT(s []string) string {
	if len(s) <= 1 {
		return strings.Join(s, "")
	}
	return strings.Join(s[:len(s)-1], ", ") + " e " + s[len(s)-1]
}
