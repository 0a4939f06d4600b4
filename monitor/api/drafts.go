package api

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"strings"
	"time"

	"github.com/trenzinho/trenzinho/monitor/cases"
	"github.com/trenzinho/trenzinho/monitor/drafts"
	"github.com/trenzinho/trenzinho/monitor/notice"
	"github.com/trenzinho/trenzinho/monitor/store"
	"github.com/trenzinho/trenzinho/monitor/view"
	"github.com/trenzinho/trenzinho/wire"
)

// Drafts is the drafts store the API reads and decides on.
type Drafts interface {
	Drafts(ctx context.Context, status string, limit int, cursor string) ([]store.DraftRecord, string, error)
	DraftByID(ctx context.Context, id string) (*store.DraftRecord, error)
	HashAt(ctx context.Context, seq int64) (string, error)
	DecideDraft(ctx context.Context, id, decision, reason, user string, at time.Time) (string, error)
}

// DraftView is a whole draft: the draft, its case, its integrity, the sealed bundle, the
// addenda.
type DraftView struct {
	view.DraftSummary
	Draft     drafts.Draft     `json:"draft"`
	DecidedBy string           `json:"decided_by,omitempty"`
	DecidedAt *wire.Time       `json:"decided_at,omitempty"`
	Reason    string           `json:"reason,omitempty"`
	Addenda   []store.Addendum `json:"addenda"`
	Sealed    drafts.Sealed    `json:"sealed"`
	// Case is the notice's process once issued, with the penalty calculus made at issue.
	Case *CaseView `json:"case,omitempty"`
	// IssueBlockers are, for a draft still to decide, every reason the requesting user could not
	// issue it now (the refusal's reasons, shown before trying); empty: it may be issued.
	IssueBlockers []cases.Reason `json:"issue_blockers"`
}

// verify re-checks a stored draft (cases.VerifyDraft): editing the bundle, its signature, the
// chain or the draft row in the database shows here.
func (s *Server) verify(ctx context.Context, d *store.DraftRecord) string {
	return cases.VerifyDraft(ctx, s.draftKey, s.drafts.HashAt, &d.Sealed, &d.Doc)
}

func (s *Server) summary(ctx context.Context, d *store.DraftRecord) view.DraftSummary {
	sum := view.NewDraftSummary(&d.Doc, d.Status, s.verify(ctx, d))
	sum.ID, sum.Notice, sum.CreatedAt = d.Sealed.ID, d.Notice, wire.NewTime(d.CreatedAt)
	return sum
}

// handleDrafts serves GET /api/v1/drafts?status=&limit=&cursor=.
func (s *Server) handleDrafts(w http.ResponseWriter, r *http.Request) {
	q := r.URL.Query()
	status := q.Get("status")
	switch status {
	case "", drafts.StatusDraft, drafts.StatusIssued, drafts.StatusDismissed:
	default:
		s.writeError(w, r, http.StatusBadRequest, "parâmetro status inválido")
		return
	}
	limit, ok := s.limitParam(w, r, q)
	if !ok {
		return
	}
	ds, next, err := s.drafts.Drafts(r.Context(), status, limit, q.Get("cursor"))
	if err != nil {
		s.fail(w, r, err, "auto")
		return
	}
	items := make([]view.DraftSummary, len(ds))
	for i := range ds {
		items[i] = s.summary(r.Context(), &ds[i])
	}
	s.writeJSON(w, r, http.StatusOK, newList(items, next))
}

func (s *Server) loadDraft(w http.ResponseWriter, r *http.Request) (*store.DraftRecord, bool) {
	d, err := s.drafts.DraftByID(r.Context(), r.PathValue("id"))
	if err != nil {
		s.fail(w, r, err, "auto")
		return nil, false
	}
	return d, true
}

