package notice_test

import (
	"crypto/ed25519"
	"crypto/rand"
	"encoding/json"
	"maps"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/trenzinho/trenzinho/monitor/drafts"
	"github.com/trenzinho/trenzinho/monitor/notice"
	"github.com/trenzinho/trenzinho/profile"
	"github.com/trenzinho/trenzinho/wire"
)

// issuedAuto renders, issued as AI-2026/0001 by an identified agent, a one-fact draft citing
// article and fined by penalty, and returns its text (pdftotext) with whitespace collapsed.
func issuedAuto(t *testing.T, p *profile.Profile, name, rule, article, penaltyArt string, issued bool, edit ...func(*notice.Input)) string {
	t.Helper()
	_, key, _ := ed25519.GenerateKey(rand.Reader)
	now := wire.NewTime(time.Date(2026, 11, 27, 15, 0, 0, 0, time.UTC))
	fine := lawFine(p, penaltyArt)
	d := drafts.Draft{ID: "PIU-001." + name, Vehicle: "PIU-001", Licensee: "L1", Rules: []string{rule}, Articles: []string{article},
		Penalty: penaltyArt, FineUFMP: fine, FiscalUnit: "UFMP", Start: now, End: now, Municipality: "Piúma-ES", FiscalOrgan: p.FiscalOrgan,
		Law: p.Law.Name, CreatedAt: now, Software: "test", ProfileID: "piuma", ProfileVer: p.Version,
		Warnings: []string{"Local de exemplo (source: sample): não usar para autuação sem verificação."},
		Facts: []drafts.Fact{{EpisodeID: "x", Rule: rule, Article: article, LegalText: "descrição do perfil", Description: "Fato de teste.",
			Start: now, End: now, DurationS: 60, Peak: 45, Unit: "km/h", Limit: 37, Source: "tacho"}}}
	raw, err := json.Marshal(drafts.Bundle{Format: 1, Draft: d, Batches: []drafts.RawBatch{}})
	if err != nil {
		t.Fatal(err)
	}
	in := notice.Input{Sealed: drafts.Seal(d.ID, 1, raw, "", key), Profile: p,
		Licensee: &notice.Licensee{Name: "Trenzinho Alegria da Orla Ltda", CNPJ: "11222333000181", Address: "Avenida Beira-Mar, 1000, Centro, Piúma-ES"},
		Penalty:  &notice.Penalty{FineUFMP: fine, FineBRL: "1680.00", UnitValueBRL: "4.2000", Recommendation: "Recomenda-se a suspensão (Art. 52): a medição pode ser contestada."}}
	if issued {
		at := time.Date(2026, 11, 27, 14, 0, 0, 0, time.UTC) // Friday 11:00 in Piúma
		in.Decision = notice.Decision{Status: drafts.StatusIssued, Notice: "AI-2026/0001", DecidedBy: "joao", DecidedAt: &at,
			Agent: &notice.Agent{FullName: "João Batista Moreira", Matricula: "FP-0042", Cargo: "Agente de Fiscalização de Posturas"},
		}
	}
	for _, e := range edit {
		e(&in)
	}
	return strings.Join(strings.Fields(render(t, in, "auto-"+name)), " ")
}

// handedOverAuto is issuedAuto's speed auto, handed over at its issue.
func handedOverAuto(t *testing.T, p *profile.Profile) string {
	return issuedAuto(t, p, "handed-over", "speed", "Art. 23", "Art. 46, X", true, func(in *notice.Input) { in.Decision.HandedOver = true })
}

// lawFine is the fine the law sets for penaltyArt (the renderer refuses another), 400 UFMP for
// a penalty that sets none.
func lawFine(p *profile.Profile, penaltyArt string) float64 {
	if v, _, ok := p.LawFine(penaltyArt); ok {
		return v
	}
	return 400
}

var quoteRE = regexp.MustCompile(`“([^”]*)”`)

