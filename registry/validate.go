package registry

import (
	"errors"
	"fmt"
	"regexp"
	"slices"
	"strings"
	"time"
)

// Errors of the package. Callers test them with errors.Is.
var (
	// ErrInvalid is wrapped by every validation error (each a *FieldError).
	ErrInvalid = errors.New("cadastro inválido")
	// ErrNotFound: no record with that id.
	ErrNotFound = errors.New("não encontrado")
	// ErrInUse: a licensee still has vehicles or drivers.
	ErrInUse = errors.New("em uso")
)

// A FieldError is one problem with one field of one record. Validation returns the
// errors.Join of all of them; errors.Is(err, ErrInvalid) holds for each.
type FieldError struct {
	// Record names the record: "vehicles[PIU-001]", or by position ("vehicles[#3]", from 1)
	// when it has no usable id.
	Record string
	// Field is the field's YAML key, with the position of a list element: "plate",
	// "devices[0].valid_until".
	Field string
	// Msg says what is wrong, in Portuguese (it is shown in the dashboard).
	Msg string
}

func (e *FieldError) Error() string { return e.Record + "." + e.Field + ": " + e.Msg }

// Unwrap returns ErrInvalid.
func (e *FieldError) Unwrap() error { return ErrInvalid }

// FieldErrors lists the *FieldError values in err (a validation error, possibly wrapped).
func FieldErrors(err error) []*FieldError {
	var out []*FieldError
	var walk func(error)
	walk = func(err error) {
		if fe, ok := err.(*FieldError); ok {
			out = append(out, fe)
			return
		}
		switch u := err.(type) {
		case interface{ Unwrap() []error }:
			for _, e := range u.Unwrap() {
				walk(e)
			}
		case interface{ Unwrap() error }:
			if e := u.Unwrap(); e != nil {
				walk(e)
			}
		}
	}
	if err != nil {
		walk(err)
	}
	return out
}

// idPattern is the pattern of every record id; vehicle ids are the MQTT vehicle names.
var idPattern = regexp.MustCompile(`^[A-Za-z0-9_-]{1,32}$`)

// loginPattern is the pattern of a user's login (monitor/store's user names).
var loginPattern = regexp.MustCompile(`^[A-Za-z0-9][A-Za-z0-9._@-]{0,63}$`)

// maxText is the longest free-text field accepted, in bytes.
const maxText = 300

