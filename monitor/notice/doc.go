package notice

import (
	"encoding/json"
	"fmt"
	"math"
	"slices"
	"strings"
	"time"

	"github.com/go-pdf/fpdf"
	"github.com/paulmach/orb/geojson"

	"github.com/trenzinho/trenzinho/monitor/drafts"
	"github.com/trenzinho/trenzinho/monitor/penalty"
	"github.com/trenzinho/trenzinho/profile"
	"github.com/trenzinho/trenzinho/registry"
	"github.com/trenzinho/trenzinho/rules"
	"github.com/trenzinho/trenzinho/wire"
)

// Page geometry, in millimetres.
const (
	pageW   = 210.0
	pageH   = 297.0
	marginL = 15.0
	marginR = 15.0
	marginT = 21.0
	marginB = 17.0
	width   = pageW - marginL - marginR
)

type rgb struct{ r, g, b int }

var (
	colInk      = rgb{33, 37, 41}
	colMuted    = rgb{98, 106, 115}
	colAccent   = rgb{22, 58, 105}
	colSection  = rgb{228, 234, 242}
	colRule     = rgb{180, 188, 198}
	colStripe   = rgb{246, 248, 250}
	colRed      = rgb{176, 28, 28}
	colRedFill  = rgb{252, 233, 231}
	colWarnFill = rgb{255, 244, 204}
	colWarnLine = rgb{214, 150, 0}
	colTrack    = rgb{200, 32, 32}
	colContext  = rgb{150, 156, 164}
	colZone     = rgb{253, 232, 200}
	colZoneLine = rgb{224, 120, 20}
	colSite     = rgb{140, 60, 10}
	colTacho    = rgb{31, 110, 180}
	colGPS      = rgb{40, 150, 60}
	colSound    = rgb{110, 70, 170}
	colWhite    = rgb{255, 255, 255}
)

// doc is one notice being drawn.
type doc struct {
	pdf *fpdf.Fpdf
	tr  func(string) string
	in  Input
	b   *drafts.Bundle
	d   *drafts.Draft
	p   *profile.Profile
	loc *time.Location

	episodes map[string]*rules.Episode
	places   []*geojson.Feature
	batches  []wire.Batch // decoded raw batches (only what the map and the driver need)

	thead  []string // the header of the table being drawn, repeated on a new page
	theadW []float64
}

func newDoc(in Input, b *drafts.Bundle) *doc {
	pdf := fpdf.New("P", "mm", "A4", "")
	d := &doc{pdf: pdf, tr: cp1252(pdf), in: in, b: b, d: &b.Draft, p: in.Profile,
		loc: in.Profile.Location(), episodes: map[string]*rules.Episode{}}
	if d.loc == nil {
		d.loc = time.UTC
	}
	for i := range b.Episodes {
		d.episodes[b.Episodes[i].ID] = &b.Episodes[i]
	}
	for _, raw := range b.Places {
		if f, err := geojson.UnmarshalFeature(raw); err == nil && f.Geometry != nil {
			d.places = append(d.places, f)
		}
	}
	for _, rb := range b.Batches {
		var wb wire.Batch
		if json.Unmarshal([]byte(rb.Payload), &wb) == nil {
			d.batches = append(d.batches, wb)
		}
	}
	return d
}

func (d *doc) status() string {
	if d.in.Decision.Status == "" {
		return drafts.StatusDraft
	}
	return d.in.Decision.Status
}

func (d *doc) issued() bool { return d.status() == drafts.StatusIssued }

// this is "deste auto" once issued, else "desta minuta".
func (d *doc) this() string {
	if d.issued() {
		return "deste auto"
	}
	return "desta minuta"
}

func (d *doc) title() string {
	switch d.status() {
	case drafts.StatusIssued:
		t := "AUTO DE INFRAÇÃO"
		if d.in.Decision.Notice != "" {
			t += " Nº " + d.in.Decision.Notice
		}
		if pe := d.in.Penalty; pe != nil && pe.Warning {
			t += " — NOTIFICAÇÃO PRELIMINAR"
		}
		return t
	case drafts.StatusDismissed:
		return "AUTO DE INFRAÇÃO — MINUTA ARQUIVADA"
	default:
		return "AUTO DE INFRAÇÃO — MINUTA"
	}
}

func (d *doc) banner() string {
	if d.status() == drafts.StatusDismissed {
		return "MINUTA ARQUIVADA — NÃO É AUTO DE INFRAÇÃO"
	}
	return "MINUTA — NÃO É AUTO DE INFRAÇÃO"
}

// DemonstrationLabel is printed at the top of every page of a PDF made under a demonstration
// profile (IsDemonstration), whose acts and values are fictitious.
const DemonstrationLabel = "DEMONSTRAÇÃO — valor fictício"

// IsDemonstration reports whether a legal profile's version is a demonstration's (it begins
// with "demonstração", as the profile `make run` writes: internal/testkit/demo).
func IsDemonstration(version string) bool {
	return strings.HasPrefix(strings.TrimSpace(version), "demonstração")
}

// demonstration reports whether the draft was made, or the PDF is printed, under a
// demonstration profile.
func (d *doc) demonstration() bool {
	return IsDemonstration(d.d.ProfileVer) || (d.p != nil && IsDemonstration(d.p.Version))
}

func (d *doc) local(t time.Time) time.Time { return t.In(d.loc) }

// Drawing primitives.

func (d *doc) font(style string, size float64) { d.pdf.SetFont("Helvetica", style, size) }
func (d *doc) mono(size float64)               { d.pdf.SetFont("Courier", "", size) }
func (d *doc) text(c rgb)                      { d.pdf.SetTextColor(c.r, c.g, c.b) }
func (d *doc) fill(c rgb)                      { d.pdf.SetFillColor(c.r, c.g, c.b) }
func (d *doc) draw(c rgb)                      { d.pdf.SetDrawColor(c.r, c.g, c.b) }

// need starts a new page unless h millimetres fit below the cursor.
func (d *doc) need(h float64) {
	if d.pdf.GetY()+h > pageH-marginB {
		d.pdf.AddPage()
	}
}

// lines is how many lines text takes in a MultiCell of width w with the current font.
func (d *doc) lines(text string, w float64) int {
	n := len(d.pdf.SplitLines([]byte(d.tr(text)), w))
	return max(n, 1)
}

// section starts a numbered section, on a new page unless its heading and keep millimetres
// of what follows fit.
func (d *doc) section(title string, keep float64) {
	d.need(12 + keep)
	d.pdf.Ln(2.5)
	d.fill(colSection)
	d.text(colAccent)
	d.font("B", 9.5)
	d.pdf.SetX(marginL)
	d.pdf.CellFormat(width, 6, d.tr(title), "", 1, "L", true, 0, "")
	d.pdf.Ln(1.5)
	d.text(colInk)
}

// para writes a paragraph across the text width (or the current right margin).
func (d *doc) para(text string, style string, size, lh float64) {
	d.font(style, size)
	d.pdf.SetX(d.left())
	d.pdf.MultiCell(0, lh, d.tr(text), "", "J", false)
}

func (d *doc) left() float64 { l, _, _, _ := d.pdf.GetMargins(); return l }

