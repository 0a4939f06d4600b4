package api_test

// HTTP hardening (docs/api.md, "Hardening"). The routes are read from this package's source, so
// that a route added without authentication — or behind a dependency this test does not
// configure — fails here.

import (
	"context"
	"crypto/ed25519"
	"crypto/rand"
	"fmt"
	"go/ast"
	"go/parser"
	"go/token"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/trenzinho/trenzinho/monitor/api"
	"github.com/trenzinho/trenzinho/monitor/complaints"
	"github.com/trenzinho/trenzinho/monitor/notify/notifyconfig"
	"github.com/trenzinho/trenzinho/monitor/notify/webpush"
	"github.com/trenzinho/trenzinho/monitor/photo"
	"github.com/trenzinho/trenzinho/monitor/store"
	"github.com/trenzinho/trenzinho/monitor/web"
	"github.com/trenzinho/trenzinho/profile"
	"github.com/trenzinho/trenzinho/registry"
)

// route is one Handle/HandleFunc registration found in the source.
type route struct {
	pattern   string // "GET /api/v1/vehicles", "/api/"
	method    string
	path      string
	protected bool   // the handler is s.requireRole(…), s.requireLicensee(…) or s.requireUser(…)
	licensee  bool   // the handler is s.requireLicensee(…): the licensee's portal
	anyUser   bool   // the handler is s.requireUser(…): any signed-in user, on their own account
	at        string // file:line
}

// public are the routes that answer without a session (docs/api.md, "Authentication"), with why.
var public = map[string]string{
	"POST /api/v1/login":  "signs in",
	"GET /api/v1/session": "always 200: tells the dashboard whether it is signed in",
	"GET /healthz":        "health check, says nothing",
	"GET /metrics":        "Prometheus",
	"/api/":               "the API dispatcher (unknown paths: 401 without a session)",
	"/":                   "the dashboard's static files and login page",
	"GET /v/{code}":       "public verification of an issued auto: rate-limited, no personal data",
	"POST /v/{code}":      "public check of an uploaded PDF or bundle against an issued auto: rate-limited, size-limited",
	// The transparency report (LAI): aggregates per licensee and month, no personal data, no
	// positions; rate-limited per client address (transparency.go, docs/transparency.md).
	"GET /transparencia":                  "the public transparency page (LAI)",
	"GET /api/v1/public/transparency":     "the public transparency report, JSON (LAI)",
	"GET /api/v1/public/transparency.csv": "the public transparency report, CSV (LAI)",
	// Citizens' complaints (complaints.go, docs/api.md): rate-limited per client address, bounded
	// input, a proof of work for the POST; no personal data in any answer.
	"GET /reclamacao":                         "the public complaint form",
	"GET /r/{code}":                           "a complainant's answer page (120-bit code, no contact shown)",
	"GET /api/v1/public/complaints/config":    "the complaint form's map settings",
	"GET /api/v1/public/complaints/challenge": "the complaint form's proof-of-work challenge",
	"GET /api/v1/public/geocode":              "the complaint form's address lookup in the geofences",
	"POST /api/v1/public/complaints":          "a citizen's complaint: proof of work, per-address limit",
	// The city's 156 system authenticates with its own token, not a session.
	"POST /api/v1/ouvidoria/complaints":     "the 156/ouvidoria system, TRENZINHO_COMPLAINTS_TOKEN",
	"GET /api/v1/ouvidoria/complaints/{id}": "the 156/ouvidoria system, TRENZINHO_COMPLAINTS_TOKEN",
}

