// Package cases is the office of the auto de infração: the whole life of an auto after its
// draft as a domain — what must hold before it is issued, the penalty calculus at issue, the
// administrative process after it, who may record each act — in Portuguese for the agent. The
// Office runs each act as one transaction of a Ledger; it speaks no SQL and no HTTP: the store
// persists what it decides and the API translates HTTP to it.
package cases

import (
	"fmt"
	"strings"
	"time"
)

// Codes of the reasons an auto cannot be issued (part of the API: docs/api.md).
const (
	// ReasonLicenseeUnidentified: the licensee responsible for the facts (Art. 48, § 2º) is not
	// on file with razão social, CNPJ and address — a vehicle not in the registry, no registry,
	// or an incomplete record.
	ReasonLicenseeUnidentified = "licensee_unidentified"
	// ReasonSiteUnverified: a site the facts rely on is not verified by an agent (e.g. source:
	// sample).
	ReasonSiteUnverified = "site_unverified"
	// ReasonUFMPUnconfirmed: the fiscal unit's value lacks who confirmed it and the act that
	// publishes it (fiscal_unit.confirmed_by and fiscal_unit.act).
	ReasonUFMPUnconfirmed = "ufmp_unconfirmed"
	// ReasonIntegrityBroken: the sealed evidence does not verify.
	ReasonIntegrityBroken = "integrity_broken"
	// ReasonPrescribed: prescription_years (default 5) have passed since the end of the facts.
	ReasonPrescribed = "prescribed"
	// ReasonAgentIncomplete: the issuing user has no full name, matrícula or cargo on file.
	ReasonAgentIncomplete = "agent_incomplete"
	// ReasonGroundsMissing: an episode of the draft does not ground an auto by itself
	// (grounds_auto: false).
	ReasonGroundsMissing = "grounds_missing"
	// ReasonVehicleUnidentified: the vehicle's plate is not in what the auto prints (the
	// registry's record sealed with the draft).
	ReasonVehicleUnidentified = "vehicle_unidentified"
	// ReasonIssueBeforeFacts: the issue would be dated before the end of the facts it states.
	ReasonIssueBeforeFacts = "issue_before_facts"
)

// Reason is one thing that blocks the issue, with its code and a text for the agent.
type Reason struct {
	Code string `json:"code"`
	Text string `json:"text"` // pt-BR
}

// Licensee is the licensee responsible for the facts as on file.
type Licensee struct {
	ID          string
	RazaoSocial string
	CNPJ        string
	Address     string
}

// Site is a site the facts rely on (a sensitive zone, a boarding point, …).
type Site struct {
	ID       string
	Name     string
	Verified bool
	Source   string // "sample" for the sample set
}

// Agent is how an auto identifies the agent who issues it: full name, registration number
// (matrícula) and post (cargo). Issuing requires all three (ReasonAgentIncomplete).
type Agent struct {
	FullName  string `json:"full_name"`
	Matricula string `json:"matricula"`
	Cargo     string `json:"cargo"`
}

// Complete reports whether the agent has a full name, matrícula and cargo.
func (a Agent) Complete() bool { return len(a.missing()) == 0 }

// missing names what the agent's identification lacks, in Portuguese.
func (a Agent) missing() []string {
	var out []string
	for _, m := range []struct{ v, what string }{{a.FullName, "nome completo"}, {a.Matricula, "matrícula"}, {a.Cargo, "cargo"}} {
		if strings.TrimSpace(m.v) == "" {
			out = append(out, m.what)
		}
	}
	return out
}

// IssueFacts is everything the issue check looks at.
type IssueFacts struct {
	// Licensee is the licensee at the time of the facts; nil: none identified.
	Licensee *Licensee
	// Unregistered: the draft's vehicle is not in the registry.
	Unregistered bool
	// Plate is the vehicle's plate as the auto prints it; PlateChecked false skips the check.
	Plate        string
	PlateChecked bool
	Sites        []Site
	// UnitName is the fiscal unit's name (UFMP) and UnitConfirmed whether its value is
	// confirmed; UnitChecked false skips the check (no profile at hand).
	UnitName      string
	UnitConfirmed bool
	UnitChecked   bool
	// Integrity is "ok" or, in Portuguese, what is wrong with the sealed evidence.
	Integrity string
	// FactEnd is the end of the facts; PrescriptionYears the period (0: not checked); Now the
	// day of the issue; Location the municipality's time zone for the dates printed.
	FactEnd           time.Time
	PrescriptionYears int
	Now               time.Time
	Location          *time.Location
	// User is the issuing user's login and Agent their identification on file.
	User  string
	Agent Agent
	// GroundsMissing are the episodes that do not ground an auto by themselves, with why.
	GroundsMissing []string
	// FineContradiction says how the draft's fine contradicts the law (ReasonFineContradictsLaw).
	FineContradiction string
	// CompetenceMissing are the profile keys of the acts of competence not named
	// (ReasonCompetenceUnproven).
	CompetenceMissing []string
	// InstrumentsUnverified are the measuring instruments without a verification valid on the
	// fact's date, with why (ReasonInstrumentUnverified).
	InstrumentsUnverified []string
}

