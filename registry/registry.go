// Package registry is the register of licensees, vehicles, drivers and devices the municipality
// keeps under Lei 2.277/2018 (Art. 19, 20), with the dates of the documents they must hold
// (docs/rules.md, document_expired).
//
// The registry is one YAML file (TRENZINHO_REGISTRY), validated on load with errors that name
// the record and the field; CPF and CNPJ check digits (numeric and alphanumeric CNPJ) and plate
// formats are checked, and numbers are stored unformatted in upper case. A [Store] holds it in
// memory for concurrent readers, maps tachograph cards to drivers, lists documents that expire,
// and applies edits from the API by validating the whole registry and writing the file back
// atomically.
//
// Drivers' names, CPFs and CNH numbers are personal data (LGPD): they stay in the registry,
// never travel on the wire, and lists show them redacted ([Driver.Redacted]); see
// docs/registry.md.
package registry

import (
	"bytes"
	"crypto/ed25519"
	"encoding/base64"
	"errors"
	"fmt"
	"io"
	"os"
	"slices"

	"go.yaml.in/yaml/v3"
)

// Registry is the whole register.
type Registry struct {
	// Note is free text kept with the file (e.g. that it holds example data); unlike YAML
	// comments it survives edits through the API.
	Note      string     `yaml:"note,omitempty" json:"note,omitempty"`
	Licensees []Licensee `yaml:"licensees" json:"licensees"`
	Vehicles  []Vehicle  `yaml:"vehicles" json:"vehicles"`
	Drivers   []Driver   `yaml:"drivers" json:"drivers"`
}

// Licensee is a licensed service provider (prestador, always a legal person: Art. 4).
type Licensee struct {
	ID          string     `yaml:"id" json:"id"`
	RazaoSocial string     `yaml:"razao_social" json:"razao_social"`
	CNPJ        string     `yaml:"cnpj" json:"cnpj"`
	Address     string     `yaml:"address,omitempty" json:"address,omitempty"`
	Documents   []Document `yaml:"documents,omitempty" json:"documents,omitempty"`
	// Suspensions are the periods the licensee's activity was suspended by an applied penalty
	// or notice (Art. 42, Art. 52), days inclusive.
	Suspensions []Period `yaml:"suspensions,omitempty" json:"suspensions,omitempty"`
	// ElectronicAdhesion is the licensee's term of adhesion to the electronic notice in the
	// portal, where the profile adopts it; nil: the licensee has not adhered, and its autos are
	// delivered in person, by post or by edital.
	ElectronicAdhesion *Adhesion `yaml:"electronic_adhesion,omitempty" json:"electronic_adhesion,omitempty"`
}

// Adhesion is a term of adhesion to the electronic notice: the term's number, the day it was
// signed and the portal users (logins) it names as the licensee's representatives, the only
// ones whose "Declaro ciência" delivers an auto.
type Adhesion struct {
	Term            string   `yaml:"term" json:"term"`
	SignedOn        Date     `yaml:"signed_on" json:"signed_on"`
	Representatives []string `yaml:"representatives" json:"representatives"`
}

// Period is a range of days, both inclusive, with the act that set it.
type Period struct {
	From      Date   `yaml:"from" json:"from"`
	To        Date   `yaml:"to" json:"to"`
	Reference string `yaml:"reference,omitempty" json:"reference,omitempty"` // e.g. the notice or case number
}

// Covers reports whether day d lies in the period.
func (p Period) Covers(d Date) bool { return !d.Before(p.From) && !p.To.Before(d) }

// SuspendedOn returns the licensee's suspension that covers day d.
func (l *Licensee) SuspendedOn(d Date) (Period, bool) {
	for _, p := range l.Suspensions {
		if p.Covers(d) {
			return p, true
		}
	}
	return Period{}, false
}

// VehicleEvent is an inspection of a vehicle, or an accident that compromised its safety.
type VehicleEvent struct {
	Date Date `yaml:"date" json:"date"`
	// Kind is "inspection" or "accident".
	Kind string `yaml:"kind" json:"kind"`
	// Approved: for an inspection, the vehicle passed (released by the inspector, Art. 32 §3).
	Approved bool   `yaml:"approved,omitempty" json:"approved,omitempty"`
	Note     string `yaml:"note,omitempty" json:"note,omitempty"`
}

