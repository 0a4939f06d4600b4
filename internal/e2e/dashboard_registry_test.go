package e2e

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"
	mqtt "github.com/eclipse/paho.mqtt.golang"

	"github.com/trenzinho/trenzinho/internal/testkit/testenv"
	"github.com/trenzinho/trenzinho/wire"
)

// TestDashboardRegistryInTheBrowser drives the registry pages in headless Chromium against a
// monitor with a registry (the example of registry/testdata, its expiry dates moved
// relative to today): an admin browses licensees and vehicles, edits a vehicle's r₁, is shown
// the API's 422 next to the field for a CNPJ with wrong check digits, opens the drivers' tab
// (redacted, the access recorded), finds the expired and expiring documents on the fleet page
// with the vehicle's indicator, imports an earlier paper notice and writes a manual notice for
// the same precept, whose penalty calculus (a recidivism) appears on its page. Any console error fails the test; screenshots go to $TRENZINHO_ARTIFACTS.
func TestDashboardRegistryInTheBrowser(t *testing.T) {
	chrome := chromiumPath(t)
	bin := testenv.Build(t)
	broker := testenv.StartMosquitto(t, testenv.MosquittoOptions{})
	sp, err := time.LoadLocation("America/Sao_Paulo")
	if err != nil {
		t.Fatal(err)
	}
	today := time.Now().In(sp)
	day := func(days int) string { return today.AddDate(0, 0, days).Format(time.DateOnly) }

	// The example registry, with its three demonstration dates relative to today: PIU-003's
	// inspection expired 10 days ago, L2's licence expires in 20 days, PIU-001's CSV in 28.
	example, err := os.ReadFile(filepath.Join(testenv.RepoRoot(t), "registry/testdata/piuma-example.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	yaml := string(example)
	for old, repl := range map[string]string{
		"valid_until: 2026-11-20": "valid_until: " + day(-10),
		"valid_until: 2026-12-20": "valid_until: " + day(20),
		"valid_until: 2026-12-28": "valid_until: " + day(28),
	} {
		if strings.Count(yaml, old) != 1 {
			t.Fatalf("the example registry no longer has exactly one %q", old)
		}
		yaml = strings.Replace(yaml, old, repl, 1)
	}
	regFile := filepath.Join(t.TempDir(), "registry.yaml")
	if err := os.WriteFile(regFile, []byte(yaml), 0o600); err != nil {
		t.Fatal(err)
	}
	// The profile of an installation that issues autos, and the admin identified as an agent:
	// the manual notice below passes the issue gate.
	mon := startMonitorWithEnv(t, bin, broker.URL(), "TRENZINHO_REGISTRY="+regFile, "TRENZINHO_PROFILE="+issuingProfile(t))
	mon.patch(t, "/api/v1/users/admin", map[string]string{"full_name": "Ana Maria Fiscal", "matricula": "FP-0001", "cargo": "Agente de Fiscalização de Posturas"})

	// Two registered vehicles report once, parked in town: the fleet page then lists them.
	publishOnce(t, broker.URL(), "PIU-002", "PIU-003")
	// PIU-002's bridge says it runs configuration 1, not the one the monitor issued it.
	publishStatus(t, broker.URL(), "PIU-002", 1)
	testenv.WaitFor(t, "the monitor to know PIU-003", 30*time.Second, func() bool {
		var vs struct{ Items []struct{ ID string } }
		mon.get(t, "/api/v1/vehicles", &vs)
		for _, v := range vs.Items {
			if v.ID == "PIU-003" {
				return true
			}
		}
		return false
	})

	b := startDashBrowser(t, chrome, 1440, 900)
	b.do(chromedp.Navigate(mon.base + "/"))
	b.waitJS(`!document.querySelector("#login-view").hidden`, 20*time.Second, "the login page")
	b.do(chromedp.SendKeys(chromedp.CSS("#login-user"), "admin"),
		chromedp.SendKeys(chromedp.CSS("#login-password"), "segredo-de-teste"),
		chromedp.Click(chromedp.CSS("#login-submit")))
	b.waitJS(`!document.querySelector("#app").hidden`, 20*time.Second, "the dashboard")

	// 1. The registry: licensees, then vehicles.
	b.do(chromedp.Click(chromedp.CSS(`a[data-route="cadastro"]`)))
	b.waitJS(`document.querySelector('#registry-table tr[data-id="L2"]') !== null`, 20*time.Second, "the licensees")
	if row := b.text(`#registry-table tr[data-id="L1"]`); !strings.Contains(row, "11.222.333/0001-81") || !strings.Contains(row, "PIU-001, PIU-002") {
		t.Errorf("licensee row %q", row)
	}
	b.shot("01-licensees")
	b.do(chromedp.Click(chromedp.CSS(`.tabs a[data-tab="veiculos"]`)))
	b.waitJS(`document.querySelector('#registry-table tr[data-id="PIU-002"]') !== null`, 20*time.Second, "the vehicles")
	if row := b.text(`#registry-table tr[data-id="PIU-003"]`); !strings.Contains(row, "vencido há 10 dias") {
		t.Errorf("PIU-003's row does not show its expired inspection: %q", row)
	}
	b.shot("02-vehicles")

	// 2. Edit a vehicle: r₁ of PIU-002 from 2,5 m to 3,5 m.
	b.do(chromedp.Click(chromedp.CSS(`#registry-table tr[data-id="PIU-002"] a.btn`)))
	b.waitJS(`document.querySelector('#registry-form [data-path="meter_distance_m"]') !== null`, 20*time.Second, "the vehicle form")
	b.do(clearInput(`#registry-form [data-path="meter_distance_m"]`),
		chromedp.SendKeys(chromedp.CSS(`#registry-form [data-path="meter_distance_m"]`), "3,5"))
	b.shot("03-vehicle-form")
	b.do(chromedp.Click(chromedp.CSS("#registry-save")))
	b.waitJS(`(document.querySelector("#registry-flash") || {}).textContent?.includes("PIU-002")`, 20*time.Second, "the vehicle saved")
	b.waitJS(`document.querySelector('#registry-table tr[data-id="PIU-002"]')?.textContent.includes("3,5")`, 10*time.Second, "the new r₁ in the list")
	var v struct {
		MeterDistanceM float64 `json:"meter_distance_m"`
	}
	mon.get(t, "/api/v1/registry/vehicles/PIU-002", &v)
	if v.MeterDistanceM != 3.5 {
		t.Errorf("PIU-002's r₁ after the edit: %v, want 3.5", v.MeterDistanceM)
	}
	b.shot("04-vehicle-saved")

	// 3. A CNPJ with wrong check digits: the API's 422 appears next to the field. (Chromium
	// logs that one refusal as a failed resource; nothing else may reach the console.)
	b.allowConsole(`status of 422 .*/api/v1/registry/licensees/L1:`)
	b.do(chromedp.Click(chromedp.CSS(`.tabs a[data-tab="permissionarios"]`)))
	b.waitJS(`document.querySelector('#registry-table tr[data-id="L1"] a.btn') !== null`, 20*time.Second, "the licensees")
	b.do(chromedp.Click(chromedp.CSS(`#registry-table tr[data-id="L1"] a.btn`)))
	b.waitJS(`document.querySelector('#registry-form [data-path="cnpj"]') !== null`, 20*time.Second, "the licensee form")
	b.do(clearInput(`#registry-form [data-path="cnpj"]`),
		chromedp.SendKeys(chromedp.CSS(`#registry-form [data-path="cnpj"]`), "11.222.333/0001-82"),
		chromedp.Click(chromedp.CSS("#registry-save")))
	b.waitJS(`document.querySelector('#registry-form [data-path="cnpj"][aria-invalid="true"]') !== null`, 20*time.Second, "the CNPJ marked invalid")
	fieldErr := b.text(`#registry-form [data-path="cnpj"] ~ .field-error`)
	if strings.TrimSpace(fieldErr) == "" || !b.evalBool(`document.activeElement.matches('[data-path="cnpj"]')`) {
		t.Errorf("CNPJ field error %q (focused: %v)", fieldErr, b.evalBool(`document.activeElement.matches('[data-path="cnpj"]')`))
	}
	if s := b.text("#form-errors"); !strings.Contains(strings.ToLower(s), "cadastro inválido") {
		t.Errorf("form summary %q", s)
	}
	t.Logf("422 next to the CNPJ: %s", fieldErr)
	b.shot("05-cnpj-422")
	var l struct{ CNPJ string }
	mon.get(t, "/api/v1/registry/licensees/L1", &l)
	if l.CNPJ != "11222333000181" {
		t.Errorf("L1's CNPJ after a refused edit: %q", l.CNPJ)
	}

	// 4. Drivers: redacted, with the notice that the access is recorded.
	b.do(chromedp.Click(chromedp.CSS(`a[data-route="cadastro"]`)))
	b.waitJS(`document.querySelector('.tabs a[data-tab="condutores"]') !== null`, 10*time.Second, "the drivers' tab")
	b.do(chromedp.Click(chromedp.CSS(`.tabs a[data-tab="condutores"]`)))
	b.waitJS(`document.querySelector('#registry-table tr[data-id="D1"]') !== null && document.querySelector("#drivers-audit-note") !== null`, 20*time.Second, "the drivers")
	if row := b.text(`#registry-table tr[data-id="D1"]`); !strings.Contains(row, "Maria A. S.") || strings.Contains(row, "Aparecida") {
		t.Errorf("driver row not redacted: %q", row)
	}
	b.shot("06-drivers")
	b.do(chromedp.Click(chromedp.CSS(`.tabs a[data-tab="equipamentos"]`)))
	b.waitJS(`document.querySelector('#registry-table tr[data-serial="PCE-EX-0001"]') !== null`, 20*time.Second, "the devices")
	b.shot("07-devices")
	b.do(chromedp.Click(chromedp.CSS(`.tabs a[data-tab="documentos"]`)))
	b.waitJS(`document.querySelector('#registry-table tr[data-subject="PIU-003"]') !== null`, 20*time.Second, "the documents")
	b.shot("08-documents")

	// 5. The fleet page: expired first and in red, then by date; PIU-003 flagged in the table.
	b.do(chromedp.Click(chromedp.CSS(`a[data-route="frota"]`)))
	b.waitJS(`document.querySelectorAll("#expiring-table tbody tr[data-document]").length >= 3`, 20*time.Second, "the expiring documents")
	first := b.text(`#expiring-table tbody tr`)
	if !strings.Contains(first, "Veículo PIU-003") || !strings.Contains(first, "vencido") || !b.evalBool(`document.querySelector("#expiring-table tbody tr").classList.contains("is-expired")`) {
		t.Errorf("first expiring row %q", first)
	}
	order := b.evalString(`[...document.querySelectorAll("#expiring-table tbody tr")].map((r) => r.dataset.subject + ":" + r.dataset.document).join(",")`)
	if i, j := strings.Index(order, "L2:licenca"), strings.Index(order, "PIU-001:csv"); i < 0 || j < 0 || i > j {
		t.Errorf("expiring order %q: want L2's licence before PIU-001's CSV", order)
	}
	b.waitJS(`document.querySelector('#fleet-table tr[data-vehicle="PIU-003"] [data-docs="expired"]') !== null`, 10*time.Second, "PIU-003's indicator")
	// The indicator's detail names L2 (whose licence expires) as the rest of the dashboard does:
	// "Permissionário" and its razão social, never "licenciado L2".
	detail := b.evalString(`[...document.querySelectorAll("#fleet-table [data-docs]")].map((e) => e.title).join("\n")`)
	if !strings.Contains(detail, "Permissionário Passeios Recreativos Ilha do Gambá Ltda: Licença") || strings.Contains(detail, "licenciado") || strings.Contains(detail, " L2") {
		t.Errorf("fleet documents detail %q: want the licensee named as Permissionário with its razão social", detail)
	}
	// PIU-002 runs another configuration than the one issued: flagged; PIU-003 sent no status.
	b.waitJS(`document.querySelector('#fleet-table tr[data-vehicle="PIU-002"] .config-stale') !== null`, 20*time.Second, "PIU-002's stale configuration")
	if b.evalBool(`document.querySelector('#fleet-table tr[data-vehicle="PIU-003"] .config-stale') !== null`) {
		t.Error("PIU-003, which sent no status, is flagged as running a stale configuration")
	}
	b.shot("09-fleet")
	b.do(chromedp.ScrollIntoView(chromedp.CSS("#expiring")))
	time.Sleep(300 * time.Millisecond)
	b.shot("10-fleet-expiring")

	// 6. An earlier paper notice of L1 for the same precept (Art. 16), paid, is imported...
	b.do(chromedp.Click(chromedp.CSS(`a[data-route="autos"]`)))
	b.waitJS(`document.querySelector("#import-link") !== null && document.querySelector("#cases-table") !== null`, 20*time.Second, "the notices page")
	b.do(chromedp.Click(chromedp.CSS("#import-link")))
	b.waitJS(`document.querySelector("#import-text") !== null`, 10*time.Second, "the import form")
	csv := "number;offence_date;issue_date;licensee;articles;penalty;status;notified_date;notified_mode;paid_date\n" +
		fmt.Sprintf("PM-118/2026;%s;%s;L1;Art. 16;Art. 46, XII;paid;%s;in_person;%s\n", day(-60), day(-60), day(-59), day(-50))
	b.do(chromedp.Evaluate[chromedp.Void](fmt.Sprintf(`document.querySelector("#import-text").value = %q`, csv)))
	b.shot("11-import-form")
	b.do(chromedp.Click(chromedp.CSS("#import-submit")))
	b.waitJS(`document.querySelector("dialog[open] #confirm-yes") !== null`, 5*time.Second, "the import's confirmation")
	b.do(chromedp.Click(chromedp.CSS("#confirm-yes")))
	b.waitJS(`(document.querySelector("#import-result") || {}).textContent?.includes("PM-118/2026")`, 20*time.Second, "the imported notice")
	b.shot("12-imported")

	// ... then a manual notice written in the street for the same precept: a specific
	// recidivism, the fine doubled and a suspension recommended (Art. 48, 52).
	b.do(chromedp.Click(chromedp.CSS(`a[data-route="autos"]`)))
	b.waitJS(`document.querySelector('#cases-table tr[data-state="paid"]') !== null && document.querySelector("#manual-new") !== null`, 20*time.Second, "the notices with the imported one")
	b.do(chromedp.Click(chromedp.CSS("#manual-new")))
	b.waitJS(`document.querySelector('#manual-form input[value="art16"]') !== null`, 20*time.Second, "the manual notice form")
	at := time.Now().In(sp).Add(-time.Hour)
	b.do(chromedp.SendKeys(chromedp.CSS("#mn-vehicle"), "PIU-002"),
		chromedp.Click(chromedp.CSS(`#manual-form input[value="art16"]`)),
		clearInput("#mn-date"), chromedp.SendKeys(chromedp.CSS("#mn-date"), at.Format("02/01/2006")),
		chromedp.SendKeys(chromedp.CSS("#mn-time"), at.Format("15:04")),
		chromedp.SendKeys(chromedp.CSS("#mn-place"), "Av. Beira-Mar, em frente ao nº 1000"),
		chromedp.SendKeys(chromedp.CSS("#mn-description"), "Três crianças viajando sem responsável no último vagão."))
	b.shot("12b-manual-form")
	b.do(chromedp.Click(chromedp.CSS("#mn-submit")))
	b.waitJS(`document.querySelector("dialog[open] #confirm-yes") !== null`, 5*time.Second, "the confirmation")
	b.do(chromedp.Click(chromedp.CSS("#confirm-yes")))
	b.waitJS(`/AI-\d{4}\/\d{4}/.test(document.querySelector("#notice-title")?.textContent || "") && document.querySelector("#fine-brl") !== null`, 20*time.Second, "the manual notice's page")
	if s := b.text("#assessment"); !strings.Contains(s, "Art. 46, XII") || !strings.Contains(s, "800 UFMP") || !strings.Contains(s, "PM-118/2026") ||
		!strings.Contains(s, "reincidente") {
		t.Errorf("manual notice's calculus %q", s)
	}
	if !b.evalBool(`document.querySelector("#suspension-recommended") !== null`) {
		t.Error("no suspension recommended for a specific recidivism")
	}
	b.shot("13-manual-notice")
	b.do(chromedp.ScrollIntoView(chromedp.CSS("#assessment")))
	time.Sleep(300 * time.Millisecond)
	b.shot("14-manual-notice-calculus")

	// A tablet in portrait: the vehicle form and the fleet's documents.
	b.resize(820, 1180)
	b.do(chromedp.Navigate(mon.base + "/#/cadastro/veiculos/editar/PIU-001"))
	b.waitJS(`document.querySelector('#registry-form [data-path="plate"]') !== null`, 20*time.Second, "the vehicle form on a tablet")
	b.shot("15-tablet-vehicle-form")
	b.do(chromedp.Navigate(mon.base + "/#/frota"))
	b.waitJS(`document.querySelector('#expiring-table tbody tr[data-document]') !== null`, 20*time.Second, "the fleet on a tablet")
	b.do(chromedp.ScrollIntoView(chromedp.CSS("#expiring")))
	time.Sleep(300 * time.Millisecond)
	b.shot("16-tablet-fleet-expiring")
	b.checkConsole()
}

// startMonitorWithEnv starts a monitor as startMonitor does, with more environment.
func startMonitorWithEnv(t *testing.T, bin, mqttURL string, env ...string) *monitorClient {
	t.Helper()
	return startMonitorAt(t, bin, mqttURL, "", env...).client
}

// publishOnce publishes one batch for each vehicle: stopped in the centre of Piúma, now.
func publishOnce(t *testing.T, url string, vehicles ...string) {
	t.Helper()
	c := mqtt.NewClient(mqtt.NewClientOptions().AddBroker(url).SetClientID("dash-registry-publisher"))
	if tok := c.Connect(); !tok.WaitTimeout(30*time.Second) || tok.Error() != nil {
		t.Fatalf("publisher: %v", tok.Error())
	}
	defer c.Disconnect(100)
	now := time.Now().UTC().Truncate(time.Millisecond)
	for i, v := range vehicles {
		speed, hdop, sats, db := 0.0, 0.9, 9, 58.0
		batch := &wire.Batch{V: 1, Vehicle: v, Epoch: "e-dash", Seq: 1, SentAt: wire.NewTime(now), Clock: wire.ClockGPS,
			GPS:   []wire.GPS{{T: wire.NewTime(now), Lat: -20.8367 - float64(i)*0.001, Lon: -40.7292, SpeedKmh: &speed, HDOP: &hdop, Sats: &sats, Fix: "3d"}},
			Sound: []wire.Sound{{T: wire.NewTime(now), LAeqDB: &db}}}
		payload, err := wire.Encode(batch, nil)
		if err != nil {
			t.Fatal(err)
		}
		if tok := c.Publish(wire.TelemetryTopic(v), 1, false, payload); !tok.WaitTimeout(10*time.Second) || tok.Error() != nil {
			t.Fatalf("publish %s: %v", v, tok.Error())
		}
	}
}

// clearInput empties a form control as a person selecting its text and deleting it would (the
// value property; chromedp.Clear changes only the attribute).
func clearInput(sel string) chromedp.Action[chromedp.Void] {
	return chromedp.Evaluate[chromedp.Void](fmt.Sprintf(`(() => { const i = document.querySelector(%q); i.value = ""; i.dispatchEvent(new Event("input", {bubbles: true})); })()`, sel))
}

// selectValue chooses an option of a select as a person would (the change event fires).
func selectValue(sel, value string) chromedp.Action[chromedp.Void] {
	return chromedp.Evaluate[chromedp.Void](fmt.Sprintf(`(() => { const s = document.querySelector(%q); s.value = %q; s.dispatchEvent(new Event("change", {bubbles: true})); })()`, sel, value))
}

func (b *dashBrowser) evalBool(expr string) bool {
	b.t.Helper()
	v, err := chromedp.Run(b.ctx, chromedp.Evaluate[bool]("!!("+expr+")"))
	if err != nil {
		b.t.Fatalf("%s: %v", expr, err)
	}
	return v
}

func (b *dashBrowser) evalString(expr string) string {
	b.t.Helper()
	v, err := chromedp.Run(b.ctx, chromedp.Evaluate[string](expr))
	if err != nil {
		b.t.Fatalf("%s: %v", expr, err)
	}
	return v
}
