package registry

import (
	"strings"
	"unicode"
	"unicode/utf8"
)

// Redacted returns the driver as lists show it (LGPD data minimisation): the name cut to the
// first name and the initials of the others ("Maria A. S."), the CPF masked as
// ***.456.789-**, the CNH number hidden, the tachograph card number cut to its last four
// characters ("**********H101": enough to tell cards apart on screen; the server matches whole
// numbers). Id, licensee, CNH category and dates and medical certificate dates stay: the
// control room needs them to judge documents. A redacted driver fails validation, so it cannot
// be saved back by mistake.
func (d Driver) Redacted() Driver {
	d.Name = AbbreviateName(d.Name)
	d.CPF = MaskCPF(d.CPF)
	if d.CNHNumber != "" {
		d.CNHNumber = "***"
	}
	if n := len(d.TachographCard); n > 4 {
		d.TachographCard = strings.Repeat("*", n-4) + d.TachographCard[n-4:]
	}
	return d
}

// nameParticles are the lower-case connecting words of Portuguese names, left out of the
// initials.
var nameParticles = map[string]bool{"da": true, "das": true, "de": true, "do": true, "dos": true, "e": true}

// AbbreviateName keeps the first word of a name and the initials of the others, leaving out
// the particles da, das, de, do, dos and e: "Maria Aparecida dos Santos" becomes
// "Maria A. S.".
func AbbreviateName(name string) string {
	words := strings.Fields(name)
	if len(words) == 0 {
		return ""
	}
	out := []string{words[0]}
	for _, w := range words[1:] {
		if nameParticles[strings.ToLower(w)] {
			continue
		}
		r, _ := utf8.DecodeRuneInString(w)
		out = append(out, string(unicode.ToUpper(r))+".")
	}
	return strings.Join(out, " ")
}