// sourceRoutes parses the package's non-test files and returns every mux registration: a call
// X.Handle(PATTERN, H) or X.HandleFunc(PATTERN, H). A pattern that is not a string literal is
// an error, so that no route can hide from this test.
func sourceRoutes(t *testing.T) []route {
	t.Helper()
	files, err := filepath.Glob("*.go")
	if err != nil {
		t.Fatal(err)
	}
	fset := token.NewFileSet()
	var out []route
	for _, name := range files {
		if strings.HasSuffix(name, "_test.go") {
			continue
		}
		f, err := parser.ParseFile(fset, name, nil, 0)
		if err != nil {
			t.Fatal(err)
		}
		ast.Inspect(f, func(n ast.Node) bool {
			call, ok := n.(*ast.CallExpr)
			if !ok {
				return true
			}
			sel, ok := call.Fun.(*ast.SelectorExpr)
			if !ok || (sel.Sel.Name != "Handle" && sel.Sel.Name != "HandleFunc") || len(call.Args) != 2 {
				return true
			}
			at := fset.Position(call.Pos()).String()
			lit, ok := call.Args[0].(*ast.BasicLit)
			if !ok || lit.Kind != token.STRING {
				t.Errorf("%s: %s with a pattern that is not a string literal: the hardening test cannot check it", at, sel.Sel.Name)
				return true
			}
			pattern, _ := strconv.Unquote(lit.Value)
			r := route{pattern: pattern, path: pattern, at: at}
			if m, p, ok := strings.Cut(pattern, " "); ok {
				r.method, r.path = m, p
			}
			if h, ok := call.Args[1].(*ast.CallExpr); ok {
				if hs, ok := h.Fun.(*ast.SelectorExpr); ok {
					switch hs.Sel.Name {
					case "requireRole":
						r.protected = true
					case "requireUser":
						r.protected, r.anyUser = true, true
					case "requireLicensee":
						r.protected, r.licensee = true, true
					}
				}
			}
			out = append(out, r)
			return true
		})
	}
	return out
}

// everyOptionalPart sets the optional parts of the API that need only the database, so that
// every route of the source is served; the fixtures that walk every route share it, so that a
// new part is served by all of them.
func everyOptionalPart(t *testing.T, c *api.Config, db *store.DB) {
	t.Helper()
	c.DeadLetters = deadLetterDispatcher(t, db)
	// Web Push configured (a key, no dispatcher), so that the push subscriptions' routes are served.
	pushFile, err := notifyconfig.Parse([]byte("webpush: {subject: \"mailto:ti@piuma.example\"}\n"), "notifications.yaml")
	if err != nil {
		t.Fatal(err)
	}
	vapid, err := webpush.GenerateKeys()
	if err != nil {
		t.Fatal(err)
	}
	c.Notify = &api.NotifyConfig{Directory: notifyconfig.NewDirectory(notifyconfig.DirectoryConfig{Store: db, File: pushFile,
		VAPIDPublicKey: vapid.PublicString()})}
	c.Public = &api.PublicConfig{Store: db, MaxUpload: 1 << 20}
	c.Transparency = db
	c.Triage = db
	c.Photos = db
	c.FieldSecret = []byte("segredo de campo do teste")
	c.Warnings = db
	c.Complaints = &api.ComplaintsConfig{Store: db, Matcher: &complaints.Matcher{Telemetry: memTelemetry{}, Profile: profile.Piuma()},
		Token: "token-156"}
	// What if, on an archive that does not answer: a run started fails, and stays listed.
	c.Whatif = whatifConfig(t, "http://127.0.0.1:1", c)
}

// hardeningFixture is the API with every optional dependency, so that every route is served.
func hardeningFixture(t *testing.T, edit func(*api.Config)) *fixture {
	t.Helper()
	_, key, _ := ed25519.GenerateKey(rand.Reader)
	regPath := filepath.Join(t.TempDir(), "registry.yaml")
	reg, err := registry.NewStore(&registry.Registry{}, regPath)
	if err != nil {
		t.Fatal(err)
	}
	return newFixture(t, func(c *api.Config) {
		db := c.Episodes.(*store.DB)
		c.Drafts = db
		c.DraftKey = key.Public().(ed25519.PublicKey)
		c.RenderPDF = func(w io.Writer, _ *store.DraftRecord) error { _, err := io.WriteString(w, "%PDF-"); return err }
		c.Static = web.Handler(web.Options{})
		c.RegistryStore = reg
		c.Cases = &api.CasesConfig{Store: db, Profile: profile.Piuma(), Registry: reg}
		everyOptionalPart(t, c, db)
		c.Portal = &api.PortalConfig{Store: db, MaxFileBytes: 1 << 20, MaxFiles: 2}
		if edit != nil {
			edit(c)
		}
	})
}

