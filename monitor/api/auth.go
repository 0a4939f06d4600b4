package api

import (
	"context"
	"errors"
	"net/http"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/trenzinho/trenzinho/monitor/store"
)

// SessionCookie is the name of the session cookie.
const SessionCookie = "trenzinho_session"

// Login throttling: after loginFailures failed logins from one client address within
// loginWindow of the first, further attempts from it are refused until the window ends; after
// loginFailures failed logins for one account, every attempt for that account, from any
// address, is refused likewise. With a store that keeps them (sharedFailures) the failures of
// every monitor on the database count.
const (
	loginFailures = 10
	loginWindow   = 15 * time.Minute
	// maxThrottledAudits bounds the refused attempts audited per address and window.
	maxThrottledAudits = 100
)

// sessionUser is a user as the session and login answers show them.
type sessionUser struct {
	Name string     `json:"name"`
	Role store.Role `json:"role"`
}

type loginRequest struct {
	User     string `json:"user"`
	Password string `json:"password"`
}

type loginResponse struct {
	Token string      `json:"token"`
	User  sessionUser `json:"user"`
	// FieldKey signs the session's field verifications (field.go); fiscal and above only.
	FieldKey *fieldKey `json:"field_key,omitempty"`
}

type sessionResponse struct {
	Authenticated bool         `json:"authenticated"`
	User          *sessionUser `json:"user,omitempty"`
	FieldKey      *fieldKey    `json:"field_key,omitempty"`
}

// handleLogin serves POST /api/v1/login: it checks the password, starts a session, sets its
// cookie and returns its token for clients that use the Authorization header. Every attempt is
// audited.
func (s *Server) handleLogin(w http.ResponseWriter, r *http.Request) {
	var req loginRequest
	if !s.decodeBody(w, r, &req) {
		return
	}
	if req.User == "" || req.Password == "" {
		s.writeError(w, r, http.StatusBadRequest, "usuário e senha são obrigatórios")
		return
	}
	ip, account := remoteIP(r), accountKey(req.User)
	// Two independent limits: the address (one client guessing many accounts) and the account
	// (many clients guessing one account). Either refuses the attempt, the right password
	// included; neither is reset by a success.
	// Each admitted attempt holds one of the places left until it is decided, so that
	// attempts made at once cannot overrun the limit.
	left, byAddress, ok := s.admitGuess(ip, account)
	if !ok {
		s.metrics.logins.WithLabelValues("throttled").Inc()
		// Audited too (the password is not even checked), up to a bound per refusing key and
		// window so that a flood of attempts cannot flood the audit log.
		var refused int
		if byAddress {
			refused = s.throttle.refuse(ip)
		} else {
			refused = s.accounts.refuse(account)
		}
		if refused <= maxThrottledAudits {
			s.record(r, store.AuditEntry{Action: "login_throttled", Object: "user:" + auditName(req.User)})
		}
		w.Header().Set("Retry-After", strconv.Itoa(int((left+time.Second-1)/time.Second)))
		s.writeError(w, r, http.StatusTooManyRequests, "muitas tentativas de login; tente novamente mais tarde")
		return
	}
	failed := false
	defer func() { s.guessDone(ip, account, failed) }()

	// Hash a bounded number of passwords at once: each costs memory.
	select {
	case s.loginSlots <- struct{}{}:
	case <-r.Context().Done():
		return
	}
	u, err := s.users.CheckPassword(r.Context(), req.User, req.Password)
	<-s.loginSlots

	name := auditName(req.User)
	if errors.Is(err, store.ErrInvalidCredentials) {
		failed = true
		s.metrics.logins.WithLabelValues("failed").Inc()
		s.record(r, store.AuditEntry{Action: "login_failed", Object: "user:" + name})
		s.writeError(w, r, http.StatusUnauthorized, "usuário ou senha inválidos")
		return
	}
	if err != nil {
		s.internalError(w, r, err)
		return
	}
	token, err := s.users.CreateSession(r.Context(), u.ID, s.sessionTTL)
	if err != nil {
		s.internalError(w, r, err)
		return
	}
	s.metrics.logins.WithLabelValues("ok").Inc()
	s.record(r, store.AuditEntry{User: u.Name, Action: "login", Object: "user:" + u.Name})
	http.SetCookie(w, s.sessionCookie(r, token, s.sessionTTL))
	s.writeJSON(w, r, http.StatusOK, loginResponse{Token: token, User: sessionUser{u.Name, u.Role}, FieldKey: s.fieldKeyFor(token, u)})
}

// accountKey is the throttle's key of the account a login names: user names are compared
// without case (store: COLLATE NOCASE).
func accountKey(name string) string {
	return strings.ToLower(auditName(name))
}

// auditName is a user name as typed at login, as the audit shows what was tried: cut to a sane
// length.
func auditName(name string) string {
	if r := []rune(name); len(r) > 64 {
		return string(r[:64])
	}
	return name
}