// Validate checks the whole registry and brings its numbers to canonical form (CPF and CNPJ
// unformatted, letters in upper case, plates without separators, card numbers without
// spaces). It returns every problem found, joined; each is a *FieldError.
func (r *Registry) Validate() error {
	v := validator{}
	if len(r.Note) > 4*maxText {
		v.add("registry", "note", "texto longo demais (máx. %d bytes)", 4*maxText)
	}
	licensees := map[string]bool{}
	cnpjs := map[string]string{}
	for i := range r.Licensees {
		l := &r.Licensees[i]
		rec := recordName("licensees", l.ID, i)
		if v.id(rec, l.ID) {
			if licensees[l.ID] {
				v.add(rec, "id", "repetido")
			}
			licensees[l.ID] = true
		}
		v.text(rec, "razao_social", l.RazaoSocial, true)
		for j, p := range l.Suspensions {
			if p.From.IsZero() || p.To.IsZero() || p.To.Before(p.From) {
				v.add(rec, fmt.Sprintf("suspensions[%d]", j), "from e to obrigatórios, to não anterior a from")
			}
			v.text(rec, fmt.Sprintf("suspensions[%d].reference", j), p.Reference, false)
		}
		v.text(rec, "address", l.Address, false)
		if a := l.ElectronicAdhesion; a != nil {
			v.text(rec, "electronic_adhesion.term", a.Term, true)
			if a.SignedOn.IsZero() {
				v.add(rec, "electronic_adhesion.signed_on", "obrigatório")
			}
			if len(a.Representatives) == 0 {
				v.add(rec, "electronic_adhesion.representatives", "obrigatório: os usuários do portal que declaram ciência pelo permissionário")
			}
			for j, u := range a.Representatives {
				if !loginPattern.MatchString(u) {
					v.add(rec, fmt.Sprintf("electronic_adhesion.representatives[%d]", j), "%q inválido: use o nome de usuário do portal (1 a 64 letras, dígitos e . _ @ -)", u)
				}
			}
		}
		if l.CNPJ == "" {
			v.add(rec, "cnpj", "obrigatório")
		} else if c, err := ParseCNPJ(l.CNPJ); err != nil {
			v.add(rec, "cnpj", "%v", err)
		} else {
			l.CNPJ = c
			if other, ok := cnpjs[c]; ok {
				v.add(rec, "cnpj", "já cadastrado para o licenciado %s", other)
			} else {
				cnpjs[c] = l.ID
			}
		}
		v.documents(rec, l.Documents)
	}

	vehicles := map[string]bool{}
	plates := map[string]string{}
	keyIDs := map[string]string{}
	devices := map[string]string{} // kind/serial → vehicle id
	for i := range r.Vehicles {
		ve := &r.Vehicles[i]
		rec := recordName("vehicles", ve.ID, i)
		if strings.HasPrefix(ve.ID, "_") {
			// The MQTT service namespace (trenzinho/v1/_sys/…): wire.ValidVehicle refuses it.
			v.add(rec, "id", "%q inválido: o id de um veículo não pode começar com _", ve.ID)
		} else if v.id(rec, ve.ID) {
			if vehicles[ve.ID] {
				v.add(rec, "id", "repetido")
			}
			vehicles[ve.ID] = true
		}
		if ve.Plate == "" {
			v.add(rec, "plate", "obrigatória")
		} else if p, err := ParsePlate(ve.Plate); err != nil {
			v.add(rec, "plate", "%v", err)
		} else {
			ve.Plate = p
			if other, ok := plates[p]; ok {
				v.add(rec, "plate", "placa %s já cadastrada para o veículo %s", p, other)
			} else {
				plates[p] = ve.ID
			}
		}
		v.reference(rec, ve.Licensee, licensees)
		prevTo := Date{}
		for j, l := range ve.LicenseeHistory {
			field := fmt.Sprintf("licensee_history[%d]", j)
			v.reference(rec, l.Licensee, licensees)
			switch {
			case l.ValidTo.IsZero():
				v.add(rec, field+".valid_to", "obrigatório")
			case !l.ValidFrom.IsZero() && l.ValidTo.Before(l.ValidFrom):
				v.add(rec, field+".valid_to", "%s anterior a valid_from %s", l.ValidTo, l.ValidFrom)
			case !prevTo.IsZero() && (l.ValidFrom.IsZero() || !prevTo.Before(l.ValidFrom)):
				v.add(rec, field+".valid_from", "vínculos sobrepostos: o anterior vai até %s", prevTo)
			case !ve.LicenseeSince.IsZero() && !l.ValidTo.Before(ve.LicenseeSince):
				v.add(rec, field+".valid_to", "%s não é anterior a licensee_since %s", l.ValidTo, ve.LicenseeSince)
			}
			prevTo = l.ValidTo
		}
		for j, e := range ve.Events {
			field := fmt.Sprintf("events[%d]", j)
			switch {
			case e.Date.IsZero():
				v.add(rec, field+".date", "obrigatório")
			case e.Kind != EventInspection && e.Kind != EventAccident:
				v.add(rec, field+".kind", "use %s ou %s", EventInspection, EventAccident)
			case e.Kind == EventAccident && e.Approved:
				v.add(rec, field+".approved", "só para inspeção")
			case j > 0 && e.Date.Before(ve.Events[j-1].Date):
				v.add(rec, field+".date", "fora de ordem")
			}
			v.text(rec, field+".note", e.Note, false)
		}
		for j, ir := range ve.InspectionRequests {
			field := fmt.Sprintf("inspection_requests[%d]", j)
			switch {
			case ir.RequestedOn.IsZero():
				v.add(rec, field+".requested_on", "obrigatório")
			case ir.ScheduledFor.IsZero():
				v.add(rec, field+".scheduled_for", "obrigatório: a data estabelecida pelo órgão (Art. 45, IV)")
			case ir.ScheduledFor.Before(ir.RequestedOn):
				v.add(rec, field+".scheduled_for", "%s anterior a requested_on %s", ir.ScheduledFor, ir.RequestedOn)
			case !ir.JustificationApproved.IsZero() && ir.JustificationApproved.Before(ir.RequestedOn):
				v.add(rec, field+".justification_approved", "%s anterior a requested_on %s", ir.JustificationApproved, ir.RequestedOn)
			}
			v.text(rec, field+".reference", ir.Reference, false)
		}
		if len(ve.LicenseeHistory) > 0 && ve.LicenseeSince.IsZero() {
			v.add(rec, "licensee_since", "obrigatório quando há licensee_history")
		}
		if y := ve.ManufactureYear; y != 0 && (y < 1900 || y > time.Now().Year()+1) {
			v.add(rec, "manufacture_year", "ano %d fora do intervalo 1900–%d", y, time.Now().Year()+1)
		}
		if d := ve.MeterDistanceM; d != 0 && !(d > 0 && d <= 100) {
			v.add(rec, "meter_distance_m", "distância %v m fora do intervalo (0, 100]", d)
		}
		if c := ve.RequiredCNHCategory; c != "" {
			ve.RequiredCNHCategory = upperASCII(c)
			if !ValidCNHCategory(ve.RequiredCNHCategory) {
				v.add(rec, "required_cnh_category", "categoria %q inválida (A, B, C, D, E, AB, AC, AD, AE)", c)
			}
		}
		for j := range ve.Devices {
			d := &ve.Devices[j]
			f := fmt.Sprintf("devices[%d]", j)
			if !slices.Contains(deviceKinds, d.Kind) {
				v.add(rec, f+".kind", "tipo %q desconhecido (tachograph, gps, slm, bridge)", d.Kind)
			}
			d.Serial = strings.TrimSpace(d.Serial)
			if d.Serial == "" {
				v.add(rec, f+".serial", "obrigatório")
			} else {
				v.text(rec, f+".serial", d.Serial, true)
				key := string(d.Kind) + "/" + d.Serial
				if other, ok := devices[key]; ok {
					v.add(rec, f+".serial", "%s %s já instalado no veículo %s", d.Kind, d.Serial, other)
				} else {
					devices[key] = ve.ID
				}
			}
			v.text(rec, f+".model", d.Model, false)
			for _, p := range []struct {
				name string
				d    Date
			}{{"inmetro_verification", d.INMETROVerification}, {"calibration", d.Calibration}} {
				if !p.d.IsZero() && !d.ValidUntil.IsZero() && d.ValidUntil.Before(p.d) {
					v.add(rec, f+".valid_until", "%s é anterior a %s (%s)", d.ValidUntil, p.name, p.d)
				}
			}
		}
		v.documents(rec, ve.Documents)
		switch {
		case ve.KeyID == "" && ve.PublicKey == "":
		case ve.KeyID == "":
			v.add(rec, "key_id", "obrigatório com public_key")
		case ve.PublicKey == "":
			v.add(rec, "public_key", "obrigatória com key_id")
		default:
			if !idPattern.MatchString(ve.KeyID) {
				v.add(rec, "key_id", "%q inválido (use [A-Za-z0-9_-], até 32)", ve.KeyID)
			} else if other, ok := keyIDs[ve.KeyID]; ok {
				v.add(rec, "key_id", "já usado pelo veículo %s", other)
			} else {
				keyIDs[ve.KeyID] = ve.ID
			}
			if _, err := ve.Ed25519Key(); err != nil {
				v.add(rec, "public_key", "esperado ed25519 (32 bytes) em base64")
			}
		}
	}

	drivers := map[string]bool{}
	cpfs := map[string]string{}
	cards := map[string]string{} // card key → driver id
	for i := range r.Drivers {
		d := &r.Drivers[i]
		rec := recordName("drivers", d.ID, i)
		if v.id(rec, d.ID) {
			if drivers[d.ID] {
				v.add(rec, "id", "repetido")
			}
			drivers[d.ID] = true
		}
		v.text(rec, "name", d.Name, true)
		if d.CPF == "" {
			v.add(rec, "cpf", "obrigatório")
		} else if c, err := ParseCPF(d.CPF); err != nil {
			v.add(rec, "cpf", "%v", err)
		} else {
			d.CPF = c
			if other, ok := cpfs[c]; ok {
				v.add(rec, "cpf", "já cadastrado para o condutor %s", other)
			} else {
				cpfs[c] = d.ID
			}
		}
		if n := d.CNHNumber; n != "" {
			n = strings.TrimSpace(n)
			if len(n) != 11 || strings.Trim(n, "0123456789") != "" {
				v.add(rec, "cnh_number", "número de registro da CNH tem 11 dígitos")
			}
			d.CNHNumber = n
		}
		if c := d.CNHCategory; c != "" {
			d.CNHCategory = upperASCII(c)
			if !ValidCNHCategory(d.CNHCategory) {
				v.add(rec, "cnh_category", "categoria %q inválida (A, B, C, D, E, AB, AC, AD, AE)", c)
			}
		}
		mc := d.MedicalCertificate
		if !mc.Issued.IsZero() && mc.ValidUntil.IsZero() {
			v.add(rec, "medical_certificate.valid_until", "obrigatória quando issued é dada")
		}
		if !mc.Issued.IsZero() && !mc.ValidUntil.IsZero() && mc.ValidUntil.Before(mc.Issued) {
			v.add(rec, "medical_certificate.valid_until", "%s é anterior à emissão (%s)", mc.ValidUntil, mc.Issued)
		}
		if d.TachographCard != "" {
			c := NormalizeCard(d.TachographCard)
			if !validCard(c) {
				v.add(rec, "tachograph_card", "número de cartão inválido (1 a 32 caracteres 0–9, A–Z, não só zeros)")
			} else {
				d.TachographCard = c
				full, ident := cardKeys(c)
				clash := ""
				for _, k := range []string{full, ident} {
					if other, ok := cards[k]; ok && k != "" && clash == "" {
						clash = other
					}
				}
				if clash != "" {
					v.add(rec, "tachograph_card", "cartão confunde-se com o do condutor %s (regra em docs/registry.md)", clash)
				} else {
					for _, k := range []string{full, ident} {
						if k != "" {
							cards[k] = d.ID
						}
					}
				}
			}
		}
		v.reference(rec, d.Licensee, licensees)
	}
	v.assignedDrivers(r)
	return v.err()
}

