package api_test

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"net/url"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/trenzinho/trenzinho/monitor/api"
	"github.com/trenzinho/trenzinho/monitor/store"
	"github.com/trenzinho/trenzinho/monitor/view"
	"github.com/trenzinho/trenzinho/rules"
	"github.com/trenzinho/trenzinho/wire"
)

// The store is what the monitor passes; it must keep fitting the interfaces.
var (
	_ api.Users    = (*store.DB)(nil)
	_ api.AuditLog = (*store.DB)(nil)
	_ api.Episodes = (*store.DB)(nil)
)

const (
	adminPassword  = "admin-senha-forte"
	viewerPassword = "senha-da-maria"
)

type fixture struct {
	t   *testing.T
	db  *store.DB
	api *api.Server
	srv *httptest.Server
	reg *prometheus.Registry
}

type fakeFleet []view.Vehicle

func (f fakeFleet) Vehicles(context.Context) ([]view.Vehicle, error) { return f, nil }

// newFixture starts the API on a real store in a temporary directory, with an admin "admin"
// and a viewer "maria". edit may change the configuration first.
func newFixture(t *testing.T, edit func(*api.Config)) *fixture {
	t.Helper()
	ctx := context.Background()
	db, err := store.Open(ctx, filepath.Join(t.TempDir(), "monitor.db"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Close() })
	if _, err := db.EnsureAdmin(ctx, "admin", adminPassword); err != nil {
		t.Fatal(err)
	}
	if _, err := db.CreateUser(ctx, "maria", viewerPassword, store.RoleViewer); err != nil {
		t.Fatal(err)
	}
	speed := 12.5
	cfg := api.Config{
		Users:    db,
		Audit:    db,
		Episodes: db,
		Fleet:    fakeFleet{{ID: "PIU-001", Licensee: "Trem da Alegria Ltda", SpeedKmh: &speed}},
		Health:   db.Ping,
		Metrics:  prometheus.NewRegistry(),
	}
	if edit != nil {
		edit(&cfg)
	}
	f := &fixture{t: t, db: db, reg: cfg.Metrics}
	f.api = api.New(cfg)
	f.srv = httptest.NewServer(f.api.Handler())
	t.Cleanup(f.srv.Close)
	t.Cleanup(f.api.Hub().Close) // runs first: ends the streams so that Close does not wait
	return f
}

// session is how a test request authenticates.
type session struct {
	cookie *http.Cookie
	bearer string
}

// do sends a request and returns the status and the body.
func (f *fixture) do(method, path string, body any, auth session, header ...string) (int, []byte, http.Header) {
	f.t.Helper()
	var rd io.Reader
	switch b := body.(type) {
	case nil:
	case string:
		rd = strings.NewReader(b)
	default:
		j, err := json.Marshal(b)
		if err != nil {
			f.t.Fatal(err)
		}
		rd = bytes.NewReader(j)
	}
	req, err := http.NewRequest(method, f.srv.URL+path, rd)
	if err != nil {
		f.t.Fatal(err)
	}
	if rd != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	if auth.cookie != nil {
		req.AddCookie(auth.cookie)
	}
	if auth.bearer != "" {
		req.Header.Set("Authorization", "Bearer "+auth.bearer)
	}
	for i := 0; i+1 < len(header); i += 2 {
		req.Header.Set(header[i], header[i+1])
	}
	resp, err := f.srv.Client().Do(req)
	if err != nil {
		f.t.Fatal(err)
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		f.t.Fatal(err)
	}
	return resp.StatusCode, b, resp.Header
}