// kv writes a label and a value; the label column is lw wide.
func (d *doc) kv(label, value string, lw float64) {
	l, _, r, _ := d.pdf.GetMargins()
	vw := pageW - r - l - lw
	d.font("", 8.8)
	h := float64(d.lines(value, vw)) * 4.3
	d.need(h + 0.8)
	y := d.pdf.GetY()
	d.font("B", 8)
	d.text(colMuted)
	d.pdf.SetXY(l, y)
	d.pdf.CellFormat(lw, 4.3, d.tr(label), "", 0, "L", false, 0, "")
	d.font("", 8.8)
	d.text(colInk)
	d.pdf.SetXY(l+lw, y)
	d.pdf.MultiCell(vw, 4.3, d.tr(value), "", "L", false)
	d.pdf.SetY(max(d.pdf.GetY(), y+4.3) + 0.8)
}

// blank writes a label followed by a line, up to end, to fill in by hand.
func (d *doc) blank(x, y, lw, end float64, label string) {
	d.font("B", 8)
	d.text(colMuted)
	d.pdf.SetXY(x, y)
	d.pdf.CellFormat(lw, 5, d.tr(label), "", 0, "L", false, 0, "")
	d.draw(colMuted)
	d.pdf.SetLineWidth(0.2)
	d.pdf.Line(x+lw, y+4.5, end, y+4.5)
	d.text(colInk)
}

// checkbox draws a box and its label; it returns the x after the label.
func (d *doc) checkbox(x, y float64, label string) float64 {
	d.draw(colInk)
	d.pdf.SetLineWidth(0.25)
	d.pdf.Rect(x, y+0.8, 3.4, 3.4, "D")
	d.font("", 8.5)
	d.text(colInk)
	d.pdf.SetXY(x+4.4, y)
	w := d.pdf.GetStringWidth(d.tr(label)) + 2
	d.pdf.CellFormat(w, 5, d.tr(label), "", 0, "L", false, 0, "")
	return x + 4.4 + w + 4
}

// table draws one row of cells with the given widths; header rows are bold on the section
// colour, others striped when stripe is set.
func (d *doc) row(widths []float64, cells []string, header, stripe bool) {
	const lh, pad = 4.0, 1.2
	size := 8.2
	style := ""
	if header {
		size, style = 7.8, "B"
	}
	d.font(style, size)
	n := 1
	for i, c := range cells {
		n = max(n, d.lines(c, widths[i]))
	}
	h := float64(n)*lh + 2*pad
	if header {
		d.need(h + 8) // never a header alone at the foot of a page
		d.thead, d.theadW = cells, widths
	} else if d.pdf.GetY()+h > pageH-marginB {
		d.pdf.AddPage()
		if d.thead != nil {
			d.row(d.theadW, d.thead, true, false)
			d.font(style, size)
		}
	}
	x, y := marginL, d.pdf.GetY()
	d.draw(colRule)
	d.pdf.SetLineWidth(0.15)
	for i, c := range cells {
		switch {
		case header:
			d.fill(colSection)
			d.pdf.Rect(x, y, widths[i], h, "FD")
			d.text(colAccent)
		case stripe:
			d.fill(colStripe)
			d.pdf.Rect(x, y, widths[i], h, "FD")
			d.text(colInk)
		default:
			d.pdf.Rect(x, y, widths[i], h, "D")
			d.text(colInk)
		}
		d.pdf.SetXY(x, y+pad)
		d.pdf.MultiCell(widths[i], lh, d.tr(c), "", "L", false)
		x += widths[i]
	}
	d.text(colInk)
	d.pdf.SetXY(marginL, y+h)
}

// render draws the whole notice.
func (d *doc) render() {
	pdf := d.pdf
	pdf.SetMargins(marginL, marginT, marginR)
	pdf.SetAutoPageBreak(true, marginB)
	pdf.SetCellMargin(1)
	pdf.AliasNbPages("{nb}")
	pdf.SetLang("pt-BR")
	pdf.SetTitle(d.title()+" — "+d.d.Vehicle, true)
	pdf.SetSubject("Auto de infração — "+d.d.Law+" — "+d.d.Municipality, true)
	pdf.SetAuthor(d.d.FiscalOrgan, true)
	pdf.SetCreator("Monitor do trenzinho "+d.d.Software, true)
	pdf.SetProducer("Monitor do trenzinho", true)
	created := d.d.CreatedAt.Time
	if created.IsZero() {
		created = time.Now()
	}
	pdf.SetCreationDate(created)
	pdf.SetModificationDate(created)
	pdf.SetCatalogSort(true)
	pdf.SetHeaderFunc(d.header)
	pdf.SetFooterFunc(d.footer)
	pdf.AddPage()

	d.head()
	// Warnings and recommendations are for the review: an issued auto states only the auto.
	if !d.issued() {
		d.warnings()
	}
	d.parties()
	d.legal()
	d.when()
	d.facts()
	d.devices()
	d.penalty()
	d.defence()
	d.signatures()
	d.integrity()
}

// header is drawn on every page: the draft banner and watermark, and a running title after the
// first page.
func (d *doc) header() {
	pdf := d.pdf
	if d.demonstration() {
		d.font("B", 7.5)
		d.text(colRed)
		pdf.SetXY(marginL, 2.5)
		pdf.CellFormat(width, 4, d.tr(DemonstrationLabel+" — perfil legal de demonstração, sem valor legal"), "", 0, "C", false, 0, "")
	}
	if !d.issued() {
		d.watermark()

		d.fill(colRedFill)
		d.draw(colRed)
		pdf.SetLineWidth(0.4)
		d.text(colRed)
		d.font("B", 10)
		pdf.SetXY(marginL, 7)
		pdf.CellFormat(width, 7, d.tr(d.banner()), "1", 0, "C", true, 0, "")
	}
	if pdf.PageNo() > 1 {
		d.font("", 7)
		d.text(colMuted)
		pdf.SetXY(marginL, 15)
		pdf.CellFormat(width, 4, d.tr("Município de "+d.d.Municipality+" — "+d.title()+" — "+d.d.Vehicle), "", 0, "L", false, 0, "")
	}
	d.text(colInk)
	pdf.SetXY(marginL, marginT)
}

func (d *doc) footer() {
	pdf := d.pdf
	d.draw(colRule)
	pdf.SetLineWidth(0.2)
	pdf.Line(marginL, pageH-13, pageW-marginR, pageH-13)
	d.font("", 6.8)
	d.text(colMuted)
	pdf.SetXY(marginL, pageH-12)
	id := "Minuta " + d.d.ID
	if d.issued() && d.in.Decision.Notice != "" {
		id = "Auto nº " + d.in.Decision.Notice + " — registro " + d.d.ID
	}
	pdf.CellFormat(width-30, 4, d.tr(id+" — SHA-256 "+short(d.in.Sealed.Hash, 16)), "", 0, "L", false, 0, "")
	pdf.CellFormat(30, 4, d.tr(fmt.Sprintf("Página %d de {nb}", pdf.PageNo())), "", 0, "R", false, 0, "")
	d.text(colInk)
}

func short(s string, n int) string {
	if len(s) <= n {
		return s
	}
	return s[:n] + "…"
}

