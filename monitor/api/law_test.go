package api_test

import (
	"encoding/json"
	"net/http"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/trenzinho/trenzinho/monitor/api"
	"github.com/trenzinho/trenzinho/monitor/cases"
	"github.com/trenzinho/trenzinho/monitor/drafts"
	"github.com/trenzinho/trenzinho/wire"
)

// A draft sealed with a fine its penalty's article does not set (Art. 47: 250 UFMPs) is neither
// rendered nor issued: both answer 409 with the reason fine_contradicts_law; the law's fine is.
func TestFineContradictingLawRefusedThroughTheAPI(t *testing.T) {
	cf := newCaseFixture(t)
	start := at(2026, 11, 28, 23)
	good := cf.draft(t, "PIU-001", "L1", "hours", start)
	r := cf.p.Rules["hours"]
	s, e := wire.NewTime(start.Add(-20*time.Minute)), wire.NewTime(start.Add(-20*time.Minute+40*time.Second))
	id := "PIU-001.hours.against-the-law"
	bad := cf.seal(t, drafts.Draft{ID: id, EpisodeIDs: []string{id + ".ep"}, Vehicle: "PIU-001", Licensee: "L1",
		Rules: []string{"hours"}, Articles: []string{r.Article}, Penalty: r.Penalty, FineUFMP: 300, FiscalUnit: "UFMP",
		Start: s, End: e, Municipality: "Piúma-ES", FiscalOrgan: cf.p.FiscalOrgan, Law: cf.p.Law.Name, CreatedAt: e,
		Software: "test", ProfileID: "piuma", ProfileVer: cf.p.Version, Registry: cf.snapshot("PIU-001", "L1"),
		Facts: []drafts.Fact{{EpisodeID: id + ".ep", Rule: "hours", Article: r.Article, LegalText: r.Text, Description: "Fato de teste.",
			Start: s, End: e, DurationS: 40, Peak: 45, Unit: "min", Limit: 20, Source: "clock"}}})
	refused := func(what string, code int, body []byte) {
		t.Helper()
		var rf api.IssueRefusal
		if code != http.StatusConflict || json.Unmarshal(body, &rf) != nil ||
			!slices.ContainsFunc(rf.Reasons, func(r cases.Reason) bool {
				return r.Code == cases.ReasonFineContradictsLaw && strings.Contains(r.Text, "250 UFMP (Art. 47)")
			}) {
			t.Errorf("%s: %d %s", what, code, body)
		}
	}
	code, body, _ := cf.do("GET", "/api/v1/drafts/"+bad+"/pdf", nil, session{bearer: cf.fiscal})
	refused("preview", code, body)
	cf.setClock(at(2026, 11, 29, 15))
	code, body, _ = cf.do("POST", "/api/v1/drafts/"+bad+"/decision", map[string]string{"decision": "issue"}, session{bearer: cf.fiscal})
	refused("issue", code, body)

	if code, body, _ := cf.do("GET", "/api/v1/drafts/"+good+"/pdf", nil, session{bearer: cf.fiscal}); code != http.StatusOK {
		t.Errorf("the law's fine, preview: %d %.300s", code, body)
	}
	cf.issue(t, good, at(2026, 11, 29, 15))
}

// The issued auto, as the API serves it, tells the licensee how to obtain and verify the sealed
// bundle by routes they can use, and names no staff route.
func TestIssuedAutoNamesLicenseeRoutesToEvidence(t *testing.T) {
	cf := newCaseFixture(t)
	id := cf.draft(t, "PIU-001", "L1", "hours", at(2026, 11, 28, 23))
	cf.issue(t, id, at(2026, 11, 29, 15))
	code, pdf, _ := cf.do("GET", "/api/v1/drafts/"+id+"/pdf", nil, session{bearer: cf.fiscal})
	if code != http.StatusOK {
		t.Fatalf("pdf: %d %.300s", code, pdf)
	}
	text := flat(pdfText(t, pdf))
	for _, want := range []string{"portal do permissionário", "Baixar o pacote de evidências", "por requerimento em papel no protocolo do órgão autuante"} {
		if !strings.Contains(text, want) {
			t.Errorf("the auto does not say %q", want)
		}
	}
	if strings.Contains(text, "/api/v1/drafts/") {
		t.Error("the auto names a staff route")
	}
}

// Without the act that adopts the telemetry as a means of proof the issue answers 409
// competence_unproven; the profile page lists the warning with its key.
func TestIssueRefusedWithoutCompetence(t *testing.T) {
	cf := newCaseFixtureEdit(t, func(y string) string {
		i := strings.Index(y, "  telemetry_act: \"")
		j := strings.Index(y[i:], "\n")
		return confirmUFMP(t, y[:i]+"  telemetry_act: \"\""+y[i+j:])
	})
	id := cf.draft(t, "PIU-001", "L1", "hours", at(2026, 11, 28, 23))
	cf.setClock(at(2026, 11, 29, 15))
	code, body, _ := cf.do("POST", "/api/v1/drafts/"+id+"/decision", map[string]string{"decision": "issue"}, session{bearer: cf.fiscal})
	var rf api.IssueRefusal
	if code != http.StatusConflict || json.Unmarshal(body, &rf) != nil || len(rf.Reasons) != 1 ||
		rf.Reasons[0].Code != cases.ReasonCompetenceUnproven || !strings.Contains(rf.Reasons[0].Text, "competence.telemetry_act") {
		t.Errorf("issue: %d %s", code, body)
	}
}
