package registry

import "fmt"

// documentLabels name the dated items in Portuguese, as the dashboard, the drafts and the
// notices print them.
var documentLabels = map[DocumentKind]string{
	DocLicenca:            "licença de funcionamento",
	DocCSV:                "Certificado de Segurança Veicular (CSV)",
	DocInspecao:           "inspeção técnica veicular",
	DocAtestadoMedico:     "atestado médico de aptidão física e mental",
	DocCNH:                "Carteira Nacional de Habilitação (CNH)",
	DocAfericaoTacografo:  "aferição do tacógrafo",
	DocDeviceVerification: "verificação/calibração do equipamento",
}

// Label is the kind's name in Portuguese ("inspeção técnica veicular"); an unknown kind is
// returned as it is.
func (k DocumentKind) Label() string {
	if l, ok := documentLabels[k]; ok {
		return l
	}
	return string(k)
}

// deviceLabels name the device kinds in Portuguese.
var deviceLabels = map[DeviceKind]string{
	DeviceTachograph: "tacógrafo",
	DeviceGPS:        "receptor GPS",
	DeviceSLM:        "decibelímetro",
	DeviceBridge:     "computador de bordo",
}

// Label is the device kind's name in Portuguese ("decibelímetro").
func (k DeviceKind) Label() string {
	if l, ok := deviceLabels[k]; ok {
		return l
	}
	return string(k)
}

// Label names the subject in Portuguese by kind and id — never by a person's name: "veículo
// PIU-001", "permissionário L1", "condutor D1", "decibelímetro nº PCE-1 (veículo PIU-001)".
// The dashboard says "Permissionário" with the licensee's razão social instead (fleet.js).
func (s Subject) Label() string {
	switch s.Kind {
	case SubjectLicensee:
		return "permissionário " + s.ID
	case SubjectVehicle:
		return "veículo " + s.ID
	case SubjectDriver:
		return "condutor " + s.ID
	case SubjectDevice:
		l := s.Device.Label() + " nº " + s.ID
		if s.Vehicle != "" {
			l += " (veículo " + s.Vehicle + ")"
		}
		return l
	}
	return string(s.Kind) + " " + s.ID
}

// FormatBR writes d as dd/mm/aaaa, or "" for the zero Date.
func (d Date) FormatBR() string {
	if d.IsZero() {
		return ""
	}
	return fmt.Sprintf("%02d/%02d/%04d", d.Day, int(d.Month), d.Year)
}

// Status says in Portuguese where the item stands: "vencido: válido até 20/11/2026 (há 9 dias)",
// "vence hoje (29/11/2026)", "vence em 12 dias (11/12/2026)", or, for a category problem, its
// detail.
func (e Expiry) Status() string {
	if e.Problem == ProblemCategory {
		if e.Detail != "" {
			return e.Detail
		}
		return "categoria da CNH incompatível com o veículo"
	}
	switch {
	case e.ValidUntil.IsZero():
		return "sem data de validade"
	case e.DaysLeft < 0:
		days := -e.DaysLeft
		unit := "dias"
		if days == 1 {
			unit = "dia"
		}
		return fmt.Sprintf("vencido: válido até %s (há %d %s)", e.ValidUntil.FormatBR(), days, unit)
	case e.DaysLeft == 0:
		return fmt.Sprintf("vence hoje (válido até %s)", e.ValidUntil.FormatBR())
	case e.DaysLeft == 1:
		return fmt.Sprintf("vence amanhã (válido até %s)", e.ValidUntil.FormatBR())
	default:
		return fmt.Sprintf("vence em %d dias (válido até %s)", e.DaysLeft, e.ValidUntil.FormatBR())
	}
}