var pathParam = regexp.MustCompile(`\{[^}]*\}`)

func concrete(path string) string { return pathParam.ReplaceAllString(path, "x") }

// send makes a request and returns the status, the error message (if a JSON error) and the
// headers; a stream is not read.
func (f *fixture) send(method, path string, body io.Reader, header ...string) (int, string, http.Header) {
	f.t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, method, f.srv.URL+path, body)
	if err != nil {
		f.t.Fatal(err)
	}
	for i := 0; i+1 < len(header); i += 2 {
		if header[i] == "Cookie" {
			req.AddCookie(&http.Cookie{Name: api.SessionCookie, Value: header[i+1]})
			continue
		}
		req.Header.Set(header[i], header[i+1])
	}
	resp, err := f.srv.Client().Do(req)
	if err != nil {
		f.t.Fatalf("%s %s: %v", method, path, err)
	}
	defer resp.Body.Close()
	if strings.HasPrefix(resp.Header.Get("Content-Type"), "text/event-stream") {
		return resp.StatusCode, "", resp.Header
	}
	b, _ := io.ReadAll(io.LimitReader(resp.Body, 1<<20))
	msg := ""
	if strings.HasPrefix(resp.Header.Get("Content-Type"), "application/json") && resp.StatusCode >= 400 {
		msg = errorMessage(f.t, b)
	}
	return resp.StatusCode, msg, resp.Header
}

// TestEveryRouteRequiresASession: every route of the source but the public ones is wrapped in
// requireRole, lives under /api/v1/, and answers 401 without a session, with a wrong token and
// with a wrong cookie — and, with an admin's session, is really served (not the mux's 404/405).
// Unknown paths and methods under /api/ answer 401 too without a session.
func TestEveryRouteRequiresASession(t *testing.T) {
	routes := sourceRoutes(t)
	if len(routes) < 25 || !slices.ContainsFunc(routes, func(r route) bool { return r.pattern == "GET /api/v1/vehicles" }) {
		t.Fatalf("found only %d routes in the source: the parser misses registrations", len(routes))
	}
	t.Logf("%d routes in the source", len(routes))
	seen := map[string]bool{}
	for _, r := range routes {
		seen[r.pattern] = true
		if _, ok := public[r.pattern]; ok {
			continue
		}
		if !r.protected {
			t.Errorf("%s: %q is registered without s.requireRole (or requireLicensee, requireUser): every route needs a session (or add it to the public list with a reason)", r.at, r.pattern)
		}
		if r.method == "" || !strings.HasPrefix(r.path, "/api/v1/") {
			t.Errorf("%s: %q: API routes are METHOD /api/v1/…", r.at, r.pattern)
		}
	}
	for p := range public {
		if !seen[p] {
			t.Errorf("public route %q is no longer registered: update the list", p)
		}
	}

	f := hardeningFixture(t, nil)
	_, admin := f.login("admin", adminPassword)
	for _, r := range routes {
		if _, ok := public[r.pattern]; ok {
			continue
		}
		path := concrete(r.path)
		for _, auth := range [][]string{nil, {"Authorization", "Bearer " + strings.Repeat("0", len(admin))}, {"Cookie", "bogus"}, {"Authorization", "Basic YWRtaW46YWRtaW4="}} {
			code, msg, h := f.send(r.method, path, strings.NewReader(`{}`), auth...)
			if code != http.StatusUnauthorized || msg != "não autenticado" || h.Get("WWW-Authenticate") == "" {
				t.Errorf("%s %s with %v: %d %q, want 401 não autenticado", r.method, path, auth, code, msg)
			}
		}
		// Served for real with a session: not the mux's own 404 or 405.
		code, msg, _ := f.send(r.method, path, strings.NewReader(`{}`), "Authorization", "Bearer "+admin)
		if code == http.StatusUnauthorized || msg == "recurso não encontrado" || msg == "método não permitido" {
			t.Errorf("%s %s with an admin session: %d %q: the route is not served by the hardening fixture (give it the dependency that registers the route)", r.method, path, code, msg)
		}
		if r.pattern == "POST /api/v1/logout" {
			_, admin = f.login("admin", adminPassword)
		}
	}

	// No route: 401 without a session, 404/405 with one.
	for _, c := range []struct {
		method, path string
		signedIn     int
	}{
		{"GET", "/api/v1/nada", http.StatusNotFound},
		{"GET", "/api/nada", http.StatusNotFound},
		{"POST", "/api/v1/admin", http.StatusNotFound},
		{"DELETE", "/api/v1/episodes", http.StatusMethodNotAllowed},
		{"GET", "/api/v1/login", http.StatusMethodNotAllowed},
	} {
		if code, msg, _ := f.send(c.method, c.path, nil); code != http.StatusUnauthorized || msg != "não autenticado" {
			t.Errorf("%s %s without a session: %d %q, want 401", c.method, c.path, code, msg)
		}
		if code, _, _ := f.send(c.method, c.path, nil, "Authorization", "Bearer "+admin); code != c.signedIn {
			t.Errorf("%s %s signed in: %d, want %d", c.method, c.path, code, c.signedIn)
		}
	}
	// The public routes answer without a session.
	for _, c := range []struct{ method, path string }{{"GET", "/healthz"}, {"GET", "/metrics"}, {"GET", "/api/v1/session"}, {"GET", "/"}, {"GET", "/style.css"},
		{"GET", "/transparencia"}, {"GET", "/api/v1/public/transparency"}, {"GET", "/api/v1/public/transparency.csv"}} {
		if code, _, _ := f.send(c.method, c.path, nil); code != http.StatusOK {
			t.Errorf("%s %s without a session: %d, want 200", c.method, c.path, code)
		}
	}
}

