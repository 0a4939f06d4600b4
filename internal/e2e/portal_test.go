package e2e

import (
	"bytes"
	"context"
	"crypto/ed25519"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"
	"github.com/prometheus/client_golang/prometheus"

	"github.com/trenzinho/trenzinho/geofences"
	"github.com/trenzinho/trenzinho/internal/testkit/fleettest"
	"github.com/trenzinho/trenzinho/monitor/api"
	"github.com/trenzinho/trenzinho/monitor/cases"
	"github.com/trenzinho/trenzinho/monitor/notice"
	"github.com/trenzinho/trenzinho/monitor/notify/notifyconfig"
	"github.com/trenzinho/trenzinho/monitor/store"
	"github.com/trenzinho/trenzinho/monitor/view"
	"github.com/trenzinho/trenzinho/monitor/web"
	"github.com/trenzinho/trenzinho/profile"
	"github.com/trenzinho/trenzinho/rules"
)

// liveFleet is the fleet as the judge would tell it.
type liveFleet []view.Vehicle

func (f liveFleet) Vehicles(context.Context) ([]view.Vehicle, error) { return f, nil }

// TestPortalInTheBrowser: a licensee's user signs in through the dashboard's login form and sees
// the portal and nothing else — their vehicle live (a position pushed on the stream shows),
// their speed episode, their auto (opened, with its facts) — and nothing of the other
// licensee's; no error in the console.
func TestPortalInTheBrowser(t *testing.T) {
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
	places, err := geofences.Read(strings.NewReader(`{"type":"FeatureCollection","features":[]}`), "town.geojson")
	if err != nil {
		t.Fatal(err)
	}
	engine := rules.New(p, places)
	var seq uint64
	start := time.Date(2026, 11, 3, 10, 0, 0, 0, p.Location())
	for _, v := range []string{"PIU-001", "PIU-003"} {
		fleettest.Play(t, engine, db, &seq, fleettest.Trip{Vehicle: v, Start: start, Seconds: fleettest.Drive(-20.84, -40.73, fleettest.Speeding()...)})
	}
	mine := issueManual(t, db, reg, p, "PIU-001", start, start.Add(time.Hour)).ID
	issueManual(t, db, reg, p, "PIU-003", start, start.Add(time.Hour))
	// Delivered by post the next day: the defence may be filed.
	now := start.Add(48 * time.Hour)
	o := &cases.Office{Ledger: db, Profile: p, Now: func() time.Time { return now }}
	joao := store.Actor{User: "joao", Role: store.RoleFiscal}
	scan, err := o.Attach(ctx, mine, cases.Attachment{Kind: cases.AttachmentAR, Name: "ar.pdf", ContentType: "application/pdf", Data: []byte("%PDF-1.4 AR")}, joao)
	if err != nil {
		t.Fatal(err)
	}
	mail := store.CaseAction{Action: store.ActionNotify, Mode: "mail", Date: "2026-11-04", Proof: cases.Proof{AR: "BR123456789BR", ARScan: scan.ID}}
	if _, _, err := o.Act(ctx, mine, mail, joao); err != nil {
		t.Fatal(err)
	}
	attachment := filepath.Join(t.TempDir(), "comprovante.pdf")
	var pdf bytes.Buffer
	if err := notice.Receipt(&pdf, notice.ReceiptInput{Protocolo: "anexo", Kind: "defence", FiledAt: now}); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(attachment, pdf.Bytes(), 0o600); err != nil {
		t.Fatal(err)
	}
	if _, err := db.CreateLicenseeUser(ctx, "orla", "senha-da-orla", "L1"); err != nil {
		t.Fatal(err)
	}
	online, lat, lon, speed, laeq := true, -20.84, -40.73, 18.0, 64.0
	if _, err := db.EnsureAdmin(ctx, "chefe", "senha-do-chefe"); err != nil {
		t.Fatal(err)
	}
	set, err := geofences.Read(strings.NewReader(`{"type":"FeatureCollection","features":[]}`), "town.geojson")
	if err != nil {
		t.Fatal(err)
	}
	pub, _, err := ed25519.GenerateKey(nil)
	if err != nil {
		t.Fatal(err)
	}
	srv := api.New(api.Config{Users: db, Audit: db, Episodes: db, RegistryStore: reg, Drafts: db, DraftKey: pub,
		Map: api.MapConfig{Profile: p, Geofences: set},
		Fleet: liveFleet{{ID: "PIU-001", Licensee: "L1", Online: &online, Lat: &lat, Lon: &lon, SpeedKmh: &speed, LAeqDB: &laeq},
			{ID: "PIU-003", Licensee: "L2", Online: &online, Lat: &lat, Lon: &lon, SpeedKmh: &speed}},
		Cases:  &api.CasesConfig{Store: db, Profile: p, Registry: reg, Now: func() time.Time { return now }},
		Portal: &api.PortalConfig{Store: db},
		Notify: &api.NotifyConfig{Directory: notifyconfig.NewDirectory(notifyconfig.DirectoryConfig{Store: db})},
		Static: web.Handler(web.Options{}), Metrics: prometheus.NewRegistry()})
	hs := httptest.NewServer(srv.Handler())
	t.Cleanup(hs.Close)
	t.Cleanup(srv.Hub().Close)

	b := startDashBrowser(t, chrome, 1280, 900)
	b.do(chromedp.Navigate(hs.URL + "/"))
	b.waitJS(`!document.querySelector("#login-view").hidden`, 20*time.Second, "the login page")
	b.do(chromedp.SendKeys(chromedp.CSS("#login-user"), "orla"), chromedp.SendKeys(chromedp.CSS("#login-password"), "senha-da-orla"),
		chromedp.Click(chromedp.CSS("#login-submit")))
	b.waitJS(`document.querySelector("#portal-vehicles tbody tr") !== null && document.querySelector("#conn").classList.contains("conn--live")`,
		20*time.Second, "the portal's vehicles with a live stream")
	b.waitJS(`document.querySelector("#portal-episodes") !== null`, 10*time.Second, "the portal's episodes")
	b.shot("portal-painel")
	page := b.text("#app")
	for _, want := range []string{"Meus veículos", "PIU-001", "PIU-002", "18 km/h", "Excesso de velocidade", "Trenzinho Alegria da Orla Ltda", "Permissionário"} {
		if !strings.Contains(page, want) {
			t.Errorf("the portal lacks %q:\n%s", want, page)
		}
	}
	for _, other := range []string{"PIU-003", "Ilha do Gambá", "Revisão", "Cadastro", "Auditoria", "null", "undefined"} {
		if strings.Contains(page, other) {
			t.Errorf("the portal shows %q", other)
		}
	}
	if n := b.evalString(`String(document.querySelectorAll("#sidebar .nav a").length)`); n != "4" {
		t.Errorf("%s links in the menu, want the portal's 4", n)
	}
	if !b.evalBool(`document.querySelector("#view-mapa").hidden`) {
		t.Error("the control room's map is shown")
	}
	// Live: a new position of PIU-001 reaches the table through the portal's stream.
	fast := 31.0
	srv.Hub().PublishLatest(api.EventPosition, "PIU-001", view.Vehicle{ID: "PIU-001", Licensee: "L1", Online: &online, Lat: &lat, Lon: &lon, SpeedKmh: &fast})
	b.waitJS(`document.querySelector("#portal-vehicles").textContent.includes("31 km/h")`, 10*time.Second, "the live position")

	// The autos: the list, then the auto opened.
	b.do(chromedp.Click(chromedp.CSS(`a[data-route="autos"]`)))
	b.waitJS(`document.querySelector("#portal-cases tbody a") !== null`, 10*time.Second, "the autos")
	if cases := b.text("#portal-cases"); strings.Count(cases, "AI-2026/") != 1 {
		t.Errorf("the list shows other than the licensee's one auto:\n%s", cases)
	}
	b.do(chromedp.Click(chromedp.CSS(`#portal-cases tbody a`)))
	b.waitJS(`document.querySelector("#portal-case-facts") !== null`, 10*time.Second, "the auto's page")
	b.shot("portal-auto")
	if facts := b.text("#portal-case-facts"); !strings.Contains(facts, "PIU-001") || !strings.Contains(facts, "Prazo de defesa") {
		t.Errorf("the auto's facts: %s", facts)
	}
	if page := b.text("#main"); strings.Contains(page, "null") || strings.Contains(page, "undefined") {
		t.Errorf("the auto's page shows a missing value:\n%s", page)
	}
	if c, _, err := db.Cases(ctx, store.CaseFilter{Licensee: "L1"}, 10, ""); err != nil || len(c) != 1 || c[0].Opening == nil || c[0].Opening.User != "orla" {
		t.Errorf("the opening was not recorded: %v", err)
	}

	// The defence, filed through the form with a PDF attached.
	b.do(chromedp.SendKeys(chromedp.CSS("#filing-text"), "O veículo estava no ponto de embarque autorizado."),
		chromedp.SetUploadFiles(`#filing-files`, []string{attachment}),
		chromedp.Click(chromedp.CSS(`#filing-form button[type="submit"]`)))
	b.waitJS(`document.querySelector("#main").textContent.includes("protocolo PROT-2026/")`, 20*time.Second, "the filing's protocolo")
	b.shot("portal-defesa")
	c, err := db.CaseByID(ctx, mine)
	if err != nil || c.State != "defence_filed" || c.DefenceFiled != "2026-11-05" {
		t.Errorf("after the defence in the browser: %+v %v", c.Status, err)
	}

	// The control room reads it: signed out, the admin signs in and opens the case.
	b.do(chromedp.Click(chromedp.CSS("#logout")))
	b.waitJS(`!document.querySelector("#login-view").hidden`, 20*time.Second, "the login page again")
	b.do(chromedp.Navigate(hs.URL + "/#/autos/" + strconv.FormatInt(mine, 10)))
	b.waitJS(`!document.querySelector("#login-view").hidden`, 20*time.Second, "the login page")
	b.do(chromedp.SendKeys(chromedp.CSS("#login-user"), "chefe"), chromedp.SendKeys(chromedp.CSS("#login-password"), "senha-do-chefe"),
		chromedp.Click(chromedp.CSS("#login-submit")))
	b.waitJS(`document.querySelector("#case-filings") !== null`, 20*time.Second, "the filings on the case page")
	b.shot("caso-defesa-online")
	if got := b.text("#case-filings"); !strings.Contains(got, "protocolo PROT-2026/000001") || !strings.Contains(got, "ponto de embarque autorizado") ||
		!strings.Contains(got, "comprovante.pdf") {
		t.Errorf("the case page's filings: %s", got)
	}
	b.checkConsole()
}

