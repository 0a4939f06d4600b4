package cases

import "strings"

// Acts of the process that decide on an auto: only the competent authority ("autoridade
// competente", Art. 57) records them — the judgment of the defence, the inscription in dívida
// ativa, a suspension of the licence, an annulment ex officio, the judgment of an appeal.
var authorityActs = map[string]string{
	"decide":        "decidir a defesa",
	"divida_ativa":  "inscrever a multa em dívida ativa",
	"suspension":    "aplicar a suspensão da licença",
	"annul":         "anular o auto de ofício",
	"decide_appeal": "decidir o recurso",
}

// NeedsAuthority reports whether the act is the competent authority's.
func NeedsAuthority(action string) bool { _, ok := authorityActs[action]; return ok }

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

// AuthorityRequired is, in Portuguese, why a user below the authority may not record the act.
func AuthorityRequired(action, title string) string {
	if title == "" {
		title = "autoridade competente"
	}
	return "Somente a " + title + " (Art. 57) pode " + authorityActs[action] + "."
}
