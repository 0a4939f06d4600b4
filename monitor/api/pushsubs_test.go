package api_test

import (
	"context"
	"crypto/ecdh"
	"crypto/rand"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"log/slog"
	"net/http"
	"strings"
	"testing"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/trenzinho/trenzinho/monitor/api"
	"github.com/trenzinho/trenzinho/monitor/notify/notifyconfig"
	"github.com/trenzinho/trenzinho/monitor/notify/webpush"
	"github.com/trenzinho/trenzinho/monitor/store"
)

var _ api.PushDirectory = (*notifyconfig.Directory)(nil)

// newPushFixture is an API server whose notifications file configures Web Push (a VAPID key
// pair made for the test) and whose users ana, bruno (fiscais) sign in.
func newPushFixture(t *testing.T, webpushOn bool) (*fixture, webpush.Keys) {
	t.Helper()
	keys, err := webpush.GenerateKeys()
	if err != nil {
		t.Fatal(err)
	}
	conf := "base_url: https://monitor.piuma.example\nwindow: 1ms\n"
	if webpushOn {
		conf += "webpush: {subject: \"mailto:ti@piuma.example\"}\n"
	}
	file, err := notifyconfig.Parse([]byte(conf), "notifications.yaml")
	if err != nil {
		t.Fatal(err)
	}
	getenv := func(k string) string {
		if k == notifyconfig.EnvVAPIDKey {
			return keys.PrivateString()
		}
		return ""
	}
	d, severity, err := file.Dispatcher(notifyconfig.Options{Registerer: prometheus.NewRegistry(), Logger: slog.New(slog.DiscardHandler), Getenv: getenv})
	if err != nil {
		t.Fatal(err)
	}
	f := newFixture(t, func(c *api.Config) {
		dir := notifyconfig.NewDirectory(notifyconfig.DirectoryConfig{File: file, Store: c.Users.(*store.DB), Dispatcher: d, Severity: severity,
			Logger: slog.New(slog.DiscardHandler), VAPIDPublicKey: keys.PublicString()})
		c.Notify = &api.NotifyConfig{Directory: dir}
	})
	for _, name := range []string{"ana", "bruno"} {
		if _, err := f.db.CreateUser(context.Background(), name, "senha-de-"+name, store.RoleFiscal); err != nil {
			t.Fatal(err)
		}
	}
	return f, keys
}

func (f *fixture) as(name string) session {
	_, tok := f.login(name, "senha-de-"+name)
	return session{bearer: tok}
}

