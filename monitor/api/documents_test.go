package api_test

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"net/http"
	"strings"
	"testing"

	"github.com/trenzinho/trenzinho/monitor/api"
)

// TestProcessDocumentsFrozen: the receipt of a defence filed online and the document of the
// decision on it are made at the act and frozen: downloaded again after the profile changed
// (the municipality, the authority the defence is addressed to, the appeal's period) and after
// the authority's record changed, they are the same bytes with the same hash; the decision's
// document states the relatório, the fundamentação and the dispositivo as decided, the effects
// (the appeal's period and the payment's) and the authority by full name, matrícula and cargo,
// for the control room and for the licensee alike; a seq that is no decision is 404.
func TestProcessDocumentsFrozen(t *testing.T) {
	pf := newPortalFixture(t, api.PortalConfig{})
	setAgent(t, pf.db, "carla", "Carla Mendes Prado", "AJ-0007", "Autoridade Julgadora de Posturas")
	d := pf.draft(t, "PIU-001", "L1", "speed", at(2026, 11, 1, 10))
	id := pf.issue(t, d, at(2026, 11, 2, 15)).Case.ID
	pf.setClock(at(2026, 11, 4, 10))
	pf.ciencia(t, pf.a, id)
	pf.setClock(at(2026, 11, 9, 16))
	code, body := pf.file(t, pf.a, id, "defence", "O veículo estava parado no ponto de embarque.")
	var f struct {
		Receipt string `json:"receipt"`
	}
	if code != http.StatusCreated || json.Unmarshal(body, &f) != nil {
		t.Fatalf("filing: %d %s", code, body)
	}
	pf.setClock(at(2026, 11, 20, 10))
	v := pf.mustAct(t, d, map[string]any{"action": "decide", "outcome": "rejected", "date": "2026-11-20",
		"report":  "Auto por velocidade de 45 km/h no trecho urbano; a defesa alega parada no ponto de embarque.",
		"grounds": "O registro do tacógrafo mostra o veículo em movimento durante todo o episódio, sem parada no ponto alegado.",
		"ruling":  "Indefiro a defesa e mantenho a multa."})
	if len(v.Decisions) != 1 || v.Decisions[0].Title != "Decisão sobre a defesa" || v.Decisions[0].Outcome != "Defesa indeferida" {
		t.Fatalf("the case's decisions: %+v", v.Decisions)
	}
	staffPDF := v.Decisions[0].PDF
	var pc api.PortalCase
	if pf.get(t, fmt.Sprint("/api/v1/portal/cases/", id), pf.a, &pc); len(pc.Decisions) != 1 || !strings.HasPrefix(pc.Decisions[0].PDF, "/api/v1/portal/cases/") {
		t.Fatalf("the portal's decisions: %+v", pc.Decisions)
	}
	portalPDF := pc.Decisions[0].PDF

	get := func(path, token string) ([]byte, string) {
		t.Helper()
		code, b, h := pf.do("GET", path, nil, session{bearer: token})
		if code != http.StatusOK || h.Get("Content-Type") != "application/pdf" {
			t.Fatalf("GET %s: %d %.200s", path, code, b)
		}
		sum := sha256.Sum256(b)
		if got := h.Get(api.HeaderPDFSHA256); got != hex.EncodeToString(sum[:]) {
			t.Errorf("GET %s: hash header %q, the bytes' %x", path, got, sum)
		}
		return b, h.Get(api.HeaderPDFSHA256)
	}
	receipt, receiptSum := get(f.Receipt, pf.a)
	decision, decisionSum := get(staffPDF, pf.viewer)
	if b, _ := get(portalPDF, pf.a); !bytes.Equal(b, decision) {
		t.Error("the licensee's copy of the decision differs from the control room's")
	}
	text := flat(pdfText(t, decision))
	for _, want := range []string{"Decisão sobre a defesa", v.Notice, "Trenzinho Alegria da Orla Ltda", "20/11/2026", "Defesa indeferida",
		"Relatório", "a defesa alega parada no ponto de embarque", "Fundamentação", "sem parada no ponto alegado",
		"Dispositivo", "Indefiro a defesa e mantenho a multa.", "Efeitos", "cabe recurso", "no prazo de 10 dias", "paga em 30 dias",
		"Carla Mendes Prado", "Autoridade Julgadora de Posturas", "matrícula AJ-0007"} {
		if !strings.Contains(text, want) {
			t.Errorf("the decision's document lacks %q:\n%s", want, text)
		}
	}

	// The profile and the authority's record change: the documents do not.
	pf.p.Municipality, pf.p.Defence.To, pf.p.Appeal.Days = "Outra Cidade", "Outra Autoridade", 15
	setAgent(t, pf.db, "carla", "Carla Renomeada", "AJ-9999", "Outro Cargo")
	if b, sum := get(f.Receipt, pf.a); !bytes.Equal(b, receipt) || sum != receiptSum {
		t.Error("the receipt changed after the profile did")
	}
	if b, sum := get(staffPDF, pf.viewer); !bytes.Equal(b, decision) || sum != decisionSum {
		t.Error("the decision's document changed after the profile and the user's record did")
	}
	if code, _, _ := pf.do("GET", fmt.Sprint("/api/v1/cases/", id, "/decisions/1/pdf"), nil, session{bearer: pf.viewer}); code != http.StatusNotFound {
		t.Errorf("the issue's event as a decision: %d, want 404", code)
	}
}