// login signs in and returns the session cookie and the token.
func (f *fixture) login(user, password string) (*http.Cookie, string) {
	f.t.Helper()
	req, _ := http.NewRequest("POST", f.srv.URL+"/api/v1/login",
		strings.NewReader(fmt.Sprintf(`{"user":%q,"password":%q}`, user, password)))
	resp, err := f.srv.Client().Do(req)
	if err != nil {
		f.t.Fatal(err)
	}
	defer resp.Body.Close()
	var out struct {
		Token string `json:"token"`
		User  struct {
			Name string `json:"name"`
			Role string `json:"role"`
		} `json:"user"`
	}
	if err := json.NewDecoder(resp.Body).Decode(&out); err != nil || resp.StatusCode != http.StatusOK {
		f.t.Fatalf("login %s: %d %v", user, resp.StatusCode, err)
	}
	if out.User.Name != user || out.Token == "" {
		f.t.Fatalf("login answer %+v", out)
	}
	for _, c := range resp.Cookies() {
		if c.Name == api.SessionCookie {
			if c.Value != out.Token {
				f.t.Fatalf("cookie %q differs from token %q", c.Value, out.Token)
			}
			return c, out.Token
		}
	}
	f.t.Fatal("login set no session cookie")
	return nil, ""
}

func errorMessage(t *testing.T, body []byte) string {
	t.Helper()
	var e struct {
		Error string `json:"error"`
	}
	if err := json.Unmarshal(body, &e); err != nil || e.Error == "" {
		t.Fatalf("not an error answer: %s", body)
	}
	return e.Error
}

func TestProtectedRoutes(t *testing.T) {
	f := newFixture(t, nil)
	ep := testEpisode("PIU-001", "speed", t0, false)
	if err := f.db.UpsertEpisode(context.Background(), ep, testEvidence(2)); err != nil {
		t.Fatal(err)
	}
	cookie, token := f.login("admin", adminPassword)

	routes := []struct {
		method, path string
		body         func(i int) any // i tells the attempts apart
		want         int
	}{
		{"GET", "/api/v1/vehicles", nil, 200},
		{"GET", "/api/v1/episodes", nil, 200},
		{"GET", "/api/v1/episodes/" + ep.ID, nil, 200},
		{"GET", "/api/v1/users", nil, 200},
		{"POST", "/api/v1/users", func(i int) any {
			return map[string]string{"name": fmt.Sprintf("novo%d", i), "password": "senha-do-novo", "role": "fiscal"}
		}, 201},
		{"PATCH", "/api/v1/users/maria", func(i int) any { return map[string]string{"role": []string{"fiscal", "viewer"}[i%2]} }, 200},
		{"GET", "/api/v1/audit", nil, 200},
	}
	for _, rt := range routes {
		body := func(i int) any {
			if rt.body == nil {
				return nil
			}
			return rt.body(i)
		}
		code, b, h := f.do(rt.method, rt.path, body(0), session{})
		if code != http.StatusUnauthorized {
			t.Errorf("%s %s without a session: %d, want 401", rt.method, rt.path, code)
			continue
		}
		if msg := errorMessage(t, b); msg != "não autenticado" {
			t.Errorf("%s %s: error %q", rt.method, rt.path, msg)
		}
		if !strings.HasPrefix(h.Get("Content-Type"), "application/json") || h.Get("WWW-Authenticate") == "" {
			t.Errorf("%s %s: 401 headers %v", rt.method, rt.path, h)
		}
		if code, _, _ := f.do(rt.method, rt.path, body(1), session{bearer: wrongToken(token)}); code != http.StatusUnauthorized {
			t.Errorf("%s %s with a wrong token: %d, want 401", rt.method, rt.path, code)
		}
		if code, b, _ := f.do(rt.method, rt.path, body(2), session{cookie: cookie}); code != rt.want {
			t.Errorf("%s %s with the cookie: %d %s, want %d", rt.method, rt.path, code, b, rt.want)
		}
		if code, b, _ := f.do(rt.method, rt.path, body(3), session{bearer: token}); code != rt.want {
			t.Errorf("%s %s with the token: %d %s, want %d", rt.method, rt.path, code, b, rt.want)
		}
	}

	// The stream answers its headers, then streams.
	for _, auth := range []session{{}, {cookie: cookie}, {bearer: token}} {
		resp := f.openStream(auth)
		want := http.StatusOK
		if auth.cookie == nil && auth.bearer == "" {
			want = http.StatusUnauthorized
		}
		if resp.StatusCode != want {
			t.Errorf("stream with %+v: %d, want %d", auth, resp.StatusCode, want)
		}
		resp.Body.Close()
	}

	// Logout ends the session it came with, and only that one.
	if code, _, _ := f.do("POST", "/api/v1/logout", nil, session{}); code != http.StatusUnauthorized {
		t.Errorf("logout without a session: %d", code)
	}
	cookie2, _ := f.login("admin", adminPassword)
	code, _, h := f.do("POST", "/api/v1/logout", nil, session{cookie: cookie})
	if code != http.StatusOK {
		t.Fatalf("logout: %d", code)
	}
	if c := (&http.Response{Header: h}).Cookies(); len(c) != 1 || c[0].Name != api.SessionCookie || c[0].MaxAge >= 0 {
		t.Errorf("logout cookies %+v, want the session cookie deleted", c)
	}
	if code, _, _ := f.do("GET", "/api/v1/vehicles", nil, session{bearer: token}); code != http.StatusUnauthorized {
		t.Errorf("token after logout: %d, want 401", code)
	}
	if code, _, _ := f.do("GET", "/api/v1/vehicles", nil, session{cookie: cookie2}); code != http.StatusOK {
		t.Errorf("other session after logout: %d, want 200", code)
	}
}

