package whatif

import (
	"fmt"
	"math"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/go-pdf/fpdf"
)

// PDFFile is the name of the report WritePDF writes beside the CSV files.
const PDFFile = "relatorio.pdf"

// pdfMaxDiffs bounds the episodes listed one by one in the PDF; episodios.csv lists all.
const pdfMaxDiffs = 400

// WritePDF writes the report a councillor reads: a summary page (the period, both profiles'
// versions, the data's coverage, the totals and a chart per rule), then the tables per rule,
// licensee, site and hour, the episodes that appear or vanish with their evidence, and the
// coverage per vehicle with its gaps.
func (r *Result) WritePDF(path string) error {
	p := &pdfDoc{pdf: fpdf.New("P", "mm", "A4", ""), loc: r.InForce.loc}
	if p.loc == nil {
		p.loc = time.UTC
	}
	p.tr = cp1252(p.pdf)
	pdf := p.pdf
	pdf.SetMargins(15, 15, 15)
	pdf.SetAutoPageBreak(true, 15)
	pdf.SetTitle(p.tr("Simulação de alteração do perfil legal"), false)
	pdf.SetCreator("trenzinho-monitor whatif", false)
	pdf.SetFooterFunc(func() {
		pdf.SetY(-12)
		p.font("", 7)
		pdf.CellFormat(0, 5, p.tr(fmt.Sprintf("Simulação %s a %s — página %d", p.day(r.From), p.day(r.To.Add(-time.Nanosecond)), pdf.PageNo())), "", 0, "C", false, 0, "")
	})
	pdf.AddPage()
	p.font("B", 15)
	p.line(8, "Simulação: o que a mudança do perfil legal teria feito")
	p.font("", 10)
	p.line(6, fmt.Sprintf("Período: %s a %s (%s).", p.day(r.From), p.day(r.To.Add(-time.Nanosecond)), p.loc))
	p.line(6, fmt.Sprintf("Perfil vigente: %s, versão %s%s.", r.InForce.ProfileID, r.InForce.Version, pathNote(r.InForce.Path)))
	p.line(6, fmt.Sprintf("Perfil proposto: %s, versão %s%s.", r.Proposed.ProfileID, r.Proposed.Version, pathNote(r.Proposed.Path)))
	p.para("Os dados gravados do período foram julgados de novo pelo monitor, uma vez com cada perfil, em bases separadas: nada do sistema em operação foi lido ou alterado além do arquivo de leituras. Os autos são as minutas que o monitor teria redigido; cada uma ainda dependeria da decisão de um agente.")

	tc := r.Coverage.Totals()
	known := 0
	for _, v := range r.Coverage.Vehicles {
		if !v.Unknown && v.Batches > 0 {
			known++
		}
	}
	p.h2("Cobertura dos dados")
	p.para(fmt.Sprintf("%d veículo(s) com telemetria no período (%d julgado(s)); %s horas com telemetria; %s leituras em %s lotes. "+
		"%d lacuna(s) de %d min ou mais dentro do horário de serviço, somando %s h. %d leitura(s) faltando nos lotes, %d sem lote.",
		len(r.Coverage.Vehicles), known, intBR(tc.HoursWithData), intBR(tc.Readings), intBR(tc.Batches),
		len(r.Coverage.Gaps), int(r.Coverage.GapMin.Minutes()), numBR(r.Coverage.GapHours(), 1), tc.Missing, tc.Orphans))
	p.font("B", 9)
	p.para("Atenção: onde não há dados não há julgamento. Uma lacuna não é cumprimento da lei: os números abaixo valem só para as horas com telemetria.")

	p.h2("Totais")
	tot := r.Total()
	p.table([]string{"", "Vigente", "Proposto", "Diferença"}, []float64{60, 40, 40, 40}, [][]string{
		{"Episódios", intBR(tot.InForce.Episodes), intBR(tot.Proposed.Episodes), signed(tot.Proposed.Episodes - tot.InForce.Episodes)},
		{"Autos (minutas)", intBR(tot.InForce.Autos), intBR(tot.Proposed.Autos), signed(tot.Proposed.Autos - tot.InForce.Autos)},
		{"Multas (UFMP)", numBR(tot.InForce.UFMP, 2), numBR(tot.Proposed.UFMP, 2), signedF(tot.Proposed.UFMP - tot.InForce.UFMP)},
	})
	p.para(fmt.Sprintf("Episódios que surgem com o perfil proposto: %d. Que desaparecem: %d. Presentes nos dois, com outro conteúdo (limite, pico, duração): %d. Idênticos: %d.",
		len(r.Appear), len(r.Vanish), r.Changed, r.Same))
	tables := r.Tables()
	p.chart(tables[0])

	for _, t := range tables {
		pdf.AddPage()
		p.h2(t.Title)
		rows := make([][]string, 0, len(t.Rows))
		for _, row := range t.Rows {
			rows = append(rows, []string{row.Label, intBR(row.InForce.Episodes), intBR(row.Proposed.Episodes), signed(row.Proposed.Episodes - row.InForce.Episodes),
				intBR(row.InForce.Autos), intBR(row.Proposed.Autos), numBR(row.InForce.UFMP, 2), numBR(row.Proposed.UFMP, 2), signedF(row.Proposed.UFMP - row.InForce.UFMP)})
		}
		p.table([]string{t.KeyTitle, "Epis. vig.", "Epis. prop.", "Dif.", "Autos vig.", "Autos prop.", "UFMP vig.", "UFMP prop.", "Dif. UFMP"},
			[]float64{52, 15, 15, 12, 15, 15, 18, 18, 20}, rows)
		if t.Note != "" {
			p.font("", 8)
			p.para(t.Note)
		}
	}

	for _, part := range []struct {
		title string
		ds    []Diff
	}{{"Episódios que surgem com o perfil proposto", r.Appear}, {"Episódios que desaparecem com o perfil proposto", r.Vanish}} {
		pdf.AddPage()
		p.h2(fmt.Sprintf("%s (%d)", part.title, len(part.ds)))
		if len(part.ds) == 0 {
			p.para("Nenhum.")
			continue
		}
		rows := [][]string{}
		for k, d := range part.ds {
			if k == pdfMaxDiffs {
				break
			}
			end := "aberto"
			if d.End != nil {
				end = d.End.In(p.loc).Format("15:04:05")
			}
			auto := "não"
			if d.Drafted {
				auto = shortBR(d.FineUFMP)
			}
			site := ""
			if d.Site != nil {
				_, site = siteOf(&d.Episode)
			}
			rows = append(rows, []string{d.Vehicle, d.Rule, d.Start.In(p.loc).Format("02/01 15:04:05"), end,
				numBR(d.Peak, 1) + " " + d.Unit, numBR(d.Limit, 1), evidenceNote(d), site, auto})
		}
		p.table([]string{"Veículo", "Regra", "Início", "Fim", "Pico", "Limite", "Evidências", "Local", "Auto (UFMP)"},
			[]float64{18, 24, 24, 14, 18, 12, 32, 20, 18}, rows)
		if len(part.ds) > pdfMaxDiffs {
			p.para(fmt.Sprintf("Mostrados %d de %d; a lista completa, com cada leitura, está em episodios.csv e evidencias.csv.", pdfMaxDiffs, len(part.ds)))
		} else {
			p.para("Cada leitura de cada episódio (lote, horário, valor, posição) está em evidencias.csv.")
		}
	}

	pdf.AddPage()
	p.h2("Cobertura por veículo")
	rows := [][]string{}
	for _, v := range r.Coverage.Vehicles {
		note := ""
		if v.Unknown {
			note = "fora do cadastro: não julgado"
		}
		rows = append(rows, []string{v.Vehicle, intBR(v.Batches), intBR(v.Readings), intBR(v.HoursWithData), intBR(v.Missing), intBR(v.Orphans), note})
	}
	p.table([]string{"Veículo", "Lotes", "Leituras", "Horas c/ dados", "Faltando", "Sem lote", "Observação"}, []float64{22, 20, 26, 24, 20, 20, 48}, rows)
	p.h2(fmt.Sprintf("Lacunas no horário de serviço (%d)", len(r.Coverage.Gaps)))
	rows = rows[:0]
	for k, g := range r.Coverage.Gaps {
		if k == 60 {
			break
		}
		rows = append(rows, []string{g.Vehicle, g.From.In(p.loc).Format("02/01/2006 15:04"), g.To.In(p.loc).Format("02/01/2006 15:04"), numBR(g.Duration().Minutes(), 0)})
	}
	if len(rows) > 0 {
		p.table([]string{"Veículo", "De", "Até", "Minutos"}, []float64{30, 45, 45, 30}, rows)
	}
	if len(r.Coverage.Gaps) > 60 {
		p.para(fmt.Sprintf("As 60 mais longas de %d; todas em lacunas.csv.", len(r.Coverage.Gaps)))
	}
	return pdf.OutputFileAndClose(path)
}

