package cases

import (
	"strings"

	"github.com/trenzinho/trenzinho/profile"
)

// Acts of the process that decide on an auto: only the competent authority ("autoridade
// competente", Art. 57) records them — the judgment of the defence, the inscription in dívida
// ativa, a suspension of the licence, an annulment ex officio — and the judgment of an appeal,
// by the superior authority (the role appeal.decided_by, admin by default). The other acts
// (deliveries, filings, notifications of decisions, payments) are recorded by a fiscal.
var authorityActs = map[string]string{
	ActionDecide:       "decidir a defesa",
	ActionDividaAtiva:  "inscrever a multa em dívida ativa",
	ActionSuspension:   "aplicar a suspensão da licença",
	ActionAnnul:        "anular o auto de ofício",
	ActionDecideAppeal: "decidir o recurso",
}

// The roles the process names (the store defines them all: viewer < fiscal < supervisor <
// autoridade < admin).
const (
	RoleFiscal     = "fiscal"
	RoleAutoridade = "autoridade"
	RoleAdmin      = "admin"
)

// NeedsAuthority reports whether the act is the competent authority's.
func NeedsAuthority(action string) bool { _, ok := authorityActs[action]; return ok }

// RoleFor is the least role that records the act: the appeal's decision is the superior
// authority's (appeal.decided_by: admin unless the profile says autoridade); the other
// authority acts are the autoridade's; the rest a fiscal's.
func RoleFor(p *profile.Profile, action string) string {
	switch {
	case action == ActionDecideAppeal:
		return p.Appeal.Role()
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
	if !c.Imported {
		if msg := AuthorityRefusal(action, user, c.IssuedBy); msg != "" {
			return msg
		}
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
	if NeedsAuthority(action) && !c.Imported && c.IssuedBy != "" {
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