// Vehicle event kinds.
const (
	EventInspection = "inspection"
	EventAccident   = "accident"
)

// UninspectedOn returns the event (a failed inspection, or an accident) that keeps the vehicle
// from circulating on day d: the latest of them up to d with no approved inspection after it
// (Art. 32 §3, Art. 33). Events of the same day are taken in file order.
func (v *Vehicle) UninspectedOn(d Date) (VehicleEvent, bool) {
	var pending *VehicleEvent
	for i := range v.Events {
		e := &v.Events[i]
		if d.Before(e.Date) {
			continue
		}
		switch {
		case e.Kind == EventInspection && e.Approved:
			if pending != nil && !e.Date.Before(pending.Date) {
				pending = nil
			}
		default:
			if pending == nil || !e.Date.Before(pending.Date) {
				pending = e
			}
		}
	}
	if pending == nil {
		return VehicleEvent{}, false
	}
	return *pending, true
}

// InspectionRequest is a technical inspection the fiscal organ required of a vehicle (Art. 32
// §1: the inspection is made by the organ's agents or third parties it designates): when it
// required it (inspeção solicitada em), the date it set (agendada para) and, when the licensee
// justified not submitting the vehicle, the day the organ approved the formal justification
// (justificativa aprovada em). Art. 45, IV fines "não submeter o veículo às inspeções técnicas
// determinadas por esta lei, nos prazos e datas estabelecidos, salvo justificativa formal
// aprovada": only a date set that passed without submission, unjustified, grounds it
// (InspectionOverdue).
type InspectionRequest struct {
	RequestedOn           Date   `yaml:"requested_on" json:"requested_on"`
	ScheduledFor          Date   `yaml:"scheduled_for" json:"scheduled_for"`
	JustificationApproved Date   `yaml:"justification_approved,omitempty" json:"justification_approved,omitzero"`
	Reference             string `yaml:"reference,omitempty" json:"reference,omitempty"` // e.g. the notice that set the date
}

// InspectionOverdue returns the inspection the organ required whose date passed before day d
// with the vehicle not submitted — no inspection event (approved or not) from the request to
// the date set — and no formal justification approved: the omission Art. 45, IV fines. Of
// several, the latest date set.
func (v *Vehicle) InspectionOverdue(d Date) (InspectionRequest, bool) {
	var out InspectionRequest
	found := false
	for _, r := range v.InspectionRequests {
		if !r.ScheduledFor.Before(d) || !r.JustificationApproved.IsZero() {
			continue
		}
		submitted := false
		for _, e := range v.Events {
			if e.Kind == EventInspection && !e.Date.Before(r.RequestedOn) && !r.ScheduledFor.Before(e.Date) {
				submitted = true
			}
		}
		if !submitted && (!found || out.ScheduledFor.Before(r.ScheduledFor)) {
			out, found = r, true
		}
	}
	return out, found
}