// TestLoginLockout: after 10 failures from an address within 15 minutes every attempt is
// refused with 429 — the 11th to the 31st wrong password, and the right password too — and
// each refused attempt is audited.
func TestLoginLockout(t *testing.T) {
	f := newFixture(t, nil)
	login := func(user, password string) (int, http.Header) {
		code, _, h := f.send("POST", "/api/v1/login", strings.NewReader(fmt.Sprintf(`{"user":%q,"password":%q}`, user, password)))
		return code, h
	}
	for i := 1; i <= 31; i++ {
		code, h := login("admin", fmt.Sprint("errada-", i))
		want := http.StatusUnauthorized
		if i > 10 {
			want = http.StatusTooManyRequests
		}
		if code != want {
			t.Fatalf("wrong password %d: %d, want %d", i, code, want)
		}
		if want == http.StatusTooManyRequests && h.Get("Retry-After") == "" {
			t.Errorf("429 without Retry-After")
		}
	}
	if code, _ := login("admin", adminPassword); code != http.StatusTooManyRequests {
		t.Errorf("the right password during the lockout: %d, want 429", code)
	}
	if code, _ := login("maria", viewerPassword); code != http.StatusTooManyRequests {
		t.Errorf("another user from the same address during the lockout: %d, want 429", code)
	}
	ctx := context.Background()
	failed, _, err := f.db.ListAudit(ctx, store.AuditFilter{Action: "login_failed"}, 100, "")
	if err != nil {
		t.Fatal(err)
	}
	throttled, _, err := f.db.ListAudit(ctx, store.AuditFilter{Action: "login_throttled"}, 100, "")
	if err != nil {
		t.Fatal(err)
	}
	if len(failed) != 10 || len(throttled) != 23 {
		t.Errorf("audited %d login_failed and %d login_throttled, want 10 and 23", len(failed), len(throttled))
	}
	if len(throttled) > 0 && (throttled[0].Object != "user:maria" || throttled[1].Object != "user:admin" || throttled[0].RemoteAddr != "127.0.0.1") {
		t.Errorf("newest throttled entries %+v %+v", throttled[0], throttled[1])
	}
	if ok, _, _ := f.db.ListAudit(ctx, store.AuditFilter{Action: "login"}, 10, ""); len(ok) != 0 {
		t.Errorf("a login succeeded during the lockout: %+v", ok)
	}
	code, body, _ := f.do("GET", "/metrics", nil, session{})
	if code != http.StatusOK || !strings.Contains(string(body), `trenzinho_monitor_logins_total{result="throttled"} 23`) {
		t.Errorf("metrics do not count 23 throttled logins")
	}
}