func TestRoles(t *testing.T) {
	f := newFixture(t, nil)
	cookie, _ := f.login("maria", viewerPassword)
	for _, rt := range []struct{ method, path string }{
		{"GET", "/api/v1/users"}, {"POST", "/api/v1/users"}, {"PATCH", "/api/v1/users/admin"}, {"GET", "/api/v1/audit"},
	} {
		code, b, _ := f.do(rt.method, rt.path, `{}`, session{cookie: cookie})
		if code != http.StatusForbidden {
			t.Errorf("viewer %s %s: %d %s, want 403", rt.method, rt.path, code, b)
		}
	}
	if code, _, _ := f.do("GET", "/api/v1/episodes", nil, session{cookie: cookie}); code != http.StatusOK {
		t.Errorf("viewer reads episodes: %d", code)
	}
}

func TestLogin(t *testing.T) {
	f := newFixture(t, nil)
	ctx := context.Background()

	code, b, _ := f.do("POST", "/api/v1/login", map[string]string{"user": "admin", "password": "errada-demais"}, session{})
	if code != http.StatusUnauthorized || errorMessage(t, b) != "usuário ou senha inválidos" {
		t.Errorf("wrong password: %d %s", code, b)
	}
	code, b, _ = f.do("POST", "/api/v1/login", map[string]string{"user": "fantasma", "password": "qualquer-uma"}, session{})
	if code != http.StatusUnauthorized || errorMessage(t, b) != "usuário ou senha inválidos" {
		t.Errorf("unknown user: %d %s", code, b)
	}
	failed, _, err := f.db.ListAudit(ctx, store.AuditFilter{Action: "login_failed"}, 0, "")
	if err != nil {
		t.Fatal(err)
	}
	if len(failed) != 2 || failed[1].Object != "user:admin" || failed[0].Object != "user:fantasma" || failed[0].RemoteAddr != "127.0.0.1" {
		t.Errorf("failed logins audited as %+v", failed)
	}

	for _, body := range []string{``, `{`, `{"user":"admin"}`, `{"user":"admin","password":"x","extra":1}`, `{"user":1}`, `{} {}`} {
		if code, b, _ := f.do("POST", "/api/v1/login", body, session{}); code != http.StatusBadRequest {
			t.Errorf("login body %q: %d %s, want 400", body, code, b)
		} else {
			errorMessage(t, b)
		}
	}
	big := `{"user":"admin","password":"` + strings.Repeat("x", 70<<10) + `"}`
	if code, _, _ := f.do("POST", "/api/v1/login", big, session{}); code != http.StatusRequestEntityTooLarge {
		t.Errorf("huge body: %d, want 413", code)
	}

	// The cookie.
	req, _ := http.NewRequest("POST", f.srv.URL+"/api/v1/login", strings.NewReader(`{"user":"admin","password":"`+adminPassword+`"}`))
	resp, err := f.srv.Client().Do(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	cs := resp.Cookies()
	if len(cs) != 1 || !cs[0].HttpOnly || cs[0].SameSite != http.SameSiteLaxMode || cs[0].Secure || cs[0].Path != "/" || cs[0].MaxAge != 12*3600 {
		t.Errorf("session cookie %+v", cs)
	}
	ok, _, _ := f.db.ListAudit(ctx, store.AuditFilter{Action: "login"}, 0, "")
	if len(ok) != 1 || ok[0].User != "admin" {
		t.Errorf("successful login audited as %+v", ok)
	}

	// The session route always answers 200.
	code, b, _ = f.do("GET", "/api/v1/session", nil, session{})
	if code != http.StatusOK || string(b) != `{"authenticated":false}`+"\n" {
		t.Errorf("session without cookie: %d %s", code, b)
	}
	code, b, _ = f.do("GET", "/api/v1/session", nil, session{bearer: "nonsense"})
	if code != http.StatusOK || string(b) != `{"authenticated":false}`+"\n" {
		t.Errorf("session with a bad token: %d %s", code, b)
	}
	code, b, _ = f.do("GET", "/api/v1/session", nil, session{cookie: cs[0]})
	if code != http.StatusOK || string(b) != `{"authenticated":true,"user":{"name":"admin","role":"admin"}}`+"\n" {
		t.Errorf("session with cookie: %d %s", code, b)
	}
}

func TestSecureCookie(t *testing.T) {
	f := newFixture(t, func(c *api.Config) { c.SecureCookie = true; c.SessionTTL = time.Hour })
	cookie, _ := f.login("admin", adminPassword)
	if !cookie.Secure || cookie.MaxAge != 3600 {
		t.Errorf("cookie %+v, want Secure and an hour", cookie)
	}
}

func TestLoginThrottle(t *testing.T) {
	f := newFixture(t, nil)
	for i := range 10 {
		if code, _, _ := f.do("POST", "/api/v1/login", map[string]string{"user": "admin", "password": fmt.Sprint("tentativa-", i)}, session{}); code != http.StatusUnauthorized {
			t.Fatalf("attempt %d: %d", i, code)
		}
	}
	code, b, h := f.do("POST", "/api/v1/login", map[string]string{"user": "admin", "password": adminPassword}, session{})
	if code != http.StatusTooManyRequests || h.Get("Retry-After") == "" {
		t.Errorf("after 10 failures: %d %s", code, b)
	}
}

func TestCrossOriginRefused(t *testing.T) {
	f := newFixture(t, nil)
	body := map[string]string{"user": "admin", "password": adminPassword}
	code, b, _ := f.do("POST", "/api/v1/login", body, session{}, "Sec-Fetch-Site", "cross-site", "Origin", "https://evil.example")
	if code != http.StatusForbidden {
		t.Errorf("cross-site login: %d %s, want 403", code, b)
	}
	errorMessage(t, b)
	if code, _, _ := f.do("POST", "/api/v1/login", body, session{}, "Sec-Fetch-Site", "same-origin"); code != http.StatusOK {
		t.Errorf("same-origin login: %d", code)
	}
}

func TestHealthAndMetricsWithoutAuth(t *testing.T) {
	mine := prometheus.NewCounter(prometheus.CounterOpts{Name: "test_only_total", Help: "x"})
	unhealthy := false
	f := newFixture(t, func(c *api.Config) {
		c.Metrics.MustRegister(mine)
		c.Health = func(context.Context) error {
			if unhealthy {
				return errors.New("database gone")
			}
			return nil
		}
	})
	code, b, _ := f.do("GET", "/healthz", nil, session{})
	if code != http.StatusOK || !strings.Contains(string(b), `"status":"ok"`) {
		t.Errorf("healthz: %d %s", code, b)
	}
	unhealthy = true
	code, b, _ = f.do("GET", "/healthz", nil, session{})
	if code != http.StatusServiceUnavailable || strings.Contains(string(b), "database") {
		t.Errorf("unhealthy healthz: %d %s (must not tell why)", code, b)
	}

	f.do("GET", "/api/v1/vehicles", nil, session{}) // counted as a 401
	code, b, _ = f.do("GET", "/metrics", nil, session{})
	if code != http.StatusOK {
		t.Fatalf("metrics: %d", code)
	}
	for _, want := range []string{
		"test_only_total 0",
		`trenzinho_monitor_http_requests_total{code="401",route="GET /api/v1/vehicles"} 1`,
		`trenzinho_monitor_http_requests_total{code="503",route="GET /healthz"} 1`,
		"trenzinho_monitor_stream_clients 0",
	} {
		if !strings.Contains(string(b), want) {
			t.Errorf("metrics lack %q", want)
		}
	}
	if strings.Contains(string(b), "go_goroutines") {
		t.Error("metrics come from the global registry")
	}
}

func TestNotFoundAndMethod(t *testing.T) {
	f := newFixture(t, func(c *api.Config) {
		c.Static = http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { io.WriteString(w, "dashboard") })
	})
	// Signed in (without a session both are 401: hardening_test.go).
	_, token := f.login("maria", viewerPassword)
	code, b, _ := f.do("GET", "/api/v1/nada", nil, session{bearer: token})
	if code != http.StatusNotFound {
		t.Errorf("unknown API path: %d %s", code, b)
	}
	errorMessage(t, b)
	code, b, h := f.do("DELETE", "/api/v1/episodes", nil, session{bearer: token})
	if code != http.StatusMethodNotAllowed || !strings.Contains(h.Get("Allow"), "GET") {
		t.Errorf("wrong method: %d %s %v", code, b, h)
	}
	errorMessage(t, b)
	code, b, _ = f.do("GET", "/index.html", nil, session{})
	if code != http.StatusOK || string(b) != "dashboard" {
		t.Errorf("static without session: %d %s", code, b)
	}
}

