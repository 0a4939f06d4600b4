// Package api is the monitor's HTTP API (docs/api.md): sessions, the fleet, the episodes, user
// management and the live event stream, plus /healthz, /metrics and the dashboard's static files.
//
// Everything under /api/v1/ answers JSON; an error is {"error":"message"} with a message a person
// can read in the dashboard (pt-BR) and a proper status. Every route requires a session cookie or
// an "Authorization: Bearer <token>" header, except GET /healthz, GET /metrics,
// POST /api/v1/login, GET /api/v1/session, the public verification page of issued autos
// (/v/{code}, public.go), the public transparency report (GET /transparencia,
// GET /api/v1/public/transparency[.csv]), the citizens' complaint form and answer pages
// (/reclamacao, /r/{code}, /api/v1/public/complaints…, /api/v1/public/geocode; the 156 routes
// /api/v1/ouvidoria/… take their own token: complaints.go) and the static files.
//
// The server depends on small interfaces defined here (Users, AuditLog, Episodes, Fleet);
// *store.DB implements the first three.
package api

import (
	"context"
	"crypto/ed25519"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"strings"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/promhttp"

	"github.com/trenzinho/trenzinho/internal/clientip"
	"github.com/trenzinho/trenzinho/monitor/store"
	"github.com/trenzinho/trenzinho/monitor/view"
	"github.com/trenzinho/trenzinho/registry"
	"github.com/trenzinho/trenzinho/rules"
)

// Users authenticates people and manages their accounts and sessions.
type Users interface {
	CheckPassword(ctx context.Context, name, password string) (*store.User, error)
	CreateSession(ctx context.Context, userID int64, ttl time.Duration) (token string, err error)
	SessionUser(ctx context.Context, token string) (*store.User, error)
	DeleteSession(ctx context.Context, token string) error

	ListUsers(ctx context.Context) ([]store.User, error)
	UserByName(ctx context.Context, name string) (*store.User, error)
	CreateUser(ctx context.Context, name, password string, role store.Role) (*store.User, error)
	CreateLicenseeUser(ctx context.Context, name, password, licensee string) (*store.User, error)
	SetRole(ctx context.Context, name string, role store.Role) error
	SetPassword(ctx context.Context, name, password string) error
	ChangePassword(ctx context.Context, name, password, keepToken string) error
	SetDisabled(ctx context.Context, name string, disabled bool) error
	SetAgent(ctx context.Context, name string, a store.Agent) error
}

// AuditLog records who did what.
type AuditLog interface {
	Audit(ctx context.Context, e store.AuditEntry) error
	ListAudit(ctx context.Context, f store.AuditFilter, limit int, cursor string) ([]store.AuditEntry, string, error)
}

// Episodes reads the stored episodes.
type Episodes interface {
	Episodes(ctx context.Context, f store.EpisodeFilter, limit int, cursor string) ([]rules.Episode, string, error)
	Episode(ctx context.Context, id string) (*rules.Episode, error)
	// RecordVerification records an agent's verification on an episode.
	RecordVerification(ctx context.Context, id string, v *rules.Verification) (before, after *rules.Episode, err error)
}

// Fleet tells the live state of the vehicles.
type Fleet interface {
	Vehicles(ctx context.Context) ([]view.Vehicle, error)
}

