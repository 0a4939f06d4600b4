package e2e

import (
	"context"
	"crypto/ecdh"
	"crypto/rand"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/chromedp/cdproto/browser"
	"github.com/chromedp/cdproto/cdp"
	"github.com/chromedp/cdproto/runtime"
	"github.com/chromedp/cdproto/serviceworker"
	"github.com/chromedp/cdproto/target"
	"github.com/chromedp/chromedp"

	"github.com/trenzinho/trenzinho/internal/testkit/testenv"
	"github.com/trenzinho/trenzinho/monitor/notify/webpush"
)

// TestWebPushOnThisDevice drives Perfil → Notificações → "Avisos neste aparelho" in headless
// Chromium against a monitor whose notifications file configures Web Push:
//   - the page gets the monitor's VAPID public key, and "Receber avisos neste aparelho"
//     subscribes through the dashboard's service worker registration
//     (pushManager.subscribe({userVisibleOnly: true, applicationServerKey})) and posts the
//     subscription, which the monitor stores for the signed-in user;
//   - the service worker receives a push message delivered through the DevTools protocol
//     (ServiceWorker.deliverPushMessage: the message the monitor's payload would decrypt to)
//     and shows it as a notification in Portuguese, with the episode's tag (a second message
//     about the same episode replaces the first) and the episode's address in this dashboard,
//     read back with registration.getNotifications() from the page;
//   - "Remover" deletes the subscription on the monitor and unsubscribes the browser.
//
// Headless Chromium has no push service (no Firebase Cloud Messaging connection in this
// sandbox): when the real pushManager.subscribe is refused, the test says so in its log and
// replaces PushManager's subscribe and getSubscription in the page by a stand-in that returns
// a PushSubscription-shaped object (an FCM endpoint, a real P-256 key and auth secret) — so
// the page's own code posts and removes it — while the push handler is exercised through the
// protocol as above. The encryption of real deliveries is tested in package webpush (RFC 8291
// vectors and a local push service). Any error in the browser console fails the test.
func TestWebPushOnThisDevice(t *testing.T) {
	chrome := chromiumPath(t)
	bin := testenv.Build(t)
	broker := testenv.StartMosquitto(t, testenv.MosquittoOptions{})
	keys, err := webpush.GenerateKeys()
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	file := filepath.Join(dir, "notifications.yaml")
	if err := os.WriteFile(file, []byte("base_url: https://monitor.piuma.example\nwebpush: {subject: \"mailto:ti@piuma.example\"}\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	mon := startMonitorWithEnv(t, bin, broker.URL(), "TRENZINHO_NOTIFICATIONS="+file, "TRENZINHO_VAPID_PRIVATE_KEY="+keys.PrivateString())

	var prefs struct {
		Push *struct {
			PublicKey string `json:"public_key"`
		}
	}
	mon.get(t, "/api/v1/me/notifications", &prefs)
	if prefs.Push == nil || prefs.Push.PublicKey != keys.PublicString() {
		t.Fatalf("the monitor's key: %+v, want %s", prefs.Push, keys.PublicString())
	}

	b := startDashBrowser(t, chrome, 1280, 900)
	// The service worker registrations, as DevTools reports them (for deliverPushMessage).
	var mu sync.Mutex
	regs := map[string]serviceworker.RegistrationID{}
	go func() {
		for ev, err := range chromedp.Events(b.ctx, serviceworker.WorkerRegistrationUpdated) {
			if err != nil {
				return
			}
			mu.Lock()
			for _, r := range ev.Registrations {
				if !r.IsDeleted {
					regs[r.ScopeURL] = r.RegistrationID
				}
			}
			mu.Unlock()
		}
	}()
	b.do(chromedp.Func(func(ctx context.Context, tg *chromedp.Target) error {
		for _, name := range []string{"notifications", "push"} {
			_, err := cdp.Call(ctx, chromedp.FromContext(ctx).Browser, browser.SetPermission, browser.SetPermissionParams{
				Permission: &browser.PermissionDescriptor{Name: name, UserVisibleOnly: name == "push"}, Setting: browser.PermissionSettingGranted, Origin: mon.base})
			if err != nil {
				return fmt.Errorf("grant %s: %w", name, err)
			}
		}
		_, err := cdp.Call(ctx, tg, serviceworker.Enable, cdp.Empty{})
		return err
	}))

	b.do(chromedp.Navigate(mon.base + "/"))
	b.waitJS(`!document.querySelector("#login-view").hidden`, 20*time.Second, "the login page")
	b.do(chromedp.SendKeys(chromedp.CSS("#login-user"), "admin"), chromedp.SendKeys(chromedp.CSS("#login-password"), "segredo-de-teste"),
		chromedp.Click(chromedp.CSS("#login-submit")))
	b.waitJS(`!document.querySelector("#app").hidden`, 20*time.Second, "the dashboard")
	b.waitJS(`navigator.serviceWorker.controller !== null`, 30*time.Second, "the service worker controlling the page")
	b.do(chromedp.Evaluate[chromedp.Void](`location.hash = "#/perfil"`))
	b.waitJS(`document.querySelector("#wp-subscribe") !== null && document.querySelector("#wp-state").textContent.includes("desativado")`, 20*time.Second, "the card of this device's push")

	// 1. Subscribe. First the real push service; headless Chromium has none here.
	b.do(chromedp.Click(chromedp.CSS("#wp-subscribe")))
	b.waitJS(`document.querySelector("#wp-msg").textContent !== ""`, 45*time.Second, "the subscription's outcome")
	realPush := b.evalBool(`document.querySelector("#wp-msg").classList.contains("is-ok")`)
	if !realPush {
		t.Logf("headless Chromium refused pushManager.subscribe (%q): the page's posting is tested with a stand-in subscription",
			b.text("#wp-msg"))
		ua, err := ecdh.P256().GenerateKey(rand.Reader)
		if err != nil {
			t.Fatal(err)
		}
		auth := make([]byte, 16)
		rand.Read(auth)
		js := fmt.Sprintf(`(() => {
  let current = null;
  const sub = (opts) => ({
    endpoint: "https://fcm.googleapis.com/fcm/send/headless-e2e:APA91b", expirationTime: null, options: opts,
    toJSON() { return { endpoint: this.endpoint, expirationTime: null, keys: { p256dh: %q, auth: %q } }; },
    async unsubscribe() { current = null; window.__unsubscribed = (window.__unsubscribed || 0) + 1; return true; },
  });
  PushManager.prototype.subscribe = async function (opts) {
    if (!opts || opts.userVisibleOnly !== true || !(opts.applicationServerKey instanceof Uint8Array)) throw new Error("bad options");
    window.__subscribeKey = btoa(String.fromCharCode(...opts.applicationServerKey)).replace(/\+/g, "-").replace(/\//g, "_").replace(/=+$/, "");
    current = sub(opts);
    return current;
  };
  PushManager.prototype.getSubscription = async function () { return current; };
})()`, base64.RawURLEncoding.EncodeToString(ua.PublicKey().Bytes()), base64.RawURLEncoding.EncodeToString(auth))
		b.do(chromedp.Evaluate[chromedp.Void](js), chromedp.Click(chromedp.CSS("#wp-subscribe")))
		b.waitJS(`document.querySelector("#wp-msg").classList.contains("is-ok")`, 30*time.Second, "the subscription posted")
		if got := b.evalString(`window.__subscribeKey`); got != keys.PublicString() {
			t.Errorf("subscribed with the key %q, want the monitor's %q", got, keys.PublicString())
		}
	}
	b.waitJS(`document.querySelector("#wp-devices li[data-id]") !== null && document.querySelector("#wp-devices").textContent.includes("(este aparelho)")`,
		10*time.Second, "this device in the list")
	var subs struct {
		Items []struct {
			ID             int64
			Endpoint, Host string
			Label          string
		}
	}
	mon.get(t, "/api/v1/me/push-subscriptions", &subs)
	if len(subs.Items) != 1 || !strings.HasPrefix(subs.Items[0].Endpoint, "https://") || !strings.Contains(subs.Items[0].Label, "Chrome") {
		t.Fatalf("stored subscriptions: %+v", subs.Items)
	}
	t.Logf("stored: %s (%s) at %s", subs.Items[0].Label, subs.Items[0].Host, subs.Items[0].Endpoint[:40])

	// 2. A push message reaches the service worker and shows a notification.
	var reg serviceworker.RegistrationID
	testenv.WaitFor(t, "the service worker's registration id", 10*time.Second, func() bool {
		mu.Lock()
		defer mu.Unlock()
		reg = regs[mon.base+"/"]
		return reg != ""
	})
	// The notifications are read with registration.getNotifications(), once each push was
	// handled, never while the worker shows one: Chromium answers getNotifications by
	// dropping from its database the notifications it does not see displayed, and one the
	// worker is still showing (written, not displayed yet) is lost to every later read — a
	// test polling getNotifications after a push missed it now and then on a loaded machine
	// (measured with the polling page: 12 and 19 of 20 pushes; without it 20 of 20). The
	// worker is attached through DevTools (which also keeps it running): its
	// showNotification is wrapped to count the notifications shown, and the test waits for
	// that count.
	sw := serviceWorkerContext(t, b, mon.base+"/sw.js")
	evalSW := func(expr string) string {
		t.Helper()
		var out string
		if err := chromedp.Do(sw, chromedp.Func(func(ctx context.Context, _ *chromedp.Target) error {
			r, err := chromedp.Call(ctx, runtime.Evaluate, runtime.EvaluateParams{Expression: "String(" + expr + ")", ReturnByValue: new(true)})
			if err != nil {
				return err
			}
			if r.ExceptionDetails != nil {
				return fmt.Errorf("%s: %s", expr, r.ExceptionDetails.Text)
			}
			return json.Unmarshal(r.Result.Value, &out)
		})); err != nil {
			t.Fatal(err)
		}
		return out
	}
	evalSW(`(() => {
  if (self.__shown !== undefined) return 0;
  self.__shown = 0;
  const reg = self.registration, show = reg.showNotification.bind(reg);
  reg.showNotification = (title, opts) => show(title, opts).then((v) => { self.__shown++; return v; });
  return 0;
})()`)
	nShown := 0
	// handled waits until the worker has shown n more notifications.
	handled := func(n int, what string) {
		t.Helper()
		nShown += n
		testenv.WaitFor(t, what, 30*time.Second, func() bool { return evalSW(`self.__shown`) == fmt.Sprint(nShown) })
	}
	deliver := func(data string) {
		t.Helper()
		b.do(chromedp.Func(func(ctx context.Context, tg *chromedp.Target) error {
			_, err := cdp.Call(ctx, tg, serviceworker.DeliverPushMessage, serviceworker.DeliverPushMessageParams{Origin: mon.base, RegistrationID: reg, Data: data})
			return err
		}))
	}
	push := func(title, body, tag string, count int) {
		t.Helper()
		data, _ := json.Marshal(map[string]any{"title": title, "body": body, "url": "https://monitor.piuma.example/#/episodio/" + tag, "tag": tag, "count": count})
		deliver(string(data))
	}
	notifications := `navigator.serviceWorker.ready.then((r) => r.getNotifications()).then((ns) => JSON.stringify(ns.map((n) => ({title: n.title, body: n.body, tag: n.tag, lang: n.lang, url: n.data && n.data.url}))))`
	type shown struct{ Title, Body, Tag, Lang, URL string }
	read := func() []shown {
		t.Helper()
		v, err := chromedp.Run(b.ctx, chromedp.Evaluate[string](notifications, chromedp.EvalAwaitPromise))
		if err != nil {
			t.Fatal(err)
		}
		var out []shown
		if err := json.Unmarshal([]byte(v), &out); err != nil {
			t.Fatal(err)
		}
		return out
	}
	push("Excesso de velocidade: B001", "B001 a 41 km/h (limite 20 km/h) às 20:31\nAv. Beira-Mar", "B001-speed-1", 1)
	handled(1, "the notification shown")
	got := read()
	if len(got) != 1 {
		t.Fatalf("notifications %+v, want one", got)
	}
	want := shown{Title: "Excesso de velocidade: B001", Body: "B001 a 41 km/h (limite 20 km/h) às 20:31\nAv. Beira-Mar", Tag: "B001-speed-1",
		Lang: "pt-BR", URL: mon.base + "/#/episodio/B001-speed-1"}
	if got[0] != want {
		t.Errorf("notification %+v, want %+v", got[0], want)
	}
	// The same episode again (a burst grouped by the monitor): it replaces the first.
	push("Excesso de velocidade: B001", "B001 a 44 km/h e mais 4 alertas", "B001-speed-1", 5)
	handled(1, "the second notification shown")
	if got = read(); len(got) != 1 || !strings.Contains(got[0].Body, "e mais 4 alertas") {
		t.Errorf("after the same episode again the notifications are %+v, want the first replaced", got)
	}
	// Another episode: a notification of its own. A message without the monitor's JSON still
	// shows one (userVisibleOnly), in Portuguese.
	push("Som acima do limite: B002", "B002 a 78 dB(A)", "B002-noise-1", 1)
	deliver("não é JSON")
	handled(2, "the two more notifications shown")
	if got = read(); len(got) != 3 {
		t.Fatalf("after two more messages the notifications are %+v, want three", got)
	}
	var generic bool
	for _, n := range got {
		generic = generic || n.Title == "Monitor do trenzinho: novo alerta" && n.Body == "não é JSON" && n.URL == mon.base+"/"
	}
	if !generic {
		t.Errorf("the message without JSON: %+v", got)
	}

	// 3. Remover: the monitor forgets the device and the browser unsubscribes.
	b.do(chromedp.Click(chromedp.CSS(`#wp-devices li[data-id] button`)))
	b.waitJS(`document.querySelector("#wp-devices li[data-id]") === null && document.querySelector("#wp-subscribe").hidden === false`, 10*time.Second, "the device removed")
	mon.get(t, "/api/v1/me/push-subscriptions", &subs)
	if len(subs.Items) != 0 {
		t.Errorf("after Remover the monitor keeps %+v", subs.Items)
	}
	if !realPush && b.evalString(`String(window.__unsubscribed)`) != "1" {
		t.Error("the browser's subscription was not unsubscribed")
	}
	b.shot("push")
	b.checkConsole()
}

// serviceWorkerContext attaches to the service worker whose script is url, through DevTools.
func serviceWorkerContext(t *testing.T, b *dashBrowser, url string) context.Context {
	t.Helper()
	var id target.ID
	testenv.WaitFor(t, "the service worker's DevTools target", 30*time.Second, func() bool {
		infos, err := chromedp.Targets(b.ctx)
		if err != nil {
			t.Fatal(err)
		}
		for _, in := range infos {
			if in.Type == "service_worker" && in.URL == url {
				id = in.TargetID
				return true
			}
		}
		return false
	})
	ctx, cancel := chromedp.NewContext(b.ctx, chromedp.WithTargetID(id))
	t.Cleanup(cancel)
	return ctx
}