// head is the first page's heading: who issues, the title, and the case box.
func (d *doc) head() {
	pdf := d.pdf
	y := 17.0
	if !d.issued() {
		y = 18
	}
	pdf.SetXY(marginL, y)
	d.font("B", 13)
	d.text(colAccent)
	pdf.CellFormat(118, 6.5, d.tr("MUNICÍPIO DE "+strings.ToUpper(d.d.Municipality)), "", 2, "L", false, 0, "")
	d.font("", 9)
	d.text(colInk)
	pdf.MultiCell(118, 4.4, d.tr(d.d.FiscalOrgan), "", "L", false)
	d.font("", 8.2)
	d.text(colMuted)
	law := d.d.Law
	if !d.p.Law.InForce {
		law += " (lei indicada pelo perfil como não vigente)"
	}
	pdf.SetX(marginL)
	pdf.MultiCell(118, 4, d.tr(law), "", "L", false)
	leftEnd := pdf.GetY()

	// The case box.
	bx, bw := 137.0, pageW-marginR-137
	var rows [][2]string
	switch d.status() {
	case drafts.StatusIssued:
		rows = append(rows, [2]string{"Auto nº", d.in.Decision.Notice})
		if t := d.in.Decision.DecidedAt; t != nil {
			rows = append(rows, [2]string{"Emitido em", dateTime(d.local(*t))})
		}
		if a := d.in.Decision.Agent; a != nil {
			rows = append(rows, [2]string{"Agente", a.FullName}, [2]string{"Matrícula", a.Matricula}, [2]string{"Cargo", a.Cargo})
		} else if d.in.Decision.DecidedBy != "" {
			rows = append(rows, [2]string{"Agente", d.in.Decision.DecidedBy})
		}
	case drafts.StatusDismissed:
		rows = append(rows, [2]string{"Situação", "minuta arquivada"})
		if t := d.in.Decision.DecidedAt; t != nil {
			rows = append(rows, [2]string{"Arquivada em", dateTime(d.local(*t))})
		}
	default:
		rows = append(rows, [2]string{"Situação", "minuta em análise"})
	}
	if !d.issued() {
		rows = append(rows, [2]string{"Gerada em", dateTime(d.local(d.d.CreatedAt.Time))})
	}
	d.draw(colAccent)
	pdf.SetLineWidth(0.3)
	by := y + 0.5
	pdf.SetXY(bx, by+1)
	d.font("B", 7)
	d.text(colMuted)
	label := "Minuta nº"
	if d.issued() {
		label = "Registro das evidências"
	}
	pdf.CellFormat(bw, 3.5, d.tr(label), "", 2, "L", false, 0, "")
	d.mono(6.6)
	d.text(colInk)
	pdf.MultiCell(bw, 3.2, d.d.ID, "", "L", false)
	for _, r := range rows {
		pdf.SetX(bx)
		d.font("B", 7)
		d.text(colMuted)
		pdf.CellFormat(19, 4, d.tr(r[0]), "", 0, "L", false, 0, "")
		d.font("", 7.6)
		d.text(colInk)
		pdf.MultiCell(bw-19, 4, d.tr(r[1]), "", "L", false)
	}
	boxEnd := pdf.GetY() + 1
	pdf.Rect(bx, by, bw, boxEnd-by, "D")

	y = max(leftEnd, boxEnd) + 2.5
	d.draw(colAccent)
	pdf.SetLineWidth(0.6)
	pdf.Line(marginL, y, pageW-marginR, y)
	pdf.SetY(y + 2.5)
	d.font("B", 16)
	d.text(colAccent)
	pdf.CellFormat(width, 8, d.tr(d.title()), "", 1, "C", false, 0, "")
	var names []string
	for i, r := range d.d.Rules {
		n := ruleName(r)
		if i > 0 {
			n = strings.ToLower(n[:1]) + n[1:]
		}
		names = append(names, n)
	}
	d.font("", 9)
	d.text(colInk)
	pdf.MultiCell(width, 4.5, d.tr(strings.Join(names, " e ")+" — "+strings.Join(d.d.Articles, ", ")+
		"; penalidade: "+d.penaltyArticle()+" — "+d.fineLine()), "", "C", false)
	d.draw(colRule)
	pdf.SetLineWidth(0.2)
	pdf.Line(marginL, pdf.GetY()+1.5, pageW-marginR, pdf.GetY()+1.5)
	pdf.Ln(3)
	if d.status() == drafts.StatusDismissed && d.in.Decision.Reason != "" {
		d.kv("Motivo do arquivamento", d.in.Decision.Reason, 40)
	}
}

// penaltyArticle is the article whose penalty applies: the one the calculus at issue applied
// (a repetition may move it, e.g. to Art. 47), else the draft's.
func (d *doc) penaltyArticle() string {
	if pe := d.in.Penalty; pe != nil && pe.Article != "" {
		return pe.Article
	}
	return d.d.Penalty
}

// fineLine is the fine in one line.
func (d *doc) fineLine() string {
	if pe := d.in.Penalty; pe != nil && pe.Warning {
		return "notificação preliminar, sem multa"
	}
	if pe := d.in.Penalty; pe != nil {
		s := "multa de " + num(pe.FineUFMP, 2) + " " + d.unit()
		if pe.FineBRL != "" {
			s += " (" + money(pe.FineBRL) + ")"
		}
		return s
	}
	if d.d.FineUFMP > 0 {
		return "multa-base de " + num(d.d.FineUFMP, 2) + " " + d.unit()
	}
	return "sem multa nesta fase"
}

func (d *doc) unit() string {
	if d.d.FiscalUnit != "" {
		return d.d.FiscalUnit
	}
	return d.p.FiscalUnit.Name
}

// warnings are the draft's warnings, highlighted.
func (d *doc) warnings() {
	ws := slices.Clone(d.d.Warnings)
	if d.in.Addenda > 0 {
		ws = append(ws, fmt.Sprintf("Há %d adendo(s) com dados recebidos depois da minuta: não integram o pacote selado; consulte-os antes de decidir.", d.in.Addenda))
	}
	if len(ws) == 0 {
		return
	}
	pdf := d.pdf
	const pad, lh = 2.5, 4.2
	d.font("", 8.6)
	h := 5.5 + pad
	for _, w := range ws {
		h += float64(d.lines(w, width-2*pad-4)) * lh
	}
	h += pad
	d.need(h + 3)
	pdf.Ln(1)
	x, y := marginL, pdf.GetY()
	d.fill(colWarnFill)
	d.draw(colWarnLine)
	pdf.SetLineWidth(0.5)
	pdf.Rect(x, y, width, h, "FD")
	d.fill(colWarnLine)
	pdf.Rect(x, y, 1.6, h, "F")
	pdf.SetXY(x+pad+1, y+pad-0.5)
	d.font("B", 9)
	d.text(rgb{130, 80, 0})
	title := "ATENÇÃO — AVISOS AO AGENTE ANTES DE EMITIR O AUTO"
	switch d.status() {
	case drafts.StatusIssued:
		title = "ATENÇÃO — AVISOS DA MINUTA QUE ORIGINOU ESTE AUTO"
	case drafts.StatusDismissed:
		title = "AVISOS DA MINUTA"
	}
	pdf.CellFormat(width-2*pad, 5, d.tr(title), "", 2, "L", false, 0, "")
	d.text(colInk)
	for _, w := range ws {
		pdf.SetX(x + pad + 1)
		d.font("B", 8.6)
		pdf.CellFormat(4, lh, d.tr("•"), "", 0, "L", false, 0, "")
		d.font("", 8.6)
		pdf.MultiCell(width-2*pad-4, lh, d.tr(w), "", "L", false)
	}
	pdf.SetY(y + h + 1)
}