// IssueBlockers are every reason the auto cannot be issued, in a fixed order; none: it may be.
func IssueBlockers(f IssueFacts) []Reason {
	var out []Reason
	add := func(code, format string, a ...any) { out = append(out, Reason{code, fmt.Sprintf(format, a...)}) }
	if f.Integrity != "ok" {
		add(ReasonIntegrityBroken, "A integridade das evidências seladas não confere (%s): o auto não pode ser emitido.", f.Integrity)
	}
	switch l := f.Licensee; {
	case l == nil && f.Unregistered:
		add(ReasonLicenseeUnidentified, "Veículo não cadastrado: o prestador responsável pelo pagamento da multa (Art. 48, § 2º) não está identificado no cadastro municipal.")
	case l == nil:
		add(ReasonLicenseeUnidentified, "O prestador responsável pelo pagamento da multa (Art. 48, § 2º) na data dos fatos não está identificado no cadastro municipal.")
	default:
		var missing []string
		for _, m := range []struct{ v, what string }{{l.RazaoSocial, "razão social"}, {l.CNPJ, "CNPJ"}, {l.Address, "endereço"}} {
			if strings.TrimSpace(m.v) == "" {
				missing = append(missing, m.what)
			}
		}
		if len(missing) > 0 {
			add(ReasonLicenseeUnidentified, "O cadastro do prestador %s não tem %s: o autuado deve estar identificado (Art. 48, § 2º).", l.ID, join(missing))
		}
	}
	if f.PlateChecked && strings.TrimSpace(f.Plate) == "" {
		add(ReasonVehicleUnidentified, "A placa do veículo não consta do registro do cadastro selado com a minuta: o auto deve identificar o veículo.")
	}
	if !f.FactEnd.IsZero() && !f.Now.IsZero() && f.Now.Before(f.FactEnd) {
		loc := f.Location
		if loc == nil {
			loc = time.UTC
		}
		add(ReasonIssueBeforeFacts, "O auto seria emitido (%s) antes do fim dos fatos que descreve (%s).",
			f.Now.In(loc).Format("02/01/2006 15:04:05"), f.FactEnd.In(loc).Format("02/01/2006 15:04:05"))
	}
	for _, s := range f.Sites {
		if s.Verified && s.Source != "sample" {
			continue
		}
		what := "não verificado por agente"
		if s.Source == "sample" {
			what = "dado de exemplo (source: sample), não verificado"
		}
		add(ReasonSiteUnverified, "O local %q (%s), em que os fatos se apoiam, é %s: verifique-o no cadastro de geocercas antes de autuar.", s.Name, s.ID, what)
	}
	if f.UnitChecked && !f.UnitConfirmed {
		add(ReasonUFMPUnconfirmed, "O valor da %s no perfil legal é ilustrativo: falta quem o confirmou e o ato que o publica (fiscal_unit.confirmed_by e fiscal_unit.act).", f.UnitName)
	}
	if f.PrescriptionYears > 0 && !f.FactEnd.IsZero() {
		loc := f.Location
		if loc == nil {
			loc = time.UTC
		}
		limit := f.FactEnd.In(loc).AddDate(f.PrescriptionYears, 0, 0)
		if !f.Now.Before(limit) {
			add(ReasonPrescribed, "Prescrita: os fatos terminaram em %s e o prazo de %d anos para autuar (Decreto nº 20.910/1932, art. 1º) terminou em %s.",
				f.FactEnd.In(loc).Format("02/01/2006"), f.PrescriptionYears, limit.Format("02/01/2006"))
		}
	}
	if missing := f.Agent.missing(); len(missing) > 0 {
		add(ReasonAgentIncomplete, "O usuário %s não tem %s cadastrados: o auto identifica o agente que o lavra (peça a um administrador).", f.User, join(missing))
	}
	for _, g := range f.GroundsMissing {
		add(ReasonGroundsMissing, "%s", g)
	}
	for _, u := range f.InstrumentsUnverified {
		add(ReasonInstrumentUnverified, "%s", u)
	}
	if r, ok := fineBlocker(f.FineContradiction); ok {
		out = append(out, r)
	}
	if r, ok := competenceBlocker(f.CompetenceMissing); ok {
		out = append(out, r)
	}
	return out
}

// Summary is the error message of a refused issue.
func Summary(rs []Reason) string {
	if len(rs) == 1 {
		return "O auto não pode ser emitido: " + strings.TrimSuffix(rs[0].Text, ".") + "."
	}
	return fmt.Sprintf("O auto não pode ser emitido: %d impedimentos.", len(rs))
}

func join(s []string) string {
	if len(s) <= 1 {
		return strings.Join(s, "")
	}
	return strings.Join(s[:len(s)-1], ", ") + " e " + s[len(s)-1]
}
