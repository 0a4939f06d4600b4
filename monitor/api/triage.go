package api

import (
	"bytes"
	"context"
	"errors"
	"io"
	"net/http"

	"github.com/trenzinho/trenzinho/monitor/store"
	"github.com/trenzinho/trenzinho/wire"
)

// The triage routes (docs/api.md, "Triage"): the control room's handling of an alert — an
// episode — acknowledged, assigned, commented, cleared with a reason, reopened. Viewers read it;
// fiscal and above act. Every act is written with its history entry and its audit entry in one
// transaction (store.ActOnTriage). Triage is not the review of a draft: clearing an alert
// decides nothing about a draft or a case, which keep their own process (drafts.go, cases.go).

// TriageStore keeps the triage of the episodes; *store.DB implements it.
type TriageStore interface {
	Triage(ctx context.Context, id string) (*store.Triage, error)
	ActOnTriage(ctx context.Context, id string, who store.Actor, act store.TriageAct) (*store.Triage, error)
	TriageSummaries(ctx context.Context, ids []string) (map[string]store.Triage, error)
}

// EventTriage is the stream's event of a triage act: the episode's triage after it, with its
// last history entry.
const EventTriage = "triage"

func (s *Server) triageRoutes(a *http.ServeMux) {
	if s.triage == nil {
		return
	}
	a.Handle("GET /api/v1/episodes/{id}/triage", s.requireRole(store.RoleViewer, s.handleTriage))
	act := func(act string) http.HandlerFunc {
		return func(w http.ResponseWriter, r *http.Request) { s.handleTriageAct(w, r, act) }
	}
	a.Handle("POST /api/v1/episodes/{id}/ack", s.requireRole(store.RoleFiscal, act(store.ActAck)))
	a.Handle("POST /api/v1/episodes/{id}/assign", s.requireRole(store.RoleFiscal, act(store.ActAssign)))
	a.Handle("POST /api/v1/episodes/{id}/comments", s.requireRole(store.RoleFiscal, act(store.ActComment)))
	a.Handle("POST /api/v1/episodes/{id}/clear", s.requireRole(store.RoleFiscal, act(store.ActClear)))
	a.Handle("POST /api/v1/episodes/{id}/reopen", s.requireRole(store.RoleFiscal, act(store.ActReopen)))
	// Comments are append-only: there is no route to change or delete one (the mux answers
	// 405 to PUT, PATCH and DELETE on .../comments, 404 below it).
}

// triageJSON is a triage as the API shows it.
type triageJSON struct {
	EpisodeID   string            `json:"episode_id"`
	State       store.TriageState `json:"state"`
	AckedBy     string            `json:"acknowledged_by,omitempty"`
	AckedAt     wire.Time         `json:"acknowledged_at,omitzero"`
	Assignee    string            `json:"assignee,omitempty"`
	AssignedBy  string            `json:"assigned_by,omitempty"`
	AssignedAt  wire.Time         `json:"assigned_at,omitzero"`
	ClearedBy   string            `json:"cleared_by,omitempty"`
	ClearedAt   wire.Time         `json:"cleared_at,omitzero"`
	ClearReason string            `json:"clear_reason,omitempty"`
	EscalatedAt wire.Time         `json:"escalated_at,omitzero"`
	History     []triageEventJSON `json:"history,omitzero"`
}

type triageEventJSON struct {
	ID       int64     `json:"id"`
	At       wire.Time `json:"at"`
	User     string    `json:"user"`
	Act      string    `json:"act"`
	Assignee string    `json:"assignee,omitempty"`
	Text     string    `json:"text,omitempty"`
}

// newTriageJSON converts a triage; withHistory adds its history ([] when empty).
func newTriageJSON(t *store.Triage, withHistory bool) triageJSON {
	j := triageJSON{EpisodeID: t.EpisodeID, State: t.State, AckedBy: t.AckedBy, Assignee: t.Assignee, AssignedBy: t.AssignBy,
		ClearedBy: t.ClearedBy, ClearReason: t.Reason}
	if !t.AckedAt.IsZero() {
		j.AckedAt = wire.NewTime(t.AckedAt)
	}
	if !t.AssignAt.IsZero() {
		j.AssignedAt = wire.NewTime(t.AssignAt)
	}
	if !t.ClearedAt.IsZero() {
		j.ClearedAt = wire.NewTime(t.ClearedAt)
	}
	if !t.Escalated.IsZero() {
		j.EscalatedAt = wire.NewTime(t.Escalated)
	}
	if withHistory {
		j.History = make([]triageEventJSON, len(t.Events))
		for i, e := range t.Events {
			j.History[i] = triageEventJSON{ID: e.ID, At: wire.NewTime(e.At), User: e.User, Act: e.Act, Assignee: e.Assignee, Text: e.Text}
		}
	}
	return j
}