// browserSub is a subscription as a browser's PushSubscription.toJSON() gives it: a real P-256
// point and a 16-byte secret.
func browserSub(t *testing.T, endpoint string) map[string]any {
	t.Helper()
	k, err := ecdh.P256().GenerateKey(rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	auth := make([]byte, 16)
	rand.Read(auth)
	return map[string]any{"endpoint": endpoint, "expirationTime": nil, "keys": map[string]string{
		"p256dh": base64.RawURLEncoding.EncodeToString(k.PublicKey().Bytes()), "auth": base64.RawURLEncoding.EncodeToString(auth)}}
}

type pushSubAnswer struct {
	ID                    int64
	Label, Endpoint, Host string
}

// TestPushSubscriptions: the monitor shows its VAPID public key to a signed-in user; a
// browser's subscription is stored for its user (several devices), listed, and removed by its
// owner only; a second user signing in on the same browser takes the subscription over; every
// change is audited without the endpoint or the keys.
func TestPushSubscriptions(t *testing.T) {
	f, keys := newPushFixture(t, true)
	ana, bruno := f.as("ana"), f.as("bruno")

	code, body, _ := f.do("GET", "/api/v1/me/notifications", nil, ana)
	var prefs struct {
		Channels []string
		Push     *struct {
			PublicKey     string `json:"public_key"`
			Subscriptions []pushSubAnswer
			Max           int
		}
	}
	if code != http.StatusOK || json.Unmarshal(body, &prefs) != nil || prefs.Push == nil {
		t.Fatalf("GET /me/notifications: %d %s", code, body)
	}
	if prefs.Push.PublicKey != keys.PublicString() || len(prefs.Push.Subscriptions) != 0 || prefs.Push.Max != notifyconfig.MaxPushSubscriptions {
		t.Fatalf("push: %+v, want the key %s and no subscriptions", prefs.Push, keys.PublicString())
	}
	if code, _, _ := f.do("GET", "/api/v1/me/push-subscriptions", nil, session{}); code != http.StatusUnauthorized {
		t.Errorf("without a session: %d, want 401", code)
	}

	phone := "https://fcm.googleapis.com/fcm/send/phone-of-ana:APA91b"
	laptop := "https://updates.push.services.mozilla.com/wpush/v2/laptop-of-ana"
	var first pushSubAnswer
	for i, ep := range []string{phone, laptop} {
		code, body, _ := f.do("POST", "/api/v1/me/push-subscriptions", map[string]any{"subscription": browserSub(t, ep), "label": fmt.Sprintf("aparelho %d", i)}, ana)
		var got pushSubAnswer
		if code != http.StatusCreated || json.Unmarshal(body, &got) != nil || got.ID == 0 || got.Endpoint != ep {
			t.Fatalf("POST %s: %d %s", ep, code, body)
		}
		if i == 0 {
			first = got
		}
	}
	if first.Host != "fcm.googleapis.com" || first.Label != "aparelho 0" {
		t.Errorf("answer %+v", first)
	}
	list := func(who session) []pushSubAnswer {
		t.Helper()
		code, body, _ := f.do("GET", "/api/v1/me/push-subscriptions", nil, who)
		var page struct{ Items []pushSubAnswer }
		if code != http.StatusOK || json.Unmarshal(body, &page) != nil {
			t.Fatalf("GET push-subscriptions: %d %s", code, body)
		}
		return page.Items
	}
	if got := list(ana); len(got) != 2 || got[0].Endpoint != phone || got[1].Endpoint != laptop {
		t.Fatalf("ana's devices: %+v", got)
	}
	if got := list(bruno); len(got) != 0 {
		t.Fatalf("bruno sees %+v", got)
	}
	// The stored document is what the sender reads, and nothing else the browser sent.
	stored, err := f.db.PushSubscriptions(context.Background(), "ana")
	if err != nil || len(stored) != 2 {
		t.Fatal(stored, err)
	}
	if _, _, _, err := webpush.ParseSubscription(stored[0].Sub); err != nil || strings.Contains(stored[0].Sub, "expirationTime") {
		t.Errorf("stored %s: %v", stored[0].Sub, err)
	}

	// Bruno cannot remove Ana's device: to him it does not exist.
	if code, body, _ := f.do("DELETE", fmt.Sprintf("/api/v1/me/push-subscriptions/%d", first.ID), nil, bruno); code != http.StatusNotFound {
		t.Fatalf("bruno deletes ana's: %d %s", code, body)
	}
	if got := list(ana); len(got) != 2 {
		t.Fatalf("after bruno's attempt ana has %d devices", len(got))
	}
	// Ana removes her phone.
	if code, body, _ := f.do("DELETE", fmt.Sprintf("/api/v1/me/push-subscriptions/%d", first.ID), nil, ana); code != http.StatusNoContent {
		t.Fatalf("ana deletes hers: %d %s", code, body)
	}
	if code, _, _ := f.do("DELETE", fmt.Sprintf("/api/v1/me/push-subscriptions/%d", first.ID), nil, ana); code != http.StatusNotFound {
		t.Fatalf("deleted twice: %d", code)
	}
	if got := list(ana); len(got) != 1 || got[0].Endpoint != laptop {
		t.Fatalf("after removal: %+v", got)
	}

	// Bruno signs in on Ana's laptop and subscribes: the browser's one subscription is his now.
	code, body, _ = f.do("POST", "/api/v1/me/push-subscriptions", map[string]any{"subscription": browserSub(t, laptop), "label": "notebook"}, bruno)
	if code != http.StatusCreated {
		t.Fatalf("bruno takes the laptop: %d %s", code, body)
	}
	if a, b := list(ana), list(bruno); len(a) != 0 || len(b) != 1 || b[0].Endpoint != laptop {
		t.Fatalf("after the takeover: ana %+v, bruno %+v", a, b)
	}

	// The audit: each add and delete, by whom, the takeover with its former holder; never the
	// endpoint nor a key.
	entries, _, err := f.db.ListAudit(context.Background(), store.AuditFilter{}, 100, "")
	if err != nil {
		t.Fatal(err)
	}
	var adds, dels int
	var takeover bool
	for _, e := range entries {
		switch e.Action {
		case "notify.push.add":
			adds++
			takeover = takeover || e.User == "bruno" && strings.Contains(string(e.Before), `"user":"ana"`)
		case "notify.push.delete":
			dels++
			if e.User != "ana" || !strings.Contains(string(e.Before), `"label":"aparelho 0"`) {
				t.Errorf("delete audited as %+v", e)
			}
		default:
			continue
		}
		if all := string(e.Before) + string(e.After); strings.Contains(all, "phone-of-ana") || strings.Contains(all, "laptop-of-ana") || strings.Contains(all, "p256dh") {
			t.Errorf("audit entry %s holds the subscription: %s", e.Action, all)
		}
	}
	if adds != 3 || dels != 1 || !takeover {
		t.Errorf("audit: %d adds, %d deletes, takeover recorded %v; want 3, 1, true", adds, dels, takeover)
	}
}

// TestPushSubscriptionChecks: a subscription is refused unless its endpoint is an https URL of
// a known push service (the sender's guard against server-side request forgery), of bounded
// length, and its keys are base64url of a P-256 point (65 bytes) and a 16-byte secret; a label
// is short; a user holds at most MaxPushSubscriptions devices.
func TestPushSubscriptionChecks(t *testing.T) {
	f, _ := newPushFixture(t, true)
	ana := f.as("ana")
	good := "https://fcm.googleapis.com/fcm/send/x"
	with := func(mut func(sub map[string]any)) map[string]any {
		sub := browserSub(t, good)
		mut(sub)
		return map[string]any{"subscription": sub}
	}
	keys := func(sub map[string]any) map[string]string { return sub["keys"].(map[string]string) }
	b64 := func(n int) string { return base64.RawURLEncoding.EncodeToString(make([]byte, n)) }
	for name, c := range map[string]struct {
		body any
		code int
		path string
	}{
		"http":                {with(func(s map[string]any) { s["endpoint"] = "http://fcm.googleapis.com/fcm/send/x" }), 422, "subscription.endpoint"},
		"no endpoint":         {with(func(s map[string]any) { delete(s, "endpoint") }), 422, "subscription.endpoint"},
		"user info":           {with(func(s map[string]any) { s["endpoint"] = "https://u:p@fcm.googleapis.com/x" }), 422, "subscription.endpoint"},
		"too long":            {with(func(s map[string]any) { s["endpoint"] = good + strings.Repeat("a", webpush.MaxEndpoint) }), 422, "subscription.endpoint"},
		"loopback (SSRF)":     {with(func(s map[string]any) { s["endpoint"] = "https://127.0.0.1:8086/query" }), 422, "subscription.endpoint"},
		"unknown host (SSRF)": {with(func(s map[string]any) { s["endpoint"] = "https://influx.internal/write" }), 422, "subscription.endpoint"},
		"metadata (SSRF)":     {with(func(s map[string]any) { s["endpoint"] = "https://169.254.169.254/latest" }), 422, "subscription.endpoint"},
		"p256dh short":        {with(func(s map[string]any) { keys(s)["p256dh"] = b64(33) }), 422, "subscription.keys.p256dh"},
		"p256dh not base64":   {with(func(s map[string]any) { keys(s)["p256dh"] = strings.Repeat("*", 87) }), 422, "subscription.keys.p256dh"},
		"p256dh off curve":    {with(func(s map[string]any) { keys(s)["p256dh"] = b64(65) }), 422, "subscription"},
		"p256dh huge":         {with(func(s map[string]any) { keys(s)["p256dh"] = strings.Repeat("A", 4000) }), 422, "subscription.keys.p256dh"},
		"auth short":          {with(func(s map[string]any) { keys(s)["auth"] = b64(8) }), 422, "subscription.keys.auth"},
		"auth missing":        {with(func(s map[string]any) { delete(keys(s), "auth") }), 422, "subscription.keys.auth"},
		"label long":          {map[string]any{"subscription": browserSub(t, good), "label": strings.Repeat("é", 81)}, 422, "label"},
		"label control":       {map[string]any{"subscription": browserSub(t, good), "label": "a\x00b"}, 422, "label"},
		"unknown field":       {map[string]any{"subscription": browserSub(t, good), "owner": "bruno"}, 400, ""},
	} {
		code, body, _ := f.do("POST", "/api/v1/me/push-subscriptions", c.body, ana)
		if code != c.code || c.path != "" && !strings.Contains(string(body), `"path":"`+c.path+`"`) {
			t.Errorf("%s: %d %s, want %d at %q", name, code, body, c.code, c.path)
		}
	}
	if n, _ := f.db.PushSubscriptions(context.Background(), "ana"); len(n) != 0 {
		t.Fatalf("refused subscriptions stored: %d", len(n))
	}

	// The bound: MaxPushSubscriptions devices, then 409; the same browser again replaces its keys.
	for i := range notifyconfig.MaxPushSubscriptions {
		code, body, _ := f.do("POST", "/api/v1/me/push-subscriptions", map[string]any{"subscription": browserSub(t, fmt.Sprintf("%s/%d", good, i))}, ana)
		if code != http.StatusCreated {
			t.Fatalf("device %d: %d %s", i, code, body)
		}
	}
	if code, body, _ := f.do("POST", "/api/v1/me/push-subscriptions", map[string]any{"subscription": browserSub(t, good+"/extra")}, ana); code != http.StatusConflict {
		t.Fatalf("one device too many: %d %s", code, body)
	}
	if code, body, _ := f.do("POST", "/api/v1/me/push-subscriptions", map[string]any{"subscription": browserSub(t, good+"/3")}, ana); code != http.StatusCreated {
		t.Fatalf("the same device again: %d %s", code, body)
	}
	if n, _ := f.db.PushSubscriptions(context.Background(), "ana"); len(n) != notifyconfig.MaxPushSubscriptions {
		t.Fatalf("ana holds %d subscriptions, want %d", len(n), notifyconfig.MaxPushSubscriptions)
	}
}

// TestPushSubscriptionsNeedWebPush: a server that sends no Web Push shows no key and takes no
// subscription.
func TestPushSubscriptionsNeedWebPush(t *testing.T) {
	f, _ := newPushFixture(t, false)
	ana := f.as("ana")
	code, body, _ := f.do("GET", "/api/v1/me/notifications", nil, ana)
	if code != http.StatusOK || strings.Contains(string(body), `"push"`) {
		t.Fatalf("GET /me/notifications: %d %s", code, body)
	}
	if code, body, _ := f.do("POST", "/api/v1/me/push-subscriptions", map[string]any{"subscription": browserSub(t, "https://fcm.googleapis.com/x")}, ana); code != http.StatusNotFound {
		t.Fatalf("POST without Web Push: %d %s", code, body)
	}
}
