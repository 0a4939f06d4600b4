package e2e

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"math"
	"net/http"
	"os"
	"os/exec"
	"path"
	"path/filepath"
	"regexp"
	"slices"
	"sort"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/chromedp/cdproto/cdp"
	"github.com/chromedp/cdproto/page"
	"github.com/chromedp/cdproto/performance"
	"github.com/chromedp/cdproto/profiler"
	"github.com/chromedp/chromedp"
	"github.com/chromedp/chromedp/kb"
	mqtt "github.com/eclipse/paho.mqtt.golang"

	"github.com/trenzinho/trenzinho/internal/testkit/testenv"
	"github.com/trenzinho/trenzinho/wire"
)

// TestDashboardInTheBrowser drives the control-room dashboard in headless Chromium against the
// whole pipeline: simulator → bridge → Mosquitto → monitor. An agent logs in through the form,
// watches the simulated vehicle move on the map, sees its speed episode arrive live in the
// alerts feed, opens the draft in the review queue, issues it, and finds the decision in the
// audit view. Any error in the browser console or uncaught exception fails the test.
// Screenshots of every step are saved to $TRENZINHO_ARTIFACTS (else a temporary directory).
func TestDashboardInTheBrowser(t *testing.T) { walkDashboard(t, time.Time{}) }

// TestDashboardAtAnyHour walks the dashboard as TestDashboardInTheBrowser does with the monitor
// and the browser on a fake clock, at the hours that have broken date arithmetic before: late on
// a Sunday evening in Piúma (already Monday in UTC), on a national holiday (Christmas, from which
// no deadline may count), and at 23:30 on New Year's Eve (already next year in UTC, when a
// notice's number and year are chosen).
//
// The instants are the next ones after now: the simulator and the bridge keep the real clock,
// and a device clock behind the monitor's is a late delivery (a spool's backlog), where one ahead
// of it is a clock fault (rules/clock.go) that would open an episode of its own.
func TestDashboardAtAnyHour(t *testing.T) {
	sp := piumaZone(t)
	now := time.Now().In(sp)
	next := func(at time.Time, step func(time.Time) time.Time) time.Time {
		for !at.After(now.Add(time.Hour)) {
			at = step(at)
		}
		return at
	}
	y, m, d := now.Date()
	week := func(t time.Time) time.Time { return t.AddDate(0, 0, 7) }
	year := func(t time.Time) time.Time { return t.AddDate(1, 0, 0) }
	for _, c := range []struct {
		name string
		at   time.Time
	}{
		{"Sunday_23h30", next(time.Date(y, m, d-int(now.Weekday()), 23, 30, 0, 0, sp), week)},
		{"Christmas", next(time.Date(y, 12, 25, 15, 0, 0, 0, sp), year)},
		{"New_Years_Eve_23h30", next(time.Date(y, 12, 31, 23, 30, 0, 0, sp), year)},
	} {
		t.Run(c.name, func(t *testing.T) { walkDashboard(t, c.at) })
	}
}

