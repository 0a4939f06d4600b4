package profile

import (
	"maps"
	"regexp"
	"slices"
	"strings"
)

var (
	romanRE  = regexp.MustCompile(`^[IVXLC]+$`)
	alineaRE = regexp.MustCompile(`^[a-z]$`)
	artRE    = regexp.MustCompile(`^[0-9]+(-[A-Z])?$`)
)

// ParseCitation turns a citation as the profile writes it ("Art. 23", "Art. 46, X", "Art. 20,
// II, d", "Art. 13, parágrafo único", "Art. 54, § 1º") into its key in law.articles ("23",
// "46.X", "20.II.d", "13.pu", "54.§1"). ok is false for anything else (e.g. "—").
func ParseCitation(cite string) (key string, ok bool) {
	s, found := strings.CutPrefix(strings.TrimSpace(cite), "Art. ")
	if !found {
		return "", false
	}
	var parts []string
	for i, p := range strings.Split(s, ",") {
		p = strings.TrimSpace(p)
		switch {
		case i == 0:
			p = strings.TrimRight(p, "º°")
			if !artRE.MatchString(p) {
				return "", false
			}
		case strings.EqualFold(p, "parágrafo único") || p == "pu":
			p = "pu"
		case strings.HasPrefix(p, "§"):
			n := strings.TrimRight(strings.TrimSpace(strings.TrimPrefix(p, "§")), "º°")
			if !artRE.MatchString(n) {
				return "", false
			}
			p = "§" + n
		case romanRE.MatchString(p), alineaRE.MatchString(p):
		default:
			return "", false
		}
		parts = append(parts, p)
	}
	return strings.Join(parts, "."), len(parts) > 0
}

// FormatCitation is the citation of a key of law.articles as an auto prints it: "46.X" →
// "Art. 46, X"; "13.pu" → "Art. 13, parágrafo único"; "54.§1" → "Art. 54, § 1º".
func FormatCitation(key string) string {
	parts := strings.Split(key, ".")
	for i, p := range parts {
		switch {
		case i == 0:
		case p == "pu":
			parts[i] = "parágrafo único"
		case strings.HasPrefix(p, "§"):
			parts[i] = "§ " + strings.TrimPrefix(p, "§") + "º"
		}
	}
	return "Art. " + strings.Join(parts, ", ")
}

// Provisions splits a citation of several provisions read together ("Art. 2 c/c Art. 7", as a
// precept that only another completes) into each one's citation; "" and "—" cite none.
func Provisions(cite string) []string {
	var out []string
	for _, c := range strings.Split(cite, " c/c ") {
		if c = strings.TrimSpace(c); c != "" && c != "—" {
			out = append(out, c)
		}
	}
	return out
}

// ArticleText is the published text of the provision cite names (law.articles), verbatim.
func (p *Profile) ArticleText(cite string) (string, bool) {
	key, ok := ParseCitation(cite)
	if !ok {
		return "", false
	}
	t, ok := p.Law.Articles[key]
	return t, ok && t != ""
}

// Quotation is one provision an auto quotes: its citation and its text as published.
type Quotation struct {
	Cite string `json:"cite"`
	Text string `json:"text"`
}

// LegalBasis is how an auto states the legal basis of an infraction of article fined by
// penalty: "Art. 23 c/c Art. 46, X da Lei Municipal nº 2.277/2018" (or only the penalty's
// citation when it is the article itself), and the quotations of both from law.articles. A
// provision the profile has no text for is left out of quotes: the caller says it is missing.
func (p *Profile) LegalBasis(article, penalty string) (string, []Quotation) {
	var cites []string
	for _, c := range slices.Concat(Provisions(article), Provisions(penalty)) {
		if !slices.Contains(cites, c) {
			cites = append(cites, c)
		}
	}
	line := strings.Join(cites, " c/c ")
	if line != "" {
		line += " da " + p.Law.Name
	}
	var quotes []Quotation
	for _, c := range cites {
		if t, ok := p.ArticleText(c); ok {
			quotes = append(quotes, Quotation{Cite: c, Text: t})
		}
	}
	return line, quotes
}

// PrescriptionPeriod is prescription_years, 5 when not set (Decreto 20.910/1932, art. 1º).
func (p *Profile) PrescriptionPeriod() int {
	if p.PrescriptionYears > 0 {
		return p.PrescriptionYears
	}
	return 5
}

