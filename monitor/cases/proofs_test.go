package cases

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/trenzinho/trenzinho/monitor/penalty"
	"github.com/trenzinho/trenzinho/profile"
)

func (b *books) Attach(_ context.Context, a *Attachment) error {
	a.ID = int64(len(b.attached) + 1)
	aa := *a
	b.attached = append(b.attached, &aa)
	return nil
}

func (b *books) Attachment(_ context.Context, caseID, id int64) (*Attachment, error) {
	for _, a := range b.attached {
		if a.ID == id && a.CaseID == caseID {
			aa := *a
			return &aa, nil
		}
	}
	return nil, errNotFound
}

// Each means of delivery is proven (Art. 54): whom it was handed to, the AR and its scan, the
// edital's publication after the means to find the offender were exhausted (§ 1º).
func TestDeliveryProofs(t *testing.T) {
	p := profile.Piuma()
	failed := func(d, mode string, seat bool) Action {
		return Action{Action: ActionDeliveryFailed, Mode: mode, Date: d, AtSeat: seat, Text: "Ninguém atendeu no endereço."}
	}
	inHand := Action{Action: ActionNotify, Mode: penalty.ModeInPerson, Date: "2026-10-05",
		Proof: Proof{Recipient: "Maria Souza", RecipientRole: "sócia-administradora"}}
	publication := "Diário Oficial do Município nº 1234, pág. 5"
	edital := Action{Action: ActionNotify, Mode: penalty.ModeEdital, Published: "2026-10-20", Proof: Proof{Publication: publication}}
	with := func(a Action, f func(*Action)) Action { f(&a); return a }
	for _, c := range []struct {
		name    string
		before  []Action
		a       Action
		err     string
		invalid bool
	}{
		{name: "in hand", a: inHand},
		{name: "in hand, refused to sign, named", a: with(inHand, func(a *Action) { a.RefusedToSign = true })},
		{name: "in hand without the recipient", a: with(inHand, func(a *Action) { a.Recipient = "" }), err: "nome de quem recebeu", invalid: true},
		{name: "in hand without the role", a: with(inHand, func(a *Action) { a.RecipientRole = " " }), err: "qualidade ou cargo", invalid: true},
		{name: "in hand with an AR", a: with(inHand, func(a *Action) { a.AR = "BR1" }), err: "só da entrega por via postal", invalid: true},
		{name: "by post", a: notifyMail},
		{name: "by post without the AR", a: with(notifyMail, func(a *Action) { a.AR = "" }), err: "número do aviso de recebimento", invalid: true},
		{name: "by post without the scan", a: with(notifyMail, func(a *Action) { a.ARScan = 0 }), err: "digitalização do AR", invalid: true},
		{name: "by post with a recipient", a: with(notifyMail, func(a *Action) { a.Recipient = "Maria" }), err: "só da entrega em mãos", invalid: true},
		{name: "edital, attempts on two days", before: []Action{failed("2026-10-05", penalty.ModeMail, false), failed("2026-10-08", penalty.ModeInPerson, false)}, a: edital},
		{name: "edital, attempts on one day", before: []Action{failed("2026-10-05", penalty.ModeInPerson, false), failed("2026-10-05", penalty.ModeInPerson, false)},
			a: edital, err: "ao menos dois dias"},
		{name: "edital, one day, by post and by hand at the seat", before: []Action{failed("2026-10-05", penalty.ModeMail, false), failed("2026-10-05", penalty.ModeInPerson, true)}, a: edital},
		{name: "edital, one day, twice at the seat by hand", before: []Action{failed("2026-10-05", penalty.ModeInPerson, true), failed("2026-10-05", penalty.ModeInPerson, true)},
			a: edital, err: "ao menos dois dias"},
		{name: "edital without its publication", before: []Action{failed("2026-10-05", penalty.ModeMail, false), failed("2026-10-08", penalty.ModeInPerson, false)},
			a: with(edital, func(a *Action) { a.Publication = "" }), err: "registro da publicação", invalid: true},
		{name: "edital without the page", before: []Action{failed("2026-10-05", penalty.ModeMail, false), failed("2026-10-08", penalty.ModeInPerson, false)},
			a: with(edital, func(a *Action) { a.Publication = "Diário Oficial nº 1234" }), err: "com número e página", invalid: true},
	} {
		t.Run(c.name, func(t *testing.T) {
			k := must(t, newCase(), p, "2026-10-21", c.before...)
			err := step(k, p, "2026-10-21", "fiscal2", c.a)
			var e *Error
			switch {
			case c.err == "" && err != nil:
				t.Fatalf("refused: %v", err)
			case c.err == "" && (k.State != penalty.StatusNotified || k.Proof != c.a.Proof):
				t.Fatalf("state %s, proof %+v", k.State, k.Proof)
			case c.err != "" && (!errors.As(err, &e) || !strings.Contains(e.Msg, c.err) || (e.Kind == Invalid) != c.invalid):
				t.Fatalf("got %v, want %q (invalid %v)", err, c.err, c.invalid)
			}
		})
	}
}

