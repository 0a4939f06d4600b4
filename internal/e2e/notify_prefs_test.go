package e2e

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/cdproto/browser"
	"github.com/chromedp/cdproto/cdp"
	"github.com/chromedp/chromedp"

	"github.com/trenzinho/trenzinho/internal/testkit/testenv"
	"github.com/trenzinho/trenzinho/monitor/notify/email/emailtest"
	"github.com/trenzinho/trenzinho/monitor/notify/telegram/telegramtest"
)

// TestNotificationPrefsInTheBrowser drives Perfil → Notificações, the on-duty schedule and the
// dead letters in headless Chromium against the whole pipeline (simulator → bridge → Mosquitto
// → monitor, e-mail to a real SMTP server):
//   - the user sets their preferences on the page, and they persist across a reload;
//   - they enable the in-browser notifications (the permission granted through the DevTools
//     protocol, as a person would in the browser's prompt), and a new speed episode on the live
//     stream shows a system notification (window.Notification's constructor calls are
//     recorded);
//   - the supervisor's schedule page adds a shift and removes it;
//   - the e-mail of that episode is refused by the SMTP server (550): the admin finds it among
//     the dead letters, retries it, and it reaches the mailbox.
//
// Any error in the browser console fails the test.
func TestNotificationPrefsInTheBrowser(t *testing.T) {
	chrome := chromiumPath(t)
	bin := testenv.Build(t)
	broker := testenv.StartMosquitto(t, testenv.MosquittoOptions{})
	smtpd := emailtest.Start(t, emailtest.Options{})
	dir := t.TempDir()
	ca := filepath.Join(dir, "smtp-ca.pem")
	if err := os.WriteFile(ca, smtpd.CertPEM, 0o600); err != nil {
		t.Fatal(err)
	}
	// No users in the file: who gets what comes from the dashboard.
	file := filepath.Join(dir, "notifications.yaml")
	conf := fmt.Sprintf(`base_url: https://monitor.piuma.example
email: {addr: "%s", username: %s, from: "Monitor do trenzinho <monitor@piuma.example>", ca_file: %s}
`, smtpd.Addr, smtpd.Username, ca)
	if err := os.WriteFile(file, []byte(conf), 0o600); err != nil {
		t.Fatal(err)
	}
	mon := startMonitorWithEnv(t, bin, broker.URL(), "TRENZINHO_NOTIFICATIONS="+file, "TRENZINHO_SMTP_PASSWORD="+smtpd.Password)
	b := startDashBrowser(t, chrome, 1280, 900)

	b.do(chromedp.Navigate(mon.base + "/"))
	b.waitJS(`!document.querySelector("#login-view").hidden`, 20*time.Second, "the login page")
	b.do(chromedp.SendKeys(chromedp.CSS("#login-user"), "admin"),
		chromedp.SendKeys(chromedp.CSS("#login-password"), "segredo-de-teste"),
		chromedp.Click(chromedp.CSS("#login-submit")))
	b.waitJS(`!document.querySelector("#app").hidden && document.querySelector("#conn").classList.contains("conn--live")`,
		20*time.Second, "the dashboard with a live stream")

	// 1. Perfil → Notificações: an address, the speed rule, medium severity and above.
	b.do(chromedp.Click(chromedp.CSS(`.sidebar-foot a.user`)))
	b.waitJS(`document.querySelector("#np-form") !== null`, 20*time.Second, "the notification preferences")
	if s := b.text("#np-source"); !strings.Contains(s, "ainda não escolheu") {
		t.Errorf("source before saving: %q", s)
	}
	b.do(chromedp.SendKeys(chromedp.CSS("#np-email"), "fiscal@piuma.example"),
		chromedp.Click(chromedp.CSS(`input[name="rule"][value="speed"]`)),
		selectValue("#np-severity", "medium"))
	b.shot("01-preferences")
	b.do(chromedp.Click(chromedp.CSS("#np-save")))
	b.waitJS(`document.querySelector("#np-msg").textContent === "Preferências salvas."`, 10*time.Second, "the preferences saved")

	// They persist: a reload reads them back from the server.
	b.do(chromedp.Reload())
	b.waitJS(`document.querySelector("#np-form") !== null`, 20*time.Second, "the preferences after a reload")
	if !b.evalBool(`document.querySelector("#np-email").value === "fiscal@piuma.example" &&
		document.querySelector('input[name="rule"][value="speed"]').checked &&
		!document.querySelector('input[name="rule"][value="hours"]').checked &&
		document.querySelector("#np-severity").value === "medium" &&
		document.querySelector("#np-source").textContent.includes("salvas por você")`) {
		t.Errorf("preferences after a reload: %s", b.evalString(`JSON.stringify({email: document.querySelector("#np-email").value, severity: document.querySelector("#np-severity").value, source: document.querySelector("#np-source").textContent})`))
	}
	var saved struct {
		Source string
		Prefs  struct {
			Email       string
			Rules       []string
			MinSeverity string `json:"min_severity"`
		}
	}
	mon.get(t, "/api/v1/me/notifications", &saved)
	if saved.Source != "saved" || saved.Prefs.Email != "fiscal@piuma.example" || len(saved.Prefs.Rules) != 1 || saved.Prefs.Rules[0] != "speed" || saved.Prefs.MinSeverity != "medium" {
		t.Errorf("the API reads %+v", saved)
	}

	// 2. In-browser notifications: the permission granted as the browser's prompt would.
	if _, err := cdp.Call(b.ctx, chromedp.FromContext(b.ctx).Browser, browser.SetPermission, browser.SetPermissionParams{
		Permission: &browser.PermissionDescriptor{Name: "notifications"}, Setting: browser.PermissionSettingGranted, Origin: mon.base,
	}); err != nil {
		t.Fatalf("grant notifications: %v", err)
	}
	b.do(chromedp.Click(chromedp.CSS("#bn-toggle")))
	b.waitJS(`document.querySelector("#bn-state").textContent.includes("ativadas")`, 10*time.Second, "in-browser notifications on")
	b.shot("02-browser-notifications")
	// Every Notification the page makes is recorded (and still made).
	b.do(chromedp.Evaluate[chromedp.Void](`(() => {
		window.__notes = [];
		const N = window.Notification;
		window.Notification = new Proxy(N, {
			construct(target, args) { window.__notes.push({title: args[0], body: (args[1] || {}).body, tag: (args[1] || {}).tag}); return Reflect.construct(target, args); },
			get(target, prop) { return Reflect.get(target, prop); },
		});
	})()`))

	// 3. The schedule: the admin (a supervisor and more) puts themself on duty, then removes it.
	b.do(chromedp.Click(chromedp.CSS(`a[data-route="plantao"]`)))
	b.waitJS(`document.querySelector("#shift-form") !== null`, 10*time.Second, "the schedule page")
	sp, _ := time.LoadLocation("America/Sao_Paulo")
	now := time.Now().In(sp)
	setValue := func(sel, v string) chromedp.Action[chromedp.Void] {
		return chromedp.Evaluate[chromedp.Void](fmt.Sprintf(`(() => { const i = document.querySelector(%q); i.value = %q; i.dispatchEvent(new Event("input", {bubbles: true})); })()`, sel, v))
	}
	b.do(chromedp.SendKeys(chromedp.CSS("#shift-user"), "admin"),
		setValue("#shift-from", now.Add(-time.Hour).Format("2006-01-02T15:04")),
		setValue("#shift-to", now.Add(3*time.Hour).Format("2006-01-02T15:04")),
		chromedp.Click(chromedp.CSS("#shift-add")))
	b.waitJS(`[...document.querySelectorAll('#schedule-table tr[data-user="admin"]')].some((tr) => tr.textContent.includes("de plantão agora"))`,
		10*time.Second, "the shift in the schedule")
	if row := b.text(`#schedule-table tr[data-user="admin"]`); !strings.Contains(row, now.Add(-time.Hour).Format("02/01/2006 15:04")) {
		t.Errorf("the shift's row %q lacks its local start", row)
	}
	b.shot("03-schedule")
	b.do(chromedp.Click(chromedp.CSS(`#schedule-table tr[data-user="admin"] button`)))
	b.waitJS(`document.querySelector("dialog[open] #confirm-yes") !== null`, 5*time.Second, "the confirmation")
	b.do(chromedp.Click(chromedp.CSS("#confirm-yes")))
	b.waitJS(`document.querySelector('#schedule-table tr[data-user="admin"]') === null`, 10*time.Second, "the shift removed")
	var audit struct{ Items []struct{ Action string } }
	mon.get(t, "/api/v1/audit?object=shift:1", &audit)
	if len(audit.Items) != 2 {
		t.Errorf("shift audit %+v", audit.Items)
	}

	// 4. A speed episode: a system notification in the page; the e-mail refused by the server.
	b.do(chromedp.Click(chromedp.CSS(`a[data-route="mapa"]`)))
	smtpd.FailNext(550)
	sim := startSimulation(t, bin, "--vehicles=1", "--prefix=NOTE", "--scenario=20:15,45:30,20:30",
		"--duration=75s", "--speed-up=3", "--start=2026-11-27T15:00:00Z")
	startBridge(t, bin, broker.URL(), "NOTE-001", sim.devices["NOTE-001"], serviceInput(t, sim.devices["NOTE-001"])...)
	b.waitJS(`window.__notes.length > 0`, 3*time.Minute, "the system notification of the speed episode")
	var notes []struct{ Title, Body, Tag string }
	if err := json.Unmarshal([]byte(b.evalString(`JSON.stringify(window.__notes)`)), &notes); err != nil {
		t.Fatal(err)
	}
	if len(notes) != 1 || notes[0].Title != "Novo alerta: Excesso de velocidade" || !strings.Contains(notes[0].Body, "NOTE-001") ||
		!strings.Contains(notes[0].Tag, "NOTE-001") {
		t.Errorf("notifications %+v", notes)
	}
	b.shot("04-episode-notified")

	// 5. The dead letter: listed for the admin, retried, delivered.
	deadline := time.Now().Add(time.Minute)
	for {
		var page struct{ Items []json.RawMessage }
		mon.get(t, "/api/v1/notifications/dead-letters", &page)
		if len(page.Items) == 1 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("no dead letter; mailbox %d", len(smtpd.Mailbox()))
		}
		time.Sleep(500 * time.Millisecond)
	}
	b.do(chromedp.Click(chromedp.CSS(`a[data-route="avisos-falhos"]`)))
	b.waitJS(`document.querySelector("#dead-letters-table tr[data-letter]") !== null`, 10*time.Second, "the dead letter")
	row := b.text("#dead-letters-table tr[data-letter]")
	for _, want := range []string{"admin", "fiscal@piuma.example", "Excesso de velocidade — NOTE-001", "550"} {
		if !strings.Contains(row, want) {
			t.Errorf("dead letter row %q lacks %q", row, want)
		}
	}
	b.shot("05-dead-letter")
	if len(smtpd.Mailbox()) != 0 {
		t.Fatalf("mailbox before the retry: %d", len(smtpd.Mailbox()))
	}
	b.do(chromedp.Click(chromedp.CSS("#dead-letters-table button[data-retry]")))
	b.waitJS(`document.querySelector("#dead-letters-table tr[data-letter]") === null && document.querySelector("#dl-msg").textContent.includes("entregue")`,
		20*time.Second, "the dead letter delivered")
	box := smtpd.Mailbox()
	if len(box) != 1 || box[0].To[0] != "fiscal@piuma.example" {
		t.Fatalf("mailbox after the retry: %+v", box)
	}
	if subject, _, _ := box[0].Read(t); !strings.Contains(subject, "Excesso de velocidade — NOTE-001") {
		t.Errorf("subject %q", subject)
	}
	b.shot("06-dead-letter-retried")
	b.checkConsole()
}

