package profile

import (
	"fmt"
	"maps"
	"regexp"
	"slices"
	"strconv"
	"strings"
)

// The fine amounts are the law's, not the profile's: Lei 2.277/2018 sets them in the sole
// paragraphs of Art. 45 ("… multa no valor equivalente a 300 (trezentas) UFMPs") and 46 (400)
// and in the caput of Art. 47 (250). A penalty citation is tied to the amount its article's text
// (law.articles) states, and a fine that contradicts it is refused on load, at issue and by the
// renderer — this file is the one place that reads the amounts from the law.

// amountRE finds the amount a provision fines with ("multa no valor equivalente a 300").
var amountRE = regexp.MustCompile(`multa no valor equivalente a ([0-9]+(?:[.,][0-9]+)?)`)

// LawFine is the fine the law sets for a penalty citation ("Art. 46, X"), read from the text of
// its article's sole paragraph, else of its caput, in law.articles: the amount, and the citation
// of the provision that sets it ("Art. 46, parágrafo único"). ok is false when the profile quotes
// no provision of that article that sets an amount (e.g. "Art. 41, I", a notificação).
func (p *Profile) LawFine(penalty string) (amount float64, source string, ok bool) {
	key, ok := ParseCitation(penalty)
	if !ok {
		return 0, "", false
	}
	art, _, _ := strings.Cut(key, ".")
	for _, k := range []string{art + ".pu", art} {
		m := amountRE.FindStringSubmatch(p.Law.Articles[k])
		if m == nil {
			continue
		}
		v, err := strconv.ParseFloat(strings.ReplaceAll(m[1], ",", "."), 64)
		if err != nil {
			continue
		}
		return v, FormatCitation(k), true
	}
	return 0, "", false
}

// FineContradiction says, in Portuguese, how a fine of fine (in the fiscal unit) under penalty
// contradicts the law, or "" when it does not: the law sets an amount for the penalty's article
// and fine is another. A fine of 0 is no contradiction for a mapping that is not an infraction
// (an alert, a notificação): it fines nothing.
func (p *Profile) FineContradiction(penalty string, fine float64, infraction bool) string {
	for _, c := range Provisions(penalty) {
		law, source, ok := p.LawFine(c)
		if !ok || fine == law || (fine == 0 && !infraction) {
			continue
		}
		return fmt.Sprintf("a multa de %s %s não é a que a lei fixa para %s: %s %s (%s)",
			fmtAmount(fine), p.FiscalUnit.Name, c, fmtAmount(law), p.FiscalUnit.Name, source)
	}
	return ""
}

func fmtAmount(v float64) string { return strconv.FormatFloat(v, 'f', -1, 64) }

// fineProblems are the load errors of every fine the profile maps that contradicts its law.
func (p *Profile) fineProblems() []error {
	var errs []error
	check := func(key, penalty string, fine float64, infraction bool) {
		if why := p.FineContradiction(penalty, fine, infraction); why != "" {
			errs = append(errs, fmt.Errorf("%s: %s", key, why))
		}
	}
	for _, id := range slices.Sorted(maps.Keys(p.Rules)) {
		r := p.Rules[id]
		check("rules."+id+".fine", r.Penalty, r.FineUFMP, r.Infraction)
		if r.Repeat != nil {
			check("rules."+id+".repeat.fine", r.Repeat.Penalty, r.Repeat.Fine, true)
		}
	}
	for _, k := range slices.Sorted(maps.Keys(p.DocumentExpired.Documents)) {
		r := p.DocumentExpired.Documents[k]
		check("document_expired.documents."+k+".fine", r.Penalty, r.FineUFMP, r.Infraction)
	}
	for _, id := range slices.Sorted(maps.Keys(p.ManualInfractions)) {
		m := p.ManualInfractions[id]
		check("manual_infractions."+id+".fine", m.Penalty, m.Fine, true)
	}
	return errs
}
