package api_test

import (
	"bytes"
	"encoding/json"
	"fmt"
	"mime/multipart"
	"net/http"
	"net/textproto"
	"strconv"
	"strings"
	"testing"

	"github.com/trenzinho/trenzinho/monitor/cases"
)

// upload posts an attachment of kind to the case id as token; it returns the status and body.
func (cf *caseFixture) upload(t *testing.T, token string, caseID int64, kind, name string, data []byte) (int, []byte) {
	t.Helper()
	var buf bytes.Buffer
	mw := multipart.NewWriter(&buf)
	_ = mw.WriteField("kind", kind)
	h := textproto.MIMEHeader{}
	h.Set("Content-Disposition", fmt.Sprintf(`form-data; name="file"; filename=%q`, name))
	h.Set("Content-Type", "application/octet-stream") // the server sniffs the content
	w, _ := mw.CreatePart(h)
	w.Write(data)
	mw.Close()
	code, body, _ := cf.do("POST", "/api/v1/cases/"+strconv.FormatInt(caseID, 10)+"/attachments", buf.String(), session{bearer: token},
		"Content-Type", mw.FormDataContentType())
	return code, body
}

// scanAR uploads the scan of an AR to the draft's case and returns its attachment id.
func (cf *caseFixture) scanAR(t *testing.T, draftID string) int64 {
	t.Helper()
	v := cf.getDraft(t, draftID)
	if v.Case == nil {
		return 0 // not issued: the act is refused for that
	}
	code, body := cf.upload(t, cf.fiscal, v.Case.ID, "ar", "ar.pdf", aPDF(t, "AR BR123456789BR"))
	var a cases.Attachment
	if code != http.StatusCreated || json.Unmarshal(body, &a) != nil || a.ID == 0 {
		t.Fatalf("upload: %d %s", code, body)
	}
	return a.ID
}

// proven completes a fixture's delivery with its proof, as an agent would: the recipient in
// hand, the AR and its uploaded scan by post, the edital's publication; and a decision given by
// its text with its structure. A body that states its own proof (structure) is left as it is.
func (cf *caseFixture) proven(t *testing.T, draftID string, a map[string]any) map[string]any {
	t.Helper()
	out := map[string]any{}
	for k, v := range a {
		out[k] = v
	}
	if _, structured := a["report"]; (a["action"] == "decide" || a["action"] == "decide_appeal") && a["text"] != nil && !structured {
		// A decision given by its text: its relatório and fundamentação (cases/decision.go).
		out["report"] = "Auto de infração por velocidade acima da permitida (Art. 23), com defesa ou sem ela."
		out["grounds"] = "A medição do tacógrafo consta do pacote de evidências selado e não foi infirmada."
		out["ruling"] = fmt.Sprint(a["text"]) + " (dispositivo)"
		return out
	}
	if a["action"] != "notify" {
		return a
	}
	_, hasRecipient := a["recipient"]
	_, hasAR := a["ar"]
	_, hasPublication := a["publication"]
	switch {
	case a["mode"] == "in_person" && !hasRecipient:
		out["recipient"], out["recipient_role"] = "Maria Souza", "sócia-administradora"
	case a["mode"] == "mail" && !hasAR:
		out["ar"], out["ar_scan"] = "BR123456789BR", cf.scanAR(t, draftID)
	case a["mode"] == "edital" && !hasPublication:
		out["publication"] = "Diário Oficial do Município nº 1234, pág. 5"
	}
	return out
}