type citation struct{ key, cite string }

// citations are every provision the profile cites, with the key that cites it.
func (p *Profile) citations() []citation {
	var out []citation
	add := func(key, cite string) {
		for _, c := range Provisions(cite) {
			out = append(out, citation{key, c})
		}
	}
	for _, id := range slices.Sorted(maps.Keys(p.Rules)) {
		r := p.Rules[id]
		add("rules."+id+".article", r.Article)
		add("rules."+id+".penalty", r.Penalty)
		if r.Repeat != nil {
			add("rules."+id+".repeat.penalty", r.Repeat.Penalty)
		}
	}
	for _, k := range slices.Sorted(maps.Keys(p.DocumentExpired.Documents)) {
		r := p.DocumentExpired.Documents[k]
		add("document_expired.documents."+k+".article", r.Article)
		add("document_expired.documents."+k+".penalty", r.Penalty)
	}
	for _, id := range slices.Sorted(maps.Keys(p.ManualInfractions)) {
		m := p.ManualInfractions[id]
		add("manual_infractions."+id+".article", m.Article)
		add("manual_infractions."+id+".penalty", m.Penalty)
	}
	return out
}

// A Warning is something the profile leaves unset that makes the monitor's legal output
// doubtful: its text for the administrators (pt-BR), what it blocks (pt-BR), whether it
// blocks the issue of every auto, and the keys of the profile that fix it.
type Warning struct {
	Text        string
	Blocks      string
	BlocksIssue bool
	Keys        []string
}

// Problems are the profile's warnings, each with what it blocks and the keys that fix it:
// no municipal holiday (deadlines may be wrong, calendar-dependent episodes ground no auto),
// no school recess, illustrative fiscal unit values, no address or addressee for defences.
func (p *Profile) Problems() []Warning {
	var w []Warning
	if !p.MunicipalHolidays() {
		w = append(w, Warning{
			Text:   "feriados municipais não cadastrados: prazos podem estar errados e episódios que dependem do calendário não fundamentam auto (perfil legal, holidays)",
			Blocks: "Os prazos em dias úteis (defesa, recurso, pagamento) podem ser contados errados, e os episódios cuja infração depende de ser dia útil, domingo ou feriado não fundamentam auto: os feriados municipais não são conhecidos.",
			Keys:   []string{"holidays.fixed", "holidays.dates"},
		})
	}
	if len(p.Calendars.SchoolRecess) == 0 {
		w = append(w, Warning{
			Text:   "recesso escolar não cadastrado: episódios junto a escolas não fundamentam auto (perfil legal, calendars.school_recess)",
			Blocks: "Os episódios de som junto a escolas não fundamentam auto: sem o calendário escolar não se sabe se a escola funcionava.",
			Keys:   []string{"calendars.school_recess"},
		})
	}
	if !p.FiscalUnit.Confirmed() {
		w = append(w, Warning{
			Text:        "valor da " + p.FiscalUnit.Name + " não confirmado (fiscal_unit.confirmed_by e fiscal_unit.act): nenhum auto pode ser emitido",
			Blocks:      "A emissão de todo auto de infração (recusa ufmp_unconfirmed): o valor da multa em reais depende do valor da unidade fiscal.",
			BlocksIssue: true,
			Keys:        []string{"fiscal_unit.values", "fiscal_unit.confirmed_by", "fiscal_unit.act"},
		})
	}
	if cw, ok := p.competenceWarning(); ok {
		w = append(w, cw)
	}
	if strings.TrimSpace(p.Defence.To) == "" || (p.Defence.Address == "" && p.Defence.Email == "" && p.Defence.Portal == "") {
		w = append(w, Warning{
			Text:   "local e destinatário da defesa não cadastrados (defence.to, defence.address, defence.email ou defence.portal): o auto não dirá onde protocolar a defesa",
			Blocks: "Nada é bloqueado, mas o auto não dirá a quem nem onde protocolar a defesa (Art. 56).",
			Keys:   []string{"defence.to", "defence.address", "defence.email", "defence.portal"},
		})
	}
	return w
}

// Warnings are the texts of Problems, logged at start and shown on the dashboard until set.
func (p *Profile) Warnings() []string {
	var out []string
	for _, w := range p.Problems() {
		out = append(out, w.Text)
	}
	return out
}
