package notice

import (
	"fmt"
	"io"
	"strings"
	"time"
)

// DecisionInput is what the document of a decision on a defence or an appeal states: the auto
// and the accused, the decision in its three parts (relatório, fundamentação, dispositivo; Lei nº
// 9.784/1999, art. 50), its outcome and what follows from it, and the authority who decided,
// identified by full name, matrícula and cargo.
type DecisionInput struct {
	Municipality string // "Piúma-ES"
	Title        string // "Decisão sobre a defesa", …
	Notice       string // the auto's number
	Licensee     string // razão social
	CNPJ         string // formatted
	Articles     []string
	Penalty      string
	Date         string // the day of the decision, YYYY-MM-DD
	Outcome      string // the outcome in Portuguese ("Defesa indeferida")
	Revelia      bool
	Report       string
	Grounds      string
	Ruling       string
	// Consequence is what follows from the decision (the appeal, the payment, the auto without
	// effect), in Portuguese.
	Consequence string
	// The authority: the login and their identification on file.
	User      string
	FullName  string
	Matricula string
	Cargo     string
	// Made is when the document was made (the server's time), Location the municipality's zone.
	Made     time.Time
	Location *time.Location
	// Demonstration: decided under a demonstration profile (IsDemonstration): every page says so.
	Demonstration bool
}

// DecisionDocument writes the document of a decision as an A4 PDF in Portuguese.
func DecisionDocument(w io.Writer, in DecisionInput) error {
	pdf, tr, loc := processDocument(in.Title+" — "+in.Notice, in.Title, in.Municipality, in.Location, in.Demonstration)
	pdf.SetFooterFunc(func() {
		pdf.SetY(-14)
		pdf.SetFont("Helvetica", "", 8)
		pdf.CellFormat(0, 4, tr(fmt.Sprintf("%s — auto %s — página %d", in.Title, in.Notice, pdf.PageNo())), "", 0, "C", false, 0, "")
	})
	row := func(k, v string) {
		if strings.TrimSpace(v) != "" {
			documentRow(pdf, tr, k, v)
		}
	}
	row("Auto de infração:", in.Notice)
	row("Autuado:", strings.TrimSpace(in.Licensee+" "+cnpjText(in.CNPJ)))
	row("Enquadramento:", strings.Join(in.Articles, "; ")+penaltyText(in.Penalty))
	row("Data da decisão:", dateBR(in.Date))
	outcome := in.Outcome
	if in.Revelia {
		outcome += " (julgamento à revelia: não houve defesa no prazo)"
	}
	row("Resultado:", outcome)
	section := func(title, body string) {
		pdf.Ln(3)
		pdf.SetFont("Helvetica", "B", 11)
		pdf.MultiCell(0, 6, tr(title), "", "L", false)
		pdf.SetFont("Helvetica", "", 10)
		for _, para := range strings.Split(strings.TrimSpace(body), "\n") {
			if strings.TrimSpace(para) != "" {
				pdf.MultiCell(0, 5, tr(strings.TrimSpace(para)), "", "J", false)
			}
		}
	}
	section("Relatório", in.Report)
	section("Fundamentação", in.Grounds)
	section("Dispositivo", in.Ruling)
	if in.Consequence != "" {
		section("Efeitos", in.Consequence)
	}
	pdf.Ln(8)
	pdf.SetFont("Helvetica", "", 10)
	who := in.FullName
	if who == "" {
		who = in.User + " (identificação não cadastrada)"
	}
	pdf.MultiCell(0, 5, tr(who), "", "L", false)
	pdf.MultiCell(0, 5, tr(strings.Trim(strings.Join([]string{in.Cargo, matriculaText(in.Matricula)}, " — "), " —")), "", "L", false)
	pdf.Ln(3)
	pdf.SetFont("Helvetica", "", 8)
	pdf.MultiCell(0, 4, tr("Documento gerado em "+in.Made.In(loc).Format("02/01/2006 15:04:05")+" (horário do servidor) e guardado como foi gerado: "+
		"cada nova via é idêntica a esta, byte a byte, e o seu resumo SHA-256 fica registrado no processo."), "", "L", false)
	if pdf.Err() {
		return fmt.Errorf("notice: decision on %s: %w", in.Notice, pdf.Error())
	}
	return pdf.Output(w)
}

func penaltyText(p string) string {
	if p == "" {
		return ""
	}
	return " — penalidade do " + p
}

func matriculaText(m string) string {
	if m == "" {
		return ""
	}
	return "matrícula " + m
}

// dateBR is a YYYY-MM-DD day as dd/mm/yyyy; as it is when it is not one.
func dateBR(day string) string {
	t, err := time.Parse(time.DateOnly, day)
	if err != nil {
		return day
	}
	return t.Format("02/01/2006")
}