// TestDeliveryProofsThroughTheAPI: every means of delivery states its proof (Art. 54): in hand
// the recipient and their role; by post the AR number and its scan, uploaded to the same case
// (PDF, JPEG or PNG by content, size-bounded); never an electronic ciência typed by staff.
func TestDeliveryProofsThroughTheAPI(t *testing.T) {
	cf := newCaseFixture(t)
	a := cf.draft(t, "PIU-001", "L1", "speed", at(2026, 10, 1, 15))
	cf.issue(t, a, at(2026, 10, 2, 10))
	b := cf.draft(t, "PIU-001", "L1", "speed", at(2026, 10, 1, 16))
	cf.issue(t, b, at(2026, 10, 2, 11))
	cf.setClock(at(2026, 10, 6, 12))
	post := func(draft string, body map[string]any, want int, text string) {
		t.Helper()
		code, out, _ := cf.do("POST", "/api/v1/drafts/"+draft+"/case", body, session{bearer: cf.fiscal})
		if code != want || (text != "" && !strings.Contains(string(out), text)) {
			t.Errorf("%v: %d %s, want %d %q", body, code, out, want, text)
		}
	}
	post(a, map[string]any{"action": "notify", "mode": "in_person", "date": "2026-10-05"}, 400, "nome de quem recebeu")
	post(a, map[string]any{"action": "notify", "mode": "mail", "date": "2026-10-05"}, 400, "número do aviso de recebimento")
	post(a, map[string]any{"action": "notify", "mode": "mail", "date": "2026-10-05", "ar": "BR123456789BR"}, 400, "digitalização do AR")
	post(a, map[string]any{"action": "notify", "mode": "electronic", "date": "2026-10-05"}, 400, "")

	caseA := cf.getDraft(t, a).Case.ID
	// The upload: a fiscal's, a real PDF/JPEG/PNG, bounded.
	if code, _ := cf.upload(t, cf.viewer, caseA, "ar", "ar.pdf", aPDF(t, "AR")); code != http.StatusForbidden {
		t.Errorf("a viewer uploads: %d", code)
	}
	if code, body := cf.upload(t, cf.fiscal, caseA, "ar", "ar.pdf", []byte("not a scan at all")); code != http.StatusBadRequest ||
		!strings.Contains(string(body), "não é PDF, JPEG nem PNG") {
		t.Errorf("a text as a scan: %d %s", code, body)
	}
	if code, _ := cf.upload(t, cf.fiscal, caseA, "ar", "ar.pdf", append([]byte("%PDF-1.4\n"), make([]byte, cases.MaxAttachment+1)...)); code != http.StatusRequestEntityTooLarge &&
		code != http.StatusBadRequest {
		t.Errorf("an oversized scan: %d", code)
	}
	if code, body := cf.upload(t, cf.fiscal, caseA, "foto", "ar.pdf", aPDF(t, "AR")); code != http.StatusBadRequest || !strings.Contains(string(body), "tipo de anexo") {
		t.Errorf("an unknown kind: %d %s", code, body)
	}
	scanB := cf.scanAR(t, b)
	// Another case's scan proves nothing here.
	post(a, map[string]any{"action": "notify", "mode": "mail", "date": "2026-10-05", "ar": "BR123456789BR", "ar_scan": scanB}, 409, "não é um anexo deste auto")
	post(b, map[string]any{"action": "notify", "mode": "mail", "date": "2026-10-05", "ar": "BR123456789BR", "ar_scan": scanB}, 200, "")
	code, body, h := cf.do("GET", fmt.Sprintf("/api/v1/cases/%d/attachments/%d", cf.getDraft(t, b).Case.ID, scanB), nil, session{bearer: cf.viewer})
	if code != http.StatusOK || h.Get("Content-Type") != "application/pdf" || !bytes.HasPrefix(body, []byte("%PDF")) {
		t.Errorf("download: %d %s", code, h.Get("Content-Type"))
	}
	post(a, map[string]any{"action": "notify", "mode": "in_person", "date": "2026-10-05", "recipient": "Maria Souza", "recipient_role": "sócia-administradora"}, 200, "")
	if v := cf.getDraft(t, a).Case; v.Proof.Recipient != "Maria Souza" || v.Proof.RecipientRole != "sócia-administradora" {
		t.Errorf("proof in the case view: %+v", v.Proof)
	}
}

// TestDefenceDeadlineInTheAutoThroughTheAPI: the frozen auto prints the last day to defend only
// when it is handed over at its issue (Art. 55 counts from the receipt); otherwise the rule and
// a blank "Recebido em", the deadline then counted from the delivery recorded.
func TestDefenceDeadlineInTheAutoThroughTheAPI(t *testing.T) {
	cf := newCaseFixture(t)
	text := func(draft string) string {
		t.Helper()
		code, pdf, _ := cf.do("GET", "/api/v1/drafts/"+draft+"/pdf", nil, session{bearer: cf.fiscal})
		if code != http.StatusOK {
			t.Fatalf("pdf: %d", code)
		}
		return strings.Join(strings.Fields(pdfText(t, pdf)), " ")
	}
	// Friday 27/11/2026: 10 days from the receipt that day end on Monday 07/12.
	plain := cf.draft(t, "PIU-001", "L1", "speed", at(2026, 11, 26, 15))
	cf.issue(t, plain, at(2026, 11, 27, 10))
	if s := text(plain); !strings.Contains(s, "Recebido em ____/____/________") || strings.Contains(s, "o prazo termina em") {
		t.Errorf("not handed over: %s", s)
	}
	handed := cf.draft(t, "PIU-001", "L1", "speed", at(2026, 11, 26, 16))
	cf.setClock(at(2026, 11, 27, 11))
	body := map[string]any{"decision": "issue", "handed_over": map[string]string{"recipient": "Maria Souza"}}
	if code, out, _ := cf.do("POST", "/api/v1/drafts/"+handed+"/decision", body, session{bearer: cf.fiscal}); code != http.StatusBadRequest ||
		!strings.Contains(string(out), "recipient_role") {
		t.Errorf("a hand-over without the role: %d %s", code, out)
	}
	if v := cf.getDraft(t, handed); v.Status != "draft" {
		t.Errorf("a refused hand-over issued the auto: %s", v.Status)
	}
	body["handed_over"] = map[string]string{"recipient": "Maria Souza", "recipient_role": "sócia-administradora"}
	if code, out, _ := cf.do("POST", "/api/v1/drafts/"+handed+"/decision", body, session{bearer: cf.fiscal}); code != http.StatusOK {
		t.Fatalf("issue handed over: %d %s", code, out)
	}
	v := cf.getDraft(t, handed).Case
	if v.State != "notified" || v.Notified != "2026-11-27" || v.Proof.Recipient != "Maria Souza" {
		t.Errorf("handed over: %+v", v.CaseStatus)
	}
	if s := text(handed); !strings.Contains(s, "Recebido em 27/11/2026 (data da emissão), o prazo termina em 07/12/2026") {
		t.Errorf("handed over at issue, the auto: %s", s)
	}
}