// assignedDrivers checks each vehicle's assigned driver: a registered driver of the vehicle's
// licensee.
func (v *validator) assignedDrivers(r *Registry) {
	licenseeOf := make(map[string]string, len(r.Drivers))
	for _, d := range r.Drivers {
		if _, dup := licenseeOf[d.ID]; !dup {
			licenseeOf[d.ID] = d.Licensee
		}
	}
	for i := range r.Vehicles {
		ve := &r.Vehicles[i]
		ve.Driver = strings.TrimSpace(ve.Driver)
		if ve.Driver == "" {
			continue
		}
		rec := recordName("vehicles", ve.ID, i)
		switch l, ok := licenseeOf[ve.Driver]; {
		case !ok:
			v.add(rec, "driver", "condutor %q não cadastrado", ve.Driver)
		case l != ve.Licensee:
			v.add(rec, "driver", "o condutor %s é do licenciado %s, não do licenciado do veículo (%s)", ve.Driver, l, ve.Licensee)
		}
	}
}

// recordName names a record by its id, or by its position when the id is unusable.
func recordName(list, id string, i int) string {
	if idPattern.MatchString(id) {
		return list + "[" + id + "]"
	}
	return fmt.Sprintf("%s[#%d]", list, i+1)
}

type validator struct{ errs []error }