// Config is what a Server needs. Users, Audit and Episodes are required.
type Config struct {
	Logger *slog.Logger // default: discard
	// Now is the monitor's clock: every date the API reads or writes (issue and notification
	// dates, deadlines, the activity and warnings periods, public checks). Default time.Now.
	Now      func() time.Time
	Users    Users
	Audit    AuditLog
	Episodes Episodes
	Fleet    Fleet // nil: no vehicles known
	// Drafts serves the drafts and their decisions; nil: no draft routes. DraftKey is the
	// monitor's public key that every draft must be signed with.
	Drafts   Drafts
	DraftKey ed25519.PublicKey
	// DraftSettle is how long after its episode's last change a draft is made
	// (TRENZINHO_DRAFT_SETTLE), which GET /api/v1/config tells the dashboard; 0: not said.
	DraftSettle time.Duration
	// RenderPDF writes a draft as a PDF; nil: no PDF route.
	RenderPDF func(w io.Writer, d *store.DraftRecord) error
	Health    func(context.Context) error // nil: always healthy
	Hub       *Hub                        // nil: New makes one; see Server.Hub
	// Metrics is the Prometheus registry that serves GET /metrics and receives the API's own
	// metrics. Default: a new, empty registry (never the global one).
	Metrics *prometheus.Registry
	// Static serves everything outside /api/, /healthz and /metrics without authentication:
	// the dashboard and its login page. Nil: 404.
	Static http.Handler
	// SessionTTL is how long a session lasts from login. Default 12 h.
	SessionTTL time.Duration
	// SecureCookie marks the session cookie Secure even on plain HTTP requests, for a server
	// behind a TLS-terminating proxy. Requests that arrive over TLS always get Secure.
	SecureCookie bool
	// StreamKeepAlive is the interval of the stream's keep-alive comments. Default 15 s.
	StreamKeepAlive time.Duration
	// Map serves the dashboard's map: GET /api/v1/geofences and GET /api/v1/config.
	Map MapConfig
	// BatchRetention is how long the monitor keeps the batch log (GET /api/v1/vehicles/activity
	// says which days it can vouch for). Default store.DefaultBatchRetention.
	BatchRetention time.Duration
	// RegistryStore serves the registry routes (/api/v1/registry/…) and receives their edits;
	// nil: the monitor runs without a registry and those routes answer 404.
	RegistryStore *registry.Store
	// TrustedProxies are the reverse proxies whose X-Forwarded-For names the client: the
	// client address of the login throttle and the audit log (TRENZINHO_TRUSTED_PROXIES).
	// Nil: nobody; the peer's address is the client's.
	TrustedProxies *clientip.Trusted
	// Cases serves the case workflow (cases.go): issuing a draft opens its case with the penalty
	// calculus; nil: drafts are only numbered when issued, and the case routes answer 404.
	Cases *CasesConfig
	// DeadLetters serves the notifications' dead letters (notifications.go); nil: no routes.
	DeadLetters DeadLetters
	// Triage serves the triage of the alerts (triage.go); nil: no triage routes.
	Triage TriageStore
	// Notify serves the users' notification preferences and the on-duty schedule
	// (notifyprefs.go); nil: no routes.
	Notify *NotifyConfig
	// Public serves the public verification page of issued autos (public.go, GET and POST
	// /v/{code}, no login); nil: no public page, and issued autos get no public code.
	Public *PublicConfig
	// Transparency serves the public transparency report (transparency.go) with RegistryStore;
	// nil: no report.
	Transparency TransparencyStore
	// Photos stores the photos of field verifications (field.go); nil: no photo routes, and
	// verifications carry no photos.
	Photos Photos
	// FieldSecret is the secret each session's field-verification signing key is derived from
	// (field.go); empty: sessions get no key and signed verifications are refused.
	FieldSecret []byte
	// Warnings serves the warnings of the driver's coach (warnings.go) and adds them to the
	// episode view; nil: none.
	Warnings Warnings
	// Portal serves the licensee's portal (portal.go, /api/v1/portal/…) with RegistryStore and
	// Cases; nil: no portal.
	Portal *PortalConfig
	// Complaints serves the citizens' complaints (complaints.go: the public form /reclamacao,
	// the answer page /r/{code}, the 156 API and the inspectors' routes); nil: none.
	Complaints *ComplaintsConfig
	// Whatif serves the what-if replays (whatif.go: the control room's, and the licensee's on
	// the portal with Portal); nil: none.
	Whatif *WhatifConfig
	// VerificationWait is how long the drafter holds the draft of an episode that needs an
	// agent's verification (TRENZINHO_DRAFT_VERIFICATION_WAIT), which GET /api/v1/config says;
	// 0: not said.
	VerificationWait time.Duration
}

// Limits.
const (
	maxBodyBytes      = 64 << 10
	defaultSessionTTL = 12 * time.Hour
	defaultKeepAlive  = 15 * time.Second
	// loginConcurrency bounds the password hashes computed at once: each takes about 19 MiB.
	loginConcurrency = 4
)

