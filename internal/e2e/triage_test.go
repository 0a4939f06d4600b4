package e2e

import (
	"context"
	"crypto/ed25519"
	"crypto/rand"
	"fmt"
	"log/slog"
	"net/http/httptest"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/chromedp/chromedp"
	"github.com/prometheus/client_golang/prometheus"

	"github.com/trenzinho/trenzinho/geofences"
	"github.com/trenzinho/trenzinho/monitor/api"
	"github.com/trenzinho/trenzinho/monitor/notify"
	"github.com/trenzinho/trenzinho/monitor/notify/notifyconfig"
	"github.com/trenzinho/trenzinho/monitor/notify/telegram"
	"github.com/trenzinho/trenzinho/monitor/notify/telegram/telegramtest"
	"github.com/trenzinho/trenzinho/monitor/store"
	"github.com/trenzinho/trenzinho/monitor/web"
	"github.com/trenzinho/trenzinho/profile"
	"github.com/trenzinho/trenzinho/rules"
	"github.com/trenzinho/trenzinho/wire"
)

// movableClock is the escalation's clock, moved by the test.
type movableClock struct {
	mu sync.Mutex
	t  time.Time
}

func (c *movableClock) Now() time.Time          { c.mu.Lock(); defer c.mu.Unlock(); return c.t }
func (c *movableClock) Advance(d time.Duration) { c.mu.Lock(); c.t = c.t.Add(d); c.mu.Unlock() }

