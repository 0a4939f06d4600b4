package profile

import (
	"fmt"
	"time"
)

// ClosedDay is a day without expediente in the municipal offices though not a holiday: a ponto
// facultativo decreed by the Executive (Carnaval, Corpus Christi, a bridge day), by date, with
// the act that decrees it. A deadline does not end on one (Lei nº 9.784/1999, art. 66, § 1º:
// "considera-se prorrogado o prazo até o primeiro dia útil seguinte se o vencimento cair em dia
// em que não houver expediente").
type ClosedDay struct {
	Date string `yaml:"date"` // YYYY-MM-DD
	Name string `yaml:"name"`
	Act  string `yaml:"act"` // e.g. "Decreto nº 1.234/2026"
}

// BusinessDay reports whether the calendar day of day (its year, month and day, whatever its
// location) is a business day of the municipality: Monday to Friday, not a holiday of the
// profile and not a closed day (holidays.closed_days). Every deadline counts with it; when it is
// not, why says why in Portuguese ("sábado", "feriado: Finados", "ponto facultativo: Carnaval").
func (p *Profile) BusinessDay(day time.Time) (ok bool, why string) {
	noon := time.Date(day.Year(), day.Month(), day.Day(), 12, 0, 0, 0, p.loc)
	switch day.Weekday() {
	case time.Saturday:
		return false, "sábado"
	case time.Sunday:
		return false, "domingo"
	}
	if name, holiday := p.Holiday(noon); holiday {
		return false, "feriado: " + name
	}
	date := noon.Format(time.DateOnly)
	for _, c := range p.Holidays.ClosedDays {
		if c.Date == date {
			return false, "ponto facultativo: " + c.Name
		}
	}
	return true, ""
}

// validateClosedDays checks holidays.closed_days.
func (p *Profile) validateClosedDays() []error {
	var errs []error
	for i, c := range p.Holidays.ClosedDays {
		key := fmt.Sprintf("holidays.closed_days[%d]", i)
		if _, err := time.Parse(time.DateOnly, c.Date); err != nil {
			errs = append(errs, fmt.Errorf("%s.date: want YYYY-MM-DD, got %q", key, c.Date))
		}
		if c.Name == "" || c.Act == "" {
			errs = append(errs, fmt.Errorf("%s: name and act (the decree of the ponto facultativo) are required", key))
		}
	}
	return errs
}