// Server is the HTTP API.
type Server struct {
	log               *slog.Logger
	now               func() time.Time
	users             Users
	audit             AuditLog
	episodes          Episodes
	fleet             Fleet
	drafts            Drafts
	draftKey          ed25519.PublicKey
	renderPDF         func(w io.Writer, d *store.DraftRecord) error
	health            func(context.Context) error
	hub               *Hub
	sessionTTL        time.Duration
	secure            bool
	keepAlive         time.Duration
	mapCfg            MapConfig
	basemap           *basemap // nil: no street base map
	draftSettle       time.Duration
	batchRetention    time.Duration
	reg               *registry.Store
	cases             *CasesConfig
	deadLetters       DeadLetters
	triage            TriageStore
	notify            *NotifyConfig
	public            *PublicConfig
	transparency      TransparencyStore
	warnings          Warnings
	portal            *PortalConfig
	transparencyLimit *throttle // the transparency routes' rate limit, per client address
	photos            Photos
	fieldSecret       []byte
	photoSlots        chan struct{} // photo uploads read at once

	metrics    *metrics
	throttle   *throttle // per client address
	accounts   *throttle // per account
	trusted    *clientip.Trusted
	loginSlots chan struct{}
	api        *http.ServeMux // the /api/ routes
	handler    http.Handler

	publicLimit   *throttle     // the public page's requests per client address
	publicUploads chan struct{} // the public page's uploads hashed at once
	portalFilings chan struct{} // the portal's filings read at once

	complaints     *ComplaintsConfig
	verifyWait     time.Duration
	complaintPosts *throttle     // complaints per client address
	complaintReads *throttle     // the complaints' other public requests per client address
	complaintSlots chan struct{} // matchings at once
	complaintMails chan struct{} // complaint e-mails in flight

	whatif *WhatifConfig
}

