package profile

import (
	"fmt"
	"strings"
)

// HolidaysConfirmation records that the municipal holidays (holidays.fixed, .easter and .dates
// of scope municipal) and the pontos facultativos (holidays.closed_days) of one year are, as
// listed, all there are: who confirmed it and the act (the municipal law or decree, or the
// calendar published by the Prefeitura) it rests on. The deadlines an auto states are counted in
// business days of that calendar (BusinessDay): a day missing from it would end a deadline on a
// day the office was closed, against the accused, so no auto is issued while its year is not
// confirmed (issue refusal holidays_unconfirmed).
type HolidaysConfirmation struct {
	Year int    `yaml:"year"`
	By   string `yaml:"by"`
	Act  string `yaml:"act"`
}

// HolidaysConfirmed reports whether the municipal holidays and closed days of year are confirmed
// (holidays.confirmed).
func (p *Profile) HolidaysConfirmed(year int) bool {
	for _, c := range p.Holidays.Confirmed {
		if c.Year == year {
			return true
		}
	}
	return false
}

// validateHolidaysConfirmed checks holidays.confirmed.
func (p *Profile) validateHolidaysConfirmed() []error {
	var errs []error
	seen := map[int]bool{}
	for i, c := range p.Holidays.Confirmed {
		key := fmt.Sprintf("holidays.confirmed[%d]", i)
		switch {
		case c.Year < 2000 || c.Year > 2100:
			errs = append(errs, fmt.Errorf("%s.year: want a year such as 2026, got %d", key, c.Year))
		case seen[c.Year]:
			errs = append(errs, fmt.Errorf("%s.year: %d is confirmed in an earlier entry", key, c.Year))
		}
		seen[c.Year] = true
		if strings.TrimSpace(c.By) == "" || strings.TrimSpace(c.Act) == "" {
			errs = append(errs, fmt.Errorf("%s: by (who confirmed) and act (what it rests on) are required", key))
		}
	}
	return errs
}

// holidaysWarning is the warning of a profile that confirms the municipal holidays of no year.
func (p *Profile) holidaysWarning() (Warning, bool) {
	if len(p.Holidays.Confirmed) > 0 {
		return Warning{}, false
	}
	return Warning{
		Text:        "feriados municipais e pontos facultativos de nenhum ano confirmados (holidays.confirmed): nenhum auto pode ser emitido",
		Blocks:      "A emissão de todo auto de infração (recusa holidays_unconfirmed): os prazos que o auto declara são contados em dias úteis do calendário municipal, e um feriado ou ponto facultativo que faltasse faria um prazo vencer num dia sem expediente.",
		BlocksIssue: true,
		Keys:        []string{"holidays.confirmed", "holidays.dates", "holidays.closed_days"},
	}, true
}
