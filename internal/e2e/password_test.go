package e2e

import (
	"context"
	"crypto/ed25519"
	"errors"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"
	"github.com/prometheus/client_golang/prometheus"

	"github.com/trenzinho/trenzinho/geofences"
	"github.com/trenzinho/trenzinho/internal/testkit/fleettest"
	"github.com/trenzinho/trenzinho/monitor/api"
	"github.com/trenzinho/trenzinho/monitor/notify/notifyconfig"
	"github.com/trenzinho/trenzinho/monitor/store"
	"github.com/trenzinho/trenzinho/monitor/web"
	"github.com/trenzinho/trenzinho/profile"
)

// TestChangePasswordInTheBrowser: a fiscal changes their own password in Perfil → Alterar senha
// (a wrong current password and a confirmation that does not match are refused in pt-BR and
// change nothing), their session on another device ends, this one goes on, and the new password
// signs in and the old does not; then a licensee's user does the same from the portal's
// "Minha conta". No error in
// the console but the one 403 of the wrong password.
func TestChangePasswordInTheBrowser(t *testing.T) {
	chrome := chromiumPath(t)
	ctx := context.Background()
	db, err := store.Open(ctx, filepath.Join(t.TempDir(), "monitor.db"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Close() })
	reg := fleettest.Registry(t, t.TempDir(), nil)
	p := profile.Piuma()
	reg.SetLocation(p.Location())
	set, err := geofences.Read(strings.NewReader(`{"type":"FeatureCollection","features":[]}`), "town.geojson")
	if err != nil {
		t.Fatal(err)
	}
	pub, _, err := ed25519.GenerateKey(nil)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := db.EnsureAdmin(ctx, "chefe", "senha-do-chefe"); err != nil {
		t.Fatal(err)
	}
	fiscal, err := db.CreateUser(ctx, "ana", "senha-da-ana-1", store.RoleFiscal)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := db.CreateLicenseeUser(ctx, "orla", "senha-da-orla", "L1"); err != nil {
		t.Fatal(err)
	}
	// Ana's session on another device, which the change must end.
	other, err := db.CreateSession(ctx, fiscal.ID, time.Hour)
	if err != nil {
		t.Fatal(err)
	}
	srv := api.New(api.Config{Users: db, Audit: db, Episodes: db, RegistryStore: reg, Drafts: db, DraftKey: pub,
		Map:    api.MapConfig{Profile: p, Geofences: set},
		Fleet:  liveFleet{},
		Cases:  &api.CasesConfig{Store: db, Profile: p, Registry: reg},
		Portal: &api.PortalConfig{Store: db},
		Notify: &api.NotifyConfig{Directory: notifyconfig.NewDirectory(notifyconfig.DirectoryConfig{Store: db})},
		Static: web.Handler(web.Options{}), Metrics: prometheus.NewRegistry()})
	hs := httptest.NewServer(srv.Handler())
	t.Cleanup(hs.Close)
	t.Cleanup(srv.Hub().Close)

	b := startDashBrowser(t, chrome, 1280, 900)
	login := func(user, password, ready, what string) {
		t.Helper()
		b.do(chromedp.Navigate(hs.URL + "/"))
		b.waitJS(`!document.querySelector("#login-view").hidden`, 20*time.Second, "the login page")
		b.do(chromedp.SendKeys(chromedp.CSS("#login-user"), user), chromedp.SendKeys(chromedp.CSS("#login-password"), password),
			chromedp.Click(chromedp.CSS("#login-submit")))
		b.waitJS(ready, 20*time.Second, what)
	}
	// submit fills the form and sends it, and returns the message it shows.
	submit := func(current, next, confirm string) (string, string) {
		t.Helper()
		b.do(chromedp.SetValue(chromedp.CSS("#pw-current"), current), chromedp.SetValue(chromedp.CSS("#pw-new"), next),
			chromedp.SetValue(chromedp.CSS("#pw-confirm"), confirm),
			chromedp.Evaluate[chromedp.Void](`document.querySelector("#pw-msg").textContent = ""`),
			chromedp.Click(chromedp.CSS("#pw-save")))
		b.waitJS(`document.querySelector("#pw-msg").textContent !== "" && !document.querySelector("#pw-save").disabled`, 20*time.Second, "the form's answer")
		return b.text("#pw-msg"), b.evalString(`document.querySelector("#pw-msg").className`)
	}

	// 1. The fiscal, in Perfil.
	login("ana", "senha-da-ana-1", `!document.querySelector("#app").hidden && document.querySelector("#conn").classList.contains("conn--live")`, "the dashboard")
	b.do(chromedp.Click(chromedp.CSS(`.sidebar-foot a.user`)))
	b.waitJS(`document.querySelector("#pw-form") !== null`, 20*time.Second, "the password form in Perfil")
	b.shot("perfil-senha")

	if msg, cls := submit("senha-da-ana-1", "senha-nova-da-ana", "senha-nova-da-anx"); msg != "A confirmação não confere com a nova senha." || !strings.Contains(cls, "is-error") {
		t.Errorf("confirmation mismatch: %q (%s)", msg, cls)
	}
	b.allowConsole(`status of 403 \(Forbidden\) \(http://[^)]*/api/v1/me/password:`)
	if msg, cls := submit("senha-errada-1", "senha-nova-da-ana", "senha-nova-da-ana"); msg != "Senha atual incorreta." || !strings.Contains(cls, "is-error") {
		t.Errorf("wrong current password: %q (%s)", msg, cls)
	}
	if _, err := db.SessionUser(ctx, other); err != nil {
		t.Fatalf("a refused change ended the other session: %v", err)
	}
	msg, cls := submit("senha-da-ana-1", "senha-nova-da-ana", "senha-nova-da-ana")
	b.shot("perfil-senha-alterada")
	if !strings.HasPrefix(msg, "Senha alterada.") || !strings.Contains(cls, "is-ok") {
		t.Fatalf("the change: %q (%s)", msg, cls)
	}
	if v := b.evalString(`document.querySelector("#pw-current").value + document.querySelector("#pw-new").value`); v != "" {
		t.Errorf("the form keeps the passwords after the change: %q", v)
	}
	if _, err := db.SessionUser(ctx, other); !errors.Is(err, store.ErrNotFound) {
		t.Errorf("ana's other session after the change: %v, want ended", err)
	}
	if _, err := db.CheckPassword(ctx, "ana", "senha-nova-da-ana"); err != nil {
		t.Errorf("the new password: %v", err)
	}
	// This session goes on: a reload finds the dashboard, not the login.
	b.do(chromedp.Reload())
	b.waitJS(`!document.querySelector("#app").hidden && document.querySelector("#login-view").hidden && document.querySelector("#pw-form") !== null`,
		20*time.Second, "the dashboard still signed in after the change")
	b.waitJS(`document.querySelector("#conn").classList.contains("conn--live")`, 20*time.Second, "the live stream after the reload")
	// The new password signs in, the old does not (as the login form sends them).
	for _, c := range []struct {
		password string
		want     int
	}{{"senha-da-ana-1", http.StatusUnauthorized}, {"senha-nova-da-ana", http.StatusOK}} {
		resp, err := hs.Client().Post(hs.URL+"/api/v1/login", "application/json",
			strings.NewReader(`{"user":"ana","password":"`+c.password+`"}`))
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		if resp.StatusCode != c.want {
			t.Errorf("login with %q after the change: %d, want %d", c.password, resp.StatusCode, c.want)
		}
	}
	b.checkConsole()

	// A browser of its own: the control room's logout is not this test's (its stream and map
	// reload on the way out).
	b = startDashBrowser(t, chrome, 1280, 900)
	// 2. The licensee's user, in the portal.
	login("orla", "senha-da-orla", `document.querySelector("#portal-vehicles") !== null`, "the portal")
	b.do(chromedp.Click(chromedp.CSS(`a[data-route="conta"]`)))
	b.waitJS(`document.querySelector("#pw-form") !== null`, 20*time.Second, "the password form in the portal")
	b.shot("portal-senha")
	if msg, cls := submit("senha-da-orla", "nova-senha-da-orla", "nova-senha-da-orla"); !strings.HasPrefix(msg, "Senha alterada.") || !strings.Contains(cls, "is-ok") {
		t.Errorf("the licensee's change: %q (%s)", msg, cls)
	}
	if _, err := db.CheckPassword(ctx, "orla", "nova-senha-da-orla"); err != nil {
		t.Errorf("the licensee's new password: %v", err)
	}
	if page := b.text("#main"); strings.Contains(page, "null") || strings.Contains(page, "undefined") {
		t.Errorf("the portal's account page shows %q", page)
	}
	b.checkConsole()
}