func (v *validator) add(rec, field, format string, a ...any) {
	v.errs = append(v.errs, &FieldError{Record: rec, Field: field, Msg: fmt.Sprintf(format, a...)})
}

func (v *validator) err() error { return errors.Join(v.errs...) }

// id checks a record id and reports whether it is usable.
func (v *validator) id(rec, id string) bool {
	switch {
	case id == "":
		v.add(rec, "id", "obrigatório")
	case !idPattern.MatchString(id):
		v.add(rec, "id", "%q inválido (use letras, dígitos, _ e -, até 32)", id)
	default:
		return true
	}
	return false
}

func (v *validator) text(rec, field, s string, required bool) {
	switch {
	case strings.TrimSpace(s) == "":
		if required {
			v.add(rec, field, "obrigatório")
		}
	case len(s) > maxText:
		v.add(rec, field, "texto longo demais (máx. %d bytes)", maxText)
	}
}

func (v *validator) reference(rec, licensee string, licensees map[string]bool) {
	switch {
	case licensee == "":
		v.add(rec, "licensee", "obrigatório")
	case !licensees[licensee]:
		v.add(rec, "licensee", "licenciado %q não cadastrado", licensee)
	}
}

func (v *validator) documents(rec string, docs []Document) {
	for j, d := range docs {
		f := fmt.Sprintf("documents[%d]", j)
		switch {
		case d.Kind == DocCNH || d.Kind == DocAtestadoMedico:
			v.add(rec, f+".kind", "%s é dado do condutor (drivers: cnh_valid_until, medical_certificate)", d.Kind)
		case !slices.Contains(documentKinds, d.Kind):
			v.add(rec, f+".kind", "tipo %q desconhecido (licenca, csv, inspecao, afericao_tacografo)", d.Kind)
		}
		v.text(rec, f+".number", d.Number, false)
		if !d.Issued.IsZero() && !d.ValidUntil.IsZero() && d.ValidUntil.Before(d.Issued) {
			v.add(rec, f+".valid_until", "%s é anterior à emissão (%s)", d.ValidUntil, d.Issued)
		}
	}
}