// Vehicle is a registered vehicle (Art. 20 III).
type Vehicle struct {
	// ID is the vehicle's name on the wire (MQTT topic and "vehicle"): [A-Za-z0-9_-]{1,32}.
	ID string `yaml:"id" json:"id"`
	// Plate is ABC1234 or, Mercosul, ABC1D23.
	Plate string `yaml:"plate" json:"plate"`
	// Licensee is the vehicle's licensee since LicenseeSince (zero: since the beginning — a
	// registry written before the link had dates keeps its links valid from the beginning).
	Licensee      string `yaml:"licensee" json:"licensee"`
	LicenseeSince Date   `yaml:"licensee_since,omitempty" json:"licensee_since,omitzero"`
	// LicenseeHistory are the vehicle's earlier licensees, oldest first: a reading is judged
	// and drafted against the licensee of its own day (LicenseeOn).
	LicenseeHistory []LicenseeLink `yaml:"licensee_history,omitempty" json:"licensee_history,omitempty"`
	// ManufactureYear is the year of manufacture (Art. 21 sole para.); 0 when not known.
	ManufactureYear int `yaml:"manufacture_year,omitempty" json:"manufacture_year,omitempty"`
	// MeterDistanceM is r₁, the distance in metres from the sound-level meter to the
	// loudspeakers, for the receptor estimate; 0 when not known (the profile's default applies).
	MeterDistanceM float64 `yaml:"meter_distance_m,omitempty" json:"meter_distance_m,omitempty"`
	// RequiredCNHCategory is the CNH category the vehicle requires of its driver (e.g. "D"); empty
	// when not known, and then the category is not checked.
	RequiredCNHCategory string   `yaml:"required_cnh_category,omitempty" json:"required_cnh_category,omitempty"`
	Devices             []Device `yaml:"devices,omitempty" json:"devices,omitempty"`
	// Events are the vehicle's inspections and accidents, in date order.
	Events []VehicleEvent `yaml:"events,omitempty" json:"events,omitempty"`
	// InspectionRequests are the inspections the fiscal organ required of the vehicle, with the
	// dates it set (Art. 45, IV).
	InspectionRequests []InspectionRequest `yaml:"inspection_requests,omitempty" json:"inspection_requests,omitempty"`
	Documents          []Document          `yaml:"documents,omitempty" json:"documents,omitempty"`
	// KeyID names the vehicle's ed25519 key in signed batches ("kid"), and PublicKey is that
	// key, 32 bytes in standard base64. Both or neither.
	KeyID     string `yaml:"key_id,omitempty" json:"key_id,omitempty"`
	PublicKey string `yaml:"public_key,omitempty" json:"public_key,omitempty"`
	// Driver is the id of the driver the licensee assigned to the vehicle (a driver of the
	// same licensee); empty when none. Drafts name this driver, marked "identificado pelo
	// cadastro", when the tachograph reports no registered card.
	Driver string `yaml:"driver,omitempty" json:"driver,omitempty"`
}

// Ed25519Key decodes the vehicle's public key; nil when it has none.
func (v *Vehicle) Ed25519Key() (ed25519.PublicKey, error) {
	if v.PublicKey == "" {
		return nil, nil
	}
	b, err := base64.StdEncoding.DecodeString(v.PublicKey)
	if err != nil || len(b) != ed25519.PublicKeySize {
		return nil, fmt.Errorf("chave pública do veículo %s: esperado ed25519 (32 bytes) em base64", v.ID)
	}
	return ed25519.PublicKey(b), nil
}

// DeviceKind is the kind of a device on a vehicle.
type DeviceKind string

// Device kinds.
const (
	DeviceTachograph DeviceKind = "tachograph"
	DeviceGPS        DeviceKind = "gps"
	DeviceSLM        DeviceKind = "slm" // sound-level meter
	DeviceBridge     DeviceKind = "bridge"
)

var deviceKinds = []DeviceKind{DeviceTachograph, DeviceGPS, DeviceSLM, DeviceBridge}

// Device is an instrument installed in a vehicle.
type Device struct {
	Kind   DeviceKind `yaml:"kind" json:"kind"`
	Serial string     `yaml:"serial" json:"serial"`
	Model  string     `yaml:"model,omitempty" json:"model,omitempty"`
	// INMETROVerification is the date of the last INMETRO verification (tachograph,
	// sound-level meter).
	INMETROVerification Date `yaml:"inmetro_verification,omitempty" json:"inmetro_verification,omitzero"`
	// Calibration is the date of the last calibration.
	Calibration Date `yaml:"calibration,omitempty" json:"calibration,omitzero"`
	// ValidUntil is the last day the verification or calibration is valid.
	ValidUntil Date `yaml:"valid_until,omitempty" json:"valid_until,omitzero"`
}

// DocumentKind is the kind of a document.
type DocumentKind string

