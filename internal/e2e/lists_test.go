package e2e

import (
	"context"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/chromedp/cdproto/cdp"
	"github.com/chromedp/cdproto/fetch"
	"github.com/chromedp/cdproto/network"
	"github.com/chromedp/chromedp"

	"github.com/trenzinho/trenzinho/internal/testkit/testenv"
)

// TestListsShowTheLastLoad: a list whose filter changes while its first load is still on its
// way shows the filtered answer, even when the first answers last. The page's first request
// of the audit log is held in the browser (CDP Fetch) until the filtered one has been shown,
// then released; the table must still hold only the filtered rows.
func TestListsShowTheLastLoad(t *testing.T) {
	chrome := chromiumPath(t)
	bin := testenv.Build(t)
	broker := testenv.StartMosquitto(t, testenv.MosquittoOptions{})
	mon := startMonitor(t, bin, broker.URL())
	// Audit rows of other actions than login: two users created.
	for _, name := range []string{"fiscal-a", "fiscal-b"} {
		if code, body := mon.postJSON(t, "/api/v1/users", map[string]string{"name": name, "password": "senha-de-teste-longa", "role": "fiscal"}); code != 201 && code != 200 {
			t.Fatalf("create %s: %d %s", name, code, body)
		}
	}
	b := startDashBrowser(t, chrome, 1440, 900)
	b.do(chromedp.Navigate(mon.base + "/"))
	b.waitJS(`!document.querySelector("#login-view").hidden`, 20*time.Second, "the login page")
	b.do(chromedp.SendKeys(chromedp.CSS("#login-user"), "admin"), chromedp.SendKeys(chromedp.CSS("#login-password"), "segredo-de-teste"),
		chromedp.Click(chromedp.CSS("#login-submit")))
	b.waitJS(`!document.querySelector("#app").hidden`, 20*time.Second, "the dashboard")

	// Hold every unfiltered audit request; let the filtered ones through.
	var mu sync.Mutex
	var held []fetch.RequestID
	heldOne := make(chan struct{}, 1)
	ctx, cancel := context.WithCancel(b.ctx)
	defer cancel()
	events := chromedp.Events(ctx, fetch.RequestPaused)
	go func() {
		for ev, err := range events {
			if err != nil {
				return
			}
			if !strings.Contains(ev.Request.URL, "action=") {
				mu.Lock()
				held = append(held, ev.RequestID)
				mu.Unlock()
				select {
				case heldOne <- struct{}{}:
				default:
				}
				continue
			}
			chromedp.Run(ctx, chromedp.Func(func(ctx context.Context, tg *chromedp.Target) error {
				_, err := cdp.Call(ctx, tg, fetch.ContinueRequest, fetch.ContinueRequestParams{RequestID: ev.RequestID})
				return err
			}))
		}
	}()
	// The page's service worker would send the requests itself, out of the page's reach.
	b.do(chromedp.Func(func(ctx context.Context, tg *chromedp.Target) error {
		if _, err := cdp.Call(ctx, tg, network.Enable, network.EnableParams{}); err != nil {
			return err
		}
		if _, err := cdp.Call(ctx, tg, network.SetBypassServiceWorker, network.SetBypassServiceWorkerParams{Bypass: true}); err != nil {
			return err
		}
		_, err := cdp.Call(ctx, tg, fetch.Enable, fetch.EnableParams{Patterns: []*fetch.RequestPattern{{URLPattern: "*/api/v1/audit*"}}})
		return err
	}))

	b.do(chromedp.Navigate(mon.base + "/#/auditoria"))
	select {
	case <-heldOne:
	case <-time.After(20 * time.Second):
		t.Fatal("the audit page sent no unfiltered request")
	}
	b.waitJS(`document.querySelector("#view-page select") !== null`, 10*time.Second, "the audit filters")
	b.do(chromedp.Evaluate[chromedp.Void](`(() => { const s = document.querySelector("#view-page select"); s.value = "login"; s.dispatchEvent(new Event("change", {bubbles: true})); })()`))
	only := `(() => { const rows = [...document.querySelectorAll("#view-page tbody tr[data-action]")]; return rows.length > 0 && rows.every((r) => r.dataset.action === "login"); })()`
	b.waitJS(only, 20*time.Second, "the filtered rows")

	// Now the first load answers, last.
	mu.Lock()
	ids := held
	held = nil
	mu.Unlock()
	for _, id := range ids {
		b.do(chromedp.Func(func(ctx context.Context, tg *chromedp.Target) error {
			_, err := cdp.Call(ctx, tg, fetch.ContinueRequest, fetch.ContinueRequestParams{RequestID: id})
			return err
		}))
	}
	b.waitJS(`performance.getEntriesByType("resource").filter((e) => e.name.includes("/api/v1/audit") && !e.name.includes("action=") && e.responseEnd > 0).length >= 1`,
		20*time.Second, "the first load's answer")
	// The answer arrived and was handled in this task or the next: one animation frame later
	// the table is what it is going to be.
	b.waitJS(`new Promise((r) => requestAnimationFrame(() => setTimeout(() => r(true), 0)))`, 5*time.Second, "a frame")
	if !b.evalBool(only) {
		t.Errorf("after the first load answered last, the audit table holds other actions than the filtered one:\n%s", b.text("#view-page tbody"))
	}
	b.checkConsole()
}
