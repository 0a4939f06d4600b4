package cases

import (
	"strings"

	"github.com/trenzinho/trenzinho/profile"
)

// Acts of the process that decide on an auto: only the competent authority ("autoridade
// competente", Art. 57) records them — the judgment of the defence, the inscription in dívida
// ativa, a suspension of the licence, an annulment ex officio — and the judgment of an appeal,
// by the superior authority (the role appeal.decided_by, autoridade by default; never admin, an
// IT role). The other acts
// (deliveries, filings, notifications of decisions, payments) are recorded by a fiscal.
var authorityActs = map[string]string{
	ActionDecide:       "decidir a defesa",
	ActionDividaAtiva:  "inscrever a multa em dívida ativa",
	ActionSuspension:   "aplicar a suspensão da licença",
	ActionAnnul:        "anular o auto de ofício",
	ActionDecideAppeal: "decidir o recurso",
	ActionReconsider:   "reconsiderar a decisão",
}

// Role is what a user may do. Each role of the control room includes the ones before it:
// viewer < fiscal < supervisor < autoridade < admin. RoleLicensee stands outside that order: it
// includes none of them and none includes it (AtLeast is false both ways), so that a route
// admits a licensee's user only when it says so (the portal's routes, monitor/api/portal.go).
type Role string

// Roles.
const (
	RoleViewer     Role = "viewer"     // watches the fleet and the episodes
	RoleFiscal     Role = "fiscal"     // reviews drafts and issues notices
	RoleSupervisor Role = "supervisor" // manages the registry and the inspectors' work
	// RoleAutoridade is the competent authority (Art. 57): decides defences, appeals,
	// suspensions, annulments and the inscription in dívida ativa — never on an auto the same
	// user issued (Lei 9.784/1999, arts. 18–19, by analogy).
	RoleAutoridade Role = "autoridade"
	RoleAdmin      Role = "admin" // manages users
	// RoleLicensee is a licensee's own user (the portal): bound to one licensee of the
	// registry, it sees that licensee's vehicles, episodes, autos and cases only, and files
	// their defences and appeals.
	RoleLicensee Role = "licensee"
)

func (r Role) rank() int {
	switch r {
	case RoleViewer:
		return 1
	case RoleFiscal:
		return 2
	case RoleSupervisor:
		return 3
	case RoleAutoridade:
		return 4
	case RoleAdmin:
		return 5
	}
	return 0
}

// Valid reports whether r is one of the roles.
func (r Role) Valid() bool { return r.rank() > 0 || r == RoleLicensee }

// AtLeast reports whether r includes min (viewer < fiscal < supervisor < autoridade < admin). An
// unknown role includes nothing; RoleLicensee includes nothing and is included by nothing.
func (r Role) AtLeast(min Role) bool { return r.rank() > 0 && min.rank() > 0 && r.rank() >= min.rank() }

// NeedsAuthority reports whether the act is the competent authority's.
func NeedsAuthority(action string) bool { _, ok := authorityActs[action]; return ok }

// RoleFor is the least role that records the act: the appeal's decision is the superior
// authority's (appeal.decided_by, autoridade); the other authority acts are the autoridade's;
// the rest a fiscal's.
func RoleFor(p *profile.Profile, action string) Role {
	switch {
	case action == ActionDecideAppeal:
		return Role(p.Appeal.Role())
	case NeedsAuthority(action):
		return RoleAutoridade
	}
	return RoleFiscal
}

// AuthorityRefusal is, in Portuguese, why user may not record the authority's act on an auto
// issued by issuer: nobody judges their own act (Lei nº 9.784/1999, arts. 18 and 19, applied
// by analogy). "" when nothing stands in the way (or the act is not the authority's, or the
// issuer is not known, as for an imported paper notice).
func AuthorityRefusal(action, user, issuer string) string {
	what, ok := authorityActs[action]
	if !ok || strings.TrimSpace(issuer) == "" || !strings.EqualFold(user, issuer) {
		return ""
	}
	return "Impedimento: o agente que lavrou o auto (" + issuer + ") não pode " + what +
		" (Lei nº 9.784/1999, arts. 18 e 19, por analogia); outra autoridade deve fazê-lo."
}

// Impediment is, in Portuguese, why user may not record the act on the case: the issuer never
// decides on the auto, and who decided the defence never decides the appeal against the
// decision (Lei nº 9.784/1999, arts. 18 and 56, § 1º, by analogy). "" when none.
func (c *Case) Impediment(action, user string) string {
	if !c.Imported() {
		if msg := AuthorityRefusal(action, user, c.IssuedBy); msg != "" {
			return msg
		}
	}
	if msg := c.reconsiderImpediment(action, user); msg != "" {
		return msg
	}
	if action == ActionDecideAppeal && c.DecidedBy != "" && strings.EqualFold(user, c.DecidedBy) {
		return "Impedimento: quem decidiu a defesa (" + c.DecidedBy + ") não pode decidir o recurso contra a própria decisão; " +
			"o recurso é decidido pela autoridade superior (Lei nº 9.784/1999, art. 56, § 1º, por analogia)."
	}
	return ""
}

// impeded are the users who may not record the act on the case.
func (c *Case) impeded(action string) []string {
	var out []string
	if NeedsAuthority(action) && !c.Imported() && c.IssuedBy != "" {
		out = append(out, c.IssuedBy)
	}
	if action == ActionDecideAppeal && c.DecidedBy != "" && !strings.EqualFold(c.DecidedBy, c.IssuedBy) {
		out = append(out, c.DecidedBy)
	}
	return out
}

// AuthorityRequired is, in Portuguese, why a user below the authority may not record the act.
func AuthorityRequired(action, title string) string {
	if title == "" {
		title = "autoridade competente"
	}
	return "Somente a " + title + " (Art. 57) pode " + authorityActs[action] + "."
}

// RoleRequired is, in Portuguese, why a user below RoleFor may not record the act.
func RoleRequired(p *profile.Profile, action string) string {
	if action == ActionDecideAppeal {
		who := "autoridade superior"
		if p.Appeal.To != "" {
			who = p.Appeal.To
		}
		return "Somente a " + who + " (perfil " + p.Appeal.Role() + ") pode decidir o recurso (Lei nº 9.784/1999, art. 56, § 1º, por analogia)."
	}
	if NeedsAuthority(action) {
		return AuthorityRequired(action, p.Authority.Title)
	}
	return "Somente um fiscal (ou perfil acima) pode " + actionText[action] + "."
}

// MayAct refuses (Forbidden) the act to a user whose role is below the least that records it
// (RoleFor).
func MayAct(p *profile.Profile, role Role, action string) error {
	// The appeal is the superior authority's, the role the profile names: not admin, whose
	// rank is of the IT, not of the municipality's hierarchy (Lei nº 9.784/1999, art. 56, § 1º).
	if action == ActionDecideAppeal && role == RoleAdmin && RoleFor(p, action) != RoleAdmin {
		return forbidden(RoleRequired(p, action) + " O perfil admin é de administração do sistema e não decide recursos.")
	}
	if role.AtLeast(RoleFor(p, action)) {
		return nil
	}
	return forbidden(RoleRequired(p, action))
}