func pathNote(path string) string {
	if path == "" {
		return " (perfil embutido)"
	}
	return ", arquivo " + path
}

// evidenceNote summarises an episode's evidence: how many readings, of which instrument, when.
func evidenceNote(d Diff) string {
	if len(d.Readings) == 0 {
		return fmt.Sprintf("%d leitura(s)", d.Evidence)
	}
	kinds := map[string]int{}
	for _, x := range d.Readings {
		kinds[x.Kind]++
	}
	var parts []string
	for _, k := range []string{"tacho", "gps", "sound", "slm", "clock"} {
		if n := kinds[k]; n > 0 {
			parts = append(parts, fmt.Sprintf("%d %s", n, k))
			delete(kinds, k)
		}
	}
	for k, n := range kinds {
		parts = append(parts, fmt.Sprintf("%d %s", n, k))
	}
	return strings.Join(parts, ", ")
}

type pdfDoc struct {
	pdf *fpdf.Fpdf
	tr  func(string) string
	loc *time.Location
}

func (p *pdfDoc) font(style string, size float64) { p.pdf.SetFont("Helvetica", style, size) }

func (p *pdfDoc) day(t time.Time) string { return t.In(p.loc).Format("02/01/2006") }

func (p *pdfDoc) line(h float64, s string) { p.pdf.CellFormat(0, h, p.tr(s), "", 1, "L", false, 0, "") }

