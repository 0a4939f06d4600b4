package api

import (
	"bytes"
	"context"
	"errors"
	"io"
	"net/http"
	"strconv"
	"strings"

	"github.com/trenzinho/trenzinho/monitor/cases"
	"github.com/trenzinho/trenzinho/monitor/store"
)

// The documents that prove a delivery (monitor/cases, proofs.go): a fiscal uploads the scan of
// a return receipt (AR) to the case, then records the delivery by post naming it (ar_scan).

// caseAttachments reads a case's attachments (the store).
type caseAttachments interface {
	CaseAttachment(ctx context.Context, caseID, id int64) (*cases.Attachment, error)
	CaseAttachments(ctx context.Context, caseID int64) ([]cases.Attachment, error)
}

// MaxAttachmentBody bounds the body of an upload: one attachment and its form.
const MaxAttachmentBody = cases.MaxAttachment + 1<<16

// attachmentRoutes registers the attachment routes of the cases.
func (s *Server) attachmentRoutes(a *http.ServeMux) {
	if s.cases == nil || s.cases.Store == nil || s.cases.Profile == nil {
		return
	}
	if _, ok := s.cases.Store.(caseAttachments); !ok {
		return
	}
	a.Handle("POST /api/v1/cases/{id}/attachments", s.requireRole(store.RoleFiscal, s.handleAttach))
	a.Handle("GET /api/v1/cases/{id}/attachments", s.requireRole(store.RoleViewer, s.handleAttachments))
	a.Handle("GET /api/v1/cases/{id}/attachments/{n}", s.requireRole(store.RoleViewer, s.handleAttachment))
}

// handleAttach serves POST /api/v1/cases/{id}/attachments, a multipart form with kind ("ar")
// and one file (PDF, JPEG or PNG by its content, up to cases.MaxAttachment): the attachment
// with its id and SHA-256 (201).
func (s *Server) handleAttach(w http.ResponseWriter, r *http.Request) {
	// The body is read whole, within its bound, before anything is done with it.
	r.Body = http.MaxBytesReader(w, r.Body, MaxAttachmentBody)
	raw, err := io.ReadAll(r.Body)
	if err != nil {
		s.filingBodyError(w, r, err)
		return
	}
	c, ok := s.loadCase(w, r)
	if !ok {
		return
	}
	r.Body = io.NopCloser(bytes.NewReader(raw))
	mr, err := r.MultipartReader()
	if err != nil {
		s.writeError(w, r, http.StatusBadRequest, "envie um formulário multipart/form-data com kind e file")
		return
	}
	var att cases.Attachment
	var got bool
	for {
		part, err := mr.NextPart()
		if err == io.EOF {
			break
		}
		if err != nil {
			s.filingBodyError(w, r, err)
			return
		}
		switch part.FormName() {
		case "kind":
			b, err := io.ReadAll(io.LimitReader(part, 64))
			if err != nil {
				s.filingBodyError(w, r, err)
				return
			}
			att.Kind = strings.TrimSpace(string(b))
		case "file":
			if got {
				s.writeError(w, r, http.StatusBadRequest, "envie um único arquivo (file)")
				return
			}
			f, msg, err := readAttachment(part, cases.MaxAttachment)
			if err != nil {
				s.filingBodyError(w, r, err)
				return
			}
			if msg != "" {
				s.writeError(w, r, http.StatusBadRequest, msg)
				return
			}
			att.Name, att.ContentType, att.Data, got = f.Name, f.ContentType, f.Data, true
		default:
			s.writeError(w, r, http.StatusBadRequest, "campo desconhecido "+strconv.Quote(part.FormName()))
			return
		}
	}
	if !got {
		s.writeError(w, r, http.StatusBadRequest, "envie o arquivo (file): a digitalização do AR em PDF, JPEG ou PNG")
		return
	}
	out, err := s.office().Attach(r.Context(), c.ID, att, actor(r))
	if err != nil {
		s.fail(w, r, err, "auto")
		return
	}
	s.writeJSON(w, r, http.StatusCreated, out)
}

// handleAttachments serves GET /api/v1/cases/{id}/attachments: the case's attachments, without
// their bytes.
func (s *Server) handleAttachments(w http.ResponseWriter, r *http.Request) {
	c, ok := s.loadCase(w, r)
	if !ok {
		return
	}
	list, err := s.cases.Store.(caseAttachments).CaseAttachments(r.Context(), c.ID)
	if err != nil {
		s.internalError(w, r, err)
		return
	}
	s.writeJSON(w, r, http.StatusOK, list)
}

// handleAttachment serves GET /api/v1/cases/{id}/attachments/{n}: the attachment's bytes.
func (s *Server) handleAttachment(w http.ResponseWriter, r *http.Request) {
	c, ok := s.loadCase(w, r)
	if !ok {
		return
	}
	n, err := strconv.ParseInt(r.PathValue("n"), 10, 64)
	var a *cases.Attachment
	if err == nil {
		a, err = s.cases.Store.(caseAttachments).CaseAttachment(r.Context(), c.ID, n)
	}
	if err != nil {
		if !errors.Is(err, store.ErrNotFound) && n > 0 {
			s.internalError(w, r, err)
			return
		}
		s.writeError(w, r, http.StatusNotFound, "anexo não encontrado")
		return
	}
	w.Header().Set("Content-Type", a.ContentType)
	w.Header().Set("Content-Disposition", `attachment; filename="`+a.Name+`"`)
	w.Header().Set("X-Content-Type-Options", "nosniff")
	_, _ = w.Write(a.Data)
}