func TestVehicles(t *testing.T) {
	f := newFixture(t, nil)
	_, token := f.login("maria", viewerPassword)
	code, b, _ := f.do("GET", "/api/v1/vehicles", nil, session{bearer: token})
	want := `{"items":[{"id":"PIU-001","licensee":"Trem da Alegria Ltda","speed_kmh":12.5,"open_episodes":[]}]}` + "\n"
	if code != http.StatusOK || string(b) != want {
		t.Errorf("vehicles: %d\n%s\nwant\n%s", code, b, want)
	}
}

// TestVehiclesPaginated: /api/v1/vehicles pages like every list (limit, next_cursor).
func TestVehiclesPaginated(t *testing.T) {
	var fleet fakeFleet
	for i := range 250 {
		fleet = append(fleet, view.Vehicle{ID: fmt.Sprintf("V-%03d", 249-i)}) // unsorted
	}
	f := newFixture(t, func(c *api.Config) { c.Fleet = fleet })
	_, token := f.login("maria", viewerPassword)
	var ids []string
	cursor := ""
	for pages := 0; ; pages++ {
		if pages > 10 {
			t.Fatal("no end of pages")
		}
		code, b, _ := f.do("GET", "/api/v1/vehicles?limit=100&cursor="+cursor, nil, session{bearer: token})
		var page struct {
			Items      []view.Vehicle
			NextCursor string `json:"next_cursor"`
		}
		if code != http.StatusOK || json.Unmarshal(b, &page) != nil || len(page.Items) > 100 {
			t.Fatalf("page %d: %d %.200s", pages, code, b)
		}
		for _, v := range page.Items {
			ids = append(ids, v.ID)
		}
		if page.NextCursor == "" {
			break
		}
		cursor = page.NextCursor
	}
	if len(ids) != 250 || !slices.IsSorted(ids) || ids[0] != "V-000" || ids[249] != "V-249" {
		t.Errorf("%d ids, first %v", len(ids), ids[:min(3, len(ids))])
	}
	code, b, _ := f.do("GET", "/api/v1/vehicles", nil, session{bearer: token})
	if code != http.StatusOK || strings.Count(string(b), `"id"`) != 100 || !strings.Contains(string(b), "next_cursor") {
		t.Errorf("default page: %d, %d vehicles", code, strings.Count(string(b), `"id"`))
	}
	if code, _, _ := f.do("GET", "/api/v1/vehicles?cursor=!!", nil, session{bearer: token}); code != http.StatusBadRequest {
		t.Errorf("bad cursor: %d", code)
	}
}

