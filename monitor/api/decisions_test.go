package api_test

import (
	"net/http"
	"strings"
	"testing"
)

// TestStructuredDecisionThroughTheAPI: a decision states its relatório, fundamentação and
// dispositivo; a five-character decision is refused (400), and the structure is kept.
func TestStructuredDecisionThroughTheAPI(t *testing.T) {
	cf := newCaseFixture(t)
	d := cf.draft(t, "PIU-001", "L1", "speed", at(2026, 10, 1, 15))
	cf.issue(t, d, at(2026, 10, 2, 10))
	cf.setClock(at(2026, 10, 20, 10))
	cf.mustAct(t, d, map[string]any{"action": "notify", "mode": "in_person", "date": "2026-10-05"})
	cf.mustAct(t, d, map[string]any{"action": "defence", "date": "2026-10-09"})
	decide := map[string]any{"action": "decide", "outcome": "rejected", "date": "2026-10-20", "text": "Nego."}
	for _, c := range []struct {
		set  map[string]string
		want string
	}{
		{nil, "relatório (report"},
		{map[string]string{"report": "Auto por velocidade; a defesa alega tacógrafo sem aferição.", "grounds": "Não procede."}, "fundamentação (grounds"},
		{map[string]string{"grounds": "O certificado de aferição de 02/03/2026 consta do pacote selado; a alegação não procede.", "ruling": "Nego."}, "dispositivo (ruling"},
	} {
		for k, v := range c.set {
			decide[k] = v
		}
		code, body, _ := cf.do("POST", "/api/v1/drafts/"+d+"/case", decide, session{bearer: cf.auth})
		if code != http.StatusBadRequest || !strings.Contains(errorMessage(t, body), c.want) {
			t.Errorf("%v: %d %s, want 400 %q", decide, code, body, c.want)
		}
	}
	decide["ruling"] = "Indefiro a defesa e confirmo a multa de 400 UFMP."
	code, body, _ := cf.do("POST", "/api/v1/drafts/"+d+"/case", decide, session{bearer: cf.auth})
	if code != http.StatusOK || !strings.Contains(string(body), `"grounds":"O certificado de aferição`) {
		t.Errorf("structured decision: %d %s", code, body)
	}
}
