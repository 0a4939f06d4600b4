// Package notice renders a draft of an auto de infração as an A4 PDF in Portuguese: the
// municipality and fiscal organ, the legal basis, the licensee, vehicle and driver, the date,
// time and place (the nearest street and landmark the draft recorded from the street extract,
// approximate, and the coordinates), each fact with its measured values, the measuring
// devices, a mini-map of the track (over base-map tiles when Input.Tiles is set, else a vector
// sketch) and a chart of the readings against the limit, the fine, the defence deadline, the
// fields the agent fills in, the draft's warnings, and the evidence hash and signature that
// `monitor verify` checks.
//
// The package renders plain data: the caller reads the decision, the penalty calculus and the
// agent from wherever it keeps cases (monitor serve reads the store) and passes them in Input.
//
// The document is drawn with fpdf's core fonts (no font files at run time): text is
// translated to cp1252, which holds every letter of Portuguese. While the case is a draft the
// document is titled "AUTO DE INFRAÇÃO — MINUTA", every page says "MINUTA — NÃO É AUTO DE
// INFRAÇÃO", and the agent's warnings are shown; the issued auto states only the auto.
package notice

import (
	"errors"
	"fmt"
	"io"
	"time"

	"github.com/trenzinho/trenzinho/monitor/drafts"
	"github.com/trenzinho/trenzinho/profile"
)

// Input is everything a notice shows. Sealed and Profile are required; Bundle is decoded (and
// verified) from Sealed when nil. Every other field is optional: what is not known is printed
// as a blank to fill in or as "não cadastrado", never guessed.
type Input struct {
	Sealed  drafts.Sealed
	Bundle  *drafts.Bundle
	Profile *profile.Profile

	// Decision is what became of the draft; zero: a draft waiting for an agent.
	Decision Decision

	// Registry details, when the vehicle is registered.
	Licensee *Licensee
	Vehicle  *Vehicle
	Driver   *Driver
	Devices  []Device
	// Verified are the measuring instruments with the verification the issue found valid on
	// the fact's date (the registry's record at the issue); each replaces the device of the
	// same kind and serial in Devices.
	Verified []Device

	// Penalty is the fine as calculated when the notice is issued (Art. 44, 48, 52, 53); nil:
	// the draft's base fine is printed and the calculation is left to the issue.
	Penalty *Penalty

	// Tiles is the base map of the mini-map; nil: the vector sketch alone.
	Tiles *Tiles

	// Addenda is how many addenda (data that arrived after the draft was made) the case has.
	Addenda int

	// Public is the public verification page of an issued auto (QR code and short URL in the
	// integrity section); nil: none printed. Ignored for a draft not issued.
	Public *Public
}

// Decision is what an agent decided on a draft: issued as an auto (with its number and the
// agent's identification) or dismissed (with the reason). The caller reads it from wherever it
// keeps cases; the renderer only prints it.
type Decision struct {
	Status    string     // drafts.StatusDraft (or ""), StatusIssued, StatusDismissed
	Notice    string     // the notice number, when issued
	DecidedBy string     // the agent who decided
	DecidedAt *time.Time // when
	Reason    string     // the reason of a dismissal
	// Agent is the identification of the agent who issued the auto, as on file when it was
	// issued; nil: only DecidedBy (the login) is known.
	Agent *Agent
	// HandedOver: the auto was handed over to the offender at its issue (the delivery in hand
	// recorded on the day of issue), so the last day to defend can be printed; otherwise the
	// auto states the rule (Art. 55: from the receipt) and leaves "Recebido em" blank.
	HandedOver bool
}

// Agent identifies the agent who issues an auto.
type Agent struct {
	FullName  string
	Matricula string
	Cargo     string
}

// Licensee is the registered licensee (prestador).
type Licensee struct {
	Name    string // razão social
	CNPJ    string // 14 characters, formatted when printed
	Address string
}

// Vehicle is the registered vehicle.
type Vehicle struct {
	Plate           string
	ManufactureYear int
	Description     string // e.g. make and model
	// MeterDistanceM is r1, the distance from the sound-level meter to the loudspeakers, when
	// the registry knows it (the receptor estimate then uses it, as the rules do).
	MeterDistanceM float64
}

// Driver is the driver identified for the episode (by the tachograph card or by the agent).
type Driver struct {
	Name string
	CNH  string // CNH number
	Card string // tachograph card
	// Identification says how the driver was identified, in Portuguese ("cartão do tacógrafo
	// nº …", "cadastro: …"); empty: not said.
	Identification string
}

// Device is a measuring instrument of the vehicle, as registered.
type Device struct {
	// Kind uses the facts' source names: "tacho" (or "tachograph"), "gps", "slm", "bridge".
	Kind         string
	Model        string
	Serial       string
	Verification time.Time // last INMETRO verification; zero: not known
	Calibration  time.Time // last calibration; zero: not known
	ValidUntil   time.Time // zero: not known
}

// Penalty is the fine as the penalty calculus states it, in plain text and figures that
// another package fills in.
type Penalty struct {
	// Article is the article whose penalty the calculus applied (e.g. "Art. 47" for a repeated
	// route deviation), which may differ from the draft's; "": the draft's.
	Article string
	// Warning: the calculus made it a notificação preliminar (Art. 41, I), not a fine.
	Warning  bool
	FineUFMP float64 // the fine in the fiscal unit, after recidivism
	// BaseUFMP is the fine of Article before recidivism, the amount the law sets for it; 0:
	// not known (the renderer then checks FineUFMP against the law itself).
	BaseUFMP float64
	// FineBRL is the fine in reais as a decimal string ("3360.00" or "3360,00"); money is never
	// a float. Empty: not converted.
	FineBRL string
	// UnitValueBRL is the value of the fiscal unit applied, as a decimal string, and UnitDate
	// the day of that value (Art. 44).
	UnitValueBRL string
	UnitDate     time.Time
	// Recidivism explains the recidivism found or not (Art. 48).
	Recidivism string
	// Recommendation is the suspension or cassação recommendation to the agent (Art. 52, 53).
	Recommendation string
}

// Errors of Render.
var (
	ErrNoProfile = errors.New("notice: profile required")
	ErrNoFacts   = errors.New("notice: draft has no facts")
)

// Render writes the PDF of a draft.
func Render(w io.Writer, in Input) error {
	if in.Profile == nil {
		return ErrNoProfile
	}
	b := in.Bundle
	if b == nil {
		var err error
		b, err = drafts.Verify(&in.Sealed, nil)
		if err != nil {
			return fmt.Errorf("notice: %w", err)
		}
	}
	if len(b.Draft.Facts) == 0 {
		return ErrNoFacts
	}
	in = fromDraft(in, &b.Draft)
	if err := fineAgainstLaw(in, &b.Draft); err != nil {
		return err
	}
	d := newDoc(in, b)
	d.render()
	if err := d.pdf.Error(); err != nil {
		return fmt.Errorf("notice: %w", err)
	}
	if err := d.pdf.Output(w); err != nil {
		return fmt.Errorf("notice: %w", err)
	}
	return nil
}