// TestCaseElectronicFallbackInTheBrowser: with the electronic notice enabled, an auto without a
// ciência in the licensee's portal within the profile's 10 days shows, on the control room's case page,
// that it is to be delivered by the other means.
func TestCaseElectronicFallbackInTheBrowser(t *testing.T) {
	chrome := chromiumPath(t)
	ctx := context.Background()
	db, err := store.Open(ctx, filepath.Join(t.TempDir(), "monitor.db"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Close() })
	reg := fleettest.Registry(t, t.TempDir(), nil)
	y := strings.Replace(string(profile.PiumaYAML()), "  electronic: false\n  electronic_act: \"\"", "  electronic: true\n  electronic_act: \"Decreto Municipal nº 123/2026\"", 1)
	p, err := profile.Parse([]byte(y), "piuma-eletronico.yaml")
	if err != nil || !p.Notification.Electronic {
		t.Fatalf("profile: %v", err)
	}
	reg.SetLocation(p.Location())
	issued := time.Date(2026, 11, 3, 11, 0, 0, 0, p.Location())
	c := issueManual(t, db, reg, p, "PIU-001", issued.Add(-time.Hour), issued)
	if _, err := db.EnsureAdmin(ctx, "chefe", "senha-do-chefe"); err != nil {
		t.Fatal(err)
	}
	now := issued.AddDate(0, 0, 11) // the window ended on 13 November
	set, err := geofences.Read(strings.NewReader(`{"type":"FeatureCollection","features":[]}`), "town.geojson")
	if err != nil {
		t.Fatal(err)
	}
	pub, _, err := ed25519.GenerateKey(nil)
	if err != nil {
		t.Fatal(err)
	}
	srv := api.New(api.Config{Users: db, Audit: db, Episodes: db, RegistryStore: reg, Fleet: liveFleet{}, Drafts: db, DraftKey: pub,
		Map:    api.MapConfig{Profile: p, Geofences: set},
		Cases:  &api.CasesConfig{Store: db, Profile: p, Registry: reg, Now: func() time.Time { return now }},
		Portal: &api.PortalConfig{Store: db},
		Notify: &api.NotifyConfig{Directory: notifyconfig.NewDirectory(notifyconfig.DirectoryConfig{Store: db})},
		Static: web.Handler(web.Options{}), Metrics: prometheus.NewRegistry()})
	hs := httptest.NewServer(srv.Handler())
	t.Cleanup(hs.Close)
	t.Cleanup(srv.Hub().Close)

	b := startDashBrowser(t, chrome, 1280, 900)
	b.do(chromedp.Navigate(hs.URL + "/#/autos/" + strconv.FormatInt(c.ID, 10)))
	b.waitJS(`!document.querySelector("#login-view").hidden`, 20*time.Second, "the login page")
	b.do(chromedp.SendKeys(chromedp.CSS("#login-user"), "chefe"), chromedp.SendKeys(chromedp.CSS("#login-password"), "senha-do-chefe"),
		chromedp.Click(chromedp.CSS("#login-submit")))
	b.waitJS(`document.querySelector("#case-electronic") !== null`, 20*time.Second, "the case's electronic notice")
	b.shot("caso-fallback")
	if got := b.text("#case-electronic"); !strings.Contains(got, "notificar por outro meio") || !strings.Contains(got, "13/11/2026") {
		t.Errorf("the case page says %q", got)
	}
	b.checkConsole()
}
