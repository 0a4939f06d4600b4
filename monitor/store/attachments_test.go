package store

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/trenzinho/trenzinho/monitor/cases"
	"github.com/trenzinho/trenzinho/monitor/penalty"
	"github.com/trenzinho/trenzinho/profile"
)

// proven completes a fixture's delivery with its proof (cases/proofs.go), as an agent would:
// the recipient in hand, the AR and its scan (attached to the case) by post, the edital's
// publication; and a decision given by its text with its structure. An act that states its
// own proof (structure) is left as it is.
func proven(ctx context.Context, db *DB, id int64, act CaseAction, p *profile.Profile, now time.Time) (CaseAction, error) {
	if (act.Action == ActionDecide || act.Action == ActionDecideAppeal) && act.Text != "" && act.Report == "" {
		// A decision given by its text: its relatório and fundamentação (cases/decision.go).
		act.Report = "Auto de infração por velocidade acima da permitida (Art. 23), com defesa ou sem ela."
		act.Grounds = "A medição do tacógrafo consta do pacote de evidências selado e não foi infirmada."
		act.Ruling = act.Text + " (dispositivo)"
	}
	if act.Action != ActionNotify {
		return act, nil
	}
	switch {
	case act.Mode == penalty.ModeInPerson && act.Recipient == "":
		act.Recipient, act.RecipientRole = "Maria Souza", "sócia-administradora"
	case act.Mode == penalty.ModeMail && act.AR == "":
		scan, err := officeAt(db, p, now).Attach(ctx, id, cases.Attachment{Kind: cases.AttachmentAR, Name: "ar.pdf",
			ContentType: "application/pdf", Data: []byte("%PDF-1.4 AR")}, asAgent(fiscal))
		if err != nil {
			return act, err
		}
		act.AR, act.ARScan = "BR123456789BR", scan.ID
	case act.Mode == penalty.ModeEdital && act.Publication == "":
		act.Publication = "Diário Oficial do Município nº 1234, pág. 5"
	}
	return act, nil
}

// An attachment is kept with its case, append-only, and read back whole; a delivery by post
// names the scan of its own case.
func TestCaseAttachments(t *testing.T) {
	ctx := context.Background()
	db, p := openTemp(t), caseProfile(t)
	c := caseAt(t, db, p, "AT")
	other := caseAt(t, db, p, "AT2")
	now := local(2026, 10, 6, 10, 0)
	o := officeAt(db, p, now)
	scan, err := o.Attach(ctx, c.ID, cases.Attachment{Kind: cases.AttachmentAR, Name: "ar.png", ContentType: "image/png", Data: []byte("\x89PNG scan")}, asAgent(fiscal))
	if err != nil {
		t.Fatal(err)
	}
	got, err := db.CaseAttachment(ctx, c.ID, scan.ID)
	if err != nil || string(got.Data) != "\x89PNG scan" || got.SHA256 != scan.SHA256 || got.User != "joao" || !got.At.Equal(now) {
		t.Fatalf("read back %+v %v", got, err)
	}
	if _, err := db.CaseAttachment(ctx, other.ID, scan.ID); !errors.Is(err, ErrNotFound) {
		t.Errorf("another case's attachment: %v", err)
	}
	if list, err := db.CaseAttachments(ctx, c.ID); err != nil || len(list) != 1 || list[0].Data != nil {
		t.Errorf("list %+v %v", list, err)
	}
	if _, err := db.db.ExecContext(ctx, `UPDATE case_attachments SET data = ?`, []byte{0}); err == nil || !strings.Contains(err.Error(), "append-only") {
		t.Errorf("an attachment was changed: %v", err)
	}
	mail := CaseAction{Action: ActionNotify, Mode: penalty.ModeMail, Date: "2026-10-05", Proof: cases.Proof{AR: "BR987654321BR", ARScan: scan.ID}}
	var ce *CaseError
	if _, _, err := o.Act(ctx, other.ID, mail, asAgent(fiscal)); !errors.As(err, &ce) || ce.Kind != cases.Conflict {
		t.Errorf("another case's scan: %v", err)
	}
	if _, after, err := o.Act(ctx, c.ID, mail, asAgent(fiscal)); err != nil || after.Proof.AR != "BR987654321BR" {
		t.Fatalf("by post: %+v %v", after, err)
	}
	if back, err := db.CaseByID(ctx, c.ID); err != nil || back.Proof.ARScan != scan.ID {
		t.Errorf("stored proof %+v %v", back, err)
	}
}