// New returns a server. It panics if a required dependency is missing.
func New(cfg Config) *Server {
	if cfg.Users == nil || cfg.Audit == nil || cfg.Episodes == nil {
		panic("api: Config.Users, Config.Audit and Config.Episodes are required")
	}
	now := cfg.Now
	if now == nil {
		now = time.Now
	}
	if cfg.Cases != nil && cfg.Cases.Now == nil {
		c := *cfg.Cases
		c.Now = now
		cfg.Cases = &c
	}
	s := &Server{
		log:            cfg.Logger,
		now:            now,
		users:          cfg.Users,
		audit:          cfg.Audit,
		episodes:       cfg.Episodes,
		fleet:          cfg.Fleet,
		drafts:         cfg.Drafts,
		draftKey:       cfg.DraftKey,
		renderPDF:      cfg.RenderPDF,
		health:         cfg.Health,
		hub:            cfg.Hub,
		sessionTTL:     cfg.SessionTTL,
		secure:         cfg.SecureCookie,
		keepAlive:      cfg.StreamKeepAlive,
		mapCfg:         cfg.Map,
		draftSettle:    cfg.DraftSettle,
		batchRetention: cfg.BatchRetention,
		reg:            cfg.RegistryStore,
		cases:          cfg.Cases,
		deadLetters:    cfg.DeadLetters,
		triage:         cfg.Triage,
		notify:         cfg.Notify,
		public:         cfg.Public,
		transparency:   cfg.Transparency,
		photos:         cfg.Photos,
		fieldSecret:    cfg.FieldSecret,
		photoSlots:     make(chan struct{}, photoConcurrency),
		warnings:       cfg.Warnings,
		portal:         cfg.Portal,
		portalFilings:  make(chan struct{}, portalFilingsAtOnce),
		complaints:     cfg.Complaints,
		whatif:         cfg.Whatif,
		verifyWait:     cfg.VerificationWait,
		throttle:       newThrottle(loginFailures, loginWindow, now),
		accounts:       newThrottle(loginFailures, loginWindow, now),
		trusted:        cfg.TrustedProxies,
		loginSlots:     make(chan struct{}, loginConcurrency),
		api:            http.NewServeMux(),
	}
	// Failed logins counted in the database, when the users' store keeps them: every monitor
	// on one database refuses the same guesser.
	if sf, ok := cfg.Users.(sharedFailures); ok {
		s.throttle.shared, s.throttle.scope = sf, "address:"
		s.accounts.shared, s.accounts.scope = sf, "account:"
	}
	if s.log == nil {
		s.log = slog.New(slog.DiscardHandler)
	}
	if s.hub == nil {
		s.hub = NewHub(HubConfig{Logger: s.log})
	}
	if s.batchRetention <= 0 {
		s.batchRetention = store.DefaultBatchRetention
	}
	if s.sessionTTL <= 0 {
		s.sessionTTL = defaultSessionTTL
	}
	if s.keepAlive <= 0 {
		s.keepAlive = defaultKeepAlive
	}
	streets, maxBytes := cfg.Map.Streets, cfg.Map.BasemapMaxBytes
	if streets == nil {
		streets = cfg.Map.Geofences
	}
	if maxBytes <= 0 {
		maxBytes = DefaultBasemapMaxBytes
	}
	if bm, err := newBasemap(streets, maxBytes); err != nil {
		s.log.Warn("no street base map", "err", err)
	} else {
		s.basemap = bm
	}
	reg := cfg.Metrics
	if reg == nil {
		reg = prometheus.NewRegistry()
	}
	s.metrics = newMetrics(reg, s.hub)

	// The API.
	a := s.api
	a.HandleFunc("POST /api/v1/login", s.handleLogin)
	a.HandleFunc("GET /api/v1/session", s.handleSession)
	// Any signed-in user, a licensee's too (requireRole admits none: portal.go).
	a.Handle("POST /api/v1/logout", s.requireUser(s.handleLogout))
	a.Handle("POST /api/v1/me/password", s.requireUser(s.handleChangePassword))
	a.Handle("GET /api/v1/vehicles", s.requireRole(store.RoleViewer, s.handleVehicles))
	a.Handle("GET /api/v1/vehicles/activity", s.requireRole(store.RoleViewer, s.handleActivity))
	a.Handle("GET /api/v1/episodes", s.requireRole(store.RoleViewer, s.handleEpisodes))
	a.Handle("GET /api/v1/episodes/{id}", s.requireRole(store.RoleViewer, s.handleEpisode))
	a.Handle("POST /api/v1/episodes/{id}/verification", s.requireRole(store.RoleFiscal, s.handleVerification))
	a.Handle("GET /api/v1/warnings", s.requireRole(store.RoleViewer, s.handleWarnings))
	a.Handle("GET /api/v1/warnings/summary", s.requireRole(store.RoleViewer, s.handleWarningSummary))
	a.Handle("GET /api/v1/stream", s.requireRole(store.RoleViewer, s.handleStream))
	a.Handle("GET /api/v1/geofences", s.requireRole(store.RoleViewer, s.handleGeofences))
	a.Handle("GET /api/v1/basemap", s.requireRole(store.RoleViewer, s.handleBasemap))
	a.Handle("GET /api/v1/config", s.requireRole(store.RoleViewer, s.handleConfig))
	if s.drafts != nil {
		a.Handle("GET /api/v1/drafts", s.requireRole(store.RoleViewer, s.handleDrafts))
		// A draft (and its PDF) may name its driver: personal data, fiscal and above, audited.
		a.Handle("GET /api/v1/drafts/{id}", s.requireRole(store.RoleFiscal, s.handleDraft))
		a.Handle("GET /api/v1/drafts/{id}/export", s.requireRole(store.RoleFiscal, s.handleDraftExport))
		a.Handle("GET /api/v1/drafts/{id}/pdf", s.requireRole(store.RoleFiscal, s.handleDraftPDF))
		a.Handle("POST /api/v1/drafts/{id}/decision", s.requireRole(store.RoleFiscal, s.handleDecision))
	}
	a.Handle("GET /api/v1/users", s.requireRole(store.RoleAdmin, s.handleListUsers))
	a.Handle("POST /api/v1/users", s.requireRole(store.RoleAdmin, s.handleCreateUser))
	a.Handle("PATCH /api/v1/users/{name}", s.requireRole(store.RoleAdmin, s.handlePatchUser))
	a.Handle("GET /api/v1/audit", s.requireRole(store.RoleAdmin, s.handleListAudit))
	s.registryRoutes()
	s.caseRoutes(a)
	s.attachmentRoutes(a)
	s.deadLetterRoutes(a)
	s.triageRoutes(a)
	s.fieldRoutes(a)
	s.notifyRoutes(a)
	s.portalRoutes(a)
	s.legalProfileRoutes(a)
	s.whatifRoutes(a)

	// Around it.
	root := http.NewServeMux()
	root.HandleFunc("GET /healthz", s.handleHealth)
	root.Handle("GET /metrics", promhttp.HandlerFor(reg, promhttp.HandlerOpts{Registry: reg}))
	root.HandleFunc("/api/", s.serveAPI)
	s.publicRoutes(root)
	if cfg.Static != nil {
		root.Handle("/", cfg.Static)
	}
	s.transparencyRoutes(a, root, cfg.Static)
	s.complaintsRoutes(a, root, cfg.Static)

	// Browsers send Origin / Sec-Fetch-Site: refuse state-changing requests from other sites
	// (CSRF), cookie or not. Clients that are not browsers send neither and pass.
	csrf := http.NewCrossOriginProtection()
	csrf.SetDenyHandler(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		s.writeError(w, r, http.StatusForbidden, "requisição de outra origem recusada")
	}))
	s.handler = s.withClientAddr(s.metrics.instrument(securityHeaders(csrf.Handler(root))))
	return s
}

