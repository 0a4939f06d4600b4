package e2e

import (
	"context"
	"crypto/ed25519"
	"fmt"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"
	"github.com/prometheus/client_golang/prometheus"

	"github.com/trenzinho/trenzinho/geofences"
	"github.com/trenzinho/trenzinho/internal/testkit/fleettest"
	"github.com/trenzinho/trenzinho/internal/testkit/testenv"
	"github.com/trenzinho/trenzinho/monitor/api"
	"github.com/trenzinho/trenzinho/monitor/notify/notifyconfig"
	"github.com/trenzinho/trenzinho/monitor/store"
	"github.com/trenzinho/trenzinho/monitor/web"
	"github.com/trenzinho/trenzinho/monitor/whatif"
	"github.com/trenzinho/trenzinho/monitor/whatif/fleetweek"
	"github.com/trenzinho/trenzinho/profile"
)

// TestWhatifPagesInTheBrowser: on an archive of 2 days × 3 vehicles (PIU-001 and PIU-002 of
// L1, PIU-003 of L2), an admin opens "E se…?" (#/e-se), uploads a 25 km/h profile, follows the
// run and reads the side-by-side report: the generator's moderate bursts appear, with the
// tables per rule, licensee, site and hour and the six downloads. Then L1's user, on the
// portal's "E se eu mudar o itinerário?", sees their own vehicles only, uploads an itinerary
// on the generator's road and reads a report where their route deviations vanish and nothing
// of L2 shows; the admin's run is not in their list. No error in the console.
func TestWhatifPagesInTheBrowser(t *testing.T) {
	chrome := chromiumPath(t)
	ctx := context.Background()
	influx := testenv.StartInflux(t)
	influxURL := fmt.Sprintf("http://127.0.0.1:%d", influx.Port)
	p := profile.Piuma()
	loc := p.Location()
	now := time.Now().In(loc)
	first := time.Date(now.Year(), now.Month(), now.Day()-3, 0, 0, 0, 0, loc)
	week, err := fleetweek.Generate(fleetweek.Config{Loc: loc, First: first, Vehicles: 3, Days: 2})
	if err != nil {
		t.Fatal(err)
	}
	if err := fleetweek.WriteArchive(ctx, influxURL, influx.Database, week.Batches); err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	db, err := store.Open(ctx, filepath.Join(dir, "monitor.db"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Close() })
	reg := fleettest.Registry(t, t.TempDir(), nil)
	reg.SetLocation(loc)
	sample, err := geofences.Sample()
	if err != nil {
		t.Fatal(err)
	}
	if _, err := db.EnsureAdmin(ctx, "chefe", "senha-do-chefe"); err != nil {
		t.Fatal(err)
	}
	if _, err := db.CreateLicenseeUser(ctx, "orla", "senha-da-orla", "L1"); err != nil {
		t.Fatal(err)
	}
	src, err := whatif.NewInflux(whatif.InfluxConfig{URL: influxURL, Bucket: influx.Database})
	if err != nil {
		t.Fatal(err)
	}
	jobs, err := whatif.NewJobs(whatif.JobsConfig{Dir: filepath.Join(dir, "whatif"), Archive: src, Workers: 2})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(jobs.Close)
	inForce := whatif.Side{Profile: p, ProfileYAML: profile.PiumaYAML(), Places: sample, Registry: reg}
	pub, _, err := ed25519.GenerateKey(nil)
	if err != nil {
		t.Fatal(err)
	}
	srv := api.New(api.Config{Users: db, Audit: db, Episodes: db, RegistryStore: reg, Drafts: db, DraftKey: pub,
		Notify: &api.NotifyConfig{Directory: notifyconfig.NewDirectory(notifyconfig.DirectoryConfig{Store: db})},
		Map:    api.MapConfig{Profile: p, Geofences: sample},
		Cases:  &api.CasesConfig{Store: db, Profile: p, Registry: reg},
		Portal: &api.PortalConfig{Store: db},
		Whatif: &api.WhatifConfig{Jobs: jobs, InForce: func() whatif.Side { return inForce }},
		Static: web.Handler(web.Options{}), Metrics: prometheus.NewRegistry()})
	hs := httptest.NewServer(srv.Handler())
	t.Cleanup(hs.Close)
	t.Cleanup(srv.Hub().Close)

	proposal := filepath.Join(dir, "proposto-25kmh.yaml")
	y := strings.Replace(string(profile.PiumaYAML()), "limit_kmh: 30", "limit_kmh: 25", 1)
	y = strings.Replace(y, `version: "2026-11-29"`, `version: "2026-11-29-proposta-25kmh"`, 1)
	if err := os.WriteFile(proposal, []byte(y), 0o600); err != nil {
		t.Fatal(err)
	}
	itinerary := filepath.Join(dir, "itinerario.geojson")
	if err := os.WriteFile(itinerary, fmt.Appendf(nil, `{"type":"FeatureCollection","features":[{"type":"Feature","properties":{"id":"it-l1-proposto","kind":"itinerary",
"days":"Mo-Su","hours":"09:00-23:00","licensee":"L1","name":"Itinerário proposto (estrada oeste)","source":"survey","valid_from":"2026-01-01"},
"geometry":{"type":"LineString","coordinates":[[%.6f,%.6f],[%.6f,%.6f]]}}]}`,
		fleetweek.Lon-100/fleetweek.MetresPerDegreeEast, fleetweek.Lat, fleetweek.Lon+4200/fleetweek.MetresPerDegreeEast, fleetweek.Lat), 0o600); err != nil {
		t.Fatal(err)
	}
	period := func(b *dashBrowser) {
		b.do(chromedp.SetValue("#whatif-from", first.Format("02/01/2006")), chromedp.SetValue("#whatif-to", first.AddDate(0, 0, 1).Format("02/01/2006")))
	}

	b := startDashBrowser(t, chrome, 1280, 900)
	b.do(chromedp.Navigate(hs.URL + "/#/e-se"))
	b.waitJS(`!document.querySelector("#login-view").hidden`, 20*time.Second, "the login page")
	b.do(chromedp.SendKeys(chromedp.CSS("#login-user"), "chefe"), chromedp.SendKeys(chromedp.CSS("#login-password"), "senha-do-chefe"),
		chromedp.Click(chromedp.CSS("#login-submit")))
	b.waitJS(`document.querySelector("#whatif-form") !== null`, 20*time.Second, "the what-if page")
	if !b.evalBool(`!document.querySelector('a[data-route="e-se"]').closest("li").hidden`) {
		t.Error("the menu hides E se…? from an admin")
	}
	period(b)
	b.do(chromedp.SetUploadFiles("#whatif-profile", []string{proposal}), chromedp.Click(chromedp.CSS("#whatif-start")))
	b.waitJS(`document.querySelector("#whatif-total") !== null`, 90*time.Second, "the report")
	b.shot("whatif-painel")
	summary := b.text("#whatif-summary")
	for _, want := range []string{"Resultado lado a lado", "Episódios", "Autos (minutas)", "Multas (UFMP)", "2026-11-29-proposta-25kmh",
		fmt.Sprintf("Surgem %d episódio(s), desaparecem 0", len(week.Moderate)), "3 veículo(s) com telemetria"} {
		if !strings.Contains(summary, want) {
			t.Errorf("the summary lacks %q:\n%s", want, summary)
		}
	}
	if n := b.evalString(`String(document.querySelectorAll("#whatif-downloads a").length)`); n != "6" {
		t.Errorf("%s downloads, want 6", n)
	}
	if got := b.text("#whatif-appear"); !strings.Contains(got, fmt.Sprintf("Episódios que surgem (%d)", len(week.Moderate))) || !strings.Contains(got, "Excesso de velocidade") {
		t.Errorf("the episodes that appear:\n%s", got)
	}
	// The map of where the differences happen: one marker per episode that appears, at its peak.
	if n := b.evalString(`String(document.querySelectorAll("#whatif-map .whatif-marker--appear").length)`); n != fmt.Sprint(len(week.Moderate)) {
		t.Errorf("%s markers of episodes that appear on the map, want %d", n, len(week.Moderate))
	}
	// Each episode opens with its evidence.
	b.do(chromedp.Click(chromedp.CSS("#whatif-appear .whatif-open")))
	b.waitJS(`!document.querySelector("#whatif-appear tr.whatif-evidence").hidden`, 10*time.Second, "the evidence of the first episode")
	if got := b.text("#whatif-appear tr.whatif-evidence"); !strings.Contains(got, "km/h") || !strings.Contains(got, "Tacógrafo") {
		t.Errorf("the evidence of the first episode that appears:\n%s", got)
	}
	for _, dim := range []string{"regra", "permissionario", "local", "hora"} {
		if !b.evalBool(fmt.Sprintf(`document.querySelector("#whatif-table-%s tbody tr") !== null`, dim)) {
			t.Errorf("no table per %s", dim)
		}
	}
	if page := b.text("#main"); strings.Contains(page, "undefined") || strings.Contains(page, "NaN") || strings.Contains(page, "null") {
		t.Errorf("the page shows a missing value:\n%s", page)
	}

	// The licensee, on the portal.
	b.do(chromedp.Click(chromedp.CSS("#logout")))
	b.waitJS(`!document.querySelector("#login-view").hidden`, 20*time.Second, "the login page again")
	b.do(chromedp.SendKeys(chromedp.CSS("#login-user"), "orla"), chromedp.SendKeys(chromedp.CSS("#login-password"), "senha-da-orla"),
		chromedp.Click(chromedp.CSS("#login-submit")))
	b.waitJS(`document.querySelector('a[data-route="e-se"]') !== null`, 20*time.Second, "the portal's menu")
	b.do(chromedp.Click(chromedp.CSS(`a[data-route="e-se"]`)))
	b.waitJS(`document.querySelector("#whatif-form") !== null && document.querySelector("#whatif-runs table") !== null`, 20*time.Second, "the portal's what-if page")
	if got := b.text("#whatif-vehicles"); !strings.Contains(got, "PIU-001") || !strings.Contains(got, "PIU-002") || strings.Contains(got, "PIU-003") {
		t.Errorf("the licensee's vehicles: %q", got)
	}
	if !b.evalBool(`document.querySelector("#whatif-itinerary-in-force").getAttribute("href") === "/api/v1/portal/whatif/itinerary"`) {
		t.Error("no link to the itinerary in force")
	}
	if got := b.text("#whatif-runs"); !strings.Contains(got, "Nenhuma simulação") {
		t.Errorf("the licensee sees another's runs:\n%s", got)
	}
	period(b)
	b.do(chromedp.SetUploadFiles("#whatif-itinerary", []string{itinerary}), chromedp.Click(chromedp.CSS("#whatif-start")))
	b.waitJS(`document.querySelector("#whatif-total") !== null`, 90*time.Second, "the licensee's report")
	b.shot("whatif-portal")
	page := b.text("#main")
	for _, want := range []string{"E se eu mudar o itinerário?", "Episódios que desaparecem (4)", "Episódios que surgem (0)", "2 veículo(s) com telemetria (PIU-001, PIU-002)"} {
		if !strings.Contains(page, want) {
			t.Errorf("the portal's report lacks %q:\n%s", want, page)
		}
	}
	if n := b.evalString(`String(document.querySelectorAll("#whatif-map .whatif-marker--vanish").length)`); n != "4" {
		t.Errorf("%s markers of episodes that vanish on the licensee's map, want 4", n)
	}
	for _, other := range []string{"PIU-003", "L2", "Ilha do Gambá", "chefe", "undefined", "NaN", "null"} {
		if strings.Contains(page, other) {
			t.Errorf("the portal's page shows %q", other)
		}
	}
	if n := b.evalString(`String(document.querySelectorAll("#whatif-runs tbody tr").length)`); n != "1" {
		t.Errorf("%s runs in the licensee's list, want their own 1", n)
	}
	b.checkConsole()
}