// walkDashboard is the dashboard's walk; with a non-zero at, the monitor (built with the
// fakeclock tag, monitor/clock.go) and the page (whose Date is shifted before any script runs)
// both run as if started at that instant.
func walkDashboard(t *testing.T, at time.Time) {
	chrome := chromiumPath(t)
	bin := testenv.Build(t)
	broker := testenv.StartMosquitto(t, testenv.MosquittoOptions{})
	now := time.Now
	monBin, env := bin, issuableEnv(t)
	if !at.IsZero() {
		offset := time.Until(at)
		now = func() time.Time { return time.Now().Add(offset) }
		monBin = testenv.BuildFakeClock(t)
		env = append(env, "TRENZINHO_FAKE_NOW="+at.Format(time.RFC3339))
		t.Logf("fake clock: %s in Piúma", at.In(piumaZone(t)).Format("Mon 02/01/2006 15:04 MST"))
	}
	// An auto needs an identified licensee, a confirmed UFMP and an agent with full name,
	// matrícula and cargo: DASH-001 is registered, the profile's UFMP confirmed; the admin's
	// identification is filled in later, after the page shows its absence blocks the issue.
	mon := startMonitorWithEnv(t, monBin, broker.URL(), env...) // drafts settle after 2 s
	b := startDashBrowser(t, chrome, 1440, 900)
	if !at.IsZero() {
		b.shiftClock(time.Until(now()))
	}

	// 1. The login page, then the map after logging in through the form.
	b.do(chromedp.Navigate(mon.base + "/"))
	b.waitJS(`!document.querySelector("#login-view").hidden`, 20*time.Second, "the login page")
	b.do(chromedp.SendKeys(chromedp.CSS("#login-user"), "admin"),
		chromedp.SendKeys(chromedp.CSS("#login-password"), "segredo-de-teste"))
	b.shot("01-login")
	b.do(chromedp.Click(chromedp.CSS("#login-submit")))
	b.waitJS(`!document.querySelector("#app").hidden && document.querySelector("#conn").classList.contains("conn--live")`,
		20*time.Second, "the map with a live stream")
	b.waitJS(`document.querySelectorAll(".site-badge").length > 0`, 10*time.Second, "the geofence layers")
	// The admin is told, in one line that links to the Perfil legal page, that the profile leaves
	// something unset (Piúma's municipal holidays, school recess, defence office).
	b.waitJS(`(() => { const w = document.querySelector("#profile-warnings");
		return w && w.textContent.includes("Perfil legal incompleto: 3 aviso(s)") && w.querySelector('a[href="#/perfil-legal"]') !== null &&
			w.getBoundingClientRect().height < 60; })()`,
		5*time.Second, "the profile warnings for the admin")
	b.shot("02-map")

	// Keyboard: a sensitive site's badge takes the focus and shows its details; Enter keeps
	// them open in a popup.
	b.do(chromedp.Focus(chromedp.CSS(`.site-badge-icon[data-site]`)))
	b.waitJS(`document.activeElement.matches(".site-badge-icon[data-site]") && document.querySelector(".leaflet-tooltip") !== null`,
		5*time.Second, "the site's details on focus")
	b.do(chromedp.KeyEvent(kb.Enter))
	b.waitJS(`(document.querySelector(".leaflet-popup-content") || {}).textContent?.includes("raio de 200 m")`,
		5*time.Second, "the site's popup after Enter")
	time.Sleep(400 * time.Millisecond) // it fades in
	b.shot("02b-site-keyboard")
	b.do(chromedp.Click(chromedp.CSS(".leaflet-popup-close-button")))

	// 2. A vehicle drives: 20 km/h, then 45 km/h for 30 s (a speed episode), then 20 km/h.
	// Yesterday at noon in Piúma: within service hours on any day, and within the last seven days
	// that the fleet page's compliance summary shows by default. Only the speed rule fires on
	// any day of the year: DASH-001's licensee has no itinerary in the sample geofences (whose
	// days, hours and season would otherwise decide route_deviation) and its tachograph holds no
	// driver card (driver_unregistered judges only a card).
	sim := startSimulation(t, bin, "--vehicles=1", "--prefix=DASH", "--scenario=20:24,45:30,20:60", "--card=",
		"--duration=114s", "--speed-up=2", "--start="+yesterdayNoon(t, now()).Format(time.RFC3339))
	startBridge(t, bin, broker.URL(), "DASH-001", sim.devices["DASH-001"], serviceInput(t, sim.devices["DASH-001"])...)

	marker := `document.querySelector('.leaflet-marker-icon[data-vehicle="DASH-001"]')`
	b.waitJS(marker+` !== null`, 60*time.Second, "the vehicle's marker")
	first := b.markerPosition(marker)
	b.waitJS(fmt.Sprintf(`(() => { const m = %s; return m.dataset.lat !== %q && m.style.transform !== %q; })()`,
		marker, first.Lat, first.Transform), 30*time.Second, "the marker to move")
	second := b.markerPosition(marker)
	t.Logf("marker moved from %s,%s (%s) to %s,%s (%s)", first.Lat, first.Lon, first.Transform, second.Lat, second.Lon, second.Transform)
	b.shot("03-vehicle-moving")

	// 3. The speed episode arrives live: in the feed beside the map and as a toast.
	b.waitJS(`document.querySelector('#live-alerts li[data-rule="speed"]') !== null`, 90*time.Second, "the speed alert in the feed")
	b.waitJS(`[...document.querySelectorAll("#toasts .toast")].some((t) => t.textContent.includes("DASH-001"))`, 5*time.Second, "the alert's toast")
	feed := b.text(`#live-alerts li[data-rule="speed"]`)
	if !strings.Contains(feed, "DASH-001") || !strings.Contains(feed, "Excesso de velocidade") {
		t.Errorf("alert in the feed: %q", feed)
	}
	b.shot("04-alert-live")

	// The vehicle's panel, with the day's timeline.
	b.do(chromedp.Click(chromedp.CSS(`#veh-list button`)))
	b.waitJS(`document.querySelector("#vehicle-title") && document.querySelector("#vehicle-title").textContent === "DASH-001"`, 10*time.Second, "the vehicle panel")
	b.shot("05-vehicle-panel")

	// 4. The draft: made after the episode closes and settles, it reaches the page as an event.
	b.waitJS(`document.querySelector("#badge-review").textContent === "1" && !document.querySelector("#badge-review").hidden`,
		3*time.Minute, "the pending draft's badge")
	b.do(chromedp.Click(chromedp.CSS(`a[data-route="revisao"]`)))
	b.waitJS(`document.querySelector("#drafts-table tr[data-draft]") !== null`, 20*time.Second, "the review queue")
	row := b.text(`#drafts-table tr[data-draft]`)
	for _, want := range []string{"DASH-001", "Excesso de velocidade", "Art. 46, X", "íntegro"} {
		if !strings.Contains(row, want) {
			t.Errorf("draft row %q lacks %q", row, want)
		}
	}
	b.shot("06-review-queue")
	b.do(chromedp.Click(chromedp.CSS(`#drafts-table tr[data-draft] a`)))
	b.waitJS(`document.querySelector("#decision") !== null && document.querySelector("#integrity").textContent.includes("Integridade verificada")`,
		20*time.Second, "the draft with its integrity")
	b.shot("07-draft")
	draftURL := b.evalString(`location.href`)

	// The PDF, previewed inside the page: the frame loads the server's PDF (same origin, allowed
	// to be framed by it only).
	b.do(chromedp.Click(chromedp.CSS("#pdf-preview-btn")))
	b.waitJS(`(() => { const f = document.querySelector("#pdf-preview iframe"); return f !== null && !document.querySelector("#pdf-preview").hidden; })()`,
		5*time.Second, "the PDF preview")
	b.waitJS(`performance.getEntriesByType("resource").some((e) => e.name.includes("/pdf") && e.responseStatus === 200)`,
		20*time.Second, "the PDF loaded in the frame")
	time.Sleep(time.Second)
	b.shot("07b-pdf-preview")
	b.do(chromedp.Click(chromedp.CSS("#pdf-preview-btn")))

	// 5. Issue it. First the page says what blocks the issue: the admin has no full name,
	// matrícula or cargo on file, and "Emitir" is disabled and says why.
	b.waitJS(`document.querySelector('#issue-blockers li[data-code="agent_incomplete"]') !== null && document.querySelector("#issue-btn").disabled`,
		10*time.Second, "the blocking reason before issuing")
	if why := b.evalString(`document.querySelector("#issue-btn").title`); !strings.Contains(why, "matrícula") {
		t.Errorf("the disabled Emitir says %q", why)
	}
	b.shot("07c-issue-blocked")
	mon.patch(t, "/api/v1/users/admin", map[string]string{"full_name": "Ana Maria Fiscal", "matricula": "FP-0001", "cargo": "Agente de Fiscalização de Posturas"})
	b.do(chromedp.Reload())
	b.waitJS(`document.querySelector("#issue-btn") !== null && !document.querySelector("#issue-btn").disabled && document.querySelector("#issue-blockers") === null`,
		20*time.Second, "Emitir enabled once the agent is identified")
	b.do(chromedp.SendKeys(chromedp.CSS(`#decision textarea`), "Conferido com as evidências do tacógrafo."),
		chromedp.Click(chromedp.CSS("#issue-btn")))
	b.waitJS(`document.querySelector("dialog[open] #confirm-yes") !== null`, 5*time.Second, "the confirmation dialog")
	b.shot("08-confirm")
	b.do(chromedp.Click(chromedp.CSS("#confirm-yes")))
	b.waitJS(`/AI-\d{4}\/\d{4}/.test(document.querySelector("#draft-title").textContent)`, 20*time.Second, "the issued notice")
	title := b.text("#draft-title")
	b.shot("09-issued")

	// 5b. The notice's process: the page offers its next act, the notification. The agent
	// records the delivery in person today; the defence deadline (Art. 55) then appears with
	// how it was counted, and the act joins the timeline.
	b.waitJS(`document.querySelector('#act-form[data-act="notify"]') !== null && document.querySelector("#assessment") !== null`,
		20*time.Second, "the process with its next act")
	if s := b.text("#case-state-text"); !strings.Contains(s, "não notificado") {
		t.Errorf("case state before the notification: %q", s)
	}
	today := now().In(piumaZone(t)).Format("02/01/2006")
	b.do(chromedp.Click(chromedp.CSS(`#act-form input[name="mode"][value="in_person"]`)),
		clearInput("#act-date"), chromedp.SendKeys(chromedp.CSS("#act-date"), today),
		chromedp.SendKeys(chromedp.CSS("#act-recipient"), "Maria Souza"),
		chromedp.SendKeys(chromedp.CSS("#act-recipient-role"), "sócia-administradora"),
		chromedp.ScrollIntoView(chromedp.CSS("#act-submit")))
	b.shot("09b-notify-form")
	b.do(chromedp.Click(chromedp.CSS("#act-submit")))
	b.waitJS(`document.querySelector("dialog[open] #confirm-yes") !== null`, 5*time.Second, "the act's confirmation")
	b.do(chromedp.Click(chromedp.CSS("#confirm-yes")))
	b.waitJS(`document.querySelector("#case-deadline") !== null && document.querySelector('#case-timeline li[data-action="notify"]') !== null`,
		20*time.Second, "the defence deadline after the notification")
	deadline := b.text("#deadline-explanation")
	if !strings.Contains(deadline, "Art. 55") || !strings.Contains(deadline, today) {
		t.Errorf("deadline explanation %q (notified %s)", deadline, today)
	}
	if s := b.text("#case-state-text"); !strings.Contains(s, "notificado") {
		t.Errorf("case state after the notification: %q", s)
	}
	t.Logf("defence deadline: %s — %s", b.text("#case-deadline"), deadline)
	// Where the process stands, its next deadline and who may record the next acts (the
	// admin issued it: it may not decide on it).
	if s := b.text("#case-next"); !strings.Contains(s, "Prazo de defesa em curso") || !strings.Contains(b.text("#case-next-deadline"), "restante") {
		t.Errorf("next step %q, next deadline %q", s, b.text("#case-next-deadline"))
	}
	if s := b.text("#authority-only"); !strings.Contains(s, "Autoridade Julgadora de Posturas") {
		t.Errorf("who decides: %q", s)
	}
	b.do(chromedp.ScrollIntoView(chromedp.CSS("#case")))
	time.Sleep(300 * time.Millisecond)
	b.shot("09c-notified-deadline")

	// The review queue filters the issued notices by the state of their process, and the
	// notices page lists every notice with its process.
	b.do(chromedp.Click(chromedp.CSS(`a[data-route="revisao"]`)))
	b.waitJS(`document.querySelector('.segmented button[data-status="issued"]') !== null`, 10*time.Second, "the review queue")
	b.do(chromedp.Click(chromedp.CSS(`.segmented button[data-status="issued"]`)))
	b.waitJS(`!document.querySelector("#case-state-filter").closest(".field").hidden`, 5*time.Second, "the process filter")
	b.do(selectValue("#case-state-filter", "notified"))
	b.waitJS(`document.querySelector("#drafts-table tr[data-draft]")?.textContent.includes("Notificado")`, 10*time.Second, "the notified notice in the queue")
	b.shot("09d-queue-by-process")
	b.do(selectValue("#case-state-filter", ""), chromedp.Click(chromedp.CSS(`.segmented button[data-status="draft"]`)))
	b.do(chromedp.Click(chromedp.CSS(`a[data-route="autos"]`)))
	b.waitJS(`document.querySelector('#cases-table tr[data-state="notified"]') !== null`, 10*time.Second, "the notices page")
	b.shot("09e-notices")

	// 6. The audit view has the decision.
	b.do(chromedp.Click(chromedp.CSS(`a[data-route="auditoria"]`)))
	b.waitJS(`document.querySelector('#audit-table tr[data-action="draft.issue"]') !== null`, 20*time.Second, "the decision in the audit log")
	audit := b.text(`#audit-table tr[data-action="draft.issue"]`)
	if !strings.Contains(audit, "admin") || !strings.Contains(audit, "Auto emitido") {
		t.Errorf("audit row %q", audit)
	}
	b.shot("10-audit")

	// The episode page: track replay and charts with the limit line.
	b.do(chromedp.Click(chromedp.CSS(`a[data-route="alertas"]`)))
	b.waitJS(`document.querySelector('#alerts-table tr[data-episode*=".speed."] a') !== null`, 20*time.Second, "the alerts page")
	b.shot("11-alerts")
	// Only the speed rule fired: at any hour, the drive broke no other rule.
	var eps struct{ Items []struct{ Rule string } }
	mon.get(t, "/api/v1/episodes", &eps)
	if len(eps.Items) != 1 || eps.Items[0].Rule != "speed" {
		t.Errorf("episodes %+v, want exactly the speed episode", eps.Items)
	}
	b.do(chromedp.Click(chromedp.CSS(`#alerts-table tr[data-episode*=".speed."] a`)))
	b.waitJS(`document.querySelectorAll(".charts .uplot").length >= 1 && document.querySelector(".episode-map .leaflet-interactive") !== null`,
		20*time.Second, "the episode's charts and track")
	legend := b.text(".charts .uplot")
	if !strings.Contains(legend, "Limite") {
		t.Errorf("chart legend %q has no limit line", legend)
	}
	b.do(chromedp.Click(chromedp.CSS(`.replay-bar button`)))
	time.Sleep(1500 * time.Millisecond)
	b.shot("12-episode")

	// The fleet page and its CSV export (made in the browser).
	b.do(chromedp.Click(chromedp.CSS(`a[data-route="frota"]`)))
	b.waitJS(`document.querySelector('#fleet-table tr[data-vehicle="DASH-001"]') !== null`, 20*time.Second, "the fleet page")
	b.waitJS(`document.querySelector('#compliance-table .cell-bad') !== null`, 20*time.Second, "the compliance summary")
	// With a registry (DASH-001's, no documents on file) the page shows the documents' panel.
	b.waitJS(`document.querySelector("#expiring") !== null || document.querySelector("#expiring-none") !== null`, 5*time.Second, "the documents' panel")
	b.shot("13-fleet")
	b.do(chromedp.Click(chromedp.CSS(`a[data-route="usuarios"]`)))
	b.waitJS(`document.querySelector('#users-table tr[data-user="admin"]') !== null`, 20*time.Second, "the users page")
	// The role autoridade is named as the profile names it (authority.title).
	b.waitJS(`document.querySelector("#view-page").textContent.includes("Autoridade Julgadora de Posturas")`, 5*time.Second, "the profile's authority title")
	b.shot("14-users")

	// A tablet in portrait: the same map, the menu behind a button.
	b.resize(820, 1180)
	b.do(chromedp.Click(chromedp.CSS("#menu-btn")))
	b.waitJS(`document.querySelector("#app").classList.contains("menu-open")`, 5*time.Second, "the menu")
	time.Sleep(500 * time.Millisecond) // it slides in
	b.shot("15-tablet-menu")
	b.do(chromedp.Click(chromedp.CSS(`a[data-route="mapa"]`)))
	b.waitJS(`!document.querySelector("#view-mapa").hidden`, 5*time.Second, "the map on a tablet")
	time.Sleep(500 * time.Millisecond)
	b.shot("16-tablet-map")
	// The issued notice's process on the tablet: one column, the next act below the process.
	b.do(chromedp.Navigate(draftURL))
	b.waitJS(`document.querySelector("#case-deadline") !== null && document.querySelector('#act-form[data-act="defence"]') !== null`, 20*time.Second, "the process on a tablet")
	b.do(chromedp.ScrollIntoView(chromedp.CSS("#case")))
	time.Sleep(300 * time.Millisecond)
	b.shot("17-tablet-process")
	b.do(chromedp.ScrollIntoView(chromedp.CSS("#case-actions")))
	time.Sleep(300 * time.Millisecond)
	b.shot("18-tablet-next-act")

	t.Logf("issued: %s", title)
	b.checkConsole()
}