// parties are the licensee, the vehicle and the driver.
func (d *doc) parties() {
	d.section("1. AUTUADO, VEÍCULO E CONDUTOR", 30)
	const lw = 38
	switch {
	case d.d.Unregistered:
		d.kv("Titular (prestador)", "veículo não cadastrado — titular não identificado pelo cadastro municipal; identificar no local (Art. 4º e Art. 19).", lw)
	case d.in.Licensee != nil:
		l := d.in.Licensee
		name := l.Name
		if name == "" {
			name = d.d.Licensee
		}
		d.kv("Titular (prestador)", name, lw)
		if l.CNPJ != "" {
			d.kv("CNPJ", cnpj(l.CNPJ), lw)
		}
		if l.Address != "" {
			d.kv("Endereço", l.Address, lw)
		}
	case d.d.Licensee != "":
		d.kv("Titular (prestador)", d.d.Licensee+" (código no cadastro; razão social e CNPJ não informados nesta impressão)", lw)
	default:
		d.kv("Titular (prestador)", "não informado", lw)
	}

	v := "identificação na telemetria: " + d.d.Vehicle
	if d.d.Unregistered {
		v += " — veículo não cadastrado (placa a conferir no local)"
	} else if ve := d.in.Vehicle; ve != nil {
		if ve.Plate != "" {
			v += " — placa " + ve.Plate
		}
		if ve.Description != "" {
			v += " — " + ve.Description
		}
		if ve.ManufactureYear > 0 {
			v += fmt.Sprintf(" — ano de fabricação %d", ve.ManufactureYear)
		}
	}
	d.kv("Veículo", v, lw)

	cards := d.cards()
	if dr := d.in.Driver; dr != nil && dr.Name != "" {
		s := dr.Name
		if dr.CNH != "" {
			s += " — CNH nº " + dr.CNH
		}
		if dr.Card != "" {
			s += " — cartão do tacógrafo " + dr.Card
		}
		if dr.Identification != "" {
			s += " (identificado por: " + dr.Identification + ")"
		}
		d.kv("Condutor", s, lw)
		return
	}
	d.need(6)
	y := d.pdf.GetY()
	d.blank(marginL, y, lw, marginL+125, "Condutor")
	d.font("I", 7.5)
	d.text(colMuted)
	d.pdf.SetXY(marginL+127, y)
	d.pdf.CellFormat(width-127, 5, d.tr("(a identificar pelo agente)"), "", 1, "L", false, 0, "")
	d.pdf.SetY(y + 6)
	if len(cards) > 0 {
		d.kv("Cartão do tacógrafo", strings.Join(cards, ", ")+" (registrado nos dados do tacógrafo; o cadastro associa o cartão ao condutor)", lw)
	}
	d.text(colInk)
}

// cards are the tachograph cards the raw batches report during the facts.
func (d *doc) cards() []string {
	var out []string
	for _, b := range d.batches {
		for _, t := range b.Tacho {
			if t.Card == "" || t.T.Before(d.d.Start.Time) || t.T.After(d.d.End.Time) {
				continue
			}
			if !slices.Contains(out, t.Card) {
				out = append(out, t.Card)
			}
		}
	}
	return out
}

// legal is the legal basis: for each precept, "Art. 23 c/c Art. 46, X da Lei …", and the text
// of both quoted verbatim from the profile (law.articles).
func (d *doc) legal() {
	d.section("2. ENQUADRAMENTO LEGAL", 30)
	law := d.d.Law
	d.para("Os fatos descritos no item 4 constituem infração aos dispositivos abaixo da "+law+", cujo texto se transcreve:", "", 8.6, 4.2)
	d.pdf.Ln(1)
	seen := map[string]bool{}
	for _, f := range d.d.Facts {
		if seen[f.Article] {
			continue
		}
		seen[f.Article] = true
		line, quotes := d.p.LegalBasis(f.Article, d.penaltyArticle())
		d.need(14)
		d.font("B", 8.8)
		d.pdf.SetX(marginL)
		d.pdf.MultiCell(width, 4.4, d.tr(line), "", "L", false)
		quoted := map[string]bool{}
		quote := func(text string) {
			d.font("", 8.8)
			d.need(float64(d.lines(text, width-4))*4.3 + 1)
			d.pdf.SetX(marginL + 4)
			d.pdf.MultiCell(width-4, 4.3, d.tr(text), "", "L", false)
			d.pdf.Ln(0.6)
		}
		for _, q := range quotes {
			quoted[q.Cite] = true
			quote(q.Cite + ": “" + q.Text + "”")
		}
		for _, c := range []string{f.Article, d.penaltyArticle()} {
			if !quoted[c] && c != "" && c != "—" {
				quoted[c] = true
				quote(c + ": texto do dispositivo não cadastrado no perfil legal (law.articles).")
			}
		}
		d.pdf.Ln(0.8)
	}
	pen := "multa-base de " + num(d.d.FineUFMP, 2) + " " + d.unit() + " (valor da penalidade no item 6)."
	if d.d.FineUFMP == 0 {
		pen = d.notices()
	}
	if pe := d.in.Penalty; pe != nil && pe.Article != "" && pe.Article != d.d.Penalty && !pe.Warning {
		// A repeat is fined by its own penalty: the base one (a notificação preliminar) is not
		// printed beside it.
		pen = d.repeatPenalty(pe)
	}
	if pe := d.in.Penalty; pe != nil && pe.Warning {
		pen = d.notices()
	}
	d.kv("Penalidade: "+d.penaltyArticle(), pen+" O valor em reais é o da "+d.unit()+" vigente na data da emissão (Art. 44).", 52)
	for _, f := range d.d.Facts {
		if f.Rule == "noise_limit" && d.p.Noise.Standard != "" {
			d.kv("Norma técnica", d.p.Noise.Standard+", aplicável por força da Resolução CONAMA nº 01/1990 (limites de L_Aeq por tipo de área e período).", 52)
			break
		}
	}
	if len(d.d.Facts) > 1 {
		d.kv("Concurso de fatos", fmt.Sprintf("Os %d fatos abaixo são do mesmo veículo, simultâneos e sujeitos à mesma penalidade (%s): constituem um único auto, com uma única multa.", len(d.d.Facts), d.d.Penalty), 52)
	}
	d.competence()
}

// notices is what the profile says a rule without a fine leads to.
func (d *doc) notices() string {
	var out []string
	for _, r := range d.d.Rules {
		if n := d.p.Rules[r].Notice; n != "" && !slices.Contains(out, n) {
			out = append(out, n)
		}
	}
	if len(out) == 0 {
		return "sem multa prevista no perfil legal para este fato."
	}
	return strings.Join(out, "; ") + "."
}