// The office records an electronic ciência only from the portal (Ciencia), never as an act typed
// by staff; a delivery by post names an AR scan attached to the same case, and the attachment
// is audited in its own transaction.
func TestOfficeDeliveryProofs(t *testing.T) {
	ctx := context.Background()
	o, m, now, c1, c2 := twoIssued(t)
	*now = time.Date(2026, 10, 6, 10, 0, 0, 0, sp)
	var e *Error
	if _, _, err := o.Act(ctx, c1.ID, Action{Action: ActionNotify, Mode: penalty.ModeElectronic, Date: "2026-10-05"}, joao); !errors.As(err, &e) ||
		e.Kind != Invalid || !strings.Contains(e.Msg, "pelo próprio representante") {
		t.Errorf("electronic typed by staff: %v", err)
	}
	if _, err := o.Attach(ctx, c1.ID, Attachment{Kind: AttachmentAR, Name: "ar.pdf", ContentType: "application/pdf", Data: []byte("%PDF-1.4")},
		Actor{User: "v", Role: RoleViewer}); !errors.As(err, &e) || e.Kind != Forbidden {
		t.Errorf("a viewer attached: %v", err)
	}
	if _, err := o.Attach(ctx, c1.ID, Attachment{Kind: AttachmentAR, Data: make([]byte, MaxAttachment+1)}, joao); !errors.As(err, &e) || e.Kind != Invalid {
		t.Errorf("an attachment over the bound: %v", err)
	}
	scan, err := o.Attach(ctx, c2.ID, Attachment{Kind: AttachmentAR, Name: "ar.pdf", ContentType: "application/pdf", Data: []byte("%PDF-1.4 AR")}, joao)
	if err != nil || scan.ID == 0 || scan.Size != 11 || len(scan.SHA256) != 64 {
		t.Fatalf("attach: %+v %v", scan, err)
	}
	if got := actions(m.state.audit); !strings.HasSuffix(got, "case.attachment") {
		t.Errorf("audit %s", got)
	}
	mail := Action{Action: ActionNotify, Mode: penalty.ModeMail, Date: "2026-10-05", Proof: Proof{AR: "BR123456789BR", ARScan: scan.ID}}
	// The scan of another case's AR proves nothing here.
	if _, _, err := o.Act(ctx, c1.ID, mail, joao); !errors.As(err, &e) || e.Kind != Conflict || !strings.Contains(e.Msg, "não é um anexo deste auto") {
		t.Errorf("another case's scan: %v", err)
	}
	if _, after, err := o.Act(ctx, c2.ID, mail, joao); err != nil || after.Proof.ARScan != scan.ID || after.Proof.AR != "BR123456789BR" {
		t.Fatalf("by post: %+v %v", after, err)
	}
	// The representative's ciência in the portal is the electronic notice.
	rep := Actor{User: "rep", Role: RoleLicensee}
	o.AdhesionOnFile = func(context.Context, string) (Adhesion, bool) {
		return Adhesion{Term: "Termo nº 1/2026", SignedOn: "2026-01-02", Representatives: []string{"rep"}}, true
	}
	if err := o.ServePDF(ctx, c1.ID, strings.Repeat("ab", 32), rep); err != nil {
		t.Fatal(err)
	}
	if c, err := o.Ciencia(ctx, c1.ID, rep); err != nil || c.Mode != penalty.ModeElectronic {
		t.Errorf("portal ciência: %+v %v", c, err)
	}
}

// mailed is notifyMail with the scan of its AR attached to the case id.
func mailed(t *testing.T, o *Office, id int64) Action {
	t.Helper()
	scan, err := o.Attach(context.Background(), id, Attachment{Kind: AttachmentAR, Name: "ar.pdf", ContentType: "application/pdf", Data: []byte("%PDF-1.4 AR")}, joao)
	if err != nil {
		t.Fatal(err)
	}
	a := notifyMail
	a.ARScan = scan.ID
	return a
}