// Handler is the server's HTTP handler.
func (s *Server) Handler() http.Handler { return s.handler }

// Hub is the event hub the stream serves; the monitor publishes to it.
func (s *Server) Hub() *Hub { return s.hub }

// serveAPI dispatches to the API routes, answering an unknown path or method in JSON.
func (s *Server) serveAPI(w http.ResponseWriter, r *http.Request) {
	h, pattern := s.api.Handler(r)
	if pattern != "" {
		s.api.ServeHTTP(w, r) // not h: ServeHTTP also sets the path values
		return
	}
	// No route: without a session that is a 401 like every other route, so that an anonymous
	// client learns nothing of which routes exist (or of their methods).
	if u, err := s.authenticate(r); err != nil {
		s.internalError(w, r, err)
		return
	} else if u == nil {
		s.writeError(w, r, http.StatusUnauthorized, "não autenticado")
		return
	}
	// The mux's own answer (404, 405 with Allow, or a redirect to the clean path): find out
	// which without letting it write.
	probe := &headerOnly{header: http.Header{}}
	h.ServeHTTP(probe, r)
	switch probe.status {
	case http.StatusNotFound:
		s.writeError(w, r, http.StatusNotFound, "recurso não encontrado")
	case http.StatusMethodNotAllowed:
		w.Header().Set("Allow", probe.header.Get("Allow"))
		s.writeError(w, r, http.StatusMethodNotAllowed, "método não permitido")
	default:
		h.ServeHTTP(w, r)
	}
}

// headerOnly records a handler's status and headers and discards its body.
type headerOnly struct {
	header http.Header
	status int
}

func (h *headerOnly) Header() http.Header { return h.header }
func (h *headerOnly) Write(b []byte) (int, error) {
	if h.status == 0 {
		h.status = http.StatusOK
	}
	return len(b), nil
}
func (h *headerOnly) WriteHeader(status int) {
	if h.status == 0 {
		h.status = status
	}
}

// securityHeaders sets the headers every response carries.
func securityHeaders(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		h := w.Header()
		h.Set("X-Content-Type-Options", "nosniff")
		h.Set("X-Frame-Options", "DENY")
		h.Set("Referrer-Policy", "same-origin")
		// A default for responses that set none (a static 404, a redirect, /metrics): nothing may
		// load or frame them. JSON answers and the dashboard's files set their own.
		h.Set("Content-Security-Policy", "default-src 'none'; frame-ancestors 'none'")
		next.ServeHTTP(w, r)
	})
}

// handleHealth serves GET /healthz. It does not say what failed (it needs no session); the
// log does.
func (s *Server) handleHealth(w http.ResponseWriter, r *http.Request) {
	if s.health != nil {
		if err := s.health(r.Context()); err != nil {
			s.log.Warn("health check failed", "err", err)
			s.writeJSON(w, r, http.StatusServiceUnavailable, map[string]string{"status": "unavailable"})
			return
		}
	}
	s.writeJSON(w, r, http.StatusOK, map[string]string{"status": "ok"})
}

// writeJSON answers v as JSON with status.
func (s *Server) writeJSON(w http.ResponseWriter, r *http.Request, status int, v any) {
	b, err := json.Marshal(v)
	if err != nil {
		s.internalError(w, r, fmt.Errorf("encode response: %w", err))
		return
	}
	h := w.Header()
	h.Set("Content-Type", "application/json; charset=utf-8")
	h.Set("Cache-Control", "no-store")
	h.Set("Content-Security-Policy", "default-src 'none'; frame-ancestors 'none'")
	w.WriteHeader(status)
	_, _ = w.Write(append(b, '\n')) // an error means the client went away
}

