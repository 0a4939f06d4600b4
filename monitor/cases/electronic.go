package cases

import (
	"fmt"
	"time"

	"github.com/trenzinho/trenzinho/monitor/penalty"
	"github.com/trenzinho/trenzinho/profile"
)

// The electronic notice in the licensee's portal (docs/process.md, "Electronic notice"): where
// the profile enables it (notification.electronic, with the act that adopts it), an issued auto
// is available in the portal from its issue; the first opening by the licensee's user within
// notification.electronic_days is the ciência that delivers it (notify, mode electronic, on the
// day of the opening); not opened by then, the process falls back to the other means (in
// person, by post, then edital) and an opening after that delivers nothing.

// Opening is the first opening of an auto in the portal.
type Opening struct {
	At         time.Time `json:"opened_at"`
	User       string    `json:"user"`
	RemoteAddr string    `json:"remote_addr"`
	// Counted: the opening was the ciência that delivered the auto.
	Counted bool `json:"counted"`
}

// Electronic is where an auto's electronic notice stands.
type Electronic struct {
	// Act is the legal act that adopts the electronic notice.
	Act string `json:"act"`
	// Available is the first day the auto is in the portal (its issue) and Until the last day
	// its opening counts as ciência.
	Available string `json:"available"`
	Until     string `json:"until"`
	// Opening is the first opening, if any.
	Opening *Opening `json:"opening,omitempty"`
	// Fallback: not opened within the window (and not delivered otherwise): the auto is to be
	// delivered by the other means.
	Fallback bool `json:"fallback"`
	// Text says it in Portuguese.
	Text string `json:"text"`
}

// ElectronicNotice is where the electronic notice of the case stands at now, given its first
// opening in the portal (nil: not opened); ok false when the profile does not enable it or the
// case is not one the portal notifies (imported).
func (c *Case) ElectronicNotice(p *profile.Profile, opening *Opening, now time.Time) (Electronic, bool) {
	if !p.Notification.Electronic || c.Imported() || c.Issued.IsZero() {
		return Electronic{}, false
	}
	loc := p.Location()
	available := DayOf(c.Issued, loc)
	until := noonOf(available, loc).AddDate(0, 0, p.Notification.ElectronicWindow()).Format(time.DateOnly)
	e := Electronic{Act: p.Notification.ElectronicAct, Available: available, Until: until, Opening: opening}
	today := DayOf(now, loc)
	switch {
	case opening != nil && opening.Counted:
		e.Text = fmt.Sprintf("Ciência da notificação eletrônica (%s) em %s, pelo usuário %s: o prazo de defesa corre desta data.",
			e.Act, opening.At.In(loc).Format("02/01/2006 15:04:05"), opening.User)
	case c.Notified != "" || c.Published != "":
		e.Text = "Auto notificado por outro meio (" + modeText(c.Mode) + "); a notificação eletrônica não foi utilizada."
	case opening != nil || today > until:
		e.Fallback = true
		e.Text = fmt.Sprintf("Notificação eletrônica sem ciência até %s (%d dias de disponibilidade no portal): notificar por outro meio (em mãos ou via postal com AR; edital após as tentativas frustradas, Art. 54).",
			br(until), p.Notification.ElectronicWindow())
	default:
		e.Text = fmt.Sprintf("Auto disponível no portal do permissionário desde %s (%s); a primeira abertura até %s vale como ciência.",
			br(available), e.Act, br(until))
	}
	return e, true
}

// OpeningCounts reports whether an opening at now delivers the case: the profile enables the
// electronic notice, the case is issued and not delivered yet, and now is within the window.
func (c *Case) OpeningCounts(p *profile.Profile, now time.Time) bool {
	e, ok := c.ElectronicNotice(p, nil, now)
	return ok && c.State == penalty.StatusIssued && c.Notified == "" && c.Published == "" && !e.Fallback &&
		DayOf(now, p.Location()) >= e.Available
}

func modeText(mode string) string {
	switch mode {
	case penalty.ModeInPerson:
		return "em mãos"
	case penalty.ModeMail:
		return "via postal com AR"
	case penalty.ModeEdital:
		return "edital"
	case penalty.ModeElectronic:
		return "meio eletrônico"
	}
	return mode
}
