package api

import (
	"encoding/json"
	"fmt"
	"net/http"
	"strings"
	"unicode"
	"unicode/utf8"

	"github.com/trenzinho/trenzinho/monitor/store"
	"github.com/trenzinho/trenzinho/wire"
)

// userJSON is a user as the users routes show them.
type userJSON struct {
	Name      string     `json:"name"`
	Role      store.Role `json:"role"`
	CreatedAt wire.Time  `json:"created_at,omitzero"`
	Disabled  bool       `json:"disabled"`
	// Licensee is the registry licensee a licensee's user acts for (role licensee).
	Licensee string `json:"licensee,omitempty"`
	// The agent's identification an auto prints (issuing requires all three).
	store.Agent
}

func toUserJSON(u *store.User) userJSON {
	return userJSON{Name: u.Name, Role: u.Role, CreatedAt: wire.NewTime(u.CreatedAt), Disabled: u.Disabled, Licensee: u.Licensee, Agent: u.Agent}
}

// handleListUsers serves GET /api/v1/users (admin).
func (s *Server) handleListUsers(w http.ResponseWriter, r *http.Request) {
	users, err := s.users.ListUsers(r.Context())
	if err != nil {
		s.internalError(w, r, err)
		return
	}
	items := make([]userJSON, len(users))
	for i := range users {
		items[i] = toUserJSON(&users[i])
	}
	s.writeJSON(w, r, http.StatusOK, newList(items, ""))
}

type createUserRequest struct {
	Name     string     `json:"name"`
	Password string     `json:"password"`
	Role     store.Role `json:"role"`
	// Licensee is required with the role licensee: the registry id of the licensee the user
	// acts for (the portal).
	Licensee string `json:"licensee"`
	store.Agent
}

// handleCreateUser serves POST /api/v1/users (admin) {"name","password","role","full_name"?,
// "matricula"?,"cargo"?}.
func (s *Server) handleCreateUser(w http.ResponseWriter, r *http.Request) {
	var req createUserRequest
	if !s.decodeBody(w, r, &req) {
		return
	}
	if !validAgent(req.Agent) {
		s.fail(w, r, store.ErrInvalidAgent, "usuário")
		return
	}
	var u *store.User
	var err error
	switch {
	case req.Role == store.RoleLicensee:
		if _, known := s.licenseeKnown(req.Licensee); !known {
			s.writeError(w, r, http.StatusBadRequest, "o papel licensee exige o id de um permissionário do cadastro (licensee)")
			return
		}
		u, err = s.users.CreateLicenseeUser(r.Context(), req.Name, req.Password, req.Licensee)
	case req.Licensee != "":
		s.writeError(w, r, http.StatusBadRequest, "licensee só se informa com o papel licensee")
		return
	default:
		u, err = s.users.CreateUser(r.Context(), req.Name, req.Password, req.Role)
	}
	if err != nil {
		s.fail(w, r, err, "usuário")
		return
	}
	if req.Agent != (store.Agent{}) {
		if err := s.users.SetAgent(r.Context(), u.Name, req.Agent); err != nil {
			s.fail(w, r, err, "usuário")
			return
		}
		if u, err = s.users.UserByName(r.Context(), u.Name); err != nil {
			s.internalError(w, r, err)
			return
		}
	}
	out := toUserJSON(u)
	s.record(r, store.AuditEntry{User: userFrom(r.Context()).Name, Action: "user.create", Object: "user:" + u.Name,
		After: mustJSON(out)})
	s.writeJSON(w, r, http.StatusCreated, out)
}

type patchUserRequest struct {
	Role      *store.Role `json:"role"`
	Password  *string     `json:"password"`
	Disabled  *bool       `json:"disabled"`
	FullName  *string     `json:"full_name"`
	Matricula *string     `json:"matricula"`
	Cargo     *string     `json:"cargo"`
}

// licenseeKnown reports whether the registry knows the licensee id (any id, without a registry).
func (s *Server) licenseeKnown(id string) (string, bool) {
	if strings.TrimSpace(id) == "" {
		return "", false
	}
	if s.reg == nil {
		return id, true
	}
	l, ok := s.reg.Licensee(id)
	return l.ID, ok
}

// validAgent reports whether the store would take a as an agent's identification.
func validAgent(a store.Agent) bool {
	for _, f := range []string{a.FullName, a.Matricula, a.Cargo} {
		if utf8.RuneCountInString(f) > 200 || strings.ContainsFunc(f, unicode.IsControl) {
			return false
		}
	}
	return true
}