// handleLogout serves POST /api/v1/logout: it ends the session the request came with.
func (s *Server) handleLogout(w http.ResponseWriter, r *http.Request) {
	u := userFrom(r.Context())
	if err := s.users.DeleteSession(r.Context(), requestToken(r)); err != nil {
		s.internalError(w, r, err)
		return
	}
	s.record(r, store.AuditEntry{User: u.Name, Action: "logout", Object: "user:" + u.Name})
	http.SetCookie(w, s.sessionCookie(r, "", -1))
	s.writeJSON(w, r, http.StatusOK, sessionResponse{Authenticated: false})
}

// handleSession serves GET /api/v1/session: who is signed in, if anyone. It always answers 200,
// so that the dashboard can ask instead of provoking a 401.
func (s *Server) handleSession(w http.ResponseWriter, r *http.Request) {
	u, err := s.authenticate(r)
	if err != nil {
		s.internalError(w, r, err)
		return
	}
	if u == nil {
		s.writeJSON(w, r, http.StatusOK, sessionResponse{Authenticated: false})
		return
	}
	s.writeJSON(w, r, http.StatusOK, sessionResponse{Authenticated: true, User: &sessionUser{u.Name, u.Role}, FieldKey: s.fieldKeyFor(requestToken(r), u)})
}

// sessionCookie is the cookie that carries token for ttl; a negative ttl deletes it.
func (s *Server) sessionCookie(r *http.Request, token string, ttl time.Duration) *http.Cookie {
	c := &http.Cookie{
		Name:     SessionCookie,
		Value:    token,
		Path:     "/",
		HttpOnly: true,
		SameSite: http.SameSiteLaxMode,
		Secure:   s.secure || r.TLS != nil,
	}
	if ttl < 0 {
		c.MaxAge = -1
	} else {
		c.MaxAge = int(ttl / time.Second)
	}
	return c
}

// requestToken is the session token of r: the Bearer token of its Authorization header, else
// its session cookie's value, else "".
func requestToken(r *http.Request) string {
	if h := r.Header.Get("Authorization"); h != "" {
		scheme, token, _ := strings.Cut(h, " ")
		if !strings.EqualFold(scheme, "Bearer") {
			return ""
		}
		return strings.TrimSpace(token)
	}
	if c, err := r.Cookie(SessionCookie); err == nil {
		return c.Value
	}
	return ""
}

// authenticate returns the user of r's session, or nil when r has no valid session.
func (s *Server) authenticate(r *http.Request) (*store.User, error) {
	token := requestToken(r)
	if token == "" {
		return nil, nil
	}
	u, err := s.users.SessionUser(r.Context(), token)
	if errors.Is(err, store.ErrNotFound) {
		return nil, nil
	}
	return u, err
}

type userKey struct{}

// userFrom is the signed-in user of a request that passed requireRole.
func userFrom(ctx context.Context) *store.User {
	u, _ := ctx.Value(userKey{}).(*store.User)
	return u
}

// requireRole lets a request through to h only with a session whose user has at least the role
// min: 401 without a valid session, 403 with too small a role.
func (s *Server) requireRole(min store.Role, h http.HandlerFunc) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		u, err := s.authenticate(r)
		if err != nil {
			s.internalError(w, r, err)
			return
		}
		if u == nil {
			s.writeError(w, r, http.StatusUnauthorized, "não autenticado")
			return
		}
		if !u.Role.AtLeast(min) {
			s.writeError(w, r, http.StatusForbidden, "permissão insuficiente")
			return
		}
		h(w, r.WithContext(context.WithValue(r.Context(), userKey{}, u)))
	})
}

// record appends e to the audit log with the request's time and address. A failure is logged:
// the action it records has happened already.
func (s *Server) record(r *http.Request, e store.AuditEntry) {
	e.RemoteAddr = remoteIP(r)
	if err := s.audit.Audit(r.Context(), e); err != nil {
		s.log.Error("audit failed", "action", e.Action, "object", e.Object, "user", e.User, "err", err)
	}
}

// throttle counts failed logins per key (a client address, or an account) in a fixed window
// that starts at the key's first failure: after max failures the key is refused until the
// window ends. Nothing resets a key early — not even a successful login — so that the bound
// holds whatever else happens: at most max wrong guesses per key and window.
type throttle struct {
	max    int
	window time.Duration
	now    func() time.Time
	// maxKeys bounds the keys tracked. Every failure costs a password hash and those are
	// bounded (loginConcurrency at a time, tens of ms each): some 100,000 failures fit in a
	// window at most, so the bound is never reached by a real attack on this machine; past it
	// the key whose window ends first is forgotten.
	maxKeys int

	mu      sync.Mutex
	fails   map[string]*failures
	pending map[string]int // attempts admitted and not yet decided

	// shared, when set, counts the failures of every monitor on the database too, under
	// scope+key: a guesser refused by one monitor is refused by the others.
	shared sharedFailures
	scope  string
}