// Every quotation in every rule's issued auto is the profile's text of the provision, verbatim,
// and the basis reads "Art. X c/c Art. Y da Lei …". The issued auto holds no warning,
// recommendation or draft wording; the preview says it is a draft.
func TestIssuedAutoQuotesTheLawExactly(t *testing.T) {
	p := profile.Piuma()
	texts := map[string]bool{}
	for _, v := range p.Law.Articles {
		texts[strings.Join(strings.Fields(v), " ")] = true
	}
	type cite struct{ rule, article, penalty string }
	var all []cite
	for _, id := range slices.Sorted(maps.Keys(p.Rules)) {
		if r := p.Rules[id]; r.Infraction || r.Penalty != "—" {
			// An alert-only rule (infraction: false, no penalty: service_switch_suspect) never
			// becomes an auto: there is nothing to quote.
			all = append(all, cite{id, r.Article, r.Penalty})
		}
	}
	for _, k := range slices.Sorted(maps.Keys(p.DocumentExpired.Documents)) {
		if r := p.DocumentExpired.Documents[k]; r.Article != "—" {
			all = append(all, cite{profile.DocumentExpiredRule, r.Article, r.Penalty})
		}
	}
	for _, id := range slices.Sorted(maps.Keys(p.ManualInfractions)) {
		all = append(all, cite{id, p.ManualInfractions[id].Article, p.ManualInfractions[id].Penalty})
	}
	if len(all) < 20 {
		t.Fatalf("only %d citations", len(all))
	}
	for i, c := range all {
		name := strings.NewReplacer(" ", "", ",", "-", ".", "", "/", "").Replace(c.rule + "-" + c.article)
		text := issuedAuto(t, p, name+"-"+string(rune('a'+i%26)), c.rule, c.article, c.penalty, true)
		basis := c.article + " c/c " + c.penalty + " da Lei Municipal nº 2.277/2018"
		if c.article == c.penalty {
			basis = c.penalty + " da Lei Municipal nº 2.277/2018"
		}
		if !strings.Contains(text, basis) {
			t.Errorf("%s: no %q", c.rule, basis)
		}
		quotes := quoteRE.FindAllStringSubmatch(text, -1)
		if len(quotes) == 0 {
			t.Errorf("%s: no quotation", c.rule)
		}
		for _, q := range quotes {
			if !texts[q[1]] {
				t.Errorf("%s (%s): quotation %q is not the profile's text", c.rule, c.article, q[1])
			}
		}
		for _, art := range slices.Concat(profile.Provisions(c.article), profile.Provisions(c.penalty)) {
			want, _ := p.ArticleText(art)
			if !strings.Contains(text, "“"+strings.Join(strings.Fields(want), " ")+"”") {
				t.Errorf("%s: %s not quoted", c.rule, art)
			}
		}
		for _, bad := range []string{"AVISO", "Recomendação", "minuta", "MINUTA", "Minuta", "não usar", "descrição do perfil"} {
			if strings.Contains(text, bad) {
				t.Errorf("%s: the issued auto says %q", c.rule, bad)
			}
		}
	}
	preview := issuedAuto(t, p, "preview", "speed", "Art. 23", "Art. 46, X", false)
	for _, want := range []string{"MINUTA — NÃO É AUTO DE INFRAÇÃO", "não usar para autuação", "Recomendação"} {
		if !strings.Contains(preview, want) {
			t.Errorf("the preview lacks %q", want)
		}
	}
}

// The issued auto names the agent (full name, matrícula, cargo), where and to whom the defence
// is filed, the last day to file it when received on the day of issue, and what follows
// without payment.
func TestIssuedAutoAgentAndDefence(t *testing.T) {
	text := issuedAuto(t, defenceProfile(t), "agent", "speed", "Art. 23", "Art. 46, X", true)
	// Not handed over at issue: the receipt is not known, so no last day is printed (Art. 55
	// counts from the receipt), only the rule and a blank to fill at delivery.
	mustContain(t, text, "João Batista Moreira", "FP-0042", "Agente de Fiscalização de Posturas",
		"Autoridade Julgadora de Posturas", "Rua Dr. Jones dos Santos Neves, 100, Centro, Piúma-ES", "defesa@piuma.es.gov.br",
		"contados da data do recebimento deste auto (Art. 55)", "Recebido em ____/____/________", "informado na comunicação seguinte",
		"dívida ativa", "Art. 51")
	for _, bad := range []string{"(data da emissão)", "o prazo termina em"} {
		if strings.Contains(text, bad) {
			t.Errorf("an auto not handed over at issue prints %q", bad)
		}
	}
}

// Handed over at its issue: issued Friday 27/11/2026, received that day, 10 days from
// Saturday → Monday 07/12/2026, printed.
func TestIssuedAutoHandedOverPrintsTheDeadline(t *testing.T) {
	text := handedOverAuto(t, defenceProfile(t))
	mustContain(t, text, "Recebido em 27/11/2026 (data da emissão), o prazo termina em 07/12/2026")
	if strings.Contains(text, "____/____") {
		t.Error("an auto handed over at issue leaves the receipt blank")
	}
}
