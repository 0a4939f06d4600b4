package cases

import (
	"encoding/json"
	"fmt"
	"time"

	"github.com/trenzinho/trenzinho/monitor/drafts"
	"github.com/trenzinho/trenzinho/monitor/penalty"
	"github.com/trenzinho/trenzinho/profile"
)

// The record of a case: a notice (auto de infração) the penalty calculus counts, and its
// administrative process after issue (Lei 2.277/2018, Art. 51–57) — an issued draft, a manual
// notice an agent writes from a street observation, or an earlier paper notice imported.
//
// A case's identity, facts and the penalty calculus made when it was issued never change. What
// happens to it is an append-only list of events (issue or import, then the acts of the
// process); its Status is the folding of those events (Fold). The store persists the record and
// its events; it decides nothing about them.

// Origins of a case.
const (
	OriginDraft  = "draft"  // an issued draft of the monitor
	OriginManual = "manual" // a notice an agent wrote from a street observation
	OriginImport = "import" // an earlier paper notice, imported as it stood
)

// ManualDetails are what an agent writes on a manual notice.
type ManualDetails struct {
	Place       string   `json:"place"`
	Lat         *float64 `json:"lat,omitempty"`
	Lon         *float64 `json:"lon,omitempty"`
	Description string   `json:"description"`
	Agent       string   `json:"agent"` // the agent who observed the facts
}

// CaseDoc are the facts of a case, fixed when it is created.
type CaseDoc struct {
	// Rules are the rules (or manual infractions) of the offence, when the monitor knows them.
	Rules        []string `json:"rules,omitempty"`
	Articles     []string `json:"articles"`
	Penalty      string   `json:"penalty"`
	Warning      bool     `json:"warning,omitempty"` // a notificação preliminar (Art. 41, I)
	LicenseeName string   `json:"licensee_name,omitempty"`
	LicenseeCNPJ string   `json:"licensee_cnpj,omitempty"`
	IssuedBy     string   `json:"issued_by,omitempty"`
	// IssuerAgent is the issuing agent's identification as on file at the issue (the auto
	// prints it); nil for cases issued before it was recorded.
	IssuerAgent *Agent         `json:"issuer_agent,omitempty"`
	Manual      *ManualDetails `json:"manual,omitempty"`
	// Instruments are the measuring instruments of the facts with the verification the issue
	// found valid on the fact's date (the registry's record at the issue): the auto names them.
	Instruments []drafts.Device `json:"instruments,omitempty"`
}

// Event is one event of a case.
type Event struct {
	Seq    int             `json:"seq"`
	Action string          `json:"action"`
	Date   string          `json:"date,omitempty"` // the day of the act as declared
	At     time.Time       `json:"recorded_at"`    // when it was recorded
	User   string          `json:"user"`
	Data   json.RawMessage `json:"data"`
}

// Case is a notice and its process.
type Case struct {
	ID       int64
	Notice   string // AI-2026/0001, or an imported paper notice's own number
	Origin   string
	DraftID  string
	Vehicle  string
	Licensee string // the registry's licensee id, the key of recidivism; "" when not known
	Offence  time.Time
	Issued   time.Time
	CaseDoc
	// Assessment is the penalty calculus made when the notice was issued (Art. 44, 48, 52, 53);
	// nil for imported notices and for drafts issued before cases existed.
	Assessment *penalty.Result
	Events     []Event
	// Opening is the first opening of the auto in the licensee's portal (electronic notice);
	// nil when it was never opened there.
	Opening   *Opening
	Status    // folded from Events (Fold)
	CreatedAt time.Time
	UpdatedAt time.Time
}

// ImportedNotice is an earlier paper notice as it stood when it was imported. Dates are calendar
// days ("YYYY-MM-DD"); Offence and Issued are instants (the caller reads the days in the
// profile's time zone).
type ImportedNotice struct {
	Number        string             `json:"number"`
	Offence       time.Time          `json:"offence"`
	Issued        time.Time          `json:"issued"`
	Licensee      string             `json:"licensee"`
	LicenseeCNPJ  string             `json:"licensee_cnpj,omitempty"`
	LicenseeName  string             `json:"licensee_name,omitempty"`
	Vehicle       string             `json:"vehicle,omitempty"`
	Articles      []string           `json:"articles"`
	Penalty       string             `json:"penalty"`
	Warning       bool               `json:"warning,omitempty"`
	Status        penalty.Status     `json:"status"`
	Notified      string             `json:"notified,omitempty"`
	Mode          string             `json:"mode,omitempty"`
	Published     string             `json:"published,omitempty"`
	RefusedToSign bool               `json:"refused_to_sign,omitempty"`
	DefenceFiled  string             `json:"defence_filed,omitempty"`
	Decided       string             `json:"decided,omitempty"`
	Paid          string             `json:"paid,omitempty"`
	DividaAtiva   string             `json:"divida_ativa,omitempty"`
	Final         string             `json:"final,omitempty"`
	Suspension    *AppliedSuspension `json:"suspension,omitempty"`
	Note          string             `json:"note,omitempty"`
}

