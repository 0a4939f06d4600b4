package notice

import (
	"fmt"
	"io"
	"strings"
	"time"

	"github.com/go-pdf/fpdf"
)

// ReceiptFile is an attachment as the receipt lists it.
type ReceiptFile struct {
	Name        string
	ContentType string
	Size        int64
	SHA256      string // hex
}

// ReceiptInput is what the receipt (protocolo) of a defence or appeal filed online states.
type ReceiptInput struct {
	Municipality string // "Piúma-ES"
	Protocolo    string
	Kind         string // "defence" or "appeal"
	Notice       string // the auto's number
	Licensee     string // razão social
	CNPJ         string // formatted
	User         string
	FiledAt      time.Time // the server's time
	Location     *time.Location
	RemoteAddr   string
	TextSHA256   string // hex of the text as filed
	TextChars    int
	Files        []ReceiptFile
	To           string // the authority the filing is addressed to
	// Demonstration: filed under a demonstration profile (IsDemonstration): every page says so.
	Demonstration bool
}

// Receipt writes the receipt of a filing as an A4 PDF: what was filed, when (the server's
// time), by whom, and the SHA-256 of the text and of each attachment, so that the licensee can
// later show what the municipality received.
func Receipt(w io.Writer, in ReceiptInput) error {
	what := map[string]string{"defence": "defesa", "appeal": "recurso"}[in.Kind]
	pdf, tr, loc := processDocument("Protocolo "+in.Protocolo, "Comprovante de protocolo eletrônico", in.Municipality, in.Location, in.Demonstration)
	row := func(k, v string) { documentRow(pdf, tr, k, v) }
	row("Protocolo:", in.Protocolo)
	row("Peça:", strings.ToUpper(what[:1])+what[1:]+" apresentada pelo portal do permissionário")
	row("Auto de infração:", in.Notice)
	row("Autuado:", strings.TrimSpace(in.Licensee+" "+cnpjText(in.CNPJ)))
	row("Usuário:", in.User)
	row("Data e hora:", in.FiledAt.In(loc).Format("02/01/2006 15:04:05")+" (horário do servidor, "+in.FiledAt.In(loc).Format("-07:00")+")")
	if in.RemoteAddr != "" {
		row("Endereço IP:", in.RemoteAddr)
	}
	if in.To != "" {
		row("Destinatário:", in.To)
	}
	row("Texto:", fmt.Sprintf("%d caracteres; SHA-256 %s", in.TextChars, in.TextSHA256))
	pdf.Ln(3)
	pdf.SetFont("Helvetica", "B", 10)
	pdf.MultiCell(0, 6, tr(fmt.Sprintf("Anexos (%d)", len(in.Files))), "", "L", false)
	pdf.SetFont("Helvetica", "", 9)
	if len(in.Files) == 0 {
		pdf.MultiCell(0, 5, tr("Nenhum anexo."), "", "L", false)
	}
	for i, f := range in.Files {
		pdf.MultiCell(0, 5, tr(fmt.Sprintf("%d. %s (%s, %d bytes)", i+1, f.Name, f.ContentType, f.Size)), "", "L", false)
		pdf.SetFont("Courier", "", 8)
		pdf.MultiCell(0, 4, "   SHA-256 "+f.SHA256, "", "L", false)
		pdf.SetFont("Helvetica", "", 9)
	}
	pdf.Ln(4)
	pdf.SetFont("Helvetica", "", 9)
	pdf.MultiCell(0, 5, tr("A "+what+" foi recebida e registrada no processo do auto na data e hora acima, que valem como data de apresentação. "+
		"Os resumos SHA-256 identificam o texto e cada anexo exatamente como recebidos: qualquer alteração muda o resumo."), "", "L", false)
	if pdf.Err() {
		return fmt.Errorf("notice: receipt %s: %w", in.Protocolo, pdf.Error())
	}
	return pdf.Output(w)
}

func cnpjText(cnpj string) string {
	if cnpj == "" {
		return ""
	}
	return "(CNPJ " + cnpj + ")"
}

// processDocument starts an A4 document of the process after the auto (a receipt, a
// decision): its title, the heading and the municipality, and on every page the
// demonstration's label when demonstration. It returns the document, its text encoder and the
// time zone of its dates (UTC when loc is nil).
func processDocument(title, heading, municipality string, loc *time.Location, demonstration bool) (*fpdf.Fpdf, func(string) string, *time.Location) {
	pdf := fpdf.New("P", "mm", "A4", "")
	tr := cp1252(pdf)
	if loc == nil {
		loc = time.UTC
	}
	pdf.SetTitle(tr(title), false)
	pdf.SetMargins(20, 20, 20)
	pdf.SetAutoPageBreak(true, 20)
	if demonstration {
		pdf.SetHeaderFunc(func() {
			pdf.SetFont("Helvetica", "B", 8)
			pdf.SetTextColor(176, 0, 32)
			pdf.SetXY(20, 8)
			pdf.CellFormat(0, 4, tr(DemonstrationLabel+" — perfil legal de demonstração, sem valor legal"), "", 0, "C", false, 0, "")
			pdf.SetTextColor(0, 0, 0)
			pdf.SetXY(20, 20)
		})
	}
	pdf.AddPage()
	pdf.SetFont("Helvetica", "B", 14)
	pdf.MultiCell(0, 7, tr(heading), "", "L", false)
	pdf.SetFont("Helvetica", "", 10)
	if municipality != "" {
		pdf.MultiCell(0, 5, tr("Município de "+municipality+" — fiscalização dos trenzinhos"), "", "L", false)
	}
	pdf.Ln(4)
	return pdf, tr, loc
}

// documentRow writes a labelled line of a process document.
func documentRow(pdf *fpdf.Fpdf, tr func(string) string, k, v string) {
	pdf.SetFont("Helvetica", "B", 10)
	pdf.CellFormat(48, 6, tr(k), "", 0, "L", false, 0, "")
	pdf.SetFont("Helvetica", "", 10)
	pdf.MultiCell(0, 6, tr(v), "", "L", false)
}
