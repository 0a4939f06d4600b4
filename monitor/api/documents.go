package api

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strconv"
	"strings"

	"github.com/trenzinho/trenzinho/monitor/notice"
	"github.com/trenzinho/trenzinho/monitor/store"
	"github.com/trenzinho/trenzinho/registry"
)

// The documents of a case's process after the auto — a filing's receipt, a decision — are, as
// the auto, frozen as first made: rendered once, kept in the store (case_documents) and served
// byte for byte ever after, whatever the profile, the registry or the users' records say later.
// Their SHA-256 goes in the header X-Trenzinho-PDF-SHA256.

// frozenDocuments keeps the documents of a case (store.DB implements it).
type frozenDocuments interface {
	FrozenDocument(ctx context.Context, caseID int64, kind string, ref int64) ([]byte, string, error)
	FreezeDocument(ctx context.Context, caseID int64, kind string, ref int64, pdf []byte) ([]byte, string, error)
}

// caseDocument is the case's document kind/ref: the frozen one, else render's, frozen now. A
// store that keeps no documents gets render's, with its hash.
func (s *Server) caseDocument(ctx context.Context, caseID int64, kind string, ref int64, render func(io.Writer) error) ([]byte, string, error) {
	f, ok := s.cases.Store.(frozenDocuments)
	if ok {
		pdf, sum, err := f.FrozenDocument(ctx, caseID, kind, ref)
		if err == nil {
			return pdf, sum, nil
		}
		if !errors.Is(err, store.ErrNotFound) {
			return nil, "", err
		}
	}
	var buf bytes.Buffer
	if err := render(&buf); err != nil {
		return nil, "", err
	}
	if !ok {
		sum := sha256.Sum256(buf.Bytes())
		return buf.Bytes(), hex.EncodeToString(sum[:]), nil
	}
	return f.FreezeDocument(ctx, caseID, kind, ref, buf.Bytes())
}

// servePDF writes a document with its name and hash.
func (s *Server) servePDF(w http.ResponseWriter, pdf []byte, sum, name string) {
	w.Header().Set("Content-Type", "application/pdf")
	w.Header().Set("Content-Disposition", `attachment; filename="`+name+`.pdf"`)
	w.Header().Set(HeaderPDFSHA256, sum)
	w.Write(pdf)
}

// receiptPDF is the receipt (protocolo) of the filing f of case c.
func (s *Server) receiptPDF(ctx context.Context, c *store.Case, f *store.Filing) ([]byte, string, error) {
	return s.caseDocument(ctx, c.ID, store.DocumentReceipt, f.ID, func(w io.Writer) error {
		p := s.cases.Profile
		name, cnpj := c.LicenseeName, c.LicenseeCNPJ
		if name == "" && s.reg != nil {
			if l, ok := s.reg.Licensee(c.Licensee); ok {
				name, cnpj = l.RazaoSocial, l.CNPJ
			}
		}
		in := notice.ReceiptInput{Municipality: strings.TrimSpace(p.Municipality + "-" + p.State), Protocolo: f.Protocolo, Kind: f.Kind,
			Notice: c.Notice, Licensee: name, CNPJ: registry.FormatCNPJ(cnpj), User: f.User, FiledAt: f.FiledAt,
			Location: p.Location(), RemoteAddr: f.RemoteAddr, TextChars: len([]rune(f.Text)), To: p.Defence.To,
			Demonstration: notice.IsDemonstration(p.Version)}
		sum := sha256.Sum256([]byte(f.Text))
		in.TextSHA256 = hex.EncodeToString(sum[:])
		if f.Kind == store.FilingAppeal && p.Appeal.To != "" {
			in.To = p.Appeal.To
		}
		for _, ff := range f.Files {
			in.Files = append(in.Files, notice.ReceiptFile{Name: ff.Name, ContentType: ff.ContentType, Size: ff.Size, SHA256: ff.SHA256})
		}
		return notice.Receipt(w, in)
	})
}

// DecisionView is a decision of a case, with the route of its document.
type DecisionView struct {
	Seq     int    `json:"seq"`
	Action  string `json:"action"`
	Title   string `json:"title"`
	Date    string `json:"date"`
	Outcome string `json:"outcome"`
	PDF     string `json:"pdf"`
}