var t0 = time.Date(2026, 11, 29, 15, 0, 0, 250e6, time.UTC)

func testEpisode(vehicle, rule string, start time.Time, open bool) *rules.Episode {
	e := &rules.Episode{
		ID:      fmt.Sprintf("%s.%s.%s", vehicle, rule, start.Format("20060102T150405.000Z")),
		Vehicle: vehicle, Rule: rule, Article: "Art. 23", Penalty: "Art. 46, X",
		Start: wire.NewTime(start), Peak: 41.3, Unit: "km/h", Limit: 30, Tolerance: 7,
		Lat: -20.8367, Lon: -40.7292, PeakAt: wire.NewTime(start.Add(5 * time.Second)), Evidence: 2,
	}
	if !open {
		end := wire.NewTime(start.Add(30 * time.Second))
		reason := rules.ClosedCleared
		e.End, e.Closed, e.DurationS = &end, &reason, 30
	}
	return e
}

func testEvidence(n int) []rules.Evidence {
	ev := make([]rules.Evidence, n)
	for i := range ev {
		ev[i] = rules.Evidence{Kind: "tacho", Epoch: "e-7f3a9c", Seq: uint64(1042 + i), T: wire.NewTime(t0.Add(time.Duration(i) * time.Second)), Value: 38.5, Unit: "km/h"}
	}
	return ev
}

