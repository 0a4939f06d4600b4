package cases

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"regexp"
	"strings"
	"time"

	"github.com/trenzinho/trenzinho/monitor/penalty"
	"github.com/trenzinho/trenzinho/profile"
)

// The proof of a delivery (Art. 54: "O infrator será considerado regularmente notificado ou
// autuado mediante a entrega da Notificação ou do Auto de Infração"): a notice is delivered
// when the case can show it was, to whom and how.
//
//   - In hand: the name of who received it and their role (the partner, an employee at the
//     seat) — or, when they refused to sign, the agent's note (Art. 54, § 2º) still names them.
//   - By post: the number of the return receipt (AR) and its scan, uploaded as an attachment
//     of the case (Office.Attach) before the delivery is recorded.
//   - Electronic: only the licensee's representative's own ciência in the portal
//     (Office.Open); never an act typed by staff.
//   - Edital: only once the means to find the offender are exhausted (Art. 54, § 1º:
//     "esgotados os meios para sua localização") — the failed attempts the profile asks for,
//     on at least two different days or by different means one of which at the registered
//     seat — and with its publication recorded ("divulgado em diário oficial ou jornal de
//     grande circulação": the journal, its number and page).

// Proof is how a delivery is proven.
type Proof struct {
	// Recipient and RecipientRole: who received the auto in hand, and their role or relation
	// to the licensee.
	Recipient     string `json:"recipient,omitempty"`
	RecipientRole string `json:"recipient_role,omitempty"`
	// AR is the return receipt's number; ARScan the attachment (Attachment.ID) with its scan.
	AR     string `json:"ar,omitempty"`
	ARScan int64  `json:"ar_scan,omitempty"`
	// Publication is where the edital was published: "Diário Oficial nº 1234, pág. 5".
	Publication string `json:"publication,omitempty"`
}

// Attempt is a failed attempt to deliver the notice.
type Attempt struct {
	Date   string `json:"date"`
	Mode   string `json:"mode"`
	AtSeat bool   `json:"at_seat,omitempty"`
}

// Attachment is a document kept with a case: the scan of a return receipt (AR), of an edital's
// page. Its content is PDF, JPEG or PNG, whatever its name says.
type Attachment struct {
	ID          int64     `json:"id"`
	CaseID      int64     `json:"case_id"`
	Kind        string    `json:"kind"`
	Name        string    `json:"name"`
	ContentType string    `json:"content_type"`
	Size        int64     `json:"size"`
	SHA256      string    `json:"sha256"`
	User        string    `json:"user"`
	At          time.Time `json:"uploaded_at"`
	Data        []byte    `json:"-"`
}

// Attachment kinds.
const (
	AttachmentAR = "ar" // the scan of a return receipt (aviso de recebimento)
)

// MaxAttachment bounds an attachment's size: 10 MiB, as a filing's.
const MaxAttachment = 10 << 20

// AuditCaseAttachment: a document attached to a case.
const AuditCaseAttachment = "case.attachment"

// publicationRef is a publication's number and page, as "nº 1234, pág. 5".
var publicationRef = regexp.MustCompile(`(?i)n\s*[º°o.]\s*\d+.*p[áa]g(ina)?\.?\s*\d+`)

// checkProof requires the proof of the delivery the act records (its dates checked before).
func (c *Case) checkProof(a *Action) error {
	pr := &a.Proof
	for _, v := range []*string{&pr.Recipient, &pr.RecipientRole, &pr.AR, &pr.Publication} {
		*v = strings.TrimSpace(*v)
	}
	switch a.Mode {
	case penalty.ModeInPerson:
		if len([]rune(pr.Recipient)) < 3 || len([]rune(pr.RecipientRole)) < 3 {
			return invalidf("a entrega em mãos exige o nome de quem recebeu o auto (recipient) e a sua qualidade ou cargo (recipient_role), mesmo quando se recusou a assinar (Art. 54, § 2º).")
		}
	case penalty.ModeMail:
		if len(pr.AR) < 5 {
			return invalidf("a entrega por via postal exige o número do aviso de recebimento (ar).")
		}
		if pr.ARScan <= 0 {
			return invalidf("a entrega por via postal exige a digitalização do AR (ar_scan): anexe-a ao processo antes de registrar a entrega.")
		}
	case penalty.ModeEdital:
		if !publicationRef.MatchString(pr.Publication) {
			return invalidf("o edital exige o registro da publicação (publication): o diário oficial ou jornal de grande circulação, com número e página — por exemplo, \"Diário Oficial nº 1234, pág. 5\" (Art. 54, § 1º).")
		}
	}
	if a.Mode != penalty.ModeInPerson && (pr.Recipient != "" || pr.RecipientRole != "") {
		return invalidf("quem recebeu o auto (recipient, recipient_role) é só da entrega em mãos.")
	}
	if a.Mode != penalty.ModeMail && (pr.AR != "" || pr.ARScan != 0) {
		return invalidf("o aviso de recebimento (ar, ar_scan) é só da entrega por via postal.")
	}
	if a.Mode != penalty.ModeEdital && pr.Publication != "" {
		return invalidf("a publicação (publication) é só do edital.")
	}
	return nil
}

