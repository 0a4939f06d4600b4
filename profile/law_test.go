package profile

import (
	"os"
	"strings"
	"testing"
)

func TestParseCitation(t *testing.T) {
	for cite, want := range map[string]string{
		"Art. 23": "23", "Art. 46, X": "46.X", "Art. 20, II, d": "20.II.d", "Art. 13, parágrafo único": "13.pu",
		"Art. 54, § 1º": "54.§1", "Art. 7º": "7", "Art. 22, III": "22.III",
	} {
		got, ok := ParseCitation(cite)
		if !ok || got != want {
			t.Errorf("ParseCitation(%q) = %q, %v; want %q", cite, got, ok, want)
		}
		if back, _ := ParseCitation(FormatCitation(got)); back != got {
			t.Errorf("FormatCitation(%q) = %q does not parse back", got, FormatCitation(got))
		}
	}
	for _, bad := range []string{"—", "", "Art.", "Art. x", "Artigo 23", "Art. 23, 4", "Art. 23, bb"} {
		if k, ok := ParseCitation(bad); ok {
			t.Errorf("ParseCitation(%q) = %q, want no", bad, k)
		}
	}
}

// Every text of law.articles of the Piúma profile is the law's, verbatim: the law as published
// (testdata) holds each one on a line of its own after the provision's number.
func TestPiumaArticlesAreTheLawVerbatim(t *testing.T) {
	law, err := os.ReadFile("testdata/lei-2277-2018-piuma.txt")
	if err != nil {
		t.Fatal(err)
	}
	lines := map[string]bool{}
	for l := range strings.SplitSeq(string(law), "\n") {
		lines[strings.TrimSpace(l)] = true
	}
	p := Piuma()
	if len(p.Law.Articles) < 30 {
		t.Fatalf("only %d articles", len(p.Law.Articles))
	}
	for key, text := range p.Law.Articles {
		parts := strings.Split(key, ".")
		last := parts[len(parts)-1]
		var line string
		switch {
		case len(parts) == 1:
			line = "Art. " + key + " " + text
			if n := len(key); n == 1 {
				line = "Art. " + key + "º " + text
			}
		case last == "pu":
			line = "Parágrafo Único. " + text
		case strings.HasPrefix(last, "§"):
			line = "§ " + strings.TrimPrefix(last, "§") + "º " + text
		case len(parts) == 3:
			line = last + ") " + text
		default:
			line = last + " - " + text
		}
		if !lines[line] {
			t.Errorf("law.articles[%q] is not the law's text: no line %q", key, line)
		}
	}
	// Every provision the profile cites is quoted.
	for _, c := range p.citations() {
		if _, ok := p.ArticleText(c.cite); !ok {
			t.Errorf("%s: %q has no text", c.key, c.cite)
		}
	}
	basis, quotes := p.LegalBasis("Art. 23", "Art. 46, X")
	if basis != "Art. 23 c/c Art. 46, X da Lei Municipal nº 2.277/2018" || len(quotes) != 2 ||
		quotes[1].Text != "dirigir o veículo desenvolvendo velocidade acima da permitida;" {
		t.Errorf("LegalBasis = %q %+v", basis, quotes)
	}
}

// A profile that quotes its law must quote every provision it cites.
func TestArticlesMustCoverCitations(t *testing.T) {
	y := strings.Replace(string(PiumaYAML()), `    "46.X": "dirigir`, `    "46.XI": "dirigir`, 1)
	_, err := Parse([]byte(y), "test.yaml")
	if err == nil || !strings.Contains(err.Error(), "rules.speed.penalty") {
		t.Fatalf("err = %v", err)
	}
}

func TestWarnings(t *testing.T) {
	w := strings.Join(Piuma().Warnings(), "\n")
	for _, want := range []string{"feriados municipais não cadastrados: prazos podem estar errados", "UFMP não confirmado", "defesa"} {
		if !strings.Contains(w, want) {
			t.Errorf("warnings lack %q: %s", want, w)
		}
	}
}

// An expired licence is Art. 2 ("Nenhum … poderá exercer atividades no Município sem … licença")
// read with Art. 7 (the licence's term): the legal basis cites and quotes both, and the penalty.
func TestLicenceLegalBasisQuotesArt2AndArt7(t *testing.T) {
	p := Piuma()
	r := p.DocumentExpired.Documents["licenca"]
	line, quotes := p.LegalBasis(r.Article, r.Penalty)
	if line != "Art. 2 c/c Art. 7 c/c Art. 47 da Lei Municipal nº 2.277/2018" {
		t.Errorf("legal basis %q", line)
	}
	if len(quotes) != 3 || quotes[0].Cite != "Art. 2" || !strings.HasPrefix(quotes[0].Text, "Nenhum \"trenzinho da alegria\"") ||
		quotes[1].Cite != "Art. 7" || quotes[2].Cite != "Art. 47" {
		t.Errorf("quotes %+v", quotes)
	}
}
