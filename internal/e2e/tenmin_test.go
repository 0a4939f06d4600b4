package e2e

import (
	"context"
	"crypto/ed25519"
	"crypto/rand"
	"crypto/x509"
	"encoding/base64"
	"encoding/pem"
	"fmt"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"

	"github.com/trenzinho/trenzinho/firmware-bridge/sim"
	"github.com/trenzinho/trenzinho/internal/testkit/demo"
	"github.com/trenzinho/trenzinho/internal/testkit/testenv"
	"github.com/trenzinho/trenzinho/monitor/notice"
)

// tenMinSpeedUp plays the demonstration day ten times faster: the loud detour at 03:00 comes
// 18 s after the start.
const tenMinSpeedUp = 10

// TestProcessInTenMinutes walks README's "The process in ten minutes" through headless
// Chromium against `make run`'s own configuration (internal/testkit/demo: the demonstration profile,
// geofences, registry, users, the short verification wait and the public URL; the bridges pin
// the monitor's key, so their coaches warn), the scripted day played ten times faster through
// the real simulator, bridges, Mosquitto and monitor, and
// the drafter's settle and verification wait scaled alike (150 s → 15 s). Each step of the
// README is one helper below. Every PDF the process produces — the auto as the fiscal and as
// the licensee download it, the defence's receipt, the auto after the decision — carries the
// demonstration label on every page, and the public verification page shows the auto.
func TestProcessInTenMinutes(t *testing.T) {
	if os.Getenv("TRENZINHO_ARTIFACTS") == "" {
		t.Setenv("TRENZINHO_ARTIFACTS", "test-artifacts")
	}
	chrome := chromiumPath(t)
	bin := testenv.Build(t)
	broker := testenv.StartMosquitto(t, testenv.MosquittoOptions{})
	w := startTenMinutes(t, bin, broker.URL())
	w.b = startDashBrowser(t, chrome, 1280, 900)

	w.verifyTheLoudEpisode()   // 1–2
	w.reviewAndIssueItsDraft() // 3
	w.notifyElectronically()   // 4
	w.takeCiencia()            // 5
	w.fileADefence()           // 6
	w.decide()                 // 7
	w.openThePublicPage()      // 8
	for name, pages := range w.pdfs {
		t.Logf("%s: %d page(s), each labelled %q", name, pages, notice.DemonstrationLabel)
	}
	w.b.checkConsole()
}

// tenMinutes is the walk's state: the monitor, the browser and what each step found.
type tenMinutes struct {
	t       *testing.T
	b       *dashBrowser
	base    string // the dashboard, as `make run` prints it
	admin   *monitorClient
	episode string // the loud episode's id
	draft   string // its draft's id
	caseID  int64  // its case
	notice  string // AI-…
	public  string // the public verification URL printed on the auto
	pdfs    map[string]int
	start   time.Time // when the monitor was started
}

