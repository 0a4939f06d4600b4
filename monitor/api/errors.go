package api

import (
	"errors"
	"fmt"
	"net/http"
	"strings"

	"github.com/trenzinho/trenzinho/monitor/cases"
	"github.com/trenzinho/trenzinho/monitor/notice"
	"github.com/trenzinho/trenzinho/monitor/store"
	"github.com/trenzinho/trenzinho/registry"
)

// fail answers err, an error of a store or of the registry, as every handler does (after WTF
// Dial's http.Error): each error those packages define maps to a status and a message a person
// can read, in Portuguese; anything else is a 500 whose details are logged, never shown
// (internalError). what names what the request is about ("auto", "episódio", "usuário"): a
// store's ErrNotFound says that it was not found.
//
// A handler answers with fail what a store call returned; internalError is for what can only be
// the server's own failure (encoding an answer, rendering a PDF, re-reading what it just wrote).
func (s *Server) fail(w http.ResponseWriter, r *http.Request, err error, what string) {
	var ce *cases.Error
	switch {
	// The office of the auto (monitor/cases): an act it refuses, in its words — malformed
	// (400), beyond the user's role (403), or contradicting the case (409; a refused issue
	// with every reason at once; a refused ciência with its one).
	case errors.As(err, &ce) && ce.Kind != cases.Invalid && len(ce.Reasons) > 0:
		s.writeJSON(w, r, map[cases.Kind]int{cases.Forbidden: http.StatusForbidden, cases.Conflict: http.StatusConflict}[ce.Kind],
			IssueRefusal{Error: ce.Msg, Reasons: ce.Reasons})
	case errors.As(err, &ce):
		s.writeError(w, r, map[cases.Kind]int{cases.Invalid: http.StatusBadRequest, cases.Forbidden: http.StatusForbidden,
			cases.Conflict: http.StatusConflict}[ce.Kind], ce.Msg)

	// The renderer refuses a document whose fine contradicts its penalty's article.
	case errors.Is(err, notice.ErrFineContradictsLaw):
		why := strings.TrimPrefix(err.Error(), notice.ErrFineContradictsLaw.Error()+": ")
		s.writeJSON(w, r, http.StatusConflict, IssueRefusal{Error: "O documento não pode ser gerado: " + why + ".",
			Reasons: []cases.Reason{{Code: cases.ReasonFineContradictsLaw, Text: "A penalidade contradiz a lei: " + why + "."}}})

	case errors.Is(err, store.ErrBadCursor):
		s.writeError(w, r, http.StatusBadRequest, "parâmetro cursor inválido")
	case errors.Is(err, store.ErrNotFound):
		s.writeError(w, r, http.StatusNotFound, what+" não encontrado")
	case errors.Is(err, store.ErrDecided):
		s.writeError(w, r, http.StatusConflict, "o auto já foi decidido")

	// The users store.
	case errors.Is(err, store.ErrExists):
		s.writeError(w, r, http.StatusConflict, "já existe um usuário com esse nome")
	case errors.Is(err, store.ErrInvalidName):
		s.writeError(w, r, http.StatusBadRequest, "nome de usuário inválido: use de 1 a 64 letras, dígitos e . _ @ -")
	case errors.Is(err, store.ErrInvalidRole):
		s.writeError(w, r, http.StatusBadRequest, "papel inválido: use viewer, fiscal, supervisor, autoridade ou admin (licensee só na criação, com o permissionário)")
	case errors.Is(err, store.ErrInvalidLicensee):
		s.writeError(w, r, http.StatusBadRequest, "id de permissionário inválido")
	case errors.Is(err, store.ErrInvalidAgent):
		s.writeError(w, r, http.StatusBadRequest, "nome completo, matrícula e cargo: até 200 caracteres cada, sem caracteres de controle")
	case errors.Is(err, store.ErrWeakPassword):
		s.writeError(w, r, http.StatusBadRequest, fmt.Sprintf("a senha deve ter de %d a %d caracteres", store.MinPasswordLen, store.MaxPasswordLen))
	case errors.Is(err, store.ErrLastAdmin):
		s.writeError(w, r, http.StatusConflict, "não é possível rebaixar ou desativar o último administrador ativo")

	// The registry: 422 with the path of every invalid field.
	case errors.Is(err, registry.ErrInvalid):
		fes := registry.FieldErrors(err)
		out := invalidRegistry{Error: fmt.Sprintf("cadastro inválido: %d problema(s)", len(fes)), Fields: []fieldProblem{}}
		for _, fe := range fes {
			out.Fields = append(out.Fields, fieldProblem{Path: fe.Record + "." + fe.Field, Message: fe.Msg})
		}
		s.writeJSON(w, r, http.StatusUnprocessableEntity, out)
	case errors.Is(err, registry.ErrNotFound):
		s.writeError(w, r, http.StatusNotFound, "registro não encontrado no cadastro")
	case errors.Is(err, registry.ErrInUse):
		s.writeError(w, r, http.StatusConflict, "registro em uso: "+strings.TrimPrefix(err.Error(), "registry: "))

	default:
		s.internalError(w, r, err)
	}
}

type invalidRegistry struct {
	Error  string         `json:"error"`
	Fields []fieldProblem `json:"fields"`
}

// fieldProblem is one validation problem in a 422 answer.
type fieldProblem struct {
	// Path is the record and the field as the registry's validator names them:
	// "drivers[D1].cpf", "vehicles[PIU-001].devices[0].valid_until".
	Path    string `json:"path"`
	Message string `json:"message"` // in Portuguese
}