// when is the date, time and place, with the mini-map.
func (d *doc) when() {
	const mapW, legendH, minMapH = 82.0, 13.0, 50.0
	mapH := 74.0
	eps, context := d.tracks()
	drawMap := len(eps) > 0 || len(context) > 0 || slices.ContainsFunc(d.d.Facts, func(f drafts.Fact) bool { return f.Lat != 0 || f.Lon != 0 })
	if drawMap {
		// The map shrinks a little rather than leave half a page blank.
		avail := pageH - marginB - d.pdf.GetY() - 12 - legendH - 3
		if avail >= minMapH {
			mapH = min(mapH, avail)
		}
		d.section("3. DATA, HORA E LOCAL", mapH+legendH+2)
	} else {
		d.section("3. DATA, HORA E LOCAL", 30)
	}
	pdf := d.pdf
	y0, page0 := pdf.GetY(), pdf.PageNo()
	mx := pageW - marginR - mapW
	// The text column, left of the map.
	if drawMap {
		pdf.SetRightMargin(marginR + mapW + 4)
	}
	const lw = 27
	start, end := d.local(d.d.Start.Time), d.local(d.d.End.Time)
	d.kv("Data", date(start)+" ("+weekdays[start.Weekday()]+")", lw)
	if date(start) == date(end) {
		d.kv("Horário", "das "+clock(start)+" às "+clock(end)+" (hora local, "+utcOffset(start)+")", lw)
	} else {
		d.kv("Período", "de "+dateTime(start)+" a "+dateTime(end)+" (hora local, "+utcOffset(start)+")", lw)
	}
	d.kv("Duração", duration(end.Sub(start).Seconds()), lw)
	type pos struct{ lat, lon float64 }
	var done []pos
	for i, f := range d.d.Facts {
		if f.Lat == 0 && f.Lon == 0 {
			continue
		}
		p := pos{math.Round(f.Lat * 1e6), math.Round(f.Lon * 1e6)}
		if slices.Contains(done, p) {
			continue
		}
		done = append(done, p)
		label, place := "Posição", "Local"
		if len(d.d.Facts) > 1 {
			label, place = fmt.Sprintf("Posição (fato %d)", i+1), fmt.Sprintf("Local (fato %d)", i+1)
		}
		if f.Place != nil {
			d.kv(place, placeText(f.Place), lw)
		}
		d.kv(label, "latitude "+coord(f.Lat)+", longitude "+coord(f.Lon)+" (WGS 84), no instante do valor máximo", lw)
	}
	if len(done) == 0 {
		d.kv("Posição", "não disponível (sem posição GPS válida nas evidências)", lw)
	}
	sites := map[string]bool{}
	for _, f := range d.d.Facts {
		if s := f.Site; s != nil && !sites[s.ID] {
			sites[s.ID] = true
			label := "Local protegido"
			if s.Kind != "" && s.Kind != "sensitive" {
				label = "Local de referência"
			}
			what := s.Name
			if c := categories[s.Category]; c != "" {
				what += " (" + c + ")"
			}
			d.kv(label, what+", a "+num(s.DistanceM, 1)+" m do veículo", lw)
			if s.Kind == "sensitive" || s.Category != "" {
				d.kv("Funcionamento", openingHours(s.OpeningHours), lw)
			}
			d.kv("Dados do local", d.siteVerification(s), lw)
		}
	}
	for _, f := range d.d.Facts {
		if f.Area != "" {
			a := d.p.Noise.Areas[f.Area]
			name := a.Name
			if name == "" {
				name = f.Area
			}
			d.kv("Tipo de área", name+" (NBR 10151: "+num(a.Day, 0)+" dB(A) diurno, "+num(a.Night, 0)+" dB(A) noturno)", lw)
			break
		}
	}
	if !drawMap {
		d.kv("Croqui", "indisponível: sem posições GPS válidas nas evidências", lw)
		return
	}
	textEnd, textPage := pdf.GetY(), pdf.PageNo()
	pdf.SetRightMargin(marginR)
	// The text column may have run onto the next page: the map stays beside its start.
	pdf.SetPage(page0)
	d.drawMap(mx, y0, mapW, mapH)
	pdf.SetPage(textPage)
	if textPage == page0 {
		pdf.SetY(max(textEnd, y0+mapH+legendH) + 1)
	} else {
		pdf.SetY(textEnd + 1)
	}
}

// placeText states a fact's place as observed data: approximate, the street and landmark
// nearest to the recorded position in the municipality's street base, the coordinates being
// the exact statement.
func placeText(p *drafts.Place) string {
	src := "base de logradouros importada pelo município"
	if p.Source == "osm" {
		src += " (OpenStreetMap)"
	}
	return "nas proximidades de " + p.Text() + " — logradouro e ponto de referência mais próximos da posição registrada, segundo a " +
		src + "; distâncias aproximadas; a posição exata é a das coordenadas"
}

// siteVerification says where a site's data came from and who verified it.
func (d *doc) siteVerification(s *rules.Site) string {
	by, at := "", ""
	for _, f := range d.places {
		if id, _ := f.Properties["id"].(string); id == s.ID {
			by, _ = f.Properties["verified_by"].(string)
			at, _ = f.Properties["verified_at"].(string)
		}
	}
	src := "fonte: " + siteSource(s.Source)
	if !s.Verified {
		return "NÃO VERIFICADOS por agente (" + src + ")"
	}
	v := "verificados"
	if by != "" {
		v += " por " + by
	}
	if at != "" {
		if t, err := time.Parse(time.DateOnly, at); err == nil {
			at = date(t)
		}
		v += " em " + at
	}
	return v + " (" + src + ")"
}

// facts are the facts with their measured values and charts.
func (d *doc) facts() {
	d.section("4. FATOS CONSTATADOS", 40) // the first fact needs 40 mm: keep them together
	for i, f := range d.d.Facts {
		if i > 0 {
			d.pdf.Ln(2)
		}
		d.need(40)
		d.font("B", 9.5)
		d.text(colAccent)
		d.pdf.SetX(marginL)
		d.pdf.MultiCell(width, 5, d.tr(fmt.Sprintf("Fato %d — %s (%s)", i+1, ruleName(f.Rule), f.Article)), "", "L", false)
		d.text(colInk)
		d.para(f.Description, "", 8.8, 4.3)
		d.pdf.Ln(1.2)
		widths := []float64{62, width - 62}
		d.row(widths, []string{"Grandeza", "Valor"}, true, false)
		for j, v := range d.values(f) {
			d.row(widths, v[:], false, j%2 == 1)
		}
		d.pdf.Ln(2)
		if ep := d.episodes[f.EpisodeID]; ep != nil {
			const h = 56.0
			d.need(h + 2)
			y := d.pdf.GetY()
			d.drawChart(marginL, y, width, h, i+1, f, ep)
			d.pdf.SetY(y + h + 1)
		}
	}
}

