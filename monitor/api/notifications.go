package api

import (
	"context"
	"errors"
	"io"
	"net/http"
	"strconv"

	"github.com/trenzinho/trenzinho/monitor/store"
	"github.com/trenzinho/trenzinho/wire"
)

// The notification routes (docs/api.md, "Notifications (admin)"): the dead letters — messages
// the dispatcher gave up on — listed, and one retried, by an admin. A letter names a user and
// their address (personal data): the list is audited like the retry.

// DeadLetters lists and retries the notifications given up; *notify.Dispatcher implements it.
type DeadLetters interface {
	ListDeadLetters(ctx context.Context, limit int, cursor string) ([]store.NotifyDeadLetter, string, error)
	// RetryDeadLetter sends a letter again: nil when delivered (the letter is then gone),
	// store.ErrNotFound when there is no such letter, else the delivery's error.
	RetryDeadLetter(ctx context.Context, id int64) error
}

// Audit actions of the notification routes.
const (
	auditDeadLettersList = "notify.dead_letters.list"
	auditDeadLetterRetry = "notify.dead_letter.retry"
)

// deadLetterRoutes registers the notification routes when the monitor sends notifications.
func (s *Server) deadLetterRoutes(a *http.ServeMux) {
	if s.deadLetters == nil {
		return
	}
	a.Handle("GET /api/v1/notifications/dead-letters", s.requireRole(store.RoleAdmin, s.handleDeadLetters))
	a.Handle("POST /api/v1/notifications/dead-letters/{id}/retry", s.requireRole(store.RoleAdmin, s.handleRetryDeadLetter))
}

// deadLetterJSON is a dead letter as the API shows it: the address as the admin may see it (a
// push subscription only as its service's host, never its keys).
type deadLetterJSON struct {
	ID          int64     `json:"id"`
	At          wire.Time `json:"at"`
	User        string    `json:"user"`
	Channel     string    `json:"channel"`
	To          string    `json:"to"`
	Subject     string    `json:"subject"`
	Episodes    []string  `json:"episodes"`
	Attempts    int       `json:"attempts"`
	Error       string    `json:"error"`
	Retries     int       `json:"retries"`
	LastRetryAt wire.Time `json:"last_retry_at,omitzero"`
}

func (s *Server) handleDeadLetters(w http.ResponseWriter, r *http.Request) {
	q := r.URL.Query()
	limit, ok := s.limitParam(w, r, q)
	if !ok {
		return
	}
	letters, next, err := s.deadLetters.ListDeadLetters(r.Context(), limit, q.Get("cursor"))
	if errors.Is(err, store.ErrBadCursor) {
		s.writeError(w, r, http.StatusBadRequest, "parâmetro cursor inválido")
		return
	}
	if err != nil {
		s.internalError(w, r, err)
		return
	}
	items := make([]deadLetterJSON, len(letters))
	for i, l := range letters {
		items[i] = deadLetterJSON{ID: l.ID, At: wire.NewTime(l.At), User: l.User, Channel: l.Channel, To: l.Display,
			Subject: l.Subject, Episodes: l.Episodes, Attempts: l.Attempts, Error: l.Error, Retries: l.Retries}
		if items[i].Episodes == nil {
			items[i].Episodes = []string{}
		}
		if !l.LastRetry.IsZero() {
			items[i].LastRetryAt = wire.NewTime(l.LastRetry)
		}
	}
	s.record(r, store.AuditEntry{User: userFrom(r.Context()).Name, Action: auditDeadLettersList, Object: "notifications:dead-letters"})
	s.writeJSON(w, r, http.StatusOK, newList(items, next))
}

func (s *Server) handleRetryDeadLetter(w http.ResponseWriter, r *http.Request) {
	// The retry takes no body; one is read up to the limit like every route's and ignored.
	if _, err := io.Copy(io.Discard, http.MaxBytesReader(w, r.Body, maxBodyBytes)); err != nil {
		var tooBig *http.MaxBytesError
		if errors.As(err, &tooBig) {
			s.writeError(w, r, http.StatusRequestEntityTooLarge, "corpo da requisição grande demais")
			return
		}
		s.writeError(w, r, http.StatusBadRequest, "corpo da requisição ilegível")
		return
	}
	id, err := strconv.ParseInt(r.PathValue("id"), 10, 64)
	if err != nil || id <= 0 {
		s.writeError(w, r, http.StatusNotFound, "aviso não encontrado")
		return
	}
	err = s.deadLetters.RetryDeadLetter(r.Context(), id)
	if errors.Is(err, store.ErrNotFound) {
		s.writeError(w, r, http.StatusNotFound, "aviso não encontrado")
		return
	}
	object := "dead_letter:" + strconv.FormatInt(id, 10)
	user := userFrom(r.Context()).Name
	if err != nil {
		s.record(r, store.AuditEntry{User: user, Action: auditDeadLetterRetry, Object: object,
			After: mustJSON(map[string]any{"delivered": false, "error": err.Error()})})
		s.writeError(w, r, http.StatusBadGateway, "o reenvio falhou: "+err.Error())
		return
	}
	s.record(r, store.AuditEntry{User: user, Action: auditDeadLetterRetry, Object: object,
		After: mustJSON(map[string]any{"delivered": true})})
	s.writeJSON(w, r, http.StatusOK, map[string]any{"id": id, "delivered": true})
}