// decisionViews are the case's decisions; prefix is the case's route ("/api/v1/cases/7").
func decisionViews(c *store.Case, prefix string) []DecisionView {
	var out []DecisionView
	for _, d := range c.Decisions() {
		out = append(out, DecisionView{Seq: d.Seq, Action: d.Action, Title: d.Title(), Date: d.Date, Outcome: d.OutcomeText(),
			PDF: fmt.Sprintf("%s/decisions/%d/pdf", prefix, d.Seq)})
	}
	return out
}

// decisionPDF is the document of the decision recorded by the case's event seq; false when
// that event is no decision.
func (s *Server) decisionPDF(ctx context.Context, c *store.Case, seq int) ([]byte, string, bool, error) {
	d, ok := c.DecisionAt(seq)
	if !ok {
		return nil, "", false, nil
	}
	pdf, sum, err := s.caseDocument(ctx, c.ID, store.DocumentDecision, int64(seq), func(w io.Writer) error {
		p := s.cases.Profile
		in := notice.DecisionInput{Municipality: strings.TrimSpace(p.Municipality + "-" + p.State), Title: d.Title(), Notice: c.Notice,
			Licensee: c.LicenseeName, CNPJ: registry.FormatCNPJ(c.LicenseeCNPJ), Articles: c.Articles, Penalty: c.Penalty,
			Date: d.Date, Outcome: d.OutcomeText(), Revelia: d.Revelia, Report: d.Report, Grounds: d.Grounds, Ruling: d.Ruling,
			Consequence: d.Consequence(p), User: d.User, Made: s.casesNow(), Location: p.Location(),
			Demonstration: notice.IsDemonstration(p.Version)}
		if in.Ruling == "" {
			in.Ruling = d.Text // a decision recorded before decisions were structured
		}
		if in.Licensee == "" && s.reg != nil {
			if l, ok := s.reg.Licensee(c.Licensee); ok {
				in.Licensee, in.CNPJ = l.RazaoSocial, registry.FormatCNPJ(l.CNPJ)
			}
		}
		if s.users != nil {
			if u, err := s.users.UserByName(ctx, d.User); err == nil {
				in.FullName, in.Matricula, in.Cargo = u.FullName, u.Matricula, u.Cargo
			}
		}
		return notice.DecisionDocument(w, in)
	})
	return pdf, sum, true, err
}

// serveDecision serves the document of the decision {seq} of case c.
func (s *Server) serveDecision(w http.ResponseWriter, r *http.Request, c *store.Case) {
	seq, err := strconv.Atoi(r.PathValue("seq"))
	if err != nil || seq <= 0 {
		s.writeError(w, r, http.StatusNotFound, "decisão não encontrada")
		return
	}
	pdf, sum, ok, err := s.decisionPDF(r.Context(), c, seq)
	switch {
	case err != nil:
		s.internalError(w, r, err)
	case !ok:
		s.writeError(w, r, http.StatusNotFound, "decisão não encontrada")
	default:
		s.servePDF(w, pdf, sum, fmt.Sprintf("%s-decisao-%d", bundleName(c), seq))
	}
}

// handleCaseDecisionPDF serves GET /api/v1/cases/{id}/decisions/{seq}/pdf: the document of a
// decision of the case (relatório, fundamentação, dispositivo, its effects and the authority).
func (s *Server) handleCaseDecisionPDF(w http.ResponseWriter, r *http.Request) {
	if c, ok := s.loadCase(w, r); ok {
		s.serveDecision(w, r, c)
	}
}

// handlePortalDecisionPDF serves GET /api/v1/portal/cases/{id}/decisions/{seq}/pdf: the same
// document, for the licensee of the case.
func (s *Server) handlePortalDecisionPDF(w http.ResponseWriter, r *http.Request) {
	if c, ok := s.portalCaseOf(w, r); ok {
		s.serveDecision(w, r, c)
	}
}

// makeDecisionDocument freezes the document of a decision just recorded, so that the document
// the parties receive is the one made on the decision's day; a failure is logged, and the
// first download makes it.
func (s *Server) makeDecisionDocument(ctx context.Context, c *store.Case) {
	ds := c.Decisions()
	if len(ds) == 0 || ds[len(ds)-1].Seq != len(c.Events) {
		return
	}
	if _, _, _, err := s.decisionPDF(ctx, c, ds[len(ds)-1].Seq); err != nil {
		s.log.Warn("decision document", "case", c.Notice, "err", err)
	}
}