// Document kinds. The profile maps each kind to the article the document_expired rule cites.
const (
	DocLicenca           DocumentKind = "licenca"            // licence, Art. 7 (licensee)
	DocCSV               DocumentKind = "csv"                // Certificado de Segurança Veicular, Art. 20 III b
	DocInspecao          DocumentKind = "inspecao"           // technical inspection, Art. 32
	DocAtestadoMedico    DocumentKind = "atestado_medico"    // medical certificate, Art. 20 II d (driver)
	DocCNH               DocumentKind = "cnh"                // driving licence (driver)
	DocAfericaoTacografo DocumentKind = "afericao_tacografo" // tachograph verification, Art. 20 III e
	// DocDeviceVerification names, in an [Expiry], the verification or calibration of a device
	// other than the tachograph (sound-level meter, GPS, bridge). It is not a document kind of
	// Document records.
	DocDeviceVerification DocumentKind = "verificacao_dispositivo"
)

// documentKinds are the kinds a Document record may have. CNH and medical certificate are
// fields of Driver.
var documentKinds = []DocumentKind{DocLicenca, DocCSV, DocInspecao, DocAfericaoTacografo}

// Document is a dated document of a licensee or vehicle. Several documents of one kind on one
// record are its history: the one valid the longest counts.
type Document struct {
	Kind   DocumentKind `yaml:"kind" json:"kind"`
	Number string       `yaml:"number,omitempty" json:"number,omitempty"`
	Issued Date         `yaml:"issued,omitempty" json:"issued,omitzero"`
	// ValidUntil is the last day the document is valid; zero when it does not expire.
	ValidUntil Date `yaml:"valid_until,omitempty" json:"valid_until,omitzero"`
}

// Driver is a registered driver (condutor, Art. 20 II).
type Driver struct {
	ID   string `yaml:"id" json:"id"`
	Name string `yaml:"name" json:"name"`
	CPF  string `yaml:"cpf" json:"cpf"`
	// CNHNumber is the CNH registration number (11 digits).
	CNHNumber     string `yaml:"cnh_number,omitempty" json:"cnh_number,omitempty"`
	CNHCategory   string `yaml:"cnh_category,omitempty" json:"cnh_category,omitempty"`
	CNHValidUntil Date   `yaml:"cnh_valid_until,omitempty" json:"cnh_valid_until,omitzero"`
	// MedicalCertificate is the atestado médico de aptidão física e mental (Art. 20 II d): only
	// its dates, never its content.
	MedicalCertificate MedicalCertificate `yaml:"medical_certificate,omitempty" json:"medical_certificate,omitzero"`
	// TachographCard is the driver card number as printed on the card (see CardsMatch).
	TachographCard string `yaml:"tachograph_card,omitempty" json:"tachograph_card,omitempty"`
	Licensee       string `yaml:"licensee" json:"licensee"`
	// RemovalOrderedOn is the day the public authority required the driver's removal
	// (afastamento, Lei 2.277/2018 Art. 45, III); zero when none.
	RemovalOrderedOn Date `yaml:"removal_ordered_on,omitempty" json:"removal_ordered_on,omitzero"`
}

// MedicalCertificate holds the dates of a medical certificate.
type MedicalCertificate struct {
	Issued     Date `yaml:"issued,omitempty" json:"issued,omitzero"`
	ValidUntil Date `yaml:"valid_until,omitempty" json:"valid_until,omitzero"`
}

// IsZero reports whether no date is known.
func (m MedicalCertificate) IsZero() bool { return m.Issued.IsZero() && m.ValidUntil.IsZero() }

// Load reads and validates a registry file.
func Load(path string) (*Registry, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("registry: %w", err)
	}
	return Parse(b, path)
}

// Parse decodes and validates a registry; name says where it came from, for error messages.
// Unknown keys are errors. CPF, CNPJ, plates and card numbers come back canonical.
func Parse(b []byte, name string) (*Registry, error) {
	var r Registry
	dec := yaml.NewDecoder(bytes.NewReader(b))
	dec.KnownFields(true)
	if err := dec.Decode(&r); err != nil && !errors.Is(err, io.EOF) {
		return nil, fmt.Errorf("registry %s: %w", name, err)
	}
	if err := r.Validate(); err != nil {
		return nil, fmt.Errorf("registry %s: %w", name, err)
	}
	return &r, nil
}