// The downloads of an auto's PDF in the portal are kept, append-only, and the latest one to a
// user is what the ciência refers to; the opening is stored and delivers nothing.
func TestPDFServings(t *testing.T) {
	ctx := context.Background()
	db, p := openTemp(t), caseProfile(t)
	c := caseAt(t, db, p, "PS")
	rep := cases.Actor{User: "rep", Role: cases.RoleLicensee, RemoteAddr: "198.51.100.7"}
	o := officeAt(db, p, local(2026, 10, 6, 10, 0))
	if _, err := o.Open(ctx, c.ID, rep); err != nil {
		t.Fatal(err)
	}
	for _, sum := range []string{strings.Repeat("a", 64), strings.Repeat("b", 64)} {
		if err := o.ServePDF(ctx, c.ID, sum, rep); err != nil {
			t.Fatal(err)
		}
	}
	err := db.Transact(ctx, func(b cases.Books) error {
		got, err := b.PDFServed(ctx, c.ID, "rep")
		if err != nil || got == nil || got.SHA256 != strings.Repeat("b", 64) || got.RemoteAddr != "198.51.100.7" || !got.At.Equal(local(2026, 10, 6, 10, 0)) {
			t.Errorf("latest serving to rep: %+v %v", got, err)
		}
		if none, err := b.PDFServed(ctx, c.ID, "outro"); none != nil || err != nil {
			t.Errorf("a serving to nobody: %+v %v", none, err)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	back, err := db.CaseByID(ctx, c.ID)
	if err != nil || back.Opening == nil || back.Opening.User != "rep" || back.State != penalty.StatusIssued {
		t.Errorf("after the opening: %+v %v", back, err)
	}
	if _, err := db.db.ExecContext(ctx, `DELETE FROM pdf_servings`); err == nil || !strings.Contains(err.Error(), "append-only") {
		t.Errorf("a serving was removed: %v", err)
	}
}

// A case's document is frozen as first made: a second freeze keeps the first bytes; the row
// is append-only.
func TestCaseDocumentsFrozen(t *testing.T) {
	ctx := context.Background()
	db, p := openTemp(t), caseProfile(t)
	c := caseAt(t, db, p, "DOC")
	if _, _, err := db.FrozenDocument(ctx, c.ID, DocumentDecision, 4); !errors.Is(err, ErrNotFound) {
		t.Fatalf("before any freeze: %v", err)
	}
	first, sum, err := db.FreezeDocument(ctx, c.ID, DocumentDecision, 4, []byte("%PDF-1.4 primeira"))
	if err != nil || string(first) != "%PDF-1.4 primeira" || len(sum) != 64 {
		t.Fatalf("freeze: %q %s %v", first, sum, err)
	}
	again, sum2, err := db.FreezeDocument(ctx, c.ID, DocumentDecision, 4, []byte("%PDF-1.4 segunda"))
	if err != nil || string(again) != "%PDF-1.4 primeira" || sum2 != sum {
		t.Errorf("a second freeze: %q %s %v", again, sum2, err)
	}
	if other, _, err := db.FreezeDocument(ctx, c.ID, DocumentReceipt, 4, []byte("%PDF-1.4 recibo")); err != nil || string(other) != "%PDF-1.4 recibo" {
		t.Errorf("another kind with the same ref: %q %v", other, err)
	}
	if _, err := db.db.ExecContext(ctx, `UPDATE case_documents SET pdf = ?`, []byte{0}); err == nil || !strings.Contains(err.Error(), "append-only") {
		t.Errorf("a document was changed: %v", err)
	}
}
