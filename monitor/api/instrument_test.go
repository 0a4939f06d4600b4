package api_test

import (
	"encoding/json"
	"net/http"
	"strings"
	"testing"

	"github.com/trenzinho/trenzinho/monitor/api"
	"github.com/trenzinho/trenzinho/monitor/cases"
	"github.com/trenzinho/trenzinho/registry"
)

// A speed draft of a vehicle whose tachograph's verification ran out before the fact is refused
// with instrument_unverified; once the registry holds the renewal (through the registry API) the
// refusal is gone, and the issued auto names the tachograph, its serial and its verification.
func TestIssueNeedsAVerifiedTachograph(t *testing.T) {
	cf := newCaseFixtureEdit(t, func(y string) string { return confirmUFMP(t, y) },
		func(c *api.Config, reg *registry.Store) { c.RegistryStore = reg })
	setTachograph := func(verified, until string) {
		t.Helper()
		v, _ := cf.reg.Vehicle("PIU-001")
		for i := range v.Devices {
			if v.Devices[i].Kind == registry.DeviceTachograph {
				v.Devices[i].INMETROVerification, v.Devices[i].ValidUntil = registry.MustDate(verified), registry.MustDate(until)
			}
		}
		code, body, _ := cf.do("PUT", "/api/v1/registry/vehicles/PIU-001", v, session{bearer: cf.super})
		if code != http.StatusOK && code != http.StatusCreated {
			t.Fatalf("put vehicle: %d %s", code, body)
		}
	}
	setTachograph("2025-09-15", "2026-09-30")
	id := cf.draft(t, "PIU-001", "L1", "speed", at(2026, 10, 1, 15))

	cf.setClock(at(2026, 10, 2, 10))
	code, body, _ := cf.do("POST", "/api/v1/drafts/"+id+"/decision", map[string]string{"decision": "issue"}, session{bearer: cf.fiscal})
	var ref api.IssueRefusal
	if code != http.StatusConflict || json.Unmarshal(body, &ref) != nil || len(ref.Reasons) != 1 ||
		ref.Reasons[0].Code != cases.ReasonInstrumentUnverified || !strings.Contains(ref.Reasons[0].Text, "VDO-EX-0001") ||
		!strings.Contains(ref.Reasons[0].Text, "30/09/2026") {
		t.Fatalf("expired tachograph: %d %s", code, body)
	}

	// Renewed: the INMETRO verification of 2026-09-29, valid for a year.
	setTachograph("2026-09-29", "2027-09-28")
	cf.issue(t, id, at(2026, 10, 2, 10))
	code, body, _ = cf.do("GET", "/api/v1/drafts/"+id+"/pdf", nil, session{bearer: cf.fiscal})
	if code != http.StatusOK {
		t.Fatalf("pdf: %d", code)
	}
	text := strings.Join(strings.Fields(pdfText(t, body)), " ")
	for _, want := range []string{"VDO MTCO 1390", "nº de série VDO-EX-0001", "verificação em 29/09/2026", "28/09/2027",
		"Registro legal da velocidade e do tempo", "(Lei nº 2.277/2018, Art. 22, III), nº de série VDO-EX-0001, verificado pelo INMETRO em 29/09/2026"} {
		if !strings.Contains(text, want) {
			t.Errorf("the auto lacks %q", want)
		}
	}
	if strings.Contains(text, "VENCIDA") || strings.Contains(text, "30/09/2026") {
		t.Errorf("the auto prints the expired verification")
	}
	if t.Failed() {
		t.Log(text)
	}
}