// TestCookieFlags: the session cookie is HttpOnly and SameSite (Lax or Strict) always, Secure
// with SecureCookie or on TLS; the cookie that ends it too.
func TestCookieFlags(t *testing.T) {
	check := func(name string, c *http.Cookie, secure bool) {
		t.Helper()
		if !c.HttpOnly || (c.SameSite != http.SameSiteLaxMode && c.SameSite != http.SameSiteStrictMode) || c.Secure != secure || c.Path != "/" {
			t.Errorf("%s: cookie %+v, want HttpOnly, SameSite Lax/Strict, Secure=%v", name, c, secure)
		}
	}
	cookies := func(f *fixture, client *http.Client, url string) (login, logout *http.Cookie) {
		t.Helper()
		resp, err := client.Post(url+"/api/v1/login", "application/json", strings.NewReader(`{"user":"admin","password":"`+adminPassword+`"}`))
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		if len(resp.Cookies()) != 1 {
			t.Fatalf("login cookies %v", resp.Cookies())
		}
		login = resp.Cookies()[0]
		req, _ := http.NewRequest("POST", url+"/api/v1/logout", nil)
		req.AddCookie(login)
		resp, err = client.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		if len(resp.Cookies()) != 1 || resp.StatusCode != http.StatusOK {
			t.Fatalf("logout: %d %v", resp.StatusCode, resp.Cookies())
		}
		return login, resp.Cookies()[0]
	}

	plain := newFixture(t, nil)
	in, out := cookies(plain, plain.srv.Client(), plain.srv.URL)
	check("plain HTTP", in, false)
	check("plain HTTP logout", out, false)

	proxied := newFixture(t, func(c *api.Config) { c.SecureCookie = true })
	in, out = cookies(proxied, proxied.srv.Client(), proxied.srv.URL)
	check("SecureCookie", in, true)
	check("SecureCookie logout", out, true)

	tlsSrv := httptest.NewTLSServer(plain.api.Handler())
	t.Cleanup(tlsSrv.Close)
	in, out = cookies(plain, tlsSrv.Client(), tlsSrv.URL)
	check("TLS", in, true)
	check("TLS logout", out, true)
}

// csp parses a Content-Security-Policy into its directives.
func csp(h string) map[string][]string {
	out := map[string][]string{}
	for _, d := range strings.Split(h, ";") {
		f := strings.Fields(d)
		if len(f) > 0 {
			out[f[0]] = f[1:]
		}
	}
	return out
}

