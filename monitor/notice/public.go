package notice

import (
	"bytes"
	"crypto/ed25519"
	"encoding/hex"
	"fmt"

	"github.com/go-pdf/fpdf"
	qrcode "github.com/skip2/go-qrcode"

	"github.com/trenzinho/trenzinho/monitor/drafts"
)

// Public is the public verification of an issued auto: the short path of its public page
// ("/v/<code>") and, when the monitor's public address is configured, the full URL the QR code
// carries. Without URL the PDF prints the path alone and no QR code: a code that a phone
// cannot open would only mislead.
type Public struct {
	Path string // "/v/<code>"
	URL  string // "https://monitor.piuma.es.gov.br/v/<code>"; "" when not configured
}

// qrSize is the printed side of the QR code in millimetres: at level M a URL of some 60
// characters is a 41-module symbol, about 0.7 mm a module, which a phone camera reads at arm's
// length and a 150 dpi scan still resolves.
const qrSize = 30

// publicLink prints the public verification box: the QR code (when a URL is known), the URL or
// path, and what the page shows.
func (d *doc) publicLink() {
	p := d.in.Public
	if p == nil || !d.issued() {
		return
	}
	d.need(qrSize + 4)
	d.pdf.Ln(2)
	y := d.pdf.GetY()
	textX := marginL
	if p.URL != "" {
		png, err := qrcode.Encode(p.URL, qrcode.Medium, 512)
		if err != nil {
			d.pdf.SetError(fmt.Errorf("QR code: %w", err))
			return
		}
		opt := fpdf.ImageOptions{ImageType: "PNG"}
		d.pdf.RegisterImageOptionsReader("qr-public", opt, bytes.NewReader(png))
		d.pdf.ImageOptions("qr-public", marginL, y, qrSize, qrSize, false, opt, 0, "")
		textX = marginL + qrSize + 4
	}
	w := width - (textX - marginL)
	d.font("B", 9)
	d.text(colInk)
	d.pdf.SetXY(textX, y+1)
	d.pdf.MultiCell(w, 4.5, d.tr("Verificação pública deste auto"), "", "L", false)
	target := p.URL
	if target == "" {
		target = p.Path
	}
	d.mono(8.5)
	d.pdf.SetX(textX)
	d.pdf.MultiCell(w, 4.5, target, "", "L", false)
	d.font("", 7.8)
	d.text(colMuted)
	d.pdf.SetX(textX)
	d.pdf.MultiCell(w, 3.8, d.tr("Qualquer pessoa pode abrir este endereço, sem login, para conferir o número, a data e os artigos deste auto e "+
		"o resultado, recalculado no momento da consulta, do hash da prova, do encadeamento e da assinatura do monitor. "+
		"A mesma página confere se um PDF ou pacote de evidências recebido é o registrado. A página não mostra dados pessoais."), "", "L", false)
	if pub, err := hex.DecodeString(d.in.Sealed.PublicKey); err == nil && len(pub) == ed25519.PublicKeySize {
		d.pdf.SetX(textX)
		d.pdf.MultiCell(w, 3.8, d.tr("Impressão digital da chave do monitor: ")+drafts.KeyFingerprint(pub), "", "L", false)
	}
	d.text(colInk)
	if end := y + qrSize + 2; p.URL != "" && d.pdf.GetY() < end {
		d.pdf.SetY(end)
	}
}
