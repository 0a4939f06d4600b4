package e2e

import (
	"context"
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
	"github.com/trenzinho/trenzinho/monitor/store"
	"github.com/trenzinho/trenzinho/monitor/web"
	"github.com/trenzinho/trenzinho/profile"
	"github.com/trenzinho/trenzinho/rules"
)

// TestTransparencyPageInTheBrowser: the public transparency page, opened without a session in
// headless Chromium, shows a month of simulated trips and an issued auto per licensee — and no
// error in the console.
func TestTransparencyPageInTheBrowser(t *testing.T) {
	chrome := chromiumPath(t)
	ctx := context.Background()
	db, err := store.Open(ctx, filepath.Join(t.TempDir(), "monitor.db"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Close() })
	reg := fleettest.Registry(t, t.TempDir(), nil)
	loc, err := time.LoadLocation("America/Sao_Paulo")
	if err != nil {
		t.Fatal(err)
	}
	reg.SetLocation(loc)
	p := profile.Piuma()
	places, err := geofences.Read(strings.NewReader(`{"type":"FeatureCollection","features":[]}`), "town.geojson")
	if err != nil {
		t.Fatal(err)
	}
	engine := rules.New(p, places)
	var seq uint64
	start := time.Date(2026, 11, 3, 10, 0, 0, 0, loc)
	fleettest.Play(t, engine, db, &seq, fleettest.Trip{Vehicle: "PIU-001", Card: "0000000086H101", Start: start,
		Seconds: fleettest.Drive(-20.84, -40.73, fleettest.Speeding()...)})
	issueManual(t, db, reg, p, "PIU-001", start, start.Add(time.Hour))
	// A paper notice of the same day, confirmed: published under the licensee; the manual one,
	// still in process, only in the total.
	if _, err := db.ImportNotices(ctx, []store.ImportedNotice{{Number: "0090/2026", Offence: start, Issued: start.Add(2 * time.Hour),
		Licensee: "L1", Articles: []string{"Art. 16"}, Penalty: "Art. 46, XII", Status: "confirmed", Notified: "2026-11-03", Mode: "in_person"}},
		start.Add(3*time.Hour), store.Actor{User: "joao", Role: store.RoleFiscal}); err != nil {
		t.Fatal(err)
	}
	srv := api.New(api.Config{Users: db, Audit: db, Episodes: db, RegistryStore: reg, Transparency: db,
		Static: web.Handler(web.Options{}), Metrics: prometheus.NewRegistry()})
	hs := httptest.NewServer(srv.Handler())
	t.Cleanup(hs.Close)
	t.Cleanup(srv.Hub().Close)

	b := startDashBrowser(t, chrome, 1280, 900)
	b.do(chromedp.Navigate(hs.URL + "/transparencia?month=2026-11"))
	b.waitJS(`document.querySelector(".transparency-table tbody tr")`, 20*time.Second, "the report's table")
	b.shot("transparencia-novembro")
	page := b.text("#transparencia")
	for _, want := range []string{"Trenzinho Alegria da Orla Ltda", "Art. 16: 1", "Excesso de velocidade: 1", "Mês 2026-11",
		"Autos em andamento1", "Todos os permissionários"} {
		if !strings.Contains(page, want) {
			t.Errorf("the page lacks %q:\n%s", want, page)
		}
	}
	for _, secret := range []string{"Maria Aparecida", "0000000086H101", "PIU-001", "-20.8", "-40.7"} {
		if strings.Contains(page, secret) {
			t.Errorf("the page shows %q", secret)
		}
	}
	// Another month through the form: no data, no error.
	b.do(chromedp.SetValue(chromedp.CSS("#mes"), "2026-10"), chromedp.Submit(chromedp.CSS("#mes-form")))
	b.waitJS(`document.querySelector("#relatorio").textContent.includes("Nenhum dado")`, 20*time.Second, "October's empty report")
	b.shot("transparencia-outubro")
	b.checkConsole()
}