// sharedFailures are the failed logins every monitor on one database counts (store.DB).
type sharedFailures interface {
	RecordLoginFailure(ctx context.Context, key string, at time.Time) error
	LoginFailures(ctx context.Context, key string, since time.Time) (n int, first time.Time, err error)
}

// sharedWait bounds a look at, or a write to, the shared failures: the throttle has no request
// context, and a database that does not answer leaves the process's own count in force.
const sharedWait = 2 * time.Second

type failures struct {
	n       int
	refused int // attempts refused since the limit was reached
	since   time.Time
}

func newThrottle(max int, window time.Duration, now func() time.Time) *throttle {
	return &throttle{max: max, window: window, now: now, maxKeys: 100_000,
		fails: map[string]*failures{}, pending: map[string]int{}}
}

// admit reports whether key may make an attempt now and, if so, reserves its place until done;
// if not, it says for how long the key is still refused.
func (t *throttle) admit(key string) (time.Duration, bool) {
	sharedN, sharedLeft := t.sharedCount(key)
	t.mu.Lock()
	defer t.mu.Unlock()
	n := 0
	var left time.Duration
	if f, ok := t.fails[key]; ok {
		if left = f.since.Add(t.window).Sub(t.now()); left <= 0 {
			delete(t.fails, key)
			left = 0
		} else {
			n = f.n
		}
	}
	if sharedN > n {
		n, left = sharedN, sharedLeft
	}
	if n+t.pending[key] >= t.max {
		if n < t.max {
			left = time.Second // attempts in flight hold the last places: try again shortly
		}
		return left, false
	}
	t.pending[key]++
	return 0, true
}

// done ends an attempt that admit let through; failed counts it as a failure.
func (t *throttle) done(key string, failed bool) {
	if failed && t.shared != nil {
		ctx, cancel := context.WithTimeout(context.Background(), sharedWait)
		_ = t.shared.RecordLoginFailure(ctx, t.scope+key, t.now()) // the process's own count stands
		cancel()
	}
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.pending[key]--; t.pending[key] <= 0 {
		delete(t.pending, key)
	}
	if !failed {
		return
	}
	now := t.now()
	if len(t.fails) >= 10000 {
		for k, f := range t.fails {
			if now.Sub(f.since) >= t.window {
				delete(t.fails, k)
			}
		}
	}
	f, ok := t.fails[key]
	if ok && now.Sub(f.since) >= t.window {
		ok = false
	}
	if !ok {
		if _, tracked := t.fails[key]; !tracked && len(t.fails) >= t.maxKeys {
			t.evictOldestLocked()
		}
		f = &failures{since: now}
		t.fails[key] = f
	}
	f.n++
}

// sharedCount is the key's failures within the window by every monitor (0 without shared
// failures or when the database does not answer) and how long until the first of them leaves
// the window.
func (t *throttle) sharedCount(key string) (int, time.Duration) {
	if t.shared == nil {
		return 0, 0
	}
	ctx, cancel := context.WithTimeout(context.Background(), sharedWait)
	defer cancel()
	now := t.now()
	n, first, err := t.shared.LoginFailures(ctx, t.scope+key, now.Add(-t.window))
	if err != nil || n == 0 {
		return 0, 0
	}
	return n, first.Add(t.window).Sub(now)
}

func (t *throttle) evictOldestLocked() {
	var oldest string
	var at time.Time
	for k, f := range t.fails {
		if oldest == "" || f.since.Before(at) {
			oldest, at = k, f.since
		}
	}
	delete(t.fails, oldest)
}

// refuse counts an attempt of key refused by the throttle and returns how many were refused
// in its window.
func (t *throttle) refuse(key string) int {
	t.mu.Lock()
	defer t.mu.Unlock()
	f, ok := t.fails[key]
	if !ok {
		return 0
	}
	f.refused++
	return f.refused
}

// admitGuess admits one password guess under both of the login's limits, the client address
// and the account. Refused (ok false), byAddress says which limit refused it and left for how
// long. An admitted guess holds a place in both until guessDone reports its outcome, so that
// guesses made at once cannot overrun the limits.
func (s *Server) admitGuess(ip, account string) (left time.Duration, byAddress, ok bool) {
	if left, ok := s.throttle.admit(ip); !ok {
		return left, true, false
	}
	if left, ok := s.accounts.admit(account); !ok {
		s.throttle.done(ip, false)
		return left, false, false
	}
	return 0, false, true
}

// guessDone releases an admitted guess's places, counting it when it failed.
func (s *Server) guessDone(ip, account string, failed bool) {
	s.throttle.done(ip, failed)
	s.accounts.done(account, failed)
}