// handleDraft serves GET /api/v1/drafts/{id}: the whole draft and its bundle, re-verified.
func (s *Server) handleDraft(w http.ResponseWriter, r *http.Request) {
	d, ok := s.loadDraft(w, r)
	if !ok {
		return
	}
	v := DraftView{DraftSummary: s.summary(r.Context(), d), Draft: d.Doc, DecidedBy: d.DecidedBy,
		DecidedAt: d.DecidedAt, Reason: d.Reason, Addenda: d.Addenda, Sealed: d.Sealed}
	if v.Addenda == nil {
		v.Addenda = []store.Addendum{}
	}
	v.Case = s.draftCase(r.Context(), d.Sealed.ID)
	v.IssueBlockers = []cases.Reason{}
	if d.Status == drafts.StatusDraft {
		if rs := s.office().Blockers(r.Context(), &d.Doc, v.Integrity, actor(r)); rs != nil {
			v.IssueBlockers = rs
		}
	}
	// A draft may name its driver (facts, warnings, the driver block, the sealed bundle):
	// personal data, read by fiscal and above only, and every read is audited.
	s.record(r, store.AuditEntry{User: userFrom(r.Context()).Name, Action: auditDraftRead, Object: "draft:" + d.Sealed.ID})
	s.writeJSON(w, r, http.StatusOK, v)
}

// Audit actions of reads of a draft (it may hold personal data): the JSON and the PDF (the
// export is audited as draft.export).
const (
	auditDraftRead = "draft.read"
	auditDraftPDF  = "draft.pdf"
)

// handleDraftExport serves GET /api/v1/drafts/{id}/export: the sealed draft as a file that
// `monitor verify` checks offline.
func (s *Server) handleDraftExport(w http.ResponseWriter, r *http.Request) {
	d, ok := s.loadDraft(w, r)
	if !ok {
		return
	}
	if status := s.verify(r.Context(), d); status != "ok" {
		s.writeError(w, r, http.StatusConflict, "integridade do auto violada: "+status)
		return
	}
	s.record(r, store.AuditEntry{User: userFrom(r.Context()).Name, Action: "draft.export", Object: "draft:" + d.Sealed.ID})
	w.Header().Set("Content-Disposition", `attachment; filename="`+d.Sealed.ID+`.json"`)
	s.writeJSON(w, r, http.StatusOK, d.Sealed)
}

// handleDraftPDF serves GET /api/v1/drafts/{id}/pdf: the draft as an A4 PDF, re-verified.
func (s *Server) handleDraftPDF(w http.ResponseWriter, r *http.Request) {
	if s.renderPDF == nil {
		s.writeError(w, r, http.StatusNotFound, "PDF indisponível")
		return
	}
	d, ok := s.loadDraft(w, r)
	if !ok {
		return
	}
	if status := s.verify(r.Context(), d); status != "ok" {
		s.writeError(w, r, http.StatusConflict, "integridade do auto violada: "+status)
		return
	}
	pdf, sum, err := s.documentPDF(r.Context(), d)
	if errors.Is(err, notice.ErrFineContradictsLaw) {
		s.fail(w, r, err, "auto")
		return
	}
	if err != nil {
		s.internalError(w, r, err)
		return
	}
	s.record(r, store.AuditEntry{User: userFrom(r.Context()).Name, Action: auditDraftPDF, Object: "draft:" + d.Sealed.ID})
	if sum != "" {
		w.Header().Set(HeaderPDFSHA256, sum)
	}
	w.Header().Set("Content-Type", "application/pdf")
	w.Header().Set("Content-Disposition", `inline; filename="`+pdfName(d)+`"`)
	// The review page previews the PDF in a frame: its own origin may frame it, no other.
	w.Header().Set("X-Frame-Options", "SAMEORIGIN")
	w.Header().Set("Content-Security-Policy", "frame-ancestors 'self'")
	w.Write(pdf)
}

// HeaderPDFSHA256 carries the SHA-256 (hex) of an issued auto's frozen PDF, the hash the
// monitor registered for it (the public page recognises it).
const HeaderPDFSHA256 = "X-Trenzinho-PDF-SHA256"

// frozenPDFs keeps the notified document (store.DB implements it).
type frozenPDFs interface {
	FrozenPDF(ctx context.Context, draftID string) ([]byte, string, error)
	FreezePDF(ctx context.Context, draftID string, pdf []byte) ([]byte, string, error)
}

// documentPDF is the PDF of a draft. An issued auto's is frozen: the bytes rendered at its issue
// (or at its first download, for autos issued before documents were frozen), served as they
// are whatever the profile or the map tiles say later, with their SHA-256 (hex). A draft still
// to decide is rendered anew (the review's preview), without a hash.
func (s *Server) documentPDF(ctx context.Context, d *store.DraftRecord) ([]byte, string, error) {
	f, frozen := s.drafts.(frozenPDFs)
	if frozen && d.Status == drafts.StatusIssued {
		pdf, sum, err := f.FrozenPDF(ctx, d.Sealed.ID)
		if err == nil {
			return pdf, sum, nil
		}
		if !errors.Is(err, store.ErrNotFound) {
			return nil, "", err
		}
	}
	var buf bytes.Buffer
	if err := s.renderPDF(&buf, d); err != nil {
		return nil, "", err
	}
	if !frozen || d.Status != drafts.StatusIssued {
		return buf.Bytes(), "", nil
	}
	return f.FreezePDF(ctx, d.Sealed.ID, buf.Bytes())
}