// handleTriage serves GET /api/v1/episodes/{id}/triage: the state and the whole history.
func (s *Server) handleTriage(w http.ResponseWriter, r *http.Request) {
	t, err := s.triage.Triage(r.Context(), r.PathValue("id"))
	if err != nil {
		s.fail(w, r, err, "episódio")
		return
	}
	j := newTriageJSON(t, true)
	if j.History == nil {
		j.History = []triageEventJSON{}
	}
	s.writeJSON(w, r, http.StatusOK, j)
}

// triageRequest is the body of the acts: {"user"} to assign, {"text"} to comment, {"reason"}
// to clear or reopen; acknowledging takes no body (or {}).
type triageRequest struct {
	User   string `json:"user"`
	Text   string `json:"text"`
	Reason string `json:"reason"`
}

// handleTriageAct serves POST /api/v1/episodes/{id}/{ack,assign,comments,clear,reopen}.
func (s *Server) handleTriageAct(w http.ResponseWriter, r *http.Request, act string) {
	var req triageRequest
	if act == store.ActAck {
		// No body, or a JSON object (the dashboard sends {}): read up to the limit.
		b, err := io.ReadAll(http.MaxBytesReader(w, r.Body, maxBodyBytes))
		if err != nil {
			var tooBig *http.MaxBytesError
			if errors.As(err, &tooBig) {
				s.writeError(w, r, http.StatusRequestEntityTooLarge, "corpo da requisição grande demais")
				return
			}
			s.writeError(w, r, http.StatusBadRequest, "corpo da requisição ilegível")
			return
		}
		if len(b) > 0 {
			r.Body = io.NopCloser(bytes.NewReader(b))
			if !s.decodeBody(w, r, &req) {
				return
			}
		}
	} else if !s.decodeBody(w, r, &req) {
		return
	}
	var ta store.TriageAct
	switch act {
	case store.ActAck:
		if req != (triageRequest{}) {
			s.writeError(w, r, http.StatusBadRequest, "reconhecer não leva campos")
			return
		}
		ta = store.TriageAct{Act: act}
	case store.ActAssign:
		if req.Text != "" || req.Reason != "" {
			s.writeError(w, r, http.StatusBadRequest, "atribuir leva só o campo user")
			return
		}
		ta = store.TriageAct{Act: act, Assignee: req.User}
	case store.ActComment:
		if req.User != "" || req.Reason != "" {
			s.writeError(w, r, http.StatusBadRequest, "um comentário leva só o campo text")
			return
		}
		ta = store.TriageAct{Act: act, Text: req.Text}
	default: // clear, reopen
		if req.User != "" || req.Text != "" {
			s.writeError(w, r, http.StatusBadRequest, "leva só o campo reason")
			return
		}
		ta = store.TriageAct{Act: act, Text: req.Reason}
	}
	id := r.PathValue("id")
	user := userFrom(r.Context())
	t, err := s.triage.ActOnTriage(r.Context(), id, store.Actor{User: user.Name, RemoteAddr: remoteIP(r)}, ta)
	if err != nil {
		s.fail(w, r, err, "episódio")
		return
	}
	j := newTriageJSON(t, true)
	if s.hub != nil {
		ev := j
		if n := len(ev.History); n > 0 {
			ev.History = ev.History[n-1:]
		}
		s.hub.Publish(EventTriage, ev)
	}
	s.writeJSON(w, r, http.StatusOK, j)
}

// triageSummaries is the triage of each episode of a list, for the alerts page.
func (s *Server) triageSummaries(ctx context.Context, ids []string) (map[string]triageJSON, error) {
	sums, err := s.triage.TriageSummaries(ctx, ids)
	if err != nil {
		return nil, err
	}
	out := make(map[string]triageJSON, len(ids))
	for _, id := range ids {
		t, ok := sums[id]
		if !ok {
			t = store.Triage{EpisodeID: id, State: store.TriageNew}
		}
		out[id] = newTriageJSON(&t, false)
	}
	return out, nil
}
