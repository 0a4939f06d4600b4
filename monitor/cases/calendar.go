package cases

import (
	"fmt"
	"strconv"
	"time"

	"github.com/trenzinho/trenzinho/profile"
)

// ReasonHolidaysUnconfirmed: the municipal holidays and pontos facultativos of a year the auto's
// deadlines fall in are not confirmed complete (profile holidays.confirmed): the defence and
// payment deadlines count business days of that calendar (Lei nº 9.784/1999, art. 66, § 1º).
const ReasonHolidaysUnconfirmed = "holidays_unconfirmed"

// deliveryAllowance is how long after the issue the notice is taken to reach the accused at
// the latest (a registered letter and its AR) when choosing the years the deadlines fall in.
const deliveryAllowance = 30 * 24 * time.Hour

// unconfirmedDeadlineYears are the years, among those the auto's defence deadline may fall in,
// whose holidays the profile does not confirm: the year of the issue, and the next when the
// defence period counted from a delivery within deliveryAllowance may end in it.
func unconfirmedDeadlineYears(p *profile.Profile, issue time.Time) []int {
	local := issue.In(p.Location())
	last := local.Add(deliveryAllowance).AddDate(0, 0, p.Defence.Days+1)
	var out []int
	for y := local.Year(); y <= last.Year(); y++ {
		if !p.HolidaysConfirmed(y) {
			out = append(out, y)
		}
	}
	return out
}

// holidaysBlocker is the reason against an issue while a year its deadlines fall in has its
// holidays unconfirmed.
func holidaysBlocker(years []int) (Reason, bool) {
	if len(years) == 0 {
		return Reason{}, false
	}
	ys := make([]string, len(years))
	for i, y := range years {
		ys[i] = strconv.Itoa(y)
	}
	return Reason{ReasonHolidaysUnconfirmed, fmt.Sprintf("Os feriados municipais e pontos facultativos de %s não estão confirmados no perfil legal (holidays.confirmed): "+
		"os prazos de defesa e de pagamento que o auto declara são contados em dias úteis desse calendário.", join(ys))}, true
}