// TestDashboardWith500Vehicles measures (it asserts nothing about speed) how the map copes
// with 500 vehicles each sending a batch a second: frame times from requestAnimationFrame, long
// tasks and the JS heap. It runs only with TRENZINHO_BENCH=1; the figures go to the test log
// and to docs/benchmarks.md by hand. TRENZINHO_BENCH_VEHICLES sets another number of vehicles
// and TRENZINHO_BENCH_WINDOW the measured window (a Go duration; 30s by default).
func TestDashboardWith500Vehicles(t *testing.T) {
	if os.Getenv("TRENZINHO_BENCH") != "1" {
		t.Skip("benchmark: set TRENZINHO_BENCH=1")
	}
	vehicles := 500
	if v := os.Getenv("TRENZINHO_BENCH_VEHICLES"); v != "" {
		n, err := strconv.Atoi(v)
		if err != nil || n < 1 || n > 10000 {
			t.Fatalf("TRENZINHO_BENCH_VEHICLES=%q: want 1 to 10000", v)
		}
		vehicles = n
	}
	window := 30 * time.Second
	if v := os.Getenv("TRENZINHO_BENCH_WINDOW"); v != "" {
		d, err := time.ParseDuration(v)
		if err != nil || d < 5*time.Second {
			t.Fatalf("TRENZINHO_BENCH_WINDOW=%q: want a duration of 5s or more", v)
		}
		window = d
	}
	chrome := chromiumPath(t)
	bin := testenv.Build(t)
	broker := testenv.StartMosquitto(t, testenv.MosquittoOptions{})
	mon := startMonitor(t, bin, broker.URL())
	b := startDashBrowser(t, chrome, 1440, 900, chromedp.Flag("enable-precise-memory-info", true))
	b.do(chromedp.Navigate(mon.base + "/"))
	b.waitJS(`!document.querySelector("#login-view").hidden`, 20*time.Second, "the login page")
	b.do(chromedp.SendKeys(chromedp.CSS("#login-user"), "admin"),
		chromedp.SendKeys(chromedp.CSS("#login-password"), "segredo-de-teste"),
		chromedp.Click(chromedp.CSS("#login-submit")))
	b.waitJS(`document.querySelector("#conn").classList.contains("conn--live")`, 20*time.Second, "the live map")

	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	published := make(chan int, 1)
	go func() { published <- publishFleet(ctx, t, broker.URL(), vehicles) }()

	testenv.WaitFor(t, fmt.Sprintf("the monitor to know %d vehicles", vehicles), 90*time.Second, func() bool {
		known := 0
		for cursor := ""; ; { // pages of at most 1,000 vehicles
			var vs struct {
				Items []json.RawMessage
				Next  string `json:"next_cursor"`
			}
			mon.get(t, "/api/v1/vehicles?limit=1000&cursor="+cursor, &vs)
			if known += len(vs.Items); vs.Next == "" {
				break
			}
			cursor = vs.Next
		}
		return known >= vehicles
	})
	// Above 100 vehicles the map draws them on one canvas.
	b.waitJS(fmt.Sprintf(`document.querySelector(".vehicle-canvas") !== null && Number(document.querySelector("#veh-list").dataset.vehicles) >= %d`, vehicles), 60*time.Second, "every vehicle on the page")
	time.Sleep(5 * time.Second) // settle
	heapBefore := b.evalFloat(`performance.memory.usedJSHeapSize`)
	// CPU time of the page's main thread and a sampled JavaScript profile: on a machine shared
	// with other work the frame times measure the wait for a core, these the page's own work.
	b.do(chromedp.Func(func(ctx context.Context, _ *chromedp.Target) error {
		if _, err := chromedp.Call(ctx, performance.Enable, performance.EnableParams{}); err != nil {
			return err
		}
		if _, err := chromedp.Call(ctx, profiler.Enable, cdp.Empty{}); err != nil {
			return err
		}
		if _, err := chromedp.Call(ctx, profiler.SetSamplingInterval, profiler.SetSamplingIntervalParams{Interval: 1000}); err != nil {
			return err
		}
		_, err := chromedp.Call(ctx, profiler.Start, cdp.Empty{})
		return err
	}))
	cpu0 := b.threadTime()
	b.do(chromedp.Evaluate[chromedp.Void](`(() => {
		const s = window.__bench = { frames: [], long: [] };
		let last = performance.now();
		const tick = (now) => { s.frames.push(now - last); last = now; if (!s.stop) requestAnimationFrame(tick); };
		requestAnimationFrame(tick);
		new PerformanceObserver((l) => { for (const e of l.getEntries()) s.long.push(e.duration); }).observe({ type: "longtask" });
	})()`))
	// Interact while it runs: pan and zoom the map, as an agent would.
	deadline := time.Now().Add(window)
	for i := 0; time.Now().Before(deadline); i++ {
		dir := []string{"ArrowLeft", "ArrowUp", "ArrowRight", "ArrowDown"}[i%4]
		b.do(chromedp.Evaluate[chromedp.Void](fmt.Sprintf(`document.querySelector("#map").dispatchEvent(new KeyboardEvent("keydown", {key: %q, keyCode: %d, bubbles: true}))`,
			dir, map[string]int{"ArrowLeft": 37, "ArrowUp": 38, "ArrowRight": 39, "ArrowDown": 40}[dir])))
		time.Sleep(time.Second)
	}
	type benchResult struct {
		Frames []float64 `json:"frames"`
		Long   []float64 `json:"long"`
	}
	res, err := chromedp.Run(b.ctx, chromedp.Evaluate[benchResult](`(() => { window.__bench.stop = true; return window.__bench; })()`))
	if err != nil {
		t.Fatal(err)
	}
	cpu := b.threadTime() - cpu0
	var prof *profiler.Profile
	b.do(chromedp.Func(func(ctx context.Context, _ *chromedp.Target) (err error) {
		res, err := chromedp.Call(ctx, profiler.Stop, cdp.Empty{})
		prof = res.Profile
		return err
	}))
	heapAfter := b.evalFloat(`performance.memory.usedJSHeapSize`)
	cancel()
	n := <-published
	b.shot(fmt.Sprintf("bench-%d", vehicles))

	frames := res.Frames[1:]
	sort.Float64s(frames)
	pct := func(p float64) float64 { return frames[min(len(frames)-1, int(math.Ceil(p*float64(len(frames))))-1)] }
	var sum, longSum float64
	slow := 0
	for _, f := range frames {
		sum += f
		if f > 50 {
			slow++
		}
	}
	for _, l := range res.Long {
		longSum += l
	}
	// The list is virtual: its model counts the vehicles, the DOM holds only the rows in view.
	listed := b.evalFloat(`Number(document.querySelector("#veh-list").dataset.vehicles)`)
	rowsInDOM := b.evalFloat(`document.querySelectorAll("#veh-list li").length`)
	t.Logf("%d vehicles × 1 batch/s (%d batches published), %v window with panning:", vehicles, n, window)
	t.Logf("  vehicles on the page: %.0f (%.0f rows in the DOM); stream clients dropped by the monitor for falling behind: %s", listed, rowsInDOM, metric(t, mon.base, "trenzinho_monitor_stream_dropped_total"))
	t.Logf("  frames: %d (%.1f fps); frame time mean %.1f ms, p50 %.1f, p95 %.1f, p99 %.1f, max %.1f ms; frames > 50 ms: %d",
		len(frames), float64(len(frames))/window.Seconds(), sum/float64(len(frames)), pct(.5), pct(.95), pct(.99), frames[len(frames)-1], slow)
	t.Logf("  long tasks: %d, %.0f ms in total (%.1f%% of the window)", len(res.Long), longSum, 100*longSum/float64(window.Milliseconds()))
	t.Logf("  JS heap used: %.1f MB before, %.1f MB after", heapBefore/1e6, heapAfter/1e6)
	t.Logf("  page main thread CPU: %.2f s in the window (%.1f%% of a core)", cpu, 100*cpu/window.Seconds())
	logProfile(t, prof)
	b.checkConsole()
}