// ManualNotice is a notice an agent writes from a street observation: the infractions are ids
// of the profile's manual_infractions, fined by one penalty.
type ManualNotice struct {
	Vehicle      string
	Licensee     string // the registry's licensee id; "" when not known
	LicenseeName string
	LicenseeCNPJ string
	// LicenseeAddress is the licensee's address on file: the issue requires it (Art. 48, § 2º),
	// as for a draft.
	LicenseeAddress string
	Infractions     []string
	Offence         time.Time
	ManualDetails
}

// Fold derives the case's status from its events: an imported record's status as it stood,
// then each act as the process applies it (Status.Apply).
func (c *Case) Fold() error {
	c.Status = Status{}
	for _, e := range c.Events {
		switch e.Action {
		case ActionImport:
			var n ImportedNotice
			if err := json.Unmarshal(e.Data, &n); err != nil {
				return fmt.Errorf("case %s event %d: %w", c.Notice, e.Seq, err)
			}
			c.Status = n.status()
		case ActionIssue:
			c.Apply(Action{Action: ActionIssue}, e.User)
		default:
			var a Action
			if err := json.Unmarshal(e.Data, &a); err != nil {
				return fmt.Errorf("case %s event %d: %w", c.Notice, e.Seq, err)
			}
			c.Apply(a, e.User)
		}
	}
	return nil
}

// status is an imported record's status as it stood.
func (n *ImportedNotice) status() Status {
	s := Status{State: n.Status, Notified: n.Notified, Mode: n.Mode, Published: n.Published,
		RefusedToSign: n.RefusedToSign, DefenceFiled: n.DefenceFiled, Decided: n.Decided, Paid: n.Paid,
		DividaAtiva: n.DividaAtiva, Final: n.Final, Suspension: n.Suspension}
	switch {
	case n.Status == penalty.StatusDefenceAccepted:
		s.Outcome = OutcomeAccepted
	case n.Decided != "" && n.DefenceFiled != "":
		s.Outcome = OutcomeRejected
	}
	return s
}

// PenaltyNotice is the case as the penalty calculus reads it. Its dates are noon of their days
// in the profile's time zone. The process says when the fine became final — from the
// notification of the decision that confirmed it (of the appeal's, when one was filed), or its
// payment before any decision — or why it is not yet (Case.FinalFrom). An imported
// paper notice's finality is what its record says, else the calculus derives it from its
// dates; one paid without a defence on or before the last day to defend became final the day
// it was paid (paying is giving up the defence).
func (c *Case) PenaltyNotice(p *profile.Profile) penalty.Notice {
	loc := p.Location()
	noon := func(day string) time.Time { return NoonOf(day, loc) }
	n := penalty.Notice{ID: c.Notice, Vehicle: c.Vehicle, Licensee: c.Licensee, Articles: c.Articles,
		Penalty: c.Penalty, Warning: c.Warning, Offence: c.Offence, Issued: c.Issued, Status: c.State,
		Notified: noon(c.Notified), Mode: c.Mode, Published: noon(c.Published),
		RefusedToSign: c.RefusedToSign, DefenceFiled: noon(c.DefenceFiled), Decided: noon(c.Decided),
		DecisionNotified: noon(c.DecisionNotified), Final: noon(c.Final)}
	switch final, why, ok := c.FinalFrom(p); {
	case !c.Imported() && ok:
		n.Final = noon(final)
	case !c.Imported():
		n.Pending = why
	case n.Final.IsZero() && c.State == penalty.StatusPaid && c.DefenceFiled == "" && c.Paid != "":
		if deadline, _ := n.DefenceDeadline(p); deadline.IsZero() || c.Paid <= deadline.Format(time.DateOnly) {
			n.Final = noon(c.Paid)
		}
	}
	if s := c.Suspension; s != nil {
		n.Suspension = &penalty.Suspension{From: noon(s.From), Days: s.Days, NoticeID: c.Notice}
	}
	return n
}

// Imported reports whether the case is an earlier paper notice, whose process before the
// import is what the record says (its issuer is not known, its finality may be recorded
// directly).
func (c *Case) Imported() bool { return c.Origin == OriginImport }

// suspensionRecommended reports whether the calculus at issue found specific recidivism
// (Art. 52).
func (c *Case) suspensionRecommended() bool {
	return c.Assessment != nil && c.Assessment.SuspensionRecommended != nil
}