// TestTriageInTheBrowser drives the triage in headless Chromium: a fiscal acknowledges an alert
// from the alerts page, filters the new ones, takes another on its page, comments and clears it
// with a reason, assigns the first to herself by name and finds it under "Atribuídos a mim";
// the third, left alone, is escalated to the supervisor's Telegram (the local Bot API server)
// when the fake clock passes N minutes, and its page shows the escalation. Every act is in the
// audit log; no console error.
//
// Unlike the other dashboard tests this one serves the API in the test's process (real SQLite,
// the embedded dashboard, the real dispatcher and Telegram client): the escalation's clock must
// be the test's, and the monitor binary rightly has no way to take a fake clock from outside.
func TestTriageInTheBrowser(t *testing.T) {
	chrome := chromiumPath(t)
	ctx := context.Background()
	db, err := store.Open(ctx, filepath.Join(t.TempDir(), "monitor.db"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Close() })
	if _, err := db.EnsureAdmin(ctx, "admin", "segredo-de-teste"); err != nil {
		t.Fatal(err)
	}
	for name, role := range map[string]store.Role{"ana": store.RoleFiscal, "sup": store.RoleSupervisor} {
		if _, err := db.CreateUser(ctx, name, "senha-longa-de-"+name, role); err != nil {
			t.Fatal(err)
		}
	}
	set, err := geofences.NewSet()
	if err != nil {
		t.Fatal(err)
	}
	pub, _, _ := ed25519.GenerateKey(rand.Reader)
	srv := api.New(api.Config{
		Users: db, Audit: db, Episodes: db, Drafts: db, DraftKey: pub, Triage: db, Health: db.Ping,
		Notify: &api.NotifyConfig{Directory: notifyconfig.NewDirectory(notifyconfig.DirectoryConfig{Store: db})},
		Static: web.Handler(web.Options{}), Map: api.MapConfig{Geofences: set, Profile: profile.Piuma()},
		Metrics: prometheus.NewRegistry(), Logger: slog.New(slog.DiscardHandler),
	})
	hs := httptest.NewServer(srv.Handler())
	t.Cleanup(hs.Close)
	t.Cleanup(srv.Hub().Close) // runs first: ends the streams

	bot := telegramtest.Start(t)
	clock := &movableClock{t: time.Now()}
	d, err := notify.New(notify.Config{
		Channels: map[string]notify.Channel{"telegram": &telegram.Client{BaseURL: bot.URL, Token: bot.Token}},
		Users:    []notify.User{{ID: "sup", Addresses: []notify.Address{{Channel: "telegram", To: "2001"}}}},
		Composer: notify.Composer{BaseURL: hs.URL}, Clock: clock,
		Registerer: prometheus.NewRegistry(), Logger: slog.New(slog.DiscardHandler),
	})
	if err != nil {
		t.Fatal(err)
	}
	esc := &notify.Escalator{Policy: notify.Escalation{MinSeverity: notify.High, After: 10 * time.Minute, To: []string{"sup"}},
		Store: db, Dispatcher: d, Clock: clock, Logger: slog.New(slog.DiscardHandler)}

	// Three speeding alerts of the last minutes.
	var ids []string
	for i, v := range []string{"TRI-001", "TRI-002", "TRI-003"} {
		start := time.Now().Add(-time.Duration(5-i) * time.Minute).Truncate(time.Second)
		e := &rules.Episode{ID: fmt.Sprintf("%s.speed.%d", v, start.Unix()), Vehicle: v, Rule: "speed", Article: "Art. 23",
			Penalty: "Art. 46, X", Start: wire.NewTime(start), Peak: 41, Unit: "km/h", Limit: 30, Tolerance: 7,
			Lat: -20.8367, Lon: -40.7292, PeakAt: wire.NewTime(start.Add(5 * time.Second)), Source: "tacho", Evidence: 2}
		ev := []rules.Evidence{
			{Kind: "tacho", Epoch: "e1", Seq: 1, T: wire.NewTime(start), Value: 39, Unit: "km/h", Lat: triageF64(-20.8367), Lon: triageF64(-40.7292)},
			{Kind: "tacho", Epoch: "e1", Seq: 2, T: wire.NewTime(start.Add(5 * time.Second)), Value: 41, Unit: "km/h", Lat: triageF64(-20.8368), Lon: triageF64(-40.7291)},
		}
		if err := db.UpsertEpisode(ctx, e, ev); err != nil {
			t.Fatal(err)
		}
		ids = append(ids, e.ID)
	}
	row := func(id string) string { return fmt.Sprintf(`#alerts-table tr[data-episode=%q]`, id) }

	b := startDashBrowser(t, chrome, 1440, 900)
	b.do(chromedp.Navigate(hs.URL + "/"))
	b.waitJS(`!document.querySelector("#login-view").hidden`, 20*time.Second, "the login page")
	b.do(chromedp.SendKeys(chromedp.CSS("#login-user"), "ana"),
		chromedp.SendKeys(chromedp.CSS("#login-password"), "senha-longa-de-ana"),
		chromedp.Click(chromedp.CSS("#login-submit")))
	b.waitJS(`!document.querySelector("#app").hidden`, 20*time.Second, "the dashboard")

	// 1. The alerts page: three new alerts; the first acknowledged from its row.
	b.do(chromedp.Navigate(hs.URL + "/#/alertas"))
	b.waitJS(`document.querySelectorAll("#alerts-table .triage-ack").length === 3`, 20*time.Second, "three new alerts with their Reconhecer button")
	b.shot("01-alerts-new")
	b.do(chromedp.Click(chromedp.CSS(row(ids[0]) + " .triage-ack")))
	b.waitJS(`document.querySelector('`+row(ids[0])+` .triage-cell')?.textContent.includes("reconhecido por ana")`, 20*time.Second, "the first alert acknowledged by ana")
	if s := b.text(row(ids[0]) + " .triage-cell"); !strings.Contains(s, "Reconhecido") {
		t.Errorf("acknowledged row %q", s)
	}
	// 2. Only the new ones.
	b.do(selectValue("#alerts-triage", "novo"))
	b.waitJS(`document.querySelectorAll("#alerts-table tbody tr[data-episode]").length === 2 && !document.querySelector('`+row(ids[0])+`')`, 20*time.Second, "the new alerts only")
	b.shot("02-filter-new")

	// 3. The second alert's page: take it, comment, clear it with a reason.
	b.do(chromedp.Navigate(hs.URL + "/#/episodio/" + ids[1]))
	b.waitJS(`document.querySelector("#triage-assign-me") !== null`, 20*time.Second, "the triage card")
	b.do(chromedp.Click(chromedp.CSS("#triage-assign-me")))
	b.waitJS(`document.querySelector("#triage-state")?.dataset.state === "atribuido"`, 20*time.Second, "the alert assigned")
	b.do(chromedp.SendKeys(chromedp.CSS("#triage-comment-text"), "Equipe a caminho da orla."),
		chromedp.Click(chromedp.CSS("#triage-comment")))
	b.waitJS(`document.querySelector('#triage-history li[data-act="comment"]')?.textContent.includes("Equipe a caminho da orla.")`, 20*time.Second, "the comment in the history")
	b.do(chromedp.SendKeys(chromedp.CSS("#triage-reason"), "Verificado no local: o veículo já circulava abaixo do limite."),
		chromedp.Click(chromedp.CSS("#triage-clear")))
	b.waitJS(`document.querySelector("#triage-state")?.dataset.state === "encerrado" && document.querySelector('#triage-history li[data-act="clear"]') !== null`, 20*time.Second, "the alert cleared")
	hist := b.evalString(`[...document.querySelectorAll("#triage-history li")].map((l) => l.dataset.act).join(",")`)
	if hist != "assign,comment,clear" {
		t.Errorf("history %q", hist)
	}
	if s := b.text("#triage-panel"); !strings.Contains(s, "ana") || !strings.Contains(s, "abaixo do limite") || !strings.Contains(s, "não decide sobre minuta nem auto") {
		t.Errorf("triage card %q", s)
	}
	b.shot("03-episode-cleared")

	// 4. The first one assigned to herself by name: "Atribuídos a mim" lists it alone.
	b.do(chromedp.Navigate(hs.URL + "/#/episodio/" + ids[0]))
	b.waitJS(`document.querySelector("#triage-assign-user") !== null && document.querySelector("#triage-state")?.dataset.state === "reconhecido"`, 20*time.Second, "the first alert's triage card")
	b.do(chromedp.SendKeys(chromedp.CSS("#triage-assign-user"), "ana"), chromedp.Click(chromedp.CSS("#triage-assign")))
	b.waitJS(`document.querySelector("#triage-state")?.dataset.state === "atribuido"`, 20*time.Second, "the first alert assigned")
	b.do(chromedp.Navigate(hs.URL + "/#/alertas"))
	b.waitJS(`document.querySelector("#alerts-triage") !== null && document.querySelectorAll("#alerts-table tbody tr[data-episode]").length === 3`, 20*time.Second, "the alerts page")
	b.do(selectValue("#alerts-triage", "mine"))
	b.waitJS(`document.querySelectorAll("#alerts-table tbody tr[data-episode]").length === 1 && document.querySelector('`+row(ids[0])+`') !== null`, 20*time.Second, "the alert assigned to ana only")
	b.shot("04-assigned-to-me")
	b.do(selectValue("#alerts-triage", "encerrado"))
	b.waitJS(`document.querySelectorAll("#alerts-table tbody tr[data-episode]").length === 1 && document.querySelector('`+row(ids[1])+` .triage-cell')?.textContent.includes("encerrado por ana")`, 20*time.Second, "the cleared alert")

	// 5. Ten minutes pass on the escalation's clock: only the third, never acknowledged, goes to
	// the supervisor, once.
	if n, err := esc.Check(ctx); err != nil || n != 0 {
		t.Fatalf("escalation before N minutes: %d %v", n, err)
	}
	clock.Advance(10 * time.Minute)
	if n, err := esc.Check(ctx); err != nil || n != 1 {
		t.Fatalf("escalation after N minutes: %d %v, want 1", n, err)
	}
	d.Flush(ctx)
	var msgs []string
	for _, r := range bot.Requests() {
		if r.Method == "sendMessage" {
			msgs = append(msgs, string(r.ChatID)+": "+r.Text)
		}
	}
	if len(msgs) != 1 || !strings.HasPrefix(msgs[0], "2001: ") || !strings.Contains(msgs[0], "TRI-003") || !strings.Contains(msgs[0], "Sem reconhecimento") {
		t.Fatalf("Bot API messages %q", msgs)
	}
	b.do(selectValue("#alerts-triage", "novo"))
	b.waitJS(`document.querySelector('`+row(ids[2])+` .triage-cell')?.textContent.includes("escalonado")`, 20*time.Second, "the escalated alert in the list")
	b.do(chromedp.Navigate(hs.URL + "/#/episodio/" + ids[2]))
	b.waitJS(`document.querySelector('#triage-history li[data-act="escalate"]')?.textContent.includes("sup")`, 20*time.Second, "the escalation in the history")
	b.shot("05-escalated")
	// Acknowledged now, by the supervisor's team: the escalation is not repeated.
	b.do(chromedp.Click(chromedp.CSS("#triage-ack")))
	b.waitJS(`document.querySelector("#triage-state")?.dataset.state === "reconhecido"`, 20*time.Second, "the escalated alert acknowledged")
	clock.Advance(time.Hour)
	if n, err := esc.Check(ctx); err != nil || n != 0 {
		t.Errorf("escalation after the acknowledgement: %d %v", n, err)
	}

	// Every act is in the audit log.
	entries, _, err := db.ListAudit(ctx, store.AuditFilter{}, 100, "")
	if err != nil {
		t.Fatal(err)
	}
	var acts []string
	for i := len(entries) - 1; i >= 0; i-- {
		if e := entries[i]; strings.HasPrefix(e.Action, "episode.") {
			acts = append(acts, e.User+":"+e.Action)
		}
	}
	want := "ana:episode.ack ana:episode.assign ana:episode.comment ana:episode.clear ana:episode.assign :episode.escalate ana:episode.ack"
	if got := strings.Join(acts, " "); got != want {
		t.Errorf("audit\n got %s\nwant %s", got, want)
	}
	b.checkConsole()
}

func triageF64(v float64) *float64 { return &v }