// fileHeader starts every file the package writes.
const fileHeader = "# Cadastro do trenzinho (Lei 2.277/2018): permissionários, veículos, condutores.\n" +
	"# Contém dados pessoais (LGPD): acesso restrito. O monitor preserva os comentários ao editar.\n" +
	"# Formato: docs/registry.md.\n"

// Marshal encodes the registry as YAML, in the format Parse reads.
func (r *Registry) Marshal() ([]byte, error) {
	var buf bytes.Buffer
	buf.WriteString(fileHeader)
	enc := yaml.NewEncoder(&buf)
	enc.SetIndent(2)
	if err := enc.Encode(r); err != nil {
		return nil, fmt.Errorf("registry: encode: %w", err)
	}
	if err := enc.Close(); err != nil {
		return nil, fmt.Errorf("registry: encode: %w", err)
	}
	return buf.Bytes(), nil
}

// Clone returns a deep copy of r.
func (r *Registry) Clone() *Registry {
	c := &Registry{Note: r.Note}
	c.Licensees = make([]Licensee, len(r.Licensees))
	for i, l := range r.Licensees {
		c.Licensees[i] = l.clone()
	}
	c.Vehicles = make([]Vehicle, len(r.Vehicles))
	for i, v := range r.Vehicles {
		c.Vehicles[i] = v.clone()
	}
	c.Drivers = slices.Clone(r.Drivers) // no reference fields
	if c.Drivers == nil {
		c.Drivers = []Driver{}
	}
	return c
}

func (l Licensee) clone() Licensee {
	l.Documents = slices.Clone(l.Documents)
	return l
}

func (v Vehicle) clone() Vehicle {
	v.LicenseeHistory = slices.Clone(v.LicenseeHistory)
	v.Events = slices.Clone(v.Events)
	v.InspectionRequests = slices.Clone(v.InspectionRequests)
	v.Devices = slices.Clone(v.Devices)
	v.Documents = slices.Clone(v.Documents)
	return v
}

// LicenseeLink is a past link of a vehicle to a licensee: from ValidFrom (zero: the beginning)
// to ValidTo, both days inclusive.
type LicenseeLink struct {
	Licensee  string `yaml:"licensee" json:"licensee"`
	ValidFrom Date   `yaml:"valid_from,omitempty" json:"valid_from,omitzero"`
	ValidTo   Date   `yaml:"valid_to" json:"valid_to"`
}

// LicenseeOn returns the vehicle's licensee on day d: the current one from LicenseeSince on,
// else the past link that covers d; "" when none does (the reading is then "veículo não
// cadastrado" for that day).
func (v *Vehicle) LicenseeOn(d Date) string {
	if v.LicenseeSince.IsZero() || !d.Before(v.LicenseeSince) {
		return v.Licensee
	}
	for _, l := range v.LicenseeHistory {
		if (l.ValidFrom.IsZero() || !d.Before(l.ValidFrom)) && !l.ValidTo.Before(d) {
			return l.Licensee
		}
	}
	return ""
}

// transferred keeps the link history when a vehicle's licensee changes from old's to v's on
// day on: old's link ends the day before, v's starts on. An edit that gives its own history or
// date (an import, a correction) is taken as given.
func transferred(old, v Vehicle, on Date) Vehicle {
	if v.LicenseeHistory == nil {
		v.LicenseeHistory = old.LicenseeHistory
	}
	if old.Licensee == v.Licensee || !v.LicenseeSince.IsZero() && v.LicenseeSince != old.LicenseeSince {
		if v.LicenseeSince.IsZero() {
			v.LicenseeSince = old.LicenseeSince
		}
		return v
	}
	v.LicenseeHistory = append(slices.Clone(v.LicenseeHistory), LicenseeLink{Licensee: old.Licensee, ValidFrom: old.LicenseeSince, ValidTo: on.AddDays(-1)})
	v.LicenseeSince = on
	return v
}