// TestOnDutyPreferencesThroughThePipeline: simulator → pty → bridge → Mosquitto → monitor →
// notifications, with who gets what set only through the HTTP API. Two inspectors save the same
// preferences (PUT /api/v1/me/notifications) with quiet hours that cover the moment; the
// supervisor puts one of them on duty (POST /api/v1/notifications/schedule). The speed episode
// reaches the one on duty — a real SMTP server's mailbox and the local Bot API server (the real
// Telegram API is unreachable here) — and nothing reaches the other.
func TestOnDutyPreferencesThroughThePipeline(t *testing.T) {
	bin := testenv.Build(t)
	broker := testenv.StartMosquitto(t, testenv.MosquittoOptions{})
	smtpd := emailtest.Start(t, emailtest.Options{})
	bot := telegramtest.Start(t)
	dir := t.TempDir()
	ca := filepath.Join(dir, "smtp-ca.pem")
	if err := os.WriteFile(ca, smtpd.CertPEM, 0o600); err != nil {
		t.Fatal(err)
	}
	file := filepath.Join(dir, "notifications.yaml")
	conf := fmt.Sprintf(`base_url: https://monitor.piuma.example
email: {addr: "%s", username: %s, from: "Monitor do trenzinho <monitor@piuma.example>", ca_file: %s}
telegram: {base_url: "%s"}
`, smtpd.Addr, smtpd.Username, ca, bot.URL)
	if err := os.WriteFile(file, []byte(conf), 0o600); err != nil {
		t.Fatal(err)
	}
	mon := startMonitorWithEnv(t, bin, broker.URL(), "TRENZINHO_NOTIFICATIONS="+file,
		"TRENZINHO_SMTP_PASSWORD="+smtpd.Password, "TRENZINHO_TELEGRAM_TOKEN="+bot.Token)

	// The dispatcher judges quiet hours and duty by the wall clock, in Piúma's time.
	sp, _ := time.LoadLocation("America/Sao_Paulo")
	now := time.Now().In(sp)
	quiet := fmt.Sprintf("%02d:00-%02d:00", (now.Hour()+23)%24, (now.Hour()+2)%24)
	tokens := map[string]string{}
	for i, name := range []string{"ana", "bruno"} {
		mon.send(t, "POST", "/api/v1/users", mon.token, map[string]string{"name": name, "password": "senha-de-" + name, "role": "fiscal"}, http.StatusCreated)
		var login struct{ Token string }
		mon.sendInto(t, "POST", "/api/v1/login", "", map[string]string{"user": name, "password": "senha-de-" + name}, http.StatusOK, &login)
		tokens[name] = login.Token
		mon.send(t, "PUT", "/api/v1/me/notifications", login.Token, map[string]any{
			"email": name + "@piuma.example", "telegram": fmt.Sprint(1001 + i), "rules": []string{"speed"}, "quiet_hours": quiet,
		}, http.StatusOK)
	}
	// A fiscal may not put themself on duty; the supervisor (here the admin) does.
	shift := map[string]string{"user": "bruno", "from": now.Add(-time.Hour).Format("2006-01-02T15:04"), "to": now.Add(3 * time.Hour).Format("2006-01-02T15:04")}
	mon.send(t, "POST", "/api/v1/notifications/schedule", tokens["bruno"], shift, http.StatusForbidden)
	mon.send(t, "POST", "/api/v1/notifications/schedule", mon.token, shift, http.StatusCreated)

	fast := startSimulation(t, bin, "--vehicles=1", "--prefix=DUTY", "--scenario=20:15,45:30,20:30", "--duration=75s", "--speed-up=3",
		"--start=2026-11-27T15:00:00Z")
	startBridge(t, bin, broker.URL(), "DUTY-001", fast.devices["DUTY-001"], serviceInput(t, fast.devices["DUTY-001"])...)
	box := smtpd.Wait(1, 3*time.Minute)
	if len(box) == 0 {
		t.Fatal("no e-mail within 3 minutes")
	}
	// The episode's Telegram message and location go in the same round as the e-mail, each
	// its own request: waited for (a fixed pause missed the second one on a loaded machine),
	// then everything sent is counted.
	testenv.WaitFor(t, "the Telegram message and location", time.Minute, func() bool { return len(bot.Requests()) >= 2 })
	box = smtpd.Mailbox()
	if len(box) != 1 || box[0].To[0] != "bruno@piuma.example" {
		t.Fatalf("mailbox: %+v", box)
	}
	if subject, _, _ := box[0].Read(t); !strings.Contains(subject, "Excesso de velocidade — DUTY-001") {
		t.Errorf("subject %q", subject)
	}
	reqs := bot.Requests()
	if len(reqs) != 2 || reqs[0].Method != "sendMessage" || reqs[1].Method != "sendLocation" {
		t.Fatalf("Bot API requests: %+v", reqs)
	}
	for _, r := range reqs {
		if string(r.ChatID) != "1002" {
			t.Errorf("Telegram to %s, want Bruno's 1002", r.ChatID)
		}
	}
	if n := metric(t, mon.base, "trenzinho_notify_quiet_hours_total"); n != "1" {
		t.Errorf("alerts held by quiet hours: %s, want 1 (Ana's)", n)
	}
}

// send sends a JSON body with a bearer token (none when empty) and expects the status.
func (c *monitorClient) send(t *testing.T, method, path, token string, body any, want int) {
	t.Helper()
	c.sendInto(t, method, path, token, body, want, nil)
}

// sendInto is send, decoding the answer into out (when not nil).
func (c *monitorClient) sendInto(t *testing.T, method, path, token string, body any, want int, out any) {
	t.Helper()
	b, _ := json.Marshal(body)
	req, _ := http.NewRequest(method, c.base+path, bytes.NewReader(b))
	if token != "" {
		req.Header.Set("Authorization", "Bearer "+token)
	}
	req.Header.Set("Content-Type", "application/json")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	msg, _ := io.ReadAll(resp.Body)
	if resp.StatusCode != want {
		t.Fatalf("%s %s: %s %s, want %d", method, path, resp.Status, msg, want)
	}
	if out != nil {
		if err := json.Unmarshal(msg, out); err != nil {
			t.Fatalf("%s %s: %v", method, path, err)
		}
	}
}