// threadTime is the CPU time of the page's main thread so far, in seconds (the DevTools
// Performance domain's ThreadTime).
func (b *dashBrowser) threadTime() float64 {
	var v float64
	b.do(chromedp.Func(func(ctx context.Context, _ *chromedp.Target) error {
		res, err := chromedp.Call(ctx, performance.GetMetrics, cdp.Empty{})
		for _, m := range res.Metrics {
			if m.Name == "ThreadTime" {
				v = m.Value
			}
		}
		return err
	}))
	return v
}

// logProfile logs where the sampled JavaScript profile's time went, by function (self time),
// and writes it to TRENZINHO_BENCH_CPUPROFILE when set (a .cpuprofile that DevTools opens).
func logProfile(t *testing.T, p *profiler.Profile) {
	if p == nil || len(p.Nodes) == 0 {
		return
	}
	hits := map[string]int64{}
	var total int64
	for _, n := range p.Nodes {
		f := n.CallFrame
		name := f.FunctionName
		if name == "" {
			name = "(anonymous)"
		}
		if f.URL != "" {
			name += " " + path.Base(f.URL) + ":" + strconv.Itoa(int(f.LineNumber)+1)
		}
		hits[name] += n.HitCount
		total += n.HitCount
	}
	names := make([]string, 0, len(hits))
	for k := range hits {
		names = append(names, k)
	}
	sort.Slice(names, func(i, j int) bool { return hits[names[i]] > hits[names[j]] })
	t.Logf("  JavaScript profile (main thread, 1 ms samples), self time by function:")
	for _, k := range names[:min(15, len(names))] {
		t.Logf("    %5.1f%%  %s", 100*float64(hits[k])/float64(total), k)
	}
	if out := os.Getenv("TRENZINHO_BENCH_CPUPROFILE"); out != "" {
		data, err := json.Marshal(p)
		if err == nil {
			err = os.WriteFile(out, data, 0o644)
		}
		if err != nil {
			t.Errorf("writing the profile: %v", err)
		}
	}
}

