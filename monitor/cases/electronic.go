package cases

import (
	"context"
	"fmt"
	"slices"
	"time"

	"github.com/trenzinho/trenzinho/monitor/penalty"
	"github.com/trenzinho/trenzinho/profile"
	"github.com/trenzinho/trenzinho/registry"
)

// The electronic notice in the licensee's portal (docs/process.md, "Electronic notice"): where
// the profile enables it (notification.electronic, with the act that adopts it), an issued auto
// is available in the portal from its issue for notification.electronic_days. Opening it there
// delivers nothing: the ciência is an act of its own (Office.Ciencia), an explicit "Declaro
// ciência" by a representative the licensee named in its term of adhesion to the electronic
// notice (Adhesion), after the auto's PDF was served to that representative (PDFServing). Not
// declared within the window, the process falls back to the other means (in person, by post,
// then edital) and a declaration after that delivers nothing.

// Reasons an electronic ciência is refused (Office.Ciencia).
const (
	// ReasonNoElectronicAdhesion: the licensee has no term of adhesion to the electronic
	// notice on file, or signed it after today.
	ReasonNoElectronicAdhesion = "no_electronic_adhesion"
	// ReasonNotARepresentative: the user is not a representative the term names.
	ReasonNotARepresentative = "not_a_representative"
	// ReasonAlreadyDelivered: the auto was delivered already (by any means).
	ReasonAlreadyDelivered = "already_delivered"
	// ReasonNotAwaitingCiencia: the auto does not wait for an electronic ciência (the profile
	// does not adopt it, the window passed, or the case is not an issued auto).
	ReasonNotAwaitingCiencia = "not_awaiting_ciencia"
	// ReasonPDFNotServed: the representative has not downloaded the auto's PDF in the portal.
	ReasonPDFNotServed = "pdf_not_served"
)

// Adhesion is a licensee's term of adhesion to the electronic notice, as the registry records
// it: the term, the day it was signed and the portal users it names as the licensee's
// representatives for the ciência.
type Adhesion struct {
	Term            string
	SignedOn        string // YYYY-MM-DD
	Representatives []string
}

// Represents reports whether the term names user.
func (a Adhesion) Represents(user string) bool {
	return user != "" && slices.Contains(a.Representatives, user)
}

// AdhesionOnFile finds the licensee's term of adhesion to the electronic notice; false when it
// has none.
type AdhesionOnFile func(ctx context.Context, licensee string) (Adhesion, bool)

// RegistryAdhesions finds the terms of adhesion in the registry s (its electronic_adhesion).
func RegistryAdhesions(s *registry.Store) AdhesionOnFile {
	return func(_ context.Context, id string) (Adhesion, bool) {
		l, ok := s.Licensee(id)
		if !ok || l.ElectronicAdhesion == nil {
			return Adhesion{}, false
		}
		a := l.ElectronicAdhesion
		return Adhesion{Term: a.Term, SignedOn: a.SignedOn.String(), Representatives: slices.Clone(a.Representatives)}, true
	}
}

// Opening is the first opening of an auto in the portal. It is recorded, and delivers nothing.
type Opening struct {
	At         time.Time `json:"opened_at"`
	User       string    `json:"user"`
	RemoteAddr string    `json:"remote_addr"`
}

// PDFServing is one download of an auto's PDF in the portal: who, when, from where, and the
// SHA-256 of the bytes served (the document the ciência refers to).
type PDFServing struct {
	At         time.Time `json:"served_at"`
	User       string    `json:"user"`
	RemoteAddr string    `json:"remote_addr"`
	SHA256     string    `json:"sha256"` // hex
}

// Electronic is where an auto's electronic notice stands.
type Electronic struct {
	// Act is the legal act that adopts the electronic notice.
	Act string `json:"act"`
	// Available is the first day the auto is in the portal (its issue) and Until the last day
	// a ciência declared there delivers it.
	Available string `json:"available"`
	Until     string `json:"until"`
	// Opening is the first opening, if any.
	Opening *Opening `json:"opening,omitempty"`
	// Fallback: no ciência within the window (and not delivered otherwise): the auto is to be
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
	case c.Mode == penalty.ModeElectronic && c.Notified != "":
		e.Text = fmt.Sprintf("Ciência da notificação eletrônica (%s) declarada no portal em %s, por %s: o prazo de defesa corre desta data.",
			e.Act, br(c.Notified), c.cienciaBy())
	case c.Notified != "" || c.Published != "":
		e.Text = "Auto notificado por outro meio (" + modeText(c.Mode) + "); a notificação eletrônica não foi utilizada."
	case today > until:
		e.Fallback = true
		e.Text = fmt.Sprintf("Notificação eletrônica sem ciência até %s (%d dias de disponibilidade no portal): notificar por outro meio (em mãos ou via postal com AR; edital após as tentativas frustradas, Art. 54).",
			br(until), p.Notification.ElectronicWindow())
	default:
		e.Text = fmt.Sprintf("Auto disponível no portal do permissionário desde %s (%s); até %s, o representante indicado no termo de adesão declara ciência no portal, depois de baixar o PDF do auto. Abrir o auto não é ciência.",
			br(available), e.Act, br(until))
	}
	return e, true
}

// cienciaBy is the user who declared the electronic ciência, from its event.
func (c *Case) cienciaBy() string {
	for i := len(c.Events) - 1; i >= 0; i-- {
		if e := c.Events[i]; e.Action == ActionNotify {
			return e.User
		}
	}
	return "usuário não registrado"
}

// AwaitsCiencia reports whether a ciência declared at now delivers the case: the profile
// enables the electronic notice, the case is issued and not delivered yet, and now is within
// the window.
func (c *Case) AwaitsCiencia(p *profile.Profile, now time.Time) bool {
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
