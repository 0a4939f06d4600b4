package penalty

import (
	"fmt"
	"time"

	"github.com/trenzinho/trenzinho/profile"
)

// DefenceDeadline returns the last day of the period to file a defence (Art. 55), at 00:00 in
// the profile's time zone, and a pt-BR sentence that says how it was counted. It counts
// defence.days calendar days from the day the notice was received (notified), or for a notice by
// edital from its publication when defence.edital_from_publication is set (Art. 54, § 1º); the
// day of receipt is not counted when defence.exclude_receipt_day is set; a last day that is not
// a business day (a Saturday, a Sunday or a holiday of the profile) moves to the next business
// day when defence.next_business_day is set. mode is ModeInPerson, ModeMail or ModeEdital.
//
// It returns the zero time, and says why, when the deadline cannot be computed: an unknown mode,
// a missing date, or a profile not loaded through profile.Parse.
func DefenceDeadline(p *profile.Profile, notified time.Time, mode string, publication time.Time) (deadline time.Time, explanation string) {
	if p == nil || p.Location() == nil {
		return time.Time{}, "Perfil legal não carregado: prazo de defesa não calculado."
	}
	loc, d := p.Location(), p.Defence
	if d.Days <= 0 {
		return time.Time{}, fmt.Sprintf("Prazo de defesa do perfil inválido (%d dias): prazo não calculado.", d.Days)
	}
	start, from := notified, ""
	switch mode {
	case ModeInPerson:
		from = "da entrega do auto em mãos"
	case ModeMail:
		from = "do recebimento do auto pelo correio"
	case ModeElectronic:
		from = "da ciência da notificação eletrônica"
	case ModeEdital:
		from = "da notificação por edital"
		if d.EditalFromPublication {
			start, from = publication, "da publicação do edital"
		}
	default:
		return time.Time{}, fmt.Sprintf("Forma de notificação desconhecida (%q): prazo de defesa não calculado.", mode)
	}
	if start.IsZero() {
		return time.Time{}, "Data " + from + " desconhecida: prazo de defesa não calculado."
	}
	first := dayOf(start, loc)
	counting := "incluído o dia do recebimento"
	last := first.AddDate(0, 0, d.Days-1)
	if d.ExcludeReceiptDay {
		counting = "excluído o dia do recebimento"
		last = first.AddDate(0, 0, d.Days)
	}
	explanation = fmt.Sprintf("Prazo de defesa (Art. 55): %d dias corridos contados %s em %s, %s; o último dia é %s.",
		d.Days, from, first.Format(dateLayoutBR), counting, dayBR(p, last))
	if d.NextBusinessDay && !businessDay(p, last) {
		for !businessDay(p, last) {
			last = last.AddDate(0, 0, 1)
		}
		explanation += fmt.Sprintf(" Não sendo dia útil, o prazo termina no primeiro dia útil seguinte: %s.", dayBR(p, last))
	}
	return time.Date(last.Year(), last.Month(), last.Day(), 0, 0, 0, 0, loc), explanation
}

// DefenceDeadline returns the defence deadline of n (see DefenceDeadline), with a sentence on
// how the notice was delivered (Art. 54).
func (n Notice) DefenceDeadline(p *profile.Profile) (time.Time, string) {
	deadline, explanation := DefenceDeadline(p, n.Notified, n.Mode, n.Published)
	if n.RefusedToSign && n.Mode == ModeInPerson {
		explanation = "O autuado recusou-se a apor o ciente; o agente fiscal registrou a recusa no documento " +
			"e a notificação vale desde a entrega (Art. 54, § 2º). " + explanation
	}
	return deadline, explanation
}

// DefenceTimely reports whether a defence filed at filed is within a deadline returned by
// DefenceDeadline: filed on or before the deadline's day, in the deadline's time zone. A zero
// deadline or filing date is never timely.
func DefenceTimely(deadline, filed time.Time) bool {
	if deadline.IsZero() || filed.IsZero() {
		return false
	}
	loc := deadline.Location()
	return !dayOf(filed, loc).After(dayOf(deadline, loc))
}

// FineSuspended reports whether, on the day on, the fine of n is suspended by a defence filed
// within the deadline (Art. 57): the defence was filed in time, on or before on, and not decided
// by then. The sentence says why, in Portuguese.
func FineSuspended(p *profile.Profile, n Notice, on time.Time) (bool, string) {
	if p == nil || p.Location() == nil {
		return false, "Perfil legal não carregado."
	}
	loc := p.Location()
	if n.Status.void() {
		return false, "Auto sem multa (arquivado, anulado ou com defesa acolhida)."
	}
	if n.DefenceFiled.IsZero() || dayOf(n.DefenceFiled, loc).After(dayOf(on, loc)) {
		return false, "Nenhuma defesa apresentada até " + dateBR(on, loc) + "."
	}
	deadline, why := n.DefenceDeadline(p)
	if deadline.IsZero() {
		return false, why
	}
	if !DefenceTimely(deadline, n.DefenceFiled) {
		return false, fmt.Sprintf("Defesa apresentada em %s, após o prazo (%s): não suspende a exigibilidade da multa (Art. 57).",
			dateBR(n.DefenceFiled, loc), dateBR(deadline, loc))
	}
	if !n.Decided.IsZero() && !dayOf(n.Decided, loc).After(dayOf(on, loc)) {
		return false, "Defesa decidida em " + dateBR(n.Decided, loc) + "."
	}
	if n.Decided.IsZero() && n.Status.decided() {
		return false, "Defesa decidida (data da decisão não registrada)."
	}
	return true, fmt.Sprintf("Defesa apresentada no prazo, em %s: a exigibilidade da multa está suspensa até a decisão da autoridade competente (Art. 57).",
		dateBR(n.DefenceFiled, loc))
}

// businessDay reports whether the calendar day d (see dayOf) is a business day
// (profile.BusinessDay: Monday to Friday, no holiday, no ponto facultativo).
func businessDay(p *profile.Profile, d time.Time) bool {
	ok, _ := p.BusinessDay(d)
	return ok
}

// dayBR writes a calendar day with its weekday, and the holiday when it is one:
// "20/11/2026 (sexta-feira, feriado: Dia Nacional de Zumbi e da Consciência Negra)".
func dayBR(p *profile.Profile, d time.Time) string {
	s := d.Format(dateLayoutBR) + " (" + weekdaysBR[d.Weekday()]
	if ok, why := p.BusinessDay(d); !ok && why != "sábado" && why != "domingo" {
		s += ", " + why
	}
	return s + ")"
}

var weekdaysBR = [...]string{"domingo", "segunda-feira", "terça-feira", "quarta-feira", "quinta-feira", "sexta-feira", "sábado"}

const dateLayoutBR = "02/01/2006"

// dayOf returns the calendar day of t in loc, as 00:00 UTC of that date: calendar arithmetic
// and comparisons on it are free of the zone's offsets.
func dayOf(t time.Time, loc *time.Location) time.Time {
	y, m, d := t.In(loc).Date()
	return time.Date(y, m, d, 0, 0, 0, 0, time.UTC)
}

// dateBR writes the local date of t as dd/mm/aaaa.
func dateBR(t time.Time, loc *time.Location) string { return dayOf(t, loc).Format(dateLayoutBR) }