func TestEpisodesPagination(t *testing.T) {
	f := newFixture(t, nil)
	ctx := context.Background()
	ids := map[string]bool{}
	for i := range 25 {
		e := testEpisode(fmt.Sprintf("PIU-%03d", i%3+1), "speed", t0.Add(time.Duration(i/2)*time.Minute), i%4 == 0)
		ids[e.ID] = true
		if err := f.db.UpsertEpisode(ctx, e, testEvidence(2)); err != nil {
			t.Fatal(err)
		}
	}
	_, token := f.login("maria", viewerPassword)
	auth := session{bearer: token}

	type page struct {
		Items []struct {
			ID       string            `json:"id"`
			Start    string            `json:"start"`
			End      *string           `json:"end"`
			Readings []json.RawMessage `json:"readings"`
		} `json:"items"`
		NextCursor string `json:"next_cursor"`
	}
	seen := map[string]bool{}
	cursor := ""
	for pages := 0; ; pages++ {
		if pages > 10 {
			t.Fatal("pagination does not end")
		}
		code, b, _ := f.do("GET", "/api/v1/episodes?limit=7&cursor="+url.QueryEscape(cursor), nil, auth)
		if code != http.StatusOK {
			t.Fatalf("page %d: %d %s", pages, code, b)
		}
		var p page
		if err := json.Unmarshal(b, &p); err != nil {
			t.Fatal(err)
		}
		if len(p.Items) > 7 {
			t.Fatalf("page of %d", len(p.Items))
		}
		for _, it := range p.Items {
			if seen[it.ID] || !ids[it.ID] {
				t.Fatalf("%s repeated or unknown", it.ID)
			}
			seen[it.ID] = true
			if it.Readings != nil {
				t.Errorf("list item with readings")
			}
		}
		if p.NextCursor == "" {
			break
		}
		cursor = p.NextCursor
	}
	if len(seen) != len(ids) {
		t.Errorf("%d episodes over the pages, want %d", len(seen), len(ids))
	}

	// Filters reach the store.
	code, b, _ := f.do("GET", "/api/v1/episodes?vehicle=PIU-002&open=false&from=2026-11-29T15:00:00Z&to=2026-11-29T12:30:00-03:00&limit=5000", nil, auth)
	var p page
	if code != http.StatusOK || json.Unmarshal(b, &p) != nil {
		t.Fatalf("filtered: %d %s", code, b)
	}
	for _, it := range p.Items {
		if !strings.HasPrefix(it.ID, "PIU-002.") || it.End == nil {
			t.Errorf("filtered list has %s", it.ID)
		}
	}
	if len(p.Items) == 0 {
		t.Error("filtered list empty")
	}

	for _, q := range []string{
		"limit=0", "limit=-1", "limit=abc", "open=talvez", "from=ontem", "to=2026-11-29",
		"from=2026-11-29T16:00:00Z&to=2026-11-29T15:00:00Z", "vehicle=PIU%20001", "rule=Speed!", "cursor=%21%21%21",
	} {
		code, b, _ := f.do("GET", "/api/v1/episodes?"+q, nil, auth)
		if code != http.StatusBadRequest {
			t.Errorf("%s: %d %s, want 400", q, code, b)
			continue
		}
		errorMessage(t, b)
	}

	// One episode, with its readings.
	id := testEpisode("PIU-001", "speed", t0, true).ID
	code, b, _ = f.do("GET", "/api/v1/episodes/"+id, nil, auth)
	var one struct {
		ID       string           `json:"id"`
		Readings []rules.Evidence `json:"readings"`
	}
	if code != http.StatusOK || json.Unmarshal(b, &one) != nil || one.ID != id || len(one.Readings) != 2 {
		t.Errorf("episode: %d %s", code, b)
	}
	if !strings.Contains(string(b), `"start":"2026-11-29T15:00:00.25Z"`) {
		t.Errorf("times not as on the wire: %s", b)
	}
	code, b, _ = f.do("GET", "/api/v1/episodes/nada", nil, auth)
	if code != http.StatusNotFound || errorMessage(t, b) != "episódio não encontrado" {
		t.Errorf("unknown episode: %d %s", code, b)
	}
}

