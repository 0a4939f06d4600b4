package registry

import (
	"cmp"
	"fmt"
	"slices"
	"time"
)

// SubjectKind is the kind of record a dated item belongs to.
type SubjectKind string

// Subject kinds.
const (
	SubjectLicensee SubjectKind = "licensee"
	SubjectVehicle  SubjectKind = "vehicle"
	SubjectDriver   SubjectKind = "driver"
	SubjectDevice   SubjectKind = "device"
)

// Subject names the record a dated item belongs to.
type Subject struct {
	Kind SubjectKind `json:"kind"`
	// ID is the record's id; for a device, its serial number.
	ID string `json:"id"`
	// Vehicle is, for a device, the vehicle it is installed in.
	Vehicle string `json:"vehicle,omitempty"`
	// Device is, for a device, its kind.
	Device DeviceKind `json:"device,omitempty"`
}

// Problem says what is wrong with an item.
type Problem string

// Problems.
const (
	ProblemExpired  Problem = "expired"  // valid until a day before the day in question
	ProblemExpiring Problem = "expiring" // still valid, expires within the window
	ProblemCategory Problem = "category" // the driver's CNH category does not cover the vehicle's
)

// Expiry is a dated item (a document, a device's verification, a driver's CNH or medical
// certificate) that has expired or expires soon. It carries no personal data: a driver is
// named by id.
type Expiry struct {
	Subject  Subject      `json:"subject"`
	Document DocumentKind `json:"document"`
	// Number is the document's number or the device's serial; empty for a driver's items.
	Number     string `json:"number,omitempty"`
	ValidUntil Date   `json:"valid_until,omitzero"`
	// Expired: the day in question is after ValidUntil.
	Expired bool `json:"expired"`
	// DaysLeft is the number of days from the day in question to ValidUntil: 0 when it
	// expires that day (it is still valid), -1 when it expired the day before.
	DaysLeft int     `json:"days_left"`
	Problem  Problem `json:"problem"`
	// Detail explains a category problem, in Portuguese.
	Detail string `json:"detail,omitempty"`
}

// Expiring lists every dated item in the registry that has expired by the calendar day of at
// (in the store's location) or expires within the given window after it, counted in whole days:
// with a window of 30 days, an item valid until that day or one of the next 30 is listed, one
// valid until the 31st day after is not. Of several documents of one kind on one record only
// the one valid the longest counts. The list is sorted by ValidUntil.
func (s *Store) Expiring(at time.Time, within time.Duration) []Expiry {
	sn := s.cur.Load()
	today := DateOf(at.In(s.Location()))
	days := max(int(within/(24*time.Hour)), 0)
	var out []Expiry
	keep := func(items []Expiry) {
		for _, e := range items {
			if e.ValidUntil.IsZero() {
				continue
			}
			if e.DaysLeft = today.DaysUntil(e.ValidUntil); e.DaysLeft <= days {
				e.Expired = e.DaysLeft < 0
				e.Problem = ProblemExpiring
				if e.Expired {
					e.Problem = ProblemExpired
				}
				out = append(out, e)
			}
		}
	}
	for _, l := range sn.reg.Licensees {
		keep(licenseeItems(&l))
	}
	for _, v := range sn.reg.Vehicles {
		keep(vehicleItems(&v))
	}
	for _, d := range sn.reg.Drivers {
		keep(driverItems(&d))
	}
	sortExpiries(out)
	return out
}