// writeError answers {"error": msg} with status.
func (s *Server) writeError(w http.ResponseWriter, r *http.Request, status int, msg string) {
	if status == http.StatusUnauthorized {
		w.Header().Set("WWW-Authenticate", `Bearer realm="trenzinho"`)
	}
	s.writeJSON(w, r, status, map[string]string{"error": msg})
}

// internalError logs err and answers 500 without its details.
func (s *Server) internalError(w http.ResponseWriter, r *http.Request, err error) {
	s.log.Error("request failed", "method", r.Method, "path", r.URL.Path, "err", err)
	s.writeError(w, r, http.StatusInternalServerError, "erro interno do servidor")
}

// decodeBody decodes the JSON request body into v, refusing unknown fields, trailing data and
// bodies over maxBodyBytes. On error it has answered the request: 413 for a body too large, 400
// saying what is wrong otherwise — the JSON itself (briefly, without echoing the body), or the
// value one of v's own types refused (a registry date not written AAAA-MM-DD, a time not RFC
// 3339 in UTC), in that type's words.
func (s *Server) decodeBody(w http.ResponseWriter, r *http.Request, v any) bool {
	dec := json.NewDecoder(http.MaxBytesReader(w, r.Body, maxBodyBytes))
	dec.DisallowUnknownFields()
	err := dec.Decode(v)
	if err == nil {
		if _, err2 := dec.Token(); err2 != io.EOF {
			err = errTrailingData
		}
	}
	if err == nil {
		return true
	}
	var tooBig *http.MaxBytesError
	var syntax *json.SyntaxError
	var typ *json.UnmarshalTypeError
	switch {
	case errors.As(err, &tooBig):
		s.writeError(w, r, http.StatusRequestEntityTooLarge, "corpo da requisição grande demais")
	case errors.As(err, &syntax), errors.As(err, &typ), errors.Is(err, io.EOF), errors.Is(err, io.ErrUnexpectedEOF),
		errors.Is(err, errTrailingData), strings.HasPrefix(err.Error(), "json: "):
		s.writeError(w, r, http.StatusBadRequest, "corpo da requisição inválido: "+jsonProblem(err))
	default: // a value v's own types refuse
		s.writeError(w, r, http.StatusBadRequest, "corpo da requisição inválido: "+err.Error())
	}
	return false
}

// errTrailingData is data after the JSON value of a body.
var errTrailingData = errors.New("trailing data")

// jsonProblem describes a decoding error briefly, without echoing the body.
func jsonProblem(err error) string {
	var syntax *json.SyntaxError
	var typ *json.UnmarshalTypeError
	switch {
	case errors.Is(err, io.EOF):
		return "vazio"
	case errors.As(err, &syntax), errors.Is(err, io.ErrUnexpectedEOF):
		return "JSON malformado"
	case errors.As(err, &typ):
		return fmt.Sprintf("tipo errado no campo %q", typ.Field)
	case strings.HasPrefix(err.Error(), "json: unknown field "):
		return "campo desconhecido " + strings.TrimPrefix(err.Error(), "json: unknown field ")
	}
	return "JSON inválido"
}

type clientAddrKey struct{}

// withClientAddr finds the client address of each request once (clientip: X-Forwarded-For only
// from a trusted proxy) for remoteIP.
func (s *Server) withClientAddr(h http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		h.ServeHTTP(w, r.WithContext(context.WithValue(r.Context(), clientAddrKey{}, s.trusted.Of(r))))
	})
}

// remoteIP is the client's address as the login throttle and the audit log know it.
func remoteIP(r *http.Request) string {
	if a, ok := r.Context().Value(clientAddrKey{}).(string); ok {
		return a
	}
	if a := clientip.PeerAddr(r.RemoteAddr); a.IsValid() {
		return a.String()
	}
	return r.RemoteAddr
}

// list is the shape of every list answer.
type list[T any] struct {
	Items      []T    `json:"items"`
	NextCursor string `json:"next_cursor,omitempty"`
}

func newList[T any](items []T, next string) list[T] {
	if items == nil {
		items = []T{}
	}
	return list[T]{Items: items, NextCursor: next}
}