// startTenMinutes starts the monitor as `make run` does (demo.Files.MonitorEnv, its registry
// and users), on a port chosen first so that the public URL is its own, and the scripted day.
func startTenMinutes(t *testing.T, bin, mqttURL string) *tenMinutes {
	// At 00:30 in Piúma, at least an hour ago, as TestDemoDayOpensExactlyTheScriptedEpisodes:
	// the day at ten times its pace stays in the past (a receiver refuses readings from the
	// future), and the sites open by day (the library on PIU-002's loop) are closed, so that the
	// loud detour opens exactly the script's episodes.
	now := time.Now().In(piumaZone(t))
	start := time.Date(now.Year(), now.Month(), now.Day(), 0, 30, 0, 0, now.Location())
	if start.After(now.Add(-time.Hour)) {
		start = start.AddDate(0, 0, -1)
	}
	start = start.UTC()
	files, err := demo.Write(t.TempDir(), start)
	if err != nil {
		t.Fatal(err)
	}
	// The monitor's signing key, which the bridges pin as make run's do (internal/localrun), so
	// that their coaches apply its bundle and warn: the draft states the driver was warned.
	pub, priv, err := ed25519.GenerateKey(rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	der, err := x509.MarshalPKCS8PrivateKey(priv)
	if err != nil {
		t.Fatal(err)
	}
	keyPath := filepath.Join(t.TempDir(), "monitor-signing.key")
	if err := os.WriteFile(keyPath, pem.EncodeToMemory(&pem.Block{Type: "PRIVATE KEY", Bytes: der}), 0o600); err != nil {
		t.Fatal(err)
	}
	t0 := time.Now()
	port := testenv.FreePort(t)
	base := fmt.Sprintf("http://127.0.0.1:%d", port)
	env := append([]string{
		"TRENZINHO_MQTT_URL=" + mqttURL,
		"TRENZINHO_DB=" + filepath.Join(t.TempDir(), "monitor.db"),
		"TRENZINHO_LISTEN=" + strings.TrimPrefix(base, "http://"),
		"TRENZINHO_ADMIN_USER=admin", "TRENZINHO_ADMIN_PASSWORD=segredo-de-teste",
		"TRENZINHO_MONITOR_CLIENT_ID=monitor-" + t.Name(),
		"TRENZINHO_REGISTRY=" + files.Registry,
		"TRENZINHO_SIGNING_KEY=" + keyPath,
		maxAgeEnv,
	}, files.MonitorEnv(base)...)
	// The scenario clock runs ten times faster: so do the drafter's waits (a later setting wins).
	env = append(env, "TRENZINHO_DRAFT_SETTLE="+(150*time.Second/tenMinSpeedUp).String(),
		"TRENZINHO_DRAFT_VERIFICATION_WAIT="+(demo.VerificationWait/tenMinSpeedUp).String())
	m := &testenv.Monitor{Process: testenv.StartProcess(t, "monitor", env, filepath.Join(bin, "monitor")), URL: base}
	m.WaitListening(t)
	admin := &monitorClient{base: base, token: m.Login(t)}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	if err := demo.EnsureUsers(ctx, http.DefaultClient, base, admin.token); err != nil {
		t.Fatal(err)
	}
	var cfg struct {
		VerificationWaitS float64 `json:"verification_wait_s"`
		Demonstration     string  `json:"demonstration"`
		ElectronicNotice  bool    `json:"electronic_notice"`
	}
	admin.get(t, "/api/v1/config", &cfg)
	if cfg.Demonstration != notice.DemonstrationLabel || !cfg.ElectronicNotice || cfg.VerificationWaitS != demo.VerificationWait.Seconds()/tenMinSpeedUp {
		t.Fatalf("the demonstration's config: %+v", cfg)
	}

	// The day, up to a while after the loud detour (03:00 + 143 s).
	day := 8 * time.Minute
	s := startSimulation(t, bin, "--scenario=demo", "--vehicles=3", fmt.Sprintf("--speed-up=%d", tenMinSpeedUp),
		"--start="+start.Format(time.RFC3339), "--duration="+day.String())
	for _, v := range sim.Demo() {
		d := s.devices[v.ID]
		startBridge(t, bin, mqttURL, v.ID, d, "--service-input", d["service"], "--door-input", d["door"],
			"--config-key", base64.StdEncoding.EncodeToString(pub), "--coach-listen", fmt.Sprintf("127.0.0.1:%d", testenv.FreePort(t)),
			"--batch-interval", fmt.Sprintf("%dms", 1000/tenMinSpeedUp))
	}
	return &tenMinutes{t: t, base: base, admin: admin, pdfs: map[string]int{}, start: t0}
}

// login signs user in through the login form (after signing out whoever was in).
func (w *tenMinutes) login(user string) {
	w.t.Helper()
	b := w.b
	b.do(chromedp.Navigate(w.base + "/"))
	b.waitJS(`!document.querySelector("#login-view").hidden || !document.querySelector("#app").hidden`, 20*time.Second, "the page")
	if b.evalBool(`document.querySelector("#login-view").hidden`) {
		b.do(chromedp.Evaluate[chromedp.Void](`document.querySelector("#logout").click()`))
		b.waitJS(`!document.querySelector("#login-view").hidden`, 20*time.Second, "the login page after signing out")
	}
	b.do(chromedp.SendKeys(chromedp.CSS("#login-user"), user), chromedp.SendKeys(chromedp.CSS("#login-password"), demo.Password),
		chromedp.Click(chromedp.CSS("#login-submit")))
	b.waitJS(`!document.querySelector("#app").hidden && document.querySelector("#user-name").textContent === `+jsString(user),
		20*time.Second, user+" signed in")
}

// verifyTheLoudEpisode: the fiscal opens the Alertas page, finds PIU-002's music near the Pronto
// Atendimento, opens it and records, as "Constatação em campo", that the music was audible.
func (w *tenMinutes) verifyTheLoudEpisode() {
	w.t.Helper()
	b := w.b
	w.login("fiscal")
	// The detour's music stops at 03:00 + 143 s of the day: about 20 s after the start here. The
	// agent verifies it once it is over (Encerrado).
	testenv.WaitFor(w.t, "PIU-002's music near the Pronto Atendimento, over", 2*time.Minute, func() bool {
		for _, e := range w.admin.episodes(w.t, "vehicle=PIU-002&limit=100") {
			if e.Rule == "sensitive_zone_sound" && e.End != nil {
				w.episode = e.ID
				return true
			}
		}
		return false
	})
	b.do(chromedp.Navigate(w.base + "/#/alertas"))
	row := `#alerts-table tr[data-episode=` + jsString(w.episode) + `]`
	b.waitJS(`document.querySelector(`+jsString(row)+`) !== null`, 20*time.Second, "the loud episode on the Alertas page")
	w.t.Logf("the loud episode: %s (%v after the monitor started)", w.episode, time.Since(w.start).Round(time.Second))
	b.shot("01-alertas")
	b.do(chromedp.Click(chromedp.CSS(row + " a")))
	b.waitJS(`document.querySelector("#verification") !== null`, 20*time.Second, "the episode's verification card")
	b.shot("02-episodio")
	b.do(chromedp.Click(chromedp.CSS(`#verification a[href^="#/constatar/"]`)))
	b.waitJS(`document.querySelector("#field-form") !== null`, 10*time.Second, "the constatação form")
	b.do(chromedp.Click(chromedp.CSS(`#field-form input[name="music"][value="sim"]`)),
		chromedp.SendKeys(chromedp.CSS("#field-note"), "Música alta no sistema de som do PIU-002, ouvida da calçada em frente ao Pronto Atendimento."),
		chromedp.Click(chromedp.CSS("#field-submit")))
	b.waitJS(`(document.querySelector("#field-status") || {}).dataset?.state === "sent"`, 20*time.Second, "the constatação sent")
	b.shot("03-constatacao")
}

// reviewAndIssueItsDraft: the draft of the verified music reaches the Revisão queue (after the
// settle and the verification wait); the fiscal opens it, downloads its PDF and issues it.
func (w *tenMinutes) reviewAndIssueItsDraft() {
	w.t.Helper()
	b := w.b
	b.do(chromedp.Navigate(w.base + "/#/revisao"))
	row := `[...document.querySelectorAll("#drafts-table tr[data-draft]")].find((r) => r.textContent.includes("PIU-002") && r.textContent.includes("Emissão sonora próxima"))`
	deadline := time.Now().Add(2 * time.Minute)
	for !b.evalBool(row + ` !== undefined`) {
		if time.Now().After(deadline) {
			b.shot("no-draft")
			w.t.Fatalf("no draft of PIU-002's music in the review queue after 2 min")
		}
		time.Sleep(time.Second)
		b.do(chromedp.Reload())
		b.waitJS(`document.querySelector("#drafts-table") !== null || document.querySelector("#view-page").textContent.includes("Nenhuma")`, 20*time.Second, "the review queue")
	}
	w.draft = b.evalString(row + `.dataset.draft`)
	w.t.Logf("its draft: %s (%v after the monitor started)", w.draft, time.Since(w.start).Round(time.Second))
	b.shot("04-revisao")
	b.do(chromedp.Evaluate[chromedp.Void](row + `.querySelector("a").click()`))
	b.waitJS(`document.querySelector("#decision") !== null && document.querySelector("#integrity").textContent.includes("Integridade verificada")`,
		20*time.Second, "the draft with its integrity")
	if facts := b.text("#main"); !strings.Contains(facts, "foi alertado pelo sistema embarcado") {
		w.t.Errorf("the draft does not say the coach warned the driver:\n%s", facts)
	}
	w.pdf("minuta", "/api/v1/drafts/"+w.draft+"/pdf")
	b.waitJS(`document.querySelector("#issue-btn") !== null && !document.querySelector("#issue-btn").disabled`, 10*time.Second, "Emitir enabled")
	b.do(chromedp.SendKeys(chromedp.CSS(`#decision textarea`), "Conferido com as evidências e a constatação em campo."),
		chromedp.Click(chromedp.CSS("#issue-btn")))
	b.waitJS(`document.querySelector("dialog[open] #confirm-yes") !== null`, 5*time.Second, "the confirmation dialog")
	b.do(chromedp.Click(chromedp.CSS("#confirm-yes")))
	b.waitJS(`/AI-\d{4}\/\d{4}/.test(document.querySelector("#draft-title").textContent)`, 20*time.Second, "the issued auto")
	w.notice = regexp.MustCompile(`AI-\d{4}/\d+`).FindString(b.text("#draft-title"))
	b.shot("05-emitido")
	text := w.pdf("auto-emitido", "/api/v1/drafts/"+w.draft+"/pdf")
	w.public = regexp.MustCompile(`https?://\S+/v/[A-Za-z0-9-]+`).FindString(text)
	if !strings.HasPrefix(w.public, w.base+"/v/") {
		w.t.Errorf("the issued auto prints the public page %q, want %s/v/…", w.public, w.base)
	}
}

// notifyElectronically: the demonstration profile adopts the electronic notice, so the fiscal
// records nothing: the case page says the auto waits for the licensee's ciência in the portal.
func (w *tenMinutes) notifyElectronically() {
	w.t.Helper()
	b := w.b
	b.waitJS(`document.querySelector("#case-electronic") !== null`, 20*time.Second, "the electronic notice on the case page")
	w.t.Logf("case page: %s", b.text("#case-electronic"))
	b.shot("06-notificacao-eletronica")
	var cases struct {
		Items []struct {
			ID      int64  `json:"id"`
			Notice  string `json:"notice"`
			DraftID string `json:"draft_id"`
			State   string `json:"state"`
		} `json:"items"`
	}
	w.admin.get(w.t, "/api/v1/cases?limit=50", &cases)
	for _, c := range cases.Items {
		if c.DraftID == w.draft {
			w.caseID = c.ID
			if c.State != "issued" {
				w.t.Errorf("case %s is %q before the ciência, want issued", c.Notice, c.State)
			}
		}
	}
	if w.caseID == 0 {
		w.t.Fatalf("no case of draft %s in %+v", w.draft, cases.Items)
	}
}

// takeCiencia: alegria, L1's representative, signs in to the portal, finds the auto "aguardando
// sua ciência" and opens it — which delivers nothing —, is told to download the PDF before
// declaring ciência, downloads it, ticks the declaration and presses "Declaro ciência": the
// auto is notified.
func (w *tenMinutes) takeCiencia() {
	w.t.Helper()
	b := w.b
	w.login("alegria")
	b.do(chromedp.Click(chromedp.CSS(`a[data-route="autos"]`)))
	b.waitJS(`document.querySelector("#portal-cases tbody a") !== null`, 20*time.Second, "the portal's autos")
	if list := b.text("#portal-cases"); !strings.Contains(list, w.notice) || !strings.Contains(list, "aguardando sua ciência") {
		w.t.Errorf("the portal's list before the ciência:\n%s", list)
	}
	b.shot("07-portal-aguardando")
	b.do(chromedp.Click(chromedp.CSS(`#portal-cases tbody a`)))
	b.waitJS(`document.querySelector("#ciencia-submit") !== null`, 20*time.Second, "the auto in the portal, with Declaro ciência")
	w.waitCase("issued")
	b.allowConsole(`409 \(Conflict\) \(http://[^ ]+/api/v1/portal/cases/\d+/ciencia`)
	b.do(chromedp.Click(chromedp.CSS("#ciencia-declaro")), chromedp.Click(chromedp.CSS("#ciencia-submit")))
	b.waitJS(`document.querySelector("#portal-ciencia .form-error").textContent.includes("Baixe o PDF")`, 20*time.Second, "the refusal before the PDF")
	w.pdf("auto-portal", fmt.Sprintf("/api/v1/portal/cases/%d/pdf", w.caseID))
	b.do(chromedp.Click(chromedp.CSS("#ciencia-submit")))
	b.waitJS(`document.querySelector("#ciencia-submit") === null && document.querySelector("#portal-case-facts").textContent.includes("Notificado em")`,
		20*time.Second, "the auto notified in the portal")
	b.shot("08-portal-ciencia")
	w.waitCase("notified")
}

// fileADefence: still in the portal, alegria files the defence with a PDF attached and gets
// its protocolo and receipt.
func (w *tenMinutes) fileADefence() {
	w.t.Helper()
	b := w.b
	b.do(chromedp.Reload())
	b.waitJS(`document.querySelector("#filing-form") !== null`, 20*time.Second, "the defence form")
	attachment := filepath.Join(w.t.TempDir(), "fotos-do-ponto.pdf")
	if err := os.WriteFile(attachment, minimalPDF, 0o600); err != nil {
		w.t.Fatal(err)
	}
	b.do(chromedp.SendKeys(chromedp.CSS("#filing-text"), "O som estava dentro do limite e o veículo seguia o itinerário autorizado."),
		chromedp.SetUploadFiles(`#filing-files`, []string{attachment}),
		chromedp.Click(chromedp.CSS(`#filing-form button[type="submit"]`)))
	b.waitJS(`document.querySelector("#main").textContent.includes("protocolo PROT-")`, 20*time.Second, "the filing's protocolo")
	b.shot("09-defesa")
	b.waitJS(`document.querySelector('a[href^="/api/v1/portal/filings/"]') !== null`, 20*time.Second, "the receipt's link")
	w.pdf("comprovante-defesa", b.evalString(`document.querySelector('a[href^="/api/v1/portal/filings/"]').getAttribute("href")`))
	w.waitCase("defence_filed")
}

// decide: autoridade signs in, opens the auto from Autos and records the decision.
func (w *tenMinutes) decide() {
	w.t.Helper()
	b := w.b
	w.login("autoridade")
	b.do(chromedp.Click(chromedp.CSS(`a[data-route="autos"]`)))
	link := `[...document.querySelectorAll("#cases-table a")].find((a) => a.textContent.includes(` + jsString(w.notice) + `))`
	b.waitJS(link+` !== undefined`, 20*time.Second, "the auto in Autos")
	b.do(chromedp.Evaluate[chromedp.Void](link + `.click()`))
	b.waitJS(`document.querySelector('#case-actions button[data-act="decide"]') !== null`, 20*time.Second, "Registrar decisão")
	b.do(chromedp.Click(chromedp.CSS(`#case-actions button[data-act="decide"]`)))
	b.waitJS(`document.querySelector('#act-form[data-act="decide"]') !== null`, 5*time.Second, "the decision form")
	// A structured decision: relatório, fundamentação answering the defence, dispositivo.
	b.do(chromedp.SendKeys(chromedp.CSS("#act-report"), "Auto por emissão sonora junto ao Pronto Atendimento; a defesa alega som dentro do limite e itinerário autorizado."),
		chromedp.SendKeys(chromedp.CSS("#act-grounds"), "A telemetria e a constatação do agente comprovam a emissão sonora junto ao Pronto Atendimento; o itinerário autorizado não afasta a infração."),
		chromedp.SendKeys(chromedp.CSS("#act-text"), "Defesa indeferida; multa confirmada."),
		chromedp.ScrollIntoView(chromedp.CSS("#act-submit")))
	time.Sleep(300 * time.Millisecond) // the smooth scroll ends
	b.do(chromedp.Click(chromedp.CSS("#act-submit")))
	b.waitJS(`document.querySelector("dialog[open] #confirm-yes") !== null || document.querySelector("#act-error").textContent !== ""`, 5*time.Second, "the decision's confirmation")
	if msg := b.text("#act-error"); msg != "" {
		b.shot("decision-refused")
		w.t.Fatalf("the decision is refused: %s", msg)
	}
	b.do(chromedp.Click(chromedp.CSS("#confirm-yes")))
	b.waitJS(`document.querySelector('#case-timeline li[data-action="decide"]') !== null`, 20*time.Second, "the decision in the timeline")
	b.shot("10-decisao")
	w.pdf("auto-decidido", "/api/v1/drafts/"+w.draft+"/pdf")
	// The decision's own document, linked from the process.
	b.waitJS(`document.querySelector("#case-decisions a[href$='/pdf']") !== null`, 20*time.Second, "the decision's document")
	decision := strings.Join(strings.Fields(w.pdf("decisao", b.evalString(`document.querySelector("#case-decisions a[href$='/pdf']").getAttribute("href")`))), " ")
	for _, want := range []string{"Decisão sobre a defesa", w.notice, "Relatório", "Fundamentação", "Dispositivo", "Defesa indeferida; multa confirmada.", "Aurora Reis"} {
		if !strings.Contains(decision, want) {
			w.t.Errorf("the decision's document lacks %q:\n%s", want, decision)
		}
	}
	w.waitCase("defence_rejected", "confirmed")
}

// openThePublicPage: anyone opens the link printed on the auto (its QR code) and sees it, its
// seal checked and the demonstration's label.
func (w *tenMinutes) openThePublicPage() {
	w.t.Helper()
	b := w.b
	if w.public == "" {
		w.t.Fatal("no public verification URL on the auto")
	}
	b.do(chromedp.Navigate(w.public))
	b.waitJS(`document.querySelector("h1") !== null`, 20*time.Second, "the public page")
	b.shot("11-verificacao-publica")
	page := b.text("body")
	for _, want := range []string{w.notice, "Selo íntegro", notice.DemonstrationLabel} {
		if !strings.Contains(page, want) {
			w.t.Errorf("the public page lacks %q:\n%s", want, page)
		}
	}
}

// waitCase waits for the case to reach one of states (the API, as the admin).
func (w *tenMinutes) waitCase(states ...string) {
	w.t.Helper()
	var c struct {
		State string `json:"state"`
	}
	deadline := time.Now().Add(20 * time.Second)
	for {
		w.admin.get(w.t, "/api/v1/cases/"+strconv.FormatInt(w.caseID, 10), &c)
		if slices.Contains(states, c.State) {
			return
		}
		if time.Now().After(deadline) {
			w.t.Fatalf("case %s is %q, want %v", w.notice, c.State, states)
		}
		time.Sleep(200 * time.Millisecond)
	}
}

// pdf downloads path through the browser (its session), saves it as an artefact and checks
// that every page carries the demonstration label; it returns the text.
func (w *tenMinutes) pdf(name, path string) string {
	w.t.Helper()
	b64, err := chromedp.Run(w.b.ctx, chromedp.Evaluate[string](`fetch(`+jsString(path)+`, {credentials: "same-origin"}).then(async (r) => {
		if (!r.ok) throw new Error(r.status + " " + await r.text());
		const bytes = new Uint8Array(await r.arrayBuffer());
		let s = ""; for (const x of bytes) s += String.fromCharCode(x);
		return btoa(s); })`, chromedp.EvalAwaitPromise))
	if err != nil {
		w.t.Fatalf("download %s (%s): %v", name, path, err)
	}
	raw, err := base64.StdEncoding.DecodeString(b64)
	if err != nil {
		w.t.Fatal(err)
	}
	file := filepath.Join(w.b.dir, name+".pdf")
	if err := os.WriteFile(file, raw, 0o644); err != nil {
		w.t.Fatal(err)
	}
	out, err := exec.Command("pdftotext", "-layout", file, "-").Output()
	if err != nil {
		testenv.Missing(w.t, "pdftotext (Debian poppler-utils): %v", err)
	}
	pages := strings.Split(strings.TrimRight(string(out), "\f\n"), "\f")
	for i, p := range pages {
		if !strings.Contains(p, notice.DemonstrationLabel) {
			w.t.Errorf("%s: page %d of %d lacks %q:\n%s", name, i+1, len(pages), notice.DemonstrationLabel, p)
		}
	}
	w.pdfs[name] = len(pages)
	return string(out)
}

// minimalPDF is a one-page PDF, the defence's attachment.
var minimalPDF = []byte(`%PDF-1.4
1 0 obj<</Type/Catalog/Pages 2 0 R>>endobj
2 0 obj<</Type/Pages/Kids[3 0 R]/Count 1>>endobj
3 0 obj<</Type/Page/Parent 2 0 R/MediaBox[0 0 200 200]>>endobj
trailer<</Root 1 0 R>>
%%EOF
`)
