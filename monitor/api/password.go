package api

import (
	"errors"
	"net/http"
	"strconv"
	"time"
	"unicode/utf8"

	"github.com/trenzinho/trenzinho/monitor/store"
)

type changePasswordRequest struct {
	Current string `json:"current"`
	New     string `json:"new"`
}

// handleChangePassword serves POST /api/v1/me/password {"current","new"}: any signed-in user,
// staff of every role and a licensee's user alike, changes their own password. The current
// password is required — a session left open on a shared computer must not be enough to take
// the account over — and a wrong one counts against the same limits as a failed login (address
// and account), so that the route is no way around the login's throttle. On success every
// other session of the user ends (whoever else knew the old password is signed out) and the
// one the change came from stays. Audited, without either password.
func (s *Server) handleChangePassword(w http.ResponseWriter, r *http.Request) {
	var req changePasswordRequest
	if !s.decodeBody(w, r, &req) {
		return
	}
	u := userFrom(r.Context())
	if req.Current == "" || req.New == "" {
		s.writeError(w, r, http.StatusBadRequest, "informe a senha atual e a nova senha")
		return
	}
	// The policy SetPassword applies, checked before the current password costs a hash.
	if n := utf8.RuneCountInString(req.New); n < store.MinPasswordLen || n > store.MaxPasswordLen {
		s.fail(w, r, store.ErrWeakPassword, "usuário")
		return
	}
	if utf8.RuneCountInString(req.Current) > store.MaxPasswordLen {
		// No password is this long: a wrong one, refused without hashing megabytes.
		req.Current = req.Current[:store.MaxPasswordLen]
	}

	ip, account := remoteIP(r), accountKey(u.Name)
	left, _, ok := s.admitGuess(ip, account)
	if !ok {
		w.Header().Set("Retry-After", strconv.Itoa(int((left+time.Second-1)/time.Second)))
		s.writeError(w, r, http.StatusTooManyRequests, "muitas tentativas com senha errada; tente novamente mais tarde")
		return
	}
	failed := false
	defer func() { s.guessDone(ip, account, failed) }()
	select {
	case s.loginSlots <- struct{}{}:
	case <-r.Context().Done():
		return
	}
	_, err := s.users.CheckPassword(r.Context(), u.Name, req.Current)
	<-s.loginSlots
	if errors.Is(err, store.ErrInvalidCredentials) {
		failed = true
		s.record(r, store.AuditEntry{User: u.Name, Action: "user.password_change_failed", Object: "user:" + u.Name})
		// 403, not 401: the session is valid (a 401 would sign the dashboard out).
		s.writeError(w, r, http.StatusForbidden, "senha atual incorreta")
		return
	}
	if err != nil {
		s.internalError(w, r, err)
		return
	}
	if req.New == req.Current {
		s.writeError(w, r, http.StatusBadRequest, "a nova senha deve ser diferente da atual")
		return
	}
	if err := s.users.ChangePassword(r.Context(), u.Name, req.New, requestToken(r)); err != nil {
		s.fail(w, r, err, "usuário")
		return
	}
	s.record(r, store.AuditEntry{User: u.Name, Action: "user.password_change", Object: "user:" + u.Name,
		After: mustJSON(struct {
			PasswordChanged    bool `json:"password_changed"`
			OtherSessionsEnded bool `json:"other_sessions_ended"`
		}{true, true})})
	s.writeJSON(w, r, http.StatusOK, struct {
		Changed bool   `json:"changed"`
		Message string `json:"message"`
	}{true, "Senha alterada. As outras sessões abertas com a senha antiga foram encerradas."})
}