// TestContentSecurityPolicy: every response — the dashboard's page and files, a static 404, the
// API's JSON, /healthz and /metrics — carries a CSP that forbids framing and, where scripts
// could run, inline and eval'd scripts; and the other protective headers.
func TestContentSecurityPolicy(t *testing.T) {
	f := hardeningFixture(t, nil)
	paths := []string{"/", "/index.html", "/style.css", "/favicon.svg", "/nao-existe.html", "/js/", "/healthz", "/metrics",
		"/api/v1/session", "/api/v1/vehicles", "/api/v1/nada"}
	js, _ := filepath.Glob(filepath.Join("..", "web", "static", "js", "*.js"))
	if len(js) == 0 {
		t.Fatal("no dashboard scripts found")
	}
	for _, p := range js {
		paths = append(paths, "/js/"+filepath.Base(p))
	}
	client := f.srv.Client()
	client.CheckRedirect = func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }
	for _, p := range paths {
		resp, err := client.Get(f.srv.URL + p)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		h := resp.Header.Get("Content-Security-Policy")
		d := csp(h)
		if fa := d["frame-ancestors"]; len(fa) != 1 || fa[0] != "'none'" {
			t.Errorf("%s (%d): CSP %q lacks frame-ancestors 'none'", p, resp.StatusCode, h)
		}
		scripts, ok := d["script-src"]
		if !ok {
			scripts = d["default-src"]
		}
		if len(scripts) == 0 {
			t.Errorf("%s: CSP %q sets no script or default source", p, h)
		}
		for _, s := range scripts {
			if s == "'unsafe-inline'" || s == "'unsafe-eval'" || s == "*" || s == "data:" {
				t.Errorf("%s: CSP %q allows %s scripts", p, h, s)
			}
		}
		if resp.Header.Get("X-Content-Type-Options") != "nosniff" || resp.Header.Get("X-Frame-Options") != "DENY" {
			t.Errorf("%s: headers %v", p, resp.Header)
		}
		if p == "/" && !strings.HasPrefix(resp.Header.Get("Content-Type"), "text/html") {
			t.Errorf("/ is %q", resp.Header.Get("Content-Type"))
		}
	}
	// The page itself has no inline script or style attribute the policy would have to allow.
	index, err := os.ReadFile(filepath.Join("..", "web", "static", "index.html"))
	if err != nil {
		t.Fatal(err)
	}
	if regexp.MustCompile(`(?i)<script(\s[^>]*)?>\s*[^<\s]|\son[a-z]+\s*=|\sstyle\s*=`).Match(index) {
		t.Error("index.html has an inline script, event handler or style attribute")
	}
}

// TestCrossOriginAndBearer: a state-changing request from another site is refused (403) even
// with the session cookie, whether the browser sends Sec-Fetch-Site or only Origin; a client
// that is not a browser (no Origin) logs in and, with its Bearer token, changes state.
func TestCrossOriginAndBearer(t *testing.T) {
	f := hardeningFixture(t, nil)
	// curl: POST /api/v1/login without Origin.
	cookie, token := f.login("admin", adminPassword)
	newUser := func(name string) string {
		return fmt.Sprintf(`{"name":%q,"password":"senha-do-%s","role":"viewer"}`, name, name)
	}
	for _, h := range [][]string{
		{"Sec-Fetch-Site", "cross-site", "Origin", "https://evil.example"},
		{"Origin", "https://evil.example"}, // an older browser: Origin only
		{"Sec-Fetch-Site", "same-site", "Origin", "https://sub." + strings.TrimPrefix(f.srv.URL, "http://")},
	} {
		for _, rt := range []struct{ method, path, body string }{
			{"POST", "/api/v1/users", newUser("intruso")},
			{"PATCH", "/api/v1/users/maria", `{"role":"admin"}`},
			{"POST", "/api/v1/logout", ""},
			{"PUT", "/api/v1/registry/licensees/L1", `{}`},
			{"DELETE", "/api/v1/registry/licensees/L1", ""},
		} {
			code, _, _ := f.send(rt.method, rt.path, strings.NewReader(rt.body), append([]string{"Cookie", cookie.Value}, h...)...)
			if code != http.StatusForbidden {
				t.Errorf("%s %s with the cookie and %v: %d, want 403", rt.method, rt.path, h, code)
			}
		}
	}
	if u, err := f.db.UserByName(context.Background(), "intruso"); err == nil {
		t.Errorf("a cross-site request created %+v", u)
	}
	if u, _ := f.db.UserByName(context.Background(), "maria"); u.Role != store.RoleViewer {
		t.Errorf("a cross-site request changed maria's role to %s", u.Role)
	}
	if code, _, _ := f.send("GET", "/api/v1/vehicles", nil, "Cookie", cookie.Value); code != http.StatusOK {
		t.Errorf("the session after cross-site logouts: %d, want still valid", code)
	}
	// Reads from another site are not state changes (the browser's CORS keeps the answer).
	if code, _, _ := f.send("GET", "/api/v1/vehicles", nil, "Cookie", cookie.Value, "Sec-Fetch-Site", "cross-site"); code != http.StatusOK {
		t.Errorf("cross-site GET: %d", code)
	}
	// The same site with the cookie, and a Bearer client, change state.
	if code, msg, _ := f.send("POST", "/api/v1/users", strings.NewReader(newUser("ana")), "Cookie", cookie.Value, "Sec-Fetch-Site", "same-origin", "Origin", f.srv.URL); code != http.StatusCreated {
		t.Errorf("same-origin POST with the cookie: %d %s", code, msg)
	}
	if code, msg, _ := f.send("POST", "/api/v1/users", strings.NewReader(newUser("bia")), "Authorization", "Bearer "+token); code != http.StatusCreated {
		t.Errorf("Bearer POST: %d %s", code, msg)
	}
	if code, msg, _ := f.send("PATCH", "/api/v1/users/bia", strings.NewReader(`{"role":"fiscal"}`), "Authorization", "Bearer "+token); code != http.StatusOK {
		t.Errorf("Bearer PATCH: %d %s", code, msg)
	}
	if code, _, _ := f.send("POST", "/api/v1/logout", nil, "Authorization", "Bearer "+token); code != http.StatusOK {
		t.Errorf("Bearer logout: %d", code)
	}
	if code, _, _ := f.send("GET", "/api/v1/vehicles", nil, "Authorization", "Bearer "+token); code != http.StatusUnauthorized {
		t.Errorf("token after logout: %d, want 401", code)
	}
}