// checkAttemptsExhausted refuses an edital before the means to find the offender are exhausted
// (Art. 54, § 1º): the number of failed attempts the profile asks for, on at least two days,
// or by different means, one of them at the registered seat.
func (c *Case) checkAttemptsExhausted(p *profile.Profile) error {
	label := actionText[ActionNotify]
	need := p.Notification.EditalAfter()
	if len(c.FailedDeliveries) < need {
		return conflictf("não é possível %s por edital: só depois de esgotados os meios de localizar o autuado (Art. 54, § 1º); registre as tentativas de entrega frustradas (%d de %d).",
			label, len(c.FailedDeliveries), need)
	}
	days, modes, seat := map[string]bool{}, map[string]bool{}, false
	for _, d := range c.FailedDeliveries {
		days[d] = true
	}
	for _, at := range c.FailedAttempts {
		modes[at.Mode], seat = true, seat || at.AtSeat
	}
	if len(days) < 2 && !(seat && len(modes) >= 2) {
		return conflictf("não é possível %s por edital: as tentativas de entrega foram todas em %s; os meios de localizar o autuado só se esgotam com tentativas em ao menos dois dias, ou por meios diferentes, um deles na sede registrada (Art. 54, § 1º).",
			label, br(c.FailedDeliveries[0]))
	}
	return nil
}

// ErrElectronicByStaff refuses an electronic ciência typed by staff: it is only the licensee's
// representative's own, in the portal (Office.Open).
var errElectronicByStaff = &Error{Kind: Invalid, Msg: "a ciência da notificação eletrônica só é registrada pelo próprio representante do permissionário, no portal; não pode ser lançada pela fiscalização. Use in_person, mail ou edital."}

// staffMayRecord refuses what only the licensee records: the electronic ciência.
func staffMayRecord(a Action) error {
	if a.Action == ActionNotify && a.Mode == penalty.ModeElectronic {
		return errElectronicByStaff
	}
	return nil
}

// checkScan verifies, inside the act's transaction, that the AR scan a delivery by post names is
// an attachment of this case.
func (c *Case) checkScan(ctx context.Context, b Books, a Action) error {
	if a.Action != ActionNotify || a.Mode != penalty.ModeMail {
		return nil
	}
	at, err := b.Attachment(ctx, c.ID, a.ARScan)
	if err != nil || at == nil || at.Kind != AttachmentAR {
		return conflictf("a digitalização do AR (ar_scan %d) não é um anexo deste auto (%s); anexe-a antes de registrar a entrega.", a.ARScan, c.Notice)
	}
	return nil
}

// Attach keeps a document with the case id (the scan of an AR), in one transaction with its
// audit entry: a fiscal's act, of at most MaxAttachment bytes. The caller says its content type
// (sniffed, not declared). It returns the attachment with its id, size and SHA-256.
func (o *Office) Attach(ctx context.Context, id int64, att Attachment, a Actor) (*Attachment, error) {
	if !a.Role.AtLeast(RoleFiscal) {
		return nil, forbidden("Somente um fiscal (ou perfil acima) pode anexar documentos ao processo.")
	}
	if att.Kind != AttachmentAR {
		return nil, invalidf("tipo de anexo (kind) inválido %q: use ar (digitalização do aviso de recebimento).", att.Kind)
	}
	if len(att.Data) == 0 || len(att.Data) > MaxAttachment {
		return nil, invalidf("o anexo deve ter de 1 byte a %d MiB.", MaxAttachment>>20)
	}
	att.CaseID, att.User, att.At, att.Size = id, a.User, o.now(), int64(len(att.Data))
	att.SHA256 = sha256Hex(att.Data)
	err := o.Ledger.Transact(ctx, func(b Books) error {
		c, err := b.Case(ctx, id)
		if err != nil {
			return err
		}
		if err := b.Attach(ctx, &att); err != nil {
			return err
		}
		meta := att
		meta.Data = nil
		return b.Audit(ctx, a, AuditCaseAttachment, "case:"+c.Notice, nil, meta)
	})
	if err != nil {
		return nil, err
	}
	att.Data = nil
	return &att, nil
}

func sha256Hex(b []byte) string {
	h := sha256.Sum256(b)
	return hex.EncodeToString(h[:])
}

// HandedOverAtIssue reports whether the auto was delivered in hand on its day of issue: only
// then does the auto itself know the receipt the defence deadline counts from (Art. 55).
func (c *Case) HandedOverAtIssue(loc *time.Location) bool {
	return c.Mode == penalty.ModeInPerson && c.Notified != "" && !c.Issued.IsZero() && c.Notified == DayOf(c.Issued, loc)
}
