package profile

import (
	"strings"
	"testing"
)

// The amounts are the law's (Lei 2.277/2018: Art. 45, parágrafo único, 300 UFMPs; Art. 46,
// parágrafo único, 400; Art. 47, 250), read from the articles the profile quotes.
func TestLawFineFromTheSoleParagraphs(t *testing.T) {
	p := Piuma()
	for _, c := range []struct {
		penalty string
		amount  float64
		source  string
		ok      bool
	}{
		{"Art. 45, VII", 300, "Art. 45, parágrafo único", true},
		{"Art. 45, I", 300, "Art. 45, parágrafo único", true},
		{"Art. 46, X", 400, "Art. 46, parágrafo único", true},
		{"Art. 46, IV", 400, "Art. 46, parágrafo único", true},
		{"Art. 47", 250, "Art. 47", true},
		{"Art. 41, I", 0, "", false},
		{"Art. 23", 0, "", false},
		{"—", 0, "", false},
	} {
		amount, source, ok := p.LawFine(c.penalty)
		if amount != c.amount || source != c.source || ok != c.ok {
			t.Errorf("LawFine(%q) = %v, %q, %v; want %v, %q, %v", c.penalty, amount, source, ok, c.amount, c.source, c.ok)
		}
	}
	// The built-in profile's every fine agrees with the law (it loads).
	if why := p.FineContradiction("Art. 46, X", 400, true); why != "" {
		t.Errorf("400 under Art. 46, X: %s", why)
	}
	if why := p.FineContradiction("Art. 41, I", 0, true); why != "" {
		t.Errorf("a notificação under Art. 41, I: %s", why)
	}
	if why := p.FineContradiction("Art. 47", 0, false); why != "" {
		t.Errorf("an alert fines nothing: %s", why)
	}
}

// A profile whose fine contradicts its penalty's article does not load, and the error names the
// key and the provision that sets the amount.
func TestProfileRefusesFineContradictingLaw(t *testing.T) {
	for _, c := range []struct{ old, new, key, want string }{
		{"    fine: 400\n    infraction: true\n  hours:", "    fine: 300\n    infraction: true\n  hours:",
			"rules.speed.fine", "300 UFMP não é a que a lei fixa para Art. 46, X: 400 UFMP (Art. 46, parágrafo único)"},
		{"repeat: {penalty: \"Art. 45, I\", fine: 300}", "repeat: {penalty: \"Art. 45, I\", fine: 250}",
			"rules.route_deviation.repeat.fine", "Art. 45, I: 300 UFMP (Art. 45, parágrafo único)"},
		{"    text: comércio ou uso de bebida alcoólica no interior do veículo\n    fine: 250", "    text: comércio ou uso de bebida alcoólica no interior do veículo\n    fine: 400",
			"manual_infractions.art25.fine", "Art. 47: 250 UFMP (Art. 47)"},
		{"      penalty: Art. 46, IV\n      text: deixar de renovar o atestado médico de sanidade física e mental dos condutores\n      fine: 400",
			"      penalty: Art. 46, IV\n      text: deixar de renovar o atestado médico de sanidade física e mental dos condutores\n      fine: 250",
			"document_expired.documents.atestado_medico.fine", "Art. 46, IV: 400 UFMP"},
	} {
		y := string(PiumaYAML())
		if !strings.Contains(y, c.old) {
			t.Fatalf("the built-in profile no longer has %q", c.old)
		}
		_, err := Parse([]byte(strings.Replace(y, c.old, c.new, 1)), "t.yaml")
		if err == nil || !strings.Contains(err.Error(), c.key+": ") || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: %v", c.key, err)
		}
	}
}