// pdfName is the file name of a draft's PDF: the auto's number once issued, "/" made "-"
// (AI-2026/0001 → AI-2026-0001.pdf; the number itself is unchanged), else the draft's id.
func pdfName(d *store.DraftRecord) string {
	name := d.Sealed.ID
	if d.Status == drafts.StatusIssued && d.Notice != "" {
		name = strings.NewReplacer("/", "-", `\`, "-", `"`, "").Replace(d.Notice)
	}
	return name + ".pdf"
}

// handleDecision serves POST /api/v1/drafts/{id}/decision {"decision":"issue"|"dismiss","reason"}.
func (s *Server) handleDecision(w http.ResponseWriter, r *http.Request) {
	var req struct {
		Decision string `json:"decision"`
		Reason   string `json:"reason"`
		// HandedOver: the auto is handed over in hand at its issue, to this recipient; the
		// delivery is recorded before the document is frozen, which then prints the last day
		// to defend (handover.go).
		HandedOver *cases.Proof `json:"handed_over,omitempty"`
	}
	if !s.decodeBody(w, r, &req) {
		return
	}
	decision := map[string]string{"issue": drafts.StatusIssued, "dismiss": drafts.StatusDismissed}[req.Decision]
	if decision == "" {
		s.writeError(w, r, http.StatusBadRequest, `decision deve ser "issue" ou "dismiss"`)
		return
	}
	if decision == drafts.StatusDismissed && len(req.Reason) < 5 {
		s.writeError(w, r, http.StatusBadRequest, "o arquivamento exige um motivo")
		return
	}
	d, ok := s.loadDraft(w, r)
	if !ok {
		return
	}
	if decision == drafts.StatusIssued {
		// The office of the auto decides and records the issue in one transaction: the
		// checks, the number, the case with the calculus, the audit, the public code.
		o := s.office()
		if o.Ledger == nil {
			s.internalError(w, r, errors.New("no ledger to issue autos in"))
			return
		}
		if msg := handoverInvalid(req.HandedOver); msg != "" {
			s.writeError(w, r, http.StatusBadRequest, msg)
			return
		}
		c, _, err := o.Issue(r.Context(), d.Sealed.ID, req.Reason, actor(r))
		if err != nil {
			s.fail(w, r, err, "auto")
			return
		}
		if !s.handOver(w, r, o, c, req.HandedOver) {
			return
		}
	} else {
		if status := s.verify(r.Context(), d); status != "ok" {
			s.writeError(w, r, http.StatusConflict, "integridade do auto violada, não pode ser decidido: "+status)
			return
		}
		user := userFrom(r.Context())
		notice, err := s.drafts.DecideDraft(r.Context(), d.Sealed.ID, decision, req.Reason, user.Name, s.casesNow())
		if err != nil {
			s.fail(w, r, err, "auto")
			return
		}
		before, _ := json.Marshal(map[string]string{"status": d.Status})
		after, _ := json.Marshal(map[string]string{"status": decision, "notice": notice, "reason": req.Reason})
		s.record(r, store.AuditEntry{User: user.Name, Action: "draft." + req.Decision, Object: "draft:" + d.Sealed.ID, Before: before, After: after})
	}
	d, ok = s.loadDraft(w, r)
	if !ok {
		return
	}
	if d.Status == drafts.StatusIssued && s.renderPDF != nil {
		// The notified document is frozen now, as issued. A failure is logged, not answered:
		// the auto is issued, and its first download freezes it.
		if _, _, err := s.documentPDF(r.Context(), d); err != nil {
			s.log.Error("freezing the issued auto's PDF", "draft", d.Sealed.ID, "err", err)
		}
	}
	if s.hub != nil {
		s.hub.Publish(EventDraft, s.summary(r.Context(), d))
	}
	s.writeJSON(w, r, http.StatusOK, s.decisionAnswer(r.Context(), d))
}