// handlePatchUser serves PATCH /api/v1/users/{name} (admin) {"role"?, "password"?, "disabled"?,
// "full_name"?, "matricula"?, "cargo"?}.
// A new password or disabling the account ends the user's sessions.
func (s *Server) handlePatchUser(w http.ResponseWriter, r *http.Request) {
	var req patchUserRequest
	if !s.decodeBody(w, r, &req) {
		return
	}
	agentChange := req.FullName != nil || req.Matricula != nil || req.Cargo != nil
	if req.Role == nil && req.Password == nil && req.Disabled == nil && !agentChange {
		s.writeError(w, r, http.StatusBadRequest, "nada a alterar: informe role, password, disabled, full_name, matricula ou cargo")
		return
	}
	// Refuse what the store would refuse before changing anything, so that a request is not
	// applied in part.
	if req.Role != nil && !req.Role.Valid() {
		s.fail(w, r, store.ErrInvalidRole, "usuário")
		return
	}
	if req.Password != nil {
		if n := utf8.RuneCountInString(*req.Password); n < store.MinPasswordLen || n > store.MaxPasswordLen {
			s.fail(w, r, store.ErrWeakPassword, "usuário")
			return
		}
	}
	ctx := r.Context()
	before, err := s.users.UserByName(ctx, r.PathValue("name"))
	if err != nil {
		s.fail(w, r, err, "usuário")
		return
	}
	name := before.Name
	if agentChange {
		a := before.Agent
		for _, f := range []struct{ src, dst *string }{{req.FullName, &a.FullName}, {req.Matricula, &a.Matricula}, {req.Cargo, &a.Cargo}} {
			if f.src != nil {
				*f.dst = *f.src
			}
		}
		if !validAgent(a) {
			s.fail(w, r, store.ErrInvalidAgent, "usuário")
			return
		}
		if err := s.users.SetAgent(ctx, name, a); err != nil {
			s.fail(w, r, err, "usuário")
			return
		}
	}
	if req.Role != nil && *req.Role != before.Role {
		if err := s.users.SetRole(ctx, name, *req.Role); err != nil {
			s.fail(w, r, err, "usuário")
			return
		}
	}
	if req.Disabled != nil && *req.Disabled != before.Disabled {
		if err := s.users.SetDisabled(ctx, name, *req.Disabled); err != nil {
			s.fail(w, r, err, "usuário")
			return
		}
	}
	if req.Password != nil {
		if err := s.users.SetPassword(ctx, name, *req.Password); err != nil {
			s.fail(w, r, err, "usuário")
			return
		}
	}
	after, err := s.users.UserByName(ctx, name)
	if err != nil {
		s.internalError(w, r, err)
		return
	}
	out := toUserJSON(after)
	// The audit log says that the password changed, never what it is.
	auditAfter := struct {
		userJSON
		PasswordChanged bool `json:"password_changed,omitempty"`
	}{out, req.Password != nil}
	s.record(r, store.AuditEntry{User: userFrom(ctx).Name, Action: "user.update", Object: "user:" + name,
		Before: mustJSON(toUserJSON(before)), After: mustJSON(auditAfter)})
	s.writeJSON(w, r, http.StatusOK, out)
}

// auditJSON is an audit entry as GET /api/v1/audit shows it.
type auditJSON struct {
	ID         int64           `json:"id"`
	Time       wire.Time       `json:"time"`
	User       string          `json:"user,omitempty"`
	Action     string          `json:"action"`
	Object     string          `json:"object,omitempty"`
	Before     json.RawMessage `json:"before,omitempty"`
	After      json.RawMessage `json:"after,omitempty"`
	RemoteAddr string          `json:"remote_addr,omitempty"`
}

// handleListAudit serves GET /api/v1/audit?user=&action=&object=&from=&to=&limit=&cursor=
// (admin), newest first.
func (s *Server) handleListAudit(w http.ResponseWriter, r *http.Request) {
	q := r.URL.Query()
	f := store.AuditFilter{User: q.Get("user"), Action: q.Get("action"), Object: q.Get("object")}
	var ok bool
	if f.From, ok = s.timeParam(w, r, q, "from"); !ok {
		return
	}
	if f.To, ok = s.timeParam(w, r, q, "to"); !ok {
		return
	}
	limit, ok := s.limitParam(w, r, q)
	if !ok {
		return
	}
	entries, next, err := s.audit.ListAudit(r.Context(), f, limit, q.Get("cursor"))
	if err != nil {
		s.fail(w, r, err, "registro de auditoria")
		return
	}
	items := make([]auditJSON, len(entries))
	for i, e := range entries {
		items[i] = auditJSON{ID: e.ID, Time: wire.NewTime(e.Time), User: e.User, Action: e.Action, Object: e.Object,
			Before: e.Before, After: e.After, RemoteAddr: e.RemoteAddr}
	}
	s.writeJSON(w, r, http.StatusOK, newList(items, next))
}

// mustJSON encodes v, which is one of this package's plain structs and cannot fail to encode.
func mustJSON(v any) json.RawMessage {
	b, err := json.Marshal(v)
	if err != nil {
		panic(fmt.Sprintf("api: encode %T: %v", v, err))
	}
	return b
}