func (p *pdfDoc) para(s string) {
	p.pdf.MultiCell(0, 4.6, p.tr(s), "", "L", false)
	p.pdf.Ln(1.5)
	p.font("", 10)
}

func (p *pdfDoc) h2(s string) {
	p.pdf.Ln(2)
	p.font("B", 12)
	p.line(7, s)
	p.font("", 10)
}

// table draws rows under a header, repeating the header on a new page; a cell too wide for its
// column is cut with an ellipsis.
func (p *pdfDoc) table(head []string, w []float64, rows [][]string) {
	pdf := p.pdf
	header := func() {
		p.font("B", 7.5)
		pdf.SetFillColor(225, 230, 240)
		for k, h := range head {
			pdf.CellFormat(w[k], 5.5, p.tr(h), "1", 0, "C", true, 0, "")
		}
		pdf.Ln(-1)
		p.font("", 7.5)
	}
	header()
	_, pageH := pdf.GetPageSize()
	_, _, _, bottom := pdf.GetMargins()
	for _, row := range rows {
		if pdf.GetY()+5 > pageH-bottom-2 {
			pdf.AddPage()
			header()
		}
		for k, c := range row {
			align := "R"
			if k == 0 || strings.IndexFunc(c, func(r rune) bool { return r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' }) >= 0 {
				align = "L"
			}
			pdf.CellFormat(w[k], 5, p.tr(p.fit(c, w[k]-1.5)), "1", 0, align, false, 0, "")
		}
		pdf.Ln(-1)
	}
	pdf.Ln(2)
	p.font("", 10)
}

func (p *pdfDoc) fit(s string, w float64) string {
	if p.pdf.GetStringWidth(p.tr(s)) <= w {
		return s
	}
	for n := utf8.RuneCountInString(s); n > 1; n-- {
		c := string([]rune(s)[:n-1]) + "…"
		if p.pdf.GetStringWidth(p.tr(c)) <= w {
			return c
		}
	}
	return s
}

// chart draws the episodes per rule under each profile as pairs of horizontal bars.
func (p *pdfDoc) chart(t Table) {
	pdf := p.pdf
	rows := t.Rows
	if len(rows) > 12 {
		rows = rows[:12]
	}
	if len(rows) == 0 {
		return
	}
	p.h2("Episódios por regra")
	maxN := 1
	for _, r := range rows {
		maxN = max(maxN, r.InForce.Episodes, r.Proposed.Episodes)
	}
	x0, labelW, barW := 15.0, 55.0, 95.0
	y := pdf.GetY() + 1
	_, pageH := pdf.GetPageSize()
	if y+float64(len(rows))*9+12 > pageH-15 {
		pdf.AddPage()
		y = pdf.GetY()
	}
	for _, r := range rows {
		p.font("", 7.5)
		pdf.SetXY(x0, y+1)
		pdf.CellFormat(labelW, 4, p.tr(p.fit(r.Key, labelW-2)), "", 0, "L", false, 0, "")
		for k, n := range []int{r.InForce.Episodes, r.Proposed.Episodes} {
			if k == 0 {
				pdf.SetFillColor(110, 130, 170)
			} else {
				pdf.SetFillColor(230, 140, 60)
			}
			w := barW * float64(n) / float64(maxN)
			by := y + float64(k)*3.6
			if n > 0 {
				pdf.Rect(x0+labelW, by, math.Max(w, 0.4), 3.2, "F")
			}
			pdf.SetXY(x0+labelW+w+1, by-0.4)
			pdf.CellFormat(20, 4, intBR(n), "", 0, "L", false, 0, "")
		}
		y += 9
	}
	// Legend.
	pdf.SetFillColor(110, 130, 170)
	pdf.Rect(x0+labelW, y+1, 4, 3, "F")
	pdf.SetXY(x0+labelW+5, y+0.5)
	pdf.CellFormat(30, 4, p.tr("vigente"), "", 0, "L", false, 0, "")
	pdf.SetFillColor(230, 140, 60)
	pdf.Rect(x0+labelW+35, y+1, 4, 3, "F")
	pdf.SetXY(x0+labelW+40, y+0.5)
	pdf.CellFormat(30, 4, p.tr("proposto"), "", 0, "L", false, 0, "")
	pdf.SetXY(x0, y+6)
	p.font("", 10)
}

// cp1252 turns UTF-8 text into the cp1252 bytes of fpdf's core fonts (every letter of
// Portuguese); a few signs outside it get a close equivalent, anything else "?".
func cp1252(pdf *fpdf.Fpdf) func(string) string {
	base := pdf.UnicodeTranslatorFromDescriptor("")
	near := strings.NewReplacer("≥", ">=", "≤", "<=", "−", "-", "→", "->", "\u00a0", " ", "\u2009", " ", "\u202f", " ")
	return func(s string) string {
		s = near.Replace(s)
		var b strings.Builder
		for _, r := range s {
			if r < utf8.RuneSelf {
				b.WriteRune(r)
				continue
			}
			c := base(string(r))
			if c == "." {
				c = "?"
			}
			b.WriteString(c)
		}
		return b.String()
	}
}

// intBR writes an integer with the Brazilian thousands separator: 12.345.
func intBR(n int) string {
	s := strconv.Itoa(abs(n))
	var b strings.Builder
	if n < 0 {
		b.WriteByte('-')
	}
	for k, c := range s {
		if k > 0 && (len(s)-k)%3 == 0 {
			b.WriteByte('.')
		}
		b.WriteRune(c)
	}
	return b.String()
}

// numBR writes a number with dec decimals, Brazilian style: 1.234,50.
func numBR(f float64, dec int) string {
	neg := f < 0
	s := strconv.FormatFloat(math.Abs(f), 'f', dec, 64)
	ip, fp, _ := strings.Cut(s, ".")
	n, _ := strconv.Atoi(ip)
	out := intBR(n)
	if fp != "" {
		out += "," + fp
	}
	if neg {
		out = "-" + out
	}
	return out
}

func signed(n int) string {
	if n > 0 {
		return "+" + intBR(n)
	}
	return intBR(n)
}

func signedF(f float64) string {
	if f > 0 {
		return "+" + numBR(f, 2)
	}
	return numBR(f, 2)
}

// shortBR writes a number with at most two decimals, none when whole: 400, 412,5.
func shortBR(f float64) string {
	if f == math.Trunc(f) {
		return numBR(f, 0)
	}
	return strings.TrimRight(strings.TrimRight(numBR(f, 2), "0"), ",")
}