func TestUserManagement(t *testing.T) {
	f := newFixture(t, nil)
	ctx := context.Background()
	_, admin := f.login("admin", adminPassword)
	auth := session{bearer: admin}

	code, b, _ := f.do("POST", "/api/v1/users", map[string]string{"name": "joao", "password": "senha-do-joao", "role": "fiscal"}, auth)
	if code != http.StatusCreated || !strings.Contains(string(b), `"name":"joao","role":"fiscal"`) || strings.Contains(string(b), "senha") {
		t.Fatalf("create: %d %s", code, b)
	}
	for _, c := range []struct {
		body map[string]string
		want int
	}{
		{map[string]string{"name": "joao", "password": "senha-do-joao", "role": "fiscal"}, http.StatusConflict},
		{map[string]string{"name": "jo ão", "password": "senha-do-joao", "role": "fiscal"}, http.StatusBadRequest},
		{map[string]string{"name": "pedro", "password": "curta", "role": "fiscal"}, http.StatusBadRequest},
		{map[string]string{"name": "pedro", "password": "senha-do-pedro", "role": "rei"}, http.StatusBadRequest},
	} {
		if code, b, _ := f.do("POST", "/api/v1/users", c.body, auth); code != c.want {
			t.Errorf("create %v: %d %s, want %d", c.body, code, b, c.want)
		}
	}

	_, joao := f.login("joao", "senha-do-joao")
	code, b, _ = f.do("PATCH", "/api/v1/users/joao", map[string]any{"role": "supervisor", "password": "nova-senha-joao"}, auth)
	if code != http.StatusOK || !strings.Contains(string(b), `"role":"supervisor"`) {
		t.Errorf("patch: %d %s", code, b)
	}
	if code, _, _ := f.do("GET", "/api/v1/vehicles", nil, session{bearer: joao}); code != http.StatusUnauthorized {
		t.Errorf("session after password change: %d, want 401", code)
	}
	f.login("joao", "nova-senha-joao")
	if code, _, _ := f.do("PATCH", "/api/v1/users/joao", map[string]any{"disabled": true}, auth); code != http.StatusOK {
		t.Errorf("disable: %d", code)
	}
	if code, _, _ := f.do("POST", "/api/v1/login", map[string]string{"user": "joao", "password": "nova-senha-joao"}, session{}); code != http.StatusUnauthorized {
		t.Errorf("disabled user logs in: %d", code)
	}

	for _, c := range []struct {
		path string
		body any
		want int
	}{
		{"/api/v1/users/admin", map[string]any{"role": "viewer"}, http.StatusConflict},
		{"/api/v1/users/admin", map[string]any{"disabled": true}, http.StatusConflict},
		{"/api/v1/users/ninguem", map[string]any{"role": "viewer"}, http.StatusNotFound},
		{"/api/v1/users/joao", map[string]any{}, http.StatusBadRequest},
		{"/api/v1/users/joao", map[string]any{"role": "rei"}, http.StatusBadRequest},
		{"/api/v1/users/joao", map[string]any{"password": "curta"}, http.StatusBadRequest},
		{"/api/v1/users/joao", map[string]any{"papel": "viewer"}, http.StatusBadRequest},
	} {
		if code, b, _ := f.do("PATCH", c.path, c.body, auth); code != c.want {
			t.Errorf("PATCH %s %v: %d %s, want %d", c.path, c.body, code, b, c.want)
		}
	}

	code, b, _ = f.do("GET", "/api/v1/users", nil, auth)
	var users struct {
		Items []struct {
			Name      string `json:"name"`
			Role      string `json:"role"`
			Disabled  bool   `json:"disabled"`
			CreatedAt string `json:"created_at"`
		} `json:"items"`
	}
	if code != http.StatusOK || json.Unmarshal(b, &users) != nil || len(users.Items) != 3 {
		t.Fatalf("list: %d %s", code, b)
	}
	if u := users.Items[1]; u.Name != "joao" || u.Role != "supervisor" || !u.Disabled || u.CreatedAt == "" {
		t.Errorf("joao listed as %+v", u)
	}

	// Audited, with before and after, never a password.
	entries, _, err := f.db.ListAudit(ctx, store.AuditFilter{Object: "user:joao"}, 0, "")
	if err != nil {
		t.Fatal(err)
	}
	var actions []string
	for _, e := range entries {
		if e.Action == "user.create" || e.Action == "user.update" {
			actions = append(actions, e.Action)
			if e.User != "admin" || strings.Contains(string(e.Before)+string(e.After), "senha") {
				t.Errorf("audit entry %+v", e)
			}
		}
	}
	if strings.Join(actions, ",") != "user.update,user.update,user.create" {
		t.Errorf("audited actions %v", actions)
	}
	upd := entries[slicesIndex(entries, "user.update", 1)]
	if !strings.Contains(string(upd.Before), `"role":"fiscal"`) || !strings.Contains(string(upd.After), `"role":"supervisor"`) ||
		!strings.Contains(string(upd.After), `"password_changed":true`) {
		t.Errorf("role change audited as %s → %s", upd.Before, upd.After)
	}

	code, b, _ = f.do("GET", "/api/v1/audit?action=user.create", nil, auth)
	if code != http.StatusOK || !strings.Contains(string(b), `"object":"user:joao"`) {
		t.Errorf("audit route: %d %s", code, b)
	}
}

// slicesIndex is the index of the nth (from 0, oldest last) entry with action.
func slicesIndex(entries []store.AuditEntry, action string, nth int) int {
	for i, e := range entries {
		if e.Action == action {
			if nth == 0 {
				return i
			}
			nth--
		}
	}
	return -1
}

// wrongToken is token with its first character changed: a token that is not it.
func wrongToken(token string) string {
	if strings.HasPrefix(token, "x") {
		return "y" + token[1:]
	}
	return "x" + token[1:]
}