// values are the measured values of a fact, each with its label.
func (d *doc) values(f drafts.Fact) [][2]string {
	var v [][2]string
	add := func(k, val string) { v = append(v, [2]string{k, val}) }
	u := f.Unit
	est := func(s string) string {
		if f.Estimate {
			return s + " — ESTIMATIVA"
		}
		return s
	}
	switch f.Rule {
	case "speed":
		add("Velocidade máxima registrada", num(f.Peak, 2)+" km/h")
		add("Limite de velocidade", num(f.Limit, 1)+" km/h")
		add("Tolerância aplicada (instrumento)", num(f.Tolerance, 1)+" km/h — autuação somente acima de "+num(f.Limit+f.Tolerance, 1)+" km/h")
		add("Excesso sobre o limite", num(f.Peak-f.Limit, 2)+" km/h ("+num(f.Peak-f.Limit-f.Tolerance, 2)+" km/h além da tolerância)")
	case "noise_limit":
		add(est("L_Aeq máximo no receptor"), num(f.Peak, 1)+" dB(A) (L_Aeq em "+num(d.p.Noise.WindowS, 0)+" s)")
		area := f.Area
		if a, ok := d.p.Noise.Areas[f.Area]; ok {
			area = a.Name
		}
		add("Limite da área e período", num(f.Limit, 1)+" dB(A) — "+area)
		add("Tolerância do medidor", num(f.Tolerance, 1)+" dB")
		add(est("Excesso sobre o limite"), num(f.Peak-f.Limit, 1)+" dB ("+num(f.Peak-f.Limit-f.Tolerance, 1)+" dB além da tolerância)")
		if f.Estimate {
			add("Método da estimativa", fmt.Sprintf("propagação de fonte pontual, L2 = L1 - 20·log10(r2/r1), com r1 = %s m (medidor ao alto-falante) e r2 = %s m (receptor); não é medição conforme a %s",
				num(d.r1(), 2), num(d.p.Noise.R2M, 2), d.p.Noise.Standard))
		}
	case "sensitive_zone_sound", "boarding_sound":
		add(est("L_Aeq máximo no medidor"), num(f.Peak, 1)+" dB(A) (L_Aeq em "+num(d.p.Sensitive.EmissionWindow, 0)+" s, no veículo)")
		add("Limiar de emissão (perfil legal)", num(f.Limit, 1)+" dB(A)")
		if f.Tolerance > 0 {
			add("Tolerância aplicada", num(f.Tolerance, 1)+" dB")
		}
		if s := f.Site; s != nil {
			add("Distância ao local protegido", num(s.DistanceM, 1)+" m (raio legal de "+num(d.p.Sensitive.RadiusM, 0)+" m) — "+s.Name)
			add("Horário de funcionamento do local", openingHours(s.OpeningHours))
			add("Dados do local", d.siteVerification(s))
		}
	case "hours":
		add("Tempo em serviço além do horário", num(f.Peak, 0)+" min")
		start, end := d.p.HoursOn(f.Start.Time) // the hours of the day it began
		add("Horário permitido (Art. 29)", start.String()+" às "+end.String())
		add("Tolerância (deslocamento à garagem)", num(f.Limit, 0)+" min")
	case "route_deviation":
		add("Maior distância ao itinerário", num(f.Peak, 0)+" m")
		add("Corredor do itinerário", num(f.Limit, 0)+" m")
	default:
		add(est("Valor máximo"), num(f.Peak, 2)+" "+u)
		add("Limite", num(f.Limit, 2)+" "+u)
		if f.Tolerance > 0 {
			add("Tolerância aplicada", num(f.Tolerance, 2)+" "+unitTolerance(u))
		}
	}
	start, end := d.local(f.Start.Time), d.local(f.End.Time)
	period := dateTime(start) + " a "
	if f.End.IsZero() {
		period += "(em aberto)"
	} else if date(start) == date(end) {
		period += clock(end)
	} else {
		period += dateTime(end)
	}
	add("Início e fim", period)
	add("Duração", duration(f.DurationS))
	add("Instrumento", instrument(f.Source))
	add("Leituras de evidência", fmt.Sprintf("%d", f.Evidence))
	add("Encerramento do episódio", closedReason(f.Closed))
	return v
}

// devices lists the instruments that measured.
func (d *doc) devices() {
	d.section("5. EQUIPAMENTOS DE MEDIÇÃO", 25)
	var kinds []string
	for _, f := range d.d.Facts {
		if f.Source != "" && !slices.Contains(kinds, f.Source) {
			kinds = append(kinds, f.Source)
		}
	}
	positions := false
	for _, ep := range d.episodes {
		for _, r := range ep.Readings {
			if r.Lat != nil && r.Lon != nil {
				positions = true
			}
		}
	}
	if positions && !slices.Contains(kinds, "gps") {
		kinds = append(kinds, "gps")
	}
	widths := []float64{52, 30, 48, width - 130}
	d.row(widths, []string{"Instrumento", "Mede", "Modelo / nº de série", "Verificação (INMETRO) / calibração"}, true, false)
	for i, k := range kinds {
		q := quantities[k]
		if k == "gps" && positions && !slices.ContainsFunc(d.d.Facts, func(f drafts.Fact) bool { return f.Source == "gps" }) {
			q = "posição"
		}
		dev, ok := d.device(k)
		if !ok {
			d.row(widths, []string{instrument(k), q, "dados do equipamento não cadastrados", "dados do equipamento não cadastrados"}, false, i%2 == 1)
			continue
		}
		id := dev.Model
		if dev.Serial != "" {
			if id != "" {
				id += " — "
			}
			id += "nº de série " + dev.Serial
		}
		if id == "" {
			id = "não informado"
		}
		var ver []string
		if !dev.Verification.IsZero() {
			ver = append(ver, "verificação em "+date(dev.Verification))
		}
		if !dev.Calibration.IsZero() {
			ver = append(ver, "calibração em "+date(dev.Calibration))
		}
		if !dev.ValidUntil.IsZero() {
			s := "válida até " + date(dev.ValidUntil)
			if dev.ValidUntil.Before(d.d.Start.Time.Truncate(24 * time.Hour)) {
				s += " (VENCIDA na data do fato)"
			}
			ver = append(ver, s)
		}
		if len(ver) == 0 {
			ver = append(ver, "não informada")
		}
		d.row(widths, []string{instrument(k), q, id, strings.Join(ver, "; ")}, false, i%2 == 1)
	}
	d.legalRecord()
	signed := 0
	for _, rb := range d.b.Batches {
		if _, _, ok, _ := wire.SplitSignature([]byte(rb.Payload)); ok {
			signed++
		}
	}
	readings := 0
	for _, ep := range d.b.Episodes {
		readings += len(ep.Readings)
	}
	d.pdf.Ln(1.5)
	d.para(fmt.Sprintf("Pacote de evidências: %d leituras dos episódios e %d lotes de telemetria recebidos do veículo (%d assinados pelo equipamento de bordo), do período dos fatos com margem de 2 minutos, preservados sem alteração.",
		readings, len(d.b.Batches), signed), "", 8.2, 4)
	if es := d.b.Draft.EvidenceSigned; es != "" {
		d.para("Assinatura dos lotes pelo equipamento de bordo (verificada com a chave cadastrada do veículo na selagem das evidências): "+es+".", "", 8.2, 4)
	}
}

// art22III is Lei 2.277/2018, Art. 22, III, verbatim: the tachograph every vehicle must carry.
const art22III = "equipamento registrador instantâneo e inalterável de velocidade e tempo (tacógrafo), em perfeito estado de funcionamento"

// legalRecord refers a speed fact to the tachograph's record as the legal record of speed and
// time (Art. 22, III), naming the tachograph and its verification; the telemetry reproduces it.
func (d *doc) legalRecord() {
	if !slices.ContainsFunc(d.d.Facts, func(f drafts.Fact) bool { return drafts.MeasuredBy(f.Rule) == registry.DeviceTachograph }) {
		return
	}
	s := "Registro legal da velocidade e do tempo: o registro do tacógrafo do veículo, \"" + art22III + "\" (Lei nº 2.277/2018, Art. 22, III)"
	if dev, ok := d.device("tacho"); ok && dev.Serial != "" {
		s += ", nº de série " + dev.Serial
		if !dev.Verification.IsZero() {
			s += ", verificado pelo INMETRO em " + date(dev.Verification)
		}
		if !dev.ValidUntil.IsZero() {
			s += ", verificação válida até " + date(dev.ValidUntil)
		}
	}
	s += ". As leituras da telemetria reproduzem o que o tacógrafo registrou; o disco diagrama do tacógrafo (Art. 23) pode ser requisitado ao prestador."
	d.pdf.Ln(1.5)
	d.para(s, "", 8.2, 4)
}