// metric reads one unlabelled value from the monitor's /metrics.
func metric(t *testing.T, base, name string) string {
	resp, err := http.Get(base + "/metrics")
	if err != nil {
		t.Errorf("metrics: %v", err)
		return "?"
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	for _, line := range strings.Split(string(b), "\n") {
		if v, ok := strings.CutPrefix(line, name+" "); ok {
			return v
		}
	}
	return "?"
}

// publishFleet publishes one batch a second for each of n synthetic vehicles driving circles
// around Piúma (every 25th speeding), until ctx ends; it returns how many it published. The
// vehicles send at evenly spread phases, as independent bridges do, not all in the same
// millisecond.
func publishFleet(ctx context.Context, t *testing.T, url string, n int) int {
	o := mqtt.NewClientOptions().AddBroker(url).SetClientID("bench-fleet").SetAutoReconnect(true)
	c := mqtt.NewClient(o)
	if tok := c.Connect(); tok.Wait() && tok.Error() != nil {
		t.Errorf("bench publisher: %v", tok.Error())
		return 0
	}
	defer c.Disconnect(250)
	// Device time: a Friday afternoon (service hours), advancing with the clock.
	base := time.Date(2026, 11, 27, 15, 0, 0, 0, time.UTC)
	start := time.Now()
	interval := time.Second / time.Duration(n)
	next := start
	count := 0
	for seq := uint64(1); ; seq++ {
		for i := range n {
			next = next.Add(interval)
			select {
			case <-ctx.Done():
				return count
			case <-time.After(time.Until(next)):
			}
			now := base.Add(time.Since(start)).Truncate(time.Millisecond)
			speed := 20.0
			if i%25 == 0 {
				speed = 45
			}
			// Circles of 150–350 m around the points of a grid over the town.
			cx := -40.745 + float64(i%25)*0.0012
			cy := -20.848 + float64(i/25)*0.0011
			r := 0.0015 + float64(i%5)*0.0005
			w := speed / 3.6 / (r * 111000)
			a := float64(i) + w*now.Sub(base).Seconds()
			lat, lon := cy+r*math.Sin(a), cx+r*math.Cos(a)/math.Cos(cy*math.Pi/180)
			course := math.Mod(math.Mod(-a*180/math.Pi, 360)+360, 360) // counter-clockwise: heading = -angle
			if course >= 360 {
				course = 0
			}
			hdop, sats, db := 0.9, 9, 62.0+float64(i%10)
			batch := &wire.Batch{V: 1, Vehicle: fmt.Sprintf("B%03d", i+1), Epoch: "e-bench", Seq: seq, SentAt: wire.NewTime(now), Clock: wire.ClockGPS,
				GPS:   []wire.GPS{{T: wire.NewTime(now), Lat: lat, Lon: lon, SpeedKmh: &speed, CourseDeg: &course, HDOP: &hdop, Sats: &sats, Fix: "3d"}},
				Tacho: []wire.Tacho{{T: wire.NewTime(now), SpeedKmh: &speed}},
				Sound: []wire.Sound{{T: wire.NewTime(now), LAeqDB: &db}}}
			payload, err := wire.Encode(batch, nil)
			if err != nil {
				t.Errorf("encode: %v", err)
				return count
			}
			c.Publish(wire.TelemetryTopic(batch.Vehicle), 1, false, payload)
			count++
		}
	}
}

// dashBrowser is a headless Chromium tab with its console watched.
type dashBrowser struct {
	t     *testing.T
	ctx   context.Context
	dir   string
	mu    sync.Mutex
	msgs  []string
	shots []string
	// expected are console errors a step provokes on purpose (allowConsole).
	expected []*regexp.Regexp
}

// allowConsole accepts console errors matching pattern: Chromium logs every 4xx answer to a
// fetch as "Failed to load resource", so a step that shows the API refusing an edit (a 422
// with its field problems) names the one refusal it expects.
func (b *dashBrowser) allowConsole(pattern string) {
	b.mu.Lock()
	defer b.mu.Unlock()
	b.expected = append(b.expected, regexp.MustCompile(pattern))
}

// chromiumPath finds Debian's chromium: a missing browser fails the test in CI and skips it
// elsewhere.
func chromiumPath(t *testing.T) string {
	t.Helper()
	for _, p := range []string{os.Getenv("TRENZINHO_CHROMIUM"), "/usr/bin/chromium", "/usr/bin/chromium-browser"} {
		if p == "" {
			continue
		}
		if _, err := os.Stat(p); err == nil {
			return p
		}
	}
	if p, err := exec.LookPath("chromium"); err == nil {
		return p
	}
	testenv.Missing(t, "chromium not found (Debian package chromium)")
	return ""
}

// artifactsDir is where the screenshots go: $TRENZINHO_ARTIFACTS/<test>, else a temporary
// directory.
func artifactsDir(t *testing.T) string {
	dir := t.TempDir()
	if root := os.Getenv("TRENZINHO_ARTIFACTS"); root != "" {
		if !filepath.IsAbs(root) {
			root = filepath.Join(testenv.RepoRoot(t), root)
		}
		dir = filepath.Join(root, t.Name())
		if err := os.MkdirAll(dir, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	return dir
}

func startDashBrowser(t *testing.T, chrome string, width, height int, extra ...chromedp.ExecAllocatorOption) *dashBrowser {
	t.Helper()
	opts := append([]chromedp.ExecAllocatorOption{
		chromedp.ExecPath(chrome),
		chromedp.Headless,
		chromedp.NoSandbox,
		chromedp.DisableGPU,
		chromedp.NoFirstRun,
		chromedp.Flag("disable-background-networking", true),
		chromedp.Flag("disable-component-update", true),
		chromedp.Flag("disable-sync", true),
		chromedp.Flag("disable-dev-shm-usage", true),
		chromedp.Flag("password-store", "basic"),
		chromedp.Flag("lang", "pt-BR"),
		chromedp.UserDataDir(t.TempDir()),
		chromedp.WindowSize(width, height),
	}, extra...)
	allocCtx, cancelAlloc := chromedp.NewExecAllocator(context.Background(), opts...)
	ctx, cancel := chromedp.NewContext(allocCtx)
	b := &dashBrowser{t: t, ctx: ctx, dir: artifactsDir(t)}
	messages := chromedp.Console(ctx) // subscribes now: nothing the page says is lost
	go func() {
		for m, err := range messages {
			if err != nil {
				return
			}
			if m.Type == chromedp.ConsoleError || m.IsException() {
				where := ""
				if m.URL != "" {
					where = fmt.Sprintf(" (%s:%d)", m.URL, m.Line+1)
				}
				b.mu.Lock()
				b.msgs = append(b.msgs, m.String()+where)
				b.mu.Unlock()
			}
		}
	}()
	t.Cleanup(func() {
		cancel()
		cancelAlloc()
		t.Logf("screenshots in %s: %s", b.dir, strings.Join(b.shots, ", "))
	})
	if err := chromedp.Do(ctx, chromedp.EmulateViewport(int64(width), int64(height))); err != nil {
		t.Fatalf("start chromium: %v", err)
	}
	return b
}

func (b *dashBrowser) do(steps ...chromedp.Action[chromedp.Void]) {
	b.t.Helper()
	ctx, cancel := context.WithTimeout(b.ctx, 30*time.Second)
	defer cancel()
	if err := chromedp.Do(ctx, steps...); err != nil {
		b.shot("failed")
		b.t.Fatalf("browser: %v%s", err, b.consoleSoFar())
	}
}

// shiftClock makes the page's clock run offset ahead of the real one (behind, if negative) in
// every document loaded from now on: Date.now, new Date() and Date() read the shifted time
// before the page's own scripts run.
func (b *dashBrowser) shiftClock(offset time.Duration) {
	b.t.Helper()
	src := fmt.Sprintf(`(() => {
  const offset = %d, Real = Date;
  const now = () => Real.now() + offset;
  globalThis.Date = new Proxy(Real, {
    construct: (target, args, newTarget) => Reflect.construct(target, args.length ? args : [now()], newTarget),
    apply: () => new Real(now()).toString(),
    get: (target, prop, receiver) => (prop === "now" ? now : Reflect.get(target, prop, receiver)),
  });
})();`, offset.Milliseconds())
	b.do(chromedp.Func(func(ctx context.Context, tg *chromedp.Target) error {
		_, err := cdp.Call(ctx, tg, page.AddScriptToEvaluateOnNewDocument, page.AddScriptToEvaluateOnNewDocumentParams{Source: src})
		return err
	}))
}

func (b *dashBrowser) resize(width, height int) {
	b.t.Helper()
	b.do(chromedp.EmulateViewport(int64(width), int64(height)))
	time.Sleep(500 * time.Millisecond) // the sidebar slides away
}

// waitJS polls a JavaScript expression until it is true.
func (b *dashBrowser) waitJS(expr string, timeout time.Duration, what string) {
	b.t.Helper()
	deadline := time.Now().Add(timeout)
	var lastErr error
	for time.Now().Before(deadline) {
		ctx, cancel := context.WithTimeout(b.ctx, 10*time.Second)
		ok, err := chromedp.Run(ctx, chromedp.Evaluate[bool]("!!("+expr+")"))
		cancel()
		if err == nil && ok {
			return
		}
		lastErr = err
		time.Sleep(200 * time.Millisecond)
	}
	b.shot("timeout")
	b.t.Fatalf("waiting for %s: not after %v (%v)%s", what, timeout, lastErr, b.consoleSoFar())
}

func (b *dashBrowser) text(sel string) string {
	b.t.Helper()
	s, err := chromedp.Run(b.ctx, chromedp.Evaluate[string](fmt.Sprintf(`document.querySelector(%q).textContent`, sel)))
	if err != nil {
		b.t.Fatalf("text of %s: %v", sel, err)
	}
	return s
}

func (b *dashBrowser) evalFloat(expr string) float64 {
	b.t.Helper()
	v, err := chromedp.Run(b.ctx, chromedp.Evaluate[float64](expr))
	if err != nil {
		b.t.Fatalf("%s: %v", expr, err)
	}
	return v
}

type markerPos struct{ Lat, Lon, Transform string }

func (b *dashBrowser) markerPosition(marker string) markerPos {
	b.t.Helper()
	p, err := chromedp.Run(b.ctx, chromedp.Evaluate[markerPos](fmt.Sprintf(
		`(() => { const m = %s; return {Lat: m.dataset.lat, Lon: m.dataset.lon, Transform: m.style.transform}; })()`, marker)))
	if err != nil {
		b.t.Fatalf("marker position: %v", err)
	}
	return p
}

var shotName = regexp.MustCompile(`[^a-z0-9-]+`)

// shot saves a PNG of the viewport as a test artefact.
func (b *dashBrowser) shot(name string) {
	ctx, cancel := context.WithTimeout(b.ctx, 20*time.Second)
	defer cancel()
	png, err := chromedp.Run(ctx, chromedp.CaptureScreenshot())
	if err != nil {
		b.t.Logf("screenshot %s: %v", name, err)
		return
	}
	file := filepath.Join(b.dir, shotName.ReplaceAllString(name, "-")+".png")
	if err := os.WriteFile(file, png, 0o644); err != nil {
		b.t.Logf("screenshot %s: %v", name, err)
		return
	}
	b.shots = append(b.shots, filepath.Base(file))
}

func (b *dashBrowser) consoleSoFar() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	if len(b.msgs) == 0 {
		return ""
	}
	return "\nbrowser console:\n  " + strings.Join(b.msgs, "\n  ")
}

// checkConsole fails the test for every error-level console message and uncaught exception.
func (b *dashBrowser) checkConsole() {
	b.t.Helper()
	time.Sleep(300 * time.Millisecond) // let the last events arrive
	b.mu.Lock()
	defer b.mu.Unlock()
	for _, m := range b.msgs {
		if slices.ContainsFunc(b.expected, func(re *regexp.Regexp) bool { return re.MatchString(m) }) {
			b.t.Logf("browser console (expected): %s", m)
			continue
		}
		b.t.Errorf("browser console: %s", m)
	}
}

// issuableEnv is the monitor's environment under which a draft of DASH-001 can be issued: a
// registry with DASH-001 of a licensee on file (razão social, CNPJ, address) and its tachograph
// verified (a speed auto needs it), and the Piúma profile with its UFMP value confirmed.
// yesterdayNoon is 12:00 in Piúma on the local day before now's: a time within the service hours
// on any day of the week, holidays included, that the dashboard's default periods (the last
// seven local days) always include.
func yesterdayNoon(t *testing.T, now time.Time) time.Time {
	t.Helper()
	sp := piumaZone(t)
	y, m, d := now.In(sp).Date()
	return time.Date(y, m, d-1, 12, 0, 0, 0, sp)
}

// piumaZone is Piúma's time zone.
func piumaZone(t *testing.T) *time.Location {
	t.Helper()
	sp, err := time.LoadLocation("America/Sao_Paulo")
	if err != nil {
		t.Fatal(err)
	}
	return sp
}

func issuableEnv(t *testing.T) []string {
	t.Helper()
	dir := t.TempDir()
	reg := filepath.Join(dir, "registry.yaml")
	if err := os.WriteFile(reg, []byte(`licensees:
  - id: LT
    razao_social: Trenzinho Alegria da Orla Ltda
    cnpj: 11.222.333/0001-81
    address: Avenida Beira-Mar, 1000, Centro, Piúma-ES (endereço fictício)
vehicles:
  - id: DASH-001
    plate: ABC1D23
    licensee: LT
    manufacture_year: 2020
    devices:
      - kind: tachograph
        serial: VDO-DASH-0001
        model: VDO MTCO 1390
        inmetro_verification: `+time.Now().AddDate(0, -6, 0).Format(time.DateOnly)+`
        valid_until: `+time.Now().AddDate(1, 6, 0).Format(time.DateOnly)+`
`), 0o600); err != nil {
		t.Fatal(err)
	}
	return []string{"TRENZINHO_REGISTRY=" + reg, "TRENZINHO_PROFILE=" + issuingProfile(t)}
}

// issuingProfile is the path of the Piúma profile as one that issues autos must be: its UFMP
// value confirmed, its acts of competence named, its holidays confirmed.
func issuingProfile(t *testing.T) string {
	t.Helper()
	prof, err := os.ReadFile(filepath.Join(testenv.RepoRoot(t), "profiles", "piuma.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	confirmed := testenv.CompetenceYAML(strings.Replace(string(prof), "  confirmed_by: \"\"\n  act: \"\"", "  confirmed_by: Secretaria Municipal de Fazenda (teste)\n  act: Decreto nº 999/2025 (teste)", 1))
	if confirmed == string(prof) {
		t.Fatal("piuma.yaml has no empty fiscal_unit.confirmed_by and act")
	}
	path := filepath.Join(t.TempDir(), "piuma.yaml")
	if err := os.WriteFile(path, []byte(confirmed), 0o600); err != nil {
		t.Fatal(err)
	}
	return path
}