// TestBodyLimit: every route that takes a body refuses one over its limit with 413 — with a
// Content-Length and chunked — before anything is done with it.
func TestBodyLimit(t *testing.T) {
	f := hardeningFixture(t, nil)
	_, token := f.login("admin", adminPassword)
	size := 8 << 20
	huge := func() io.Reader {
		return io.MultiReader(strings.NewReader(`{"name":"`), strings.NewReader(strings.Repeat("x", size)), strings.NewReader(`"}`))
	}
	bodyless := map[string]bool{"POST /api/v1/logout": true}
	for _, r := range sourceRoutes(t) {
		// The portal's routes refuse an admin (403) before any body; the multipart filing's own
		// limits are TestPortalFilingLimits's.
		if r.method != "POST" && r.method != "PUT" && r.method != "PATCH" || bodyless[r.pattern] || r.licensee {
			continue
		}
		path := concrete(r.path)
		size = 8 << 20
		if r.pattern == "POST /api/v1/photos" { // a photo's own, larger bound
			size = photo.MaxBytes + 1
		}
		if r.pattern == "POST /api/v1/cases/{id}/attachments" { // a scan's own, larger bound
			size = api.MaxAttachmentBody + 1
		}
		auth := "Bearer " + token
		if strings.HasPrefix(r.path, "/api/v1/ouvidoria/") {
			auth = "Bearer token-156" // the 156 system's own token (hardeningFixture)
		}
		if code, msg, _ := f.send(r.method, path, huge(), "Authorization", auth, "Content-Type", "application/json"); code != http.StatusRequestEntityTooLarge {
			t.Errorf("%s %s with 8 MiB (chunked): %d %q, want 413", r.method, path, code, msg)
		}
		b, _ := io.ReadAll(huge())
		if code, msg, _ := f.send(r.method, path, strings.NewReader(string(b)), "Authorization", auth, "Content-Type", "application/json"); code != http.StatusRequestEntityTooLarge {
			t.Errorf("%s %s with 8 MiB: %d %q, want 413", r.method, path, code, msg)
		}
	}
	if n, _ := f.db.ListUsers(context.Background()); len(n) != 2 {
		t.Errorf("%d users after the oversized requests, want the 2 of the fixture", len(n))
	}
}