// device finds the registered device of a kind.
func (d *doc) device(kind string) (Device, bool) {
	for _, dev := range d.in.Devices {
		k := dev.Kind
		if k == "tachograph" {
			k = "tacho"
		}
		if k == kind || kind == "clock" && k == "bridge" {
			return dev, true
		}
	}
	return Device{}, false
}

// penalty is the fine.
func (d *doc) penalty() {
	d.section("6. PENALIDADE", 22)
	const lw = 44
	u := d.unit()
	if pe := d.in.Penalty; pe != nil {
		if pe.Warning {
			d.kv("Medida ("+d.penaltyArticle()+")", d.notices(), lw)
		} else {
			s := num(pe.FineUFMP, 2) + " " + u
			if pe.FineBRL != "" {
				s += " = " + money(pe.FineBRL)
			}
			d.kv("Multa ("+d.penaltyArticle()+")", s, lw)
		}
		if pe.UnitValueBRL != "" && !pe.Warning {
			v := "1 " + u + " = " + money(pe.UnitValueBRL)
			if !pe.UnitDate.IsZero() {
				v += " em " + date(pe.UnitDate)
			}
			d.kv("Valor da unidade (Art. 44)", v, lw)
		}
		if pe.Recidivism != "" {
			d.kv("Reincidência (Art. 48)", pe.Recidivism, lw)
		}
		if pe.Recommendation != "" && !d.issued() {
			d.kv("Recomendação ao agente", pe.Recommendation, lw)
		}
		return
	}
	if d.d.FineUFMP > 0 {
		d.kv("Multa-base ("+d.d.Penalty+")", num(d.d.FineUFMP, 2)+" "+u, lw)
	} else {
		d.kv("Medida ("+d.d.Penalty+")", d.notices(), lw)
	}
	d.kv("Valor em reais", "conforme a "+u+" vigente na data da emissão (Art. 44)", lw)
	d.kv("Reincidência", "cálculo de reincidência no momento da emissão (Art. 48: a reincidência dobra a multa; reincidência específica pode levar à suspensão, Art. 52, e à cassação, Art. 53)", lw)
}

// defence is the deadline and the effect of a defence (Art. 55–57): where and to whom it is
// filed, the last day only when the auto was handed over at its issue (else the rule and a blank
// "Recebido em"), and what follows without defence or payment (Art. 51).
func (d *doc) defence() {
	days := d.p.Defence.Days
	if days <= 0 {
		days = 10
	}
	d.section(fmt.Sprintf("7. DEFESA — PRAZO DE %d DIAS (ART. 55)", days), 45)
	d.font("B", 9)
	d.pdf.SetX(marginL)
	first := fmt.Sprintf("Prazo para defesa: %d dias contados do recebimento deste auto.", days)
	if d.issued() {
		// Art. 55 counts from the receipt, which the auto cannot know unless it is handed over
		// at its issue: the rule, a blank to fill at delivery, and where the date is stated.
		first = fmt.Sprintf("Prazo para defesa: %d dias contados da data do recebimento deste auto (Art. 55), excluído o dia do recebimento. "+
			"Recebido em ____/____/________. O último dia do prazo é calculado a partir da data de recebimento registrada no processo "+
			"e informado na comunicação seguinte ao autuado.", days)
	}
	if t := d.in.Decision.DecidedAt; d.issued() && t != nil && d.in.Decision.HandedOver {
		deadline, _ := penalty.DefenceDeadline(d.p, *t, penalty.ModeInPerson, time.Time{})
		if !deadline.IsZero() {
			first = fmt.Sprintf("Prazo para defesa: %d dias contados do recebimento deste auto. Recebido em %s (data da emissão), o prazo termina em %s.",
				days, date(d.local(*t)), date(deadline))
		}
	}
	d.pdf.MultiCell(width, 4.5, d.tr(first), "", "L", false)
	const lw = 38
	to := strings.TrimSpace(d.p.Defence.To)
	if to == "" {
		to = "autoridade competente do órgão autuante (Art. 57) — " + d.d.FiscalOrgan
	}
	d.kv("Dirigida a", to, lw)
	where := []string{}
	if a := strings.TrimSpace(d.p.Defence.Address); a != "" {
		where = append(where, "protocolo em "+a)
	}
	if e := strings.TrimSpace(d.p.Defence.Email); e != "" {
		where = append(where, "e-mail "+e)
	}
	if p := strings.TrimSpace(d.p.Defence.Portal); p != "" {
		where = append(where, "portal "+p)
	}
	if len(where) == 0 {
		where = append(where, "protocolo do órgão autuante — "+d.d.FiscalOrgan)
	}
	d.kv("Onde apresentar", strings.Join(where, "; ")+". Indique o número deste auto.", lw)
	words := inWords(days)
	n := fmt.Sprintf("%d", days)
	if words != "" {
		n += " (" + words + ")"
	}
	text := "O autuado terá o prazo de " + n + " dias para apresentar defesa contra a autuação, contado da data do recebimento do Auto de Infração (Art. 55). " +
		"A defesa far-se-á por petição, que será juntada ao processo administrativo próprio, facultada a produção de documentos (Art. 56). " +
		"O oferecimento da defesa no prazo legal suspende a exigibilidade da multa até a decisão da autoridade competente (Art. 57)."
	d.para(text, "", 8.8, 4.3)
	d.pdf.Ln(0.8)
	d.para("Sem defesa no prazo, ou indeferida a defesa, o autuado será notificado da decisão e do prazo para pagar a multa. "+
		"Não paga no prazo legal, a multa será inscrita em dívida ativa e cobrada judicial ou extrajudicialmente (Art. 51), "+
		"e o infrator em débito não poderá requerer nova licença para prestação do serviço (Art. 51, parágrafo único).", "", 8.8, 4.3)
	var how []string
	if d.p.Defence.ExcludeReceiptDay {
		how = append(how, "exclui-se o dia do recebimento")
	}
	if d.p.Defence.NextBusinessDay {
		how = append(how, "o prazo que terminar em dia não útil prorroga-se para o primeiro dia útil seguinte")
	}
	if d.p.Defence.EditalFromPublication {
		how = append(how, "na notificação por edital, o prazo conta-se da publicação (Art. 54, § 1º)")
	}
	if len(how) > 0 {
		d.pdf.Ln(0.8)
		d.para("Contagem do prazo: "+strings.Join(how, "; ")+".", "", 8.2, 4)
	}
}

