package profile

import (
	"strings"
	"testing"
)

func TestDocumentExpiredMapping(t *testing.T) {
	p := Piuma()
	type mapping struct {
		article, penalty string
		fine             float64
	}
	want := map[string]mapping{
		"inspecao":           {"Art. 32", "Art. 45, IV", 300},
		"atestado_medico":    {"Art. 20, II, d", "Art. 46, IV", 400},
		"cnh":                {"Art. 20, II, b", "Art. 45, II", 300},
		"licenca":            {"Art. 2 c/c Art. 7", "Art. 47", 250}, // Art. 2 forbids, Art. 7 sets the term
		"csv":                {"Art. 20, III, b", "Art. 47", 250},
		"afericao_tacografo": {"Art. 20, III, e", "Art. 47", 250},
	}
	for kind, w := range want {
		r, ok := p.RuleFor(DocumentExpiredRule, kind)
		if !ok || r.Article != w.article || r.Penalty != w.penalty || !r.Infraction || r.FineUFMP != w.fine {
			t.Errorf("%s: %+v, want %+v", kind, r, w)
		}
	}
	if r, ok := p.RuleFor(DocumentExpiredRule, "verificacao_dispositivo"); !ok || r.Infraction {
		t.Errorf("verificacao_dispositivo: %+v, want an alert, not an infraction", r)
	}
	if !strings.Contains(p.DocumentExpired.Documents["cnh"].Notice, "Art. 53, I") {
		t.Error("the CNH mapping does not recommend cassação (Art. 53, I)")
	}
	if _, ok := p.RuleFor(DocumentExpiredRule, "crlv"); ok {
		t.Error("an unmapped kind found")
	}
	if r, ok := p.RuleFor("speed", "ignored"); !ok || r.Article != "Art. 23" {
		t.Errorf("RuleFor(speed) = %+v", r)
	}
	if p.DocumentExpired.ConfirmS != 60 || p.DocumentExpired.ClearS != 300 {
		t.Errorf("timing %+v", p.DocumentExpired)
	}

	for _, c := range []struct{ from, to, key string }{
		{"    inspecao:\n", "    vistoria:\n", "document_expired.documents.vistoria"},
		{"      article: Art. 32\n", "      article: \"\"\n", "document_expired.documents.inspecao.article"},
		{"      penalty: Art. 46, IV\n", "      penalty: \"\"\n", "document_expired.documents.atestado_medico.penalty"},
		{"      fine: 250\n      infraction: true\n    csv:", "      fine: -1\n      infraction: true\n    csv:", "document_expired.documents.licenca.fine"},
		{"  clear_s: 300 ", "  clear_s: -5 ", "document_expired.clear_s"},
	} {
		y := string(PiumaYAML())
		if strings.Count(y, c.from) != 1 {
			t.Fatalf("%q is not once in piuma.yaml", c.from)
		}
		_, err := Parse([]byte(strings.Replace(y, c.from, c.to, 1)), "x.yaml")
		if err == nil || !strings.Contains(err.Error(), c.key+":") {
			t.Errorf("%s: %v", c.key, err)
		}
	}
}