// ExpiredFor lists what a vehicle in service at the instant at lacks: the expired documents of
// the vehicle and of its licensee, the expired verifications of its devices and, when the
// tachograph's driver card (as reported) names a registered driver, that driver's expired CNH
// or medical certificate and a CNH category that does not cover the vehicle's
// RequiredCNHCategory. An item with no date is not judged. It returns nil for a vehicle not
// in the registry.
func (s *Store) ExpiredFor(vehicleID, driverCard string, at time.Time) []Expiry {
	sn := s.cur.Load()
	i, ok := sn.vehicles[vehicleID]
	if !ok {
		return nil
	}
	v := &sn.reg.Vehicles[i]
	today := DateOf(at.In(s.Location()))
	items := vehicleItems(v)
	if j, ok := sn.licensees[v.Licensee]; ok {
		items = append(items, licenseeItems(&sn.reg.Licensees[j])...)
	}
	var driver *Driver
	if driverCard != "" {
		if j, ok := sn.driverByCard(driverCard); ok {
			driver = &sn.reg.Drivers[j]
			items = append(items, driverItems(driver)...)
		}
	}
	var out []Expiry
	for _, e := range items {
		if e.ValidUntil.IsZero() {
			continue
		}
		if e.DaysLeft = today.DaysUntil(e.ValidUntil); e.DaysLeft < 0 {
			e.Expired, e.Problem = true, ProblemExpired
			out = append(out, e)
		}
	}
	if driver != nil && v.RequiredCNHCategory != "" && driver.CNHCategory != "" &&
		!CNHCovers(driver.CNHCategory, v.RequiredCNHCategory) {
		out = append(out, Expiry{
			Subject:    Subject{Kind: SubjectDriver, ID: driver.ID},
			Document:   DocCNH,
			ValidUntil: driver.CNHValidUntil,
			DaysLeft:   daysLeft(today, driver.CNHValidUntil),
			Problem:    ProblemCategory,
			Detail: fmt.Sprintf("CNH categoria %s; o veículo %s exige categoria %s",
				driver.CNHCategory, v.ID, v.RequiredCNHCategory),
		})
	}
	sortExpiries(out)
	return out
}

func daysLeft(today, d Date) int {
	if d.IsZero() {
		return 0
	}
	return today.DaysUntil(d)
}

// licenseeItems are the licensee's current documents, one per kind.
func licenseeItems(l *Licensee) []Expiry {
	return documentItems(Subject{Kind: SubjectLicensee, ID: l.ID}, l.Documents)
}

// vehicleItems are the vehicle's current documents, one per kind, and its devices'
// verifications.
func vehicleItems(v *Vehicle) []Expiry {
	out := documentItems(Subject{Kind: SubjectVehicle, ID: v.ID}, v.Documents)
	for _, d := range v.Devices {
		kind := DocDeviceVerification
		if d.Kind == DeviceTachograph {
			kind = DocAfericaoTacografo
		}
		out = append(out, Expiry{
			Subject:    Subject{Kind: SubjectDevice, ID: d.Serial, Vehicle: v.ID, Device: d.Kind},
			Document:   kind,
			Number:     d.Serial,
			ValidUntil: d.ValidUntil,
		})
	}
	return out
}

// driverItems are the driver's CNH and medical certificate.
func driverItems(d *Driver) []Expiry {
	sub := Subject{Kind: SubjectDriver, ID: d.ID}
	return []Expiry{
		{Subject: sub, Document: DocCNH, ValidUntil: d.CNHValidUntil},
		{Subject: sub, Document: DocAtestadoMedico, ValidUntil: d.MedicalCertificate.ValidUntil},
	}
}

// documentItems keeps, of each kind, the document valid the longest; a document with no
// ValidUntil does not expire, so its kind is left out.
func documentItems(sub Subject, docs []Document) []Expiry {
	var out []Expiry
	never := map[DocumentKind]bool{}
	for _, d := range docs {
		if d.ValidUntil.IsZero() {
			never[d.Kind] = true
			continue
		}
		i := slices.IndexFunc(out, func(e Expiry) bool { return e.Document == d.Kind })
		e := Expiry{Subject: sub, Document: d.Kind, Number: d.Number, ValidUntil: d.ValidUntil}
		switch {
		case i < 0:
			out = append(out, e)
		case out[i].ValidUntil.Before(d.ValidUntil):
			out[i] = e
		}
	}
	return slices.DeleteFunc(out, func(e Expiry) bool { return never[e.Document] })
}

func sortExpiries(es []Expiry) {
	slices.SortStableFunc(es, func(a, b Expiry) int {
		return cmp.Or(
			a.ValidUntil.Compare(b.ValidUntil),
			cmp.Compare(a.Subject.Kind, b.Subject.Kind),
			cmp.Compare(a.Subject.Vehicle, b.Subject.Vehicle),
			cmp.Compare(a.Subject.ID, b.Subject.ID),
			cmp.Compare(a.Document, b.Document),
			cmp.Compare(a.Problem, b.Problem),
		)
	})
}