// signatures are the fields the agent fills in when notifying (Art. 54).
func (d *doc) signatures() {
	d.section("8. NOTIFICAÇÃO E ASSINATURAS (ART. 54)", 62)
	pdf := d.pdf
	d.need(62)
	y := pdf.GetY() + 1
	half := width / 2
	if a := d.in.Decision.Agent; a != nil && d.issued() {
		d.kv("Agente fiscal", a.FullName+" — "+a.Cargo, 30)
		d.kv("Matrícula", a.Matricula, 30)
		y = pdf.GetY() + 1
	} else {
		d.blank(marginL, y, 30, marginL+half-4, "Agente fiscal")
		d.blank(marginL+half, y, 22, pageW-marginR, "Matrícula")
	}
	y += 9
	d.blank(marginL, y, 30, marginL+half-4, "Assinatura")
	d.blank(marginL+half, y, 22, pageW-marginR, "Data")
	y += 9
	d.font("B", 8)
	d.text(colMuted)
	pdf.SetXY(marginL, y)
	pdf.CellFormat(40, 5, d.tr("Forma de notificação:"), "", 0, "L", false, 0, "")
	x := marginL + 40
	x = d.checkbox(x, y, "em mãos")
	x = d.checkbox(x, y, "por via postal com AR")
	d.checkbox(x, y, "por edital (Art. 54, § 1º)")
	y += 7
	d.checkbox(marginL, y, "O autuado recusou-se a assinar (Art. 54, § 2º): o agente registra o fato, o que justifica a falta de assinatura.")
	y += 9
	d.blank(marginL, y, 30, marginL+half-4, "Ciente do autuado")
	d.blank(marginL+half, y, 22, pageW-marginR, "Data")
	y += 9
	d.blank(marginL, y, 30, marginL+half-4, "Nome legível")
	d.blank(marginL+half, y, 22, pageW-marginR, "Documento")
	y += 9
	d.blank(marginL, y, 30, pageW-marginR, "Observações")
	pdf.SetY(y + 8)
}

// integrity is the evidence hash, chain and signature.
func (d *doc) integrity() {
	d.section("9. INTEGRIDADE DA PROVA", 45)
	d.para("O pacote de evidências "+d.this()+" (leituras, lotes de telemetria recebidos, geometria dos locais e perfil legal) foi selado pelo monitor no momento da sua geração: o hash SHA-256 identifica exatamente o seu conteúdo, encadeado ao hash do registro anterior e assinado com a chave Ed25519 do monitor. Qualquer alteração posterior é detectável.",
		"", 8.2, 4)
	d.pdf.Ln(1)
	s := d.in.Sealed
	prev := s.PrevHash
	if prev == "" {
		prev = "(primeiro registro da cadeia)"
	}
	d.hexRow("Hash SHA-256 do pacote", s.Hash)
	d.hexRow("Hash anterior", prev)
	d.hexRow("Chave pública do monitor", s.PublicKey)
	d.hexRow("Assinatura Ed25519", s.Signature)
	const lw = 44
	d.kv("Posição na cadeia", fmt.Sprintf("%d", s.Seq), lw)
	d.kv("Versão do software", d.d.Software, lw)
	prof := d.d.ProfileID
	if d.d.ProfileVer != "" {
		prof += ", versão " + d.d.ProfileVer
	}
	d.kv("Perfil legal", prof, lw)
	d.pdf.Ln(1)
	d.font("B", 9)
	d.pdf.SetX(marginL)
	d.pdf.CellFormat(52, 5, d.tr("Verifique com:"), "", 0, "L", false, 0, "")
	d.mono(9)
	d.pdf.CellFormat(width-52, 5, "monitor verify ARQUIVO.json", "", 1, "L", false, 0, "")
	d.font("", 7.8)
	d.text(colMuted)
	d.pdf.SetX(marginL)
	d.pdf.MultiCell(width, 3.8, d.tr(d.bundleRoutes()+
		" A verificação confere o hash do pacote e a assinatura; com --key CHAVE (a chave pública acima, publicada pelo Município), confere também a chave do monitor."), "", "L", false)
	d.text(colInk)
	d.publicLink()
}

// hexRow writes a label and a hex string in small monospace, wrapped at 64 characters.
func (d *doc) hexRow(label, hex string) {
	const lw = 44
	var parts []string
	for len(hex) > 64 {
		parts = append(parts, hex[:64])
		hex = hex[64:]
	}
	parts = append(parts, hex)
	h := float64(len(parts)) * 3.6
	d.need(h + 1)
	y := d.pdf.GetY()
	d.font("B", 8)
	d.text(colMuted)
	d.pdf.SetXY(marginL, y)
	d.pdf.CellFormat(lw, 3.8, d.tr(label), "", 0, "L", false, 0, "")
	d.text(colInk)
	for i, p := range parts {
		d.pdf.SetXY(marginL+lw, y+float64(i)*3.6)
		if strings.HasPrefix(p, "(") {
			d.font("", 8)
		} else {
			d.mono(7.2)
		}
		d.pdf.CellFormat(width-lw, 3.6, d.tr(p), "", 0, "L", false, 0, "")
	}
	d.pdf.SetY(y + h + 1)
}

// stencil are the strokes of the watermark's letters in a unit box (y up), so that the
// watermark is drawn as lines, not text: text would be read back by text extraction and
// screen readers as part of the notice.
var stencil = map[rune][][]fpdf.PointType{
	'M': {{{X: 0, Y: 0}, {X: 0, Y: 1}, {X: 0.5, Y: 0.35}, {X: 1, Y: 1}, {X: 1, Y: 0}}},
	'I': {{{X: 0.5, Y: 0}, {X: 0.5, Y: 1}}},
	'N': {{{X: 0, Y: 0}, {X: 0, Y: 1}, {X: 1, Y: 0}, {X: 1, Y: 1}}},
	'U': {{{X: 0, Y: 1}, {X: 0, Y: 0.25}, {X: 0.25, Y: 0}, {X: 0.75, Y: 0}, {X: 1, Y: 0.25}, {X: 1, Y: 1}}},
	'T': {{{X: 0, Y: 1}, {X: 1, Y: 1}}, {{X: 0.5, Y: 1}, {X: 0.5, Y: 0}}},
	'A': {{{X: 0, Y: 0}, {X: 0.5, Y: 1}, {X: 1, Y: 0}}, {{X: 0.2, Y: 0.4}, {X: 0.8, Y: 0.4}}},
}

// watermark draws a large, faint, diagonal MINUTA across the page.
func (d *doc) watermark() {
	const word = "MINUTA"
	const lh, lw, gap = 36.0, 24.0, 8.0 // letter height, width, spacing (mm)
	pdf := d.pdf
	total := 0.0
	for _, r := range word {
		if r == 'I' {
			total += gap
		} else {
			total += lw + gap
		}
	}
	total -= gap
	pdf.SetAlpha(0.08, "Normal")
	d.draw(colRed)
	pdf.SetLineWidth(3.2)
	pdf.SetLineCapStyle("square")
	pdf.SetLineJoinStyle("miter")
	pdf.TransformBegin()
	pdf.TransformRotate(55, pageW/2, pageH/2)
	x := pageW/2 - total/2
	base := pageH/2 + lh/2
	for _, r := range word {
		w := lw
		if r == 'I' {
			w = 0
			x -= lw / 2
		}
		for _, stroke := range stencil[r] {
			pts := make([]fpdf.PointType, len(stroke))
			for i, p := range stroke {
				pts[i] = fpdf.PointType{X: x + p.X*lw, Y: base - p.Y*lh}
			}
			d.strokes(pts)
		}
		if r == 'I' {
			x += lw/2 + gap
		} else {
			x += w + gap
		}
	}
	pdf.TransformEnd()
	pdf.SetLineCapStyle("butt")
	pdf.SetLineJoinStyle("miter")
	pdf.SetAlpha(1, "Normal")
}

// strokes draws an open polyline as one path, so that its joins are mitred.
func (d *doc) strokes(pts []fpdf.PointType) {
	if len(pts) < 2 {
		return
	}
	d.pdf.MoveTo(pts[0].X, pts[0].Y)
	for _, p := range pts[1:] {
		d.pdf.LineTo(p.X, p.Y)
	}
	d.pdf.DrawPath("D")
}
