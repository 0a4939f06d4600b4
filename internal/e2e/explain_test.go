package e2e

import (
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"
	mqtt "github.com/eclipse/paho.mqtt.golang"

	"github.com/trenzinho/trenzinho/internal/testkit/testenv"
	"github.com/trenzinho/trenzinho/rules"
	"github.com/trenzinho/trenzinho/wire"
)

// silentTachoTrip is EXPL-001's telemetry, one batch per 5 s from start: a warning of its
// driver's coach in a batch timed by the bridge's system clock (no GPS or RTC time), then a
// loud drive at 22 km/h whose tachograph reports once and then falls silent for good. The
// trip's data then stop: with a short gap timeout, the noise_limit and telemetry_fault
// episodes it opens close as interrupted.
func silentTachoTrip(start time.Time, seconds int) []*wire.Batch {
	kmh, hdop, limit, over := 22.0, 0.8, 30.0, 31.0
	var out []*wire.Batch
	seq := uint64(1)
	out = append(out, &wire.Batch{V: 1, Vehicle: "EXPL-001", Epoch: "e-expl", Seq: seq, Clock: wire.ClockSystem,
		SentAt: wire.NewTime(start), Warnings: []wire.Warning{{T: wire.NewTime(start), Kind: wire.WarningSpeedOver,
			Rule: rules.RuleSpeed, Value: &over, Limit: &limit}}})
	// Along the middle of the sample NBR zone z-centro (mixed_commercial), from its south-west
	// edge north-east, playing 85 dB(A) at the meter (≈ 73.5 dB(A) at the receptor: above the
	// zone's limit, a noise_limit episode).
	const lat0, lon0 = -20.8377115, -40.734398
	dlat, dlon := -20.8322925-lat0, -40.7267115-lon0
	length := math.Hypot(dlat*111320, dlon*104070)
	step := kmh / 3.6 / length // of the way, per second
	loud, second := 85.0, 1.0
	var b *wire.Batch
	for i := range seconds {
		at := start.Add(time.Duration(i+1) * time.Second)
		if i%5 == 0 {
			seq++
			b = &wire.Batch{V: 1, Vehicle: "EXPL-001", Epoch: "e-expl", Seq: seq, Clock: wire.ClockGPS}
			out = append(out, b)
		}
		if i == 0 {
			b.Tacho = append(b.Tacho, wire.Tacho{T: wire.NewTime(at), SpeedKmh: &kmh})
		}
		f := float64(i) * step
		b.GPS = append(b.GPS, wire.GPS{T: wire.NewTime(at), Lat: lat0 + f*dlat, Lon: lon0 + f*dlon, SpeedKmh: &kmh, HDOP: &hdop, Fix: wire.Fix3D})
		b.Sound = append(b.Sound, wire.Sound{T: wire.NewTime(at), LAeqDB: &loud, DurS: &second})
		b.SentAt = wire.NewTime(at.Add(time.Second))
	}
	return out
}

// TestDashboardExplainsWhatItShows: what puzzles a newcomer on the dashboard is explained where
// it is shown. EXPL-001's tachograph falls silent while it drives at 22 km/h: the toast says so,
// with the GPS speed and no "limit" (the 10 km/h of telemetry_fault is the speed from which a
// tachograph must report, not a limit); its data then stop, and its noise_limit episode's status
// "Interrompido" carries its explanation on the Alertas page (the chip's title and the page's
// legend) and on the episode page; a warning of its coach timed by the system clock is marked
// "relógio não confiável" with what it means and what it implies for the auto; and the Revisão
// page says when a draft comes.
func TestDashboardExplainsWhatItShows(t *testing.T) {
	chrome := chromiumPath(t)
	bin := testenv.Build(t)
	broker := testenv.StartMosquitto(t, testenv.MosquittoOptions{})
	prof, err := os.ReadFile(filepath.Join(testenv.RepoRoot(t), "profiles", "piuma.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	short := strings.Replace(string(prof), "\ngap_timeout_s: 120\n", "\ngap_timeout_s: 10\n", 1)
	if short == string(prof) {
		t.Fatal("piuma.yaml has no gap_timeout_s: 120")
	}
	profPath := filepath.Join(t.TempDir(), "piuma.yaml")
	if err := os.WriteFile(profPath, []byte(short), 0o600); err != nil {
		t.Fatal(err)
	}
	mon := startMonitorWithEnv(t, bin, broker.URL(), "TRENZINHO_PROFILE="+profPath) // drafts settle after 2 s
	b := startDashBrowser(t, chrome, 1440, 900)
	b.do(chromedp.Navigate(mon.base + "/"))
	b.waitJS(`!document.querySelector("#login-view").hidden`, 20*time.Second, "the login page")
	b.do(chromedp.SendKeys(chromedp.CSS("#login-user"), "admin"),
		chromedp.SendKeys(chromedp.CSS("#login-password"), "segredo-de-teste"),
		chromedp.Click(chromedp.CSS("#login-submit")))
	b.waitJS(`!document.querySelector("#app").hidden && document.querySelector("#conn").classList.contains("conn--live")`,
		20*time.Second, "the map with a live stream")

	c := mqtt.NewClient(mqtt.NewClientOptions().AddBroker(broker.URL()).SetClientID("explain-publisher"))
	if tok := c.Connect(); !tok.WaitTimeout(30*time.Second) || tok.Error() != nil {
		t.Fatalf("publisher: %v", tok.Error())
	}
	defer c.Disconnect(100)
	start := time.Now().UTC().Add(-10 * time.Minute).Truncate(time.Second)
	for _, bt := range silentTachoTrip(start, 150) {
		p, err := wire.Encode(bt, nil)
		if err != nil {
			t.Fatal(err)
		}
		if tok := c.Publish(wire.TelemetryTopic("EXPL-001"), 1, false, p); !tok.WaitTimeout(10*time.Second) || tok.Error() != nil {
			t.Fatalf("publish: %v", tok.Error())
		}
	}

	// The toast of the new episode says what happened, and names no limit.
	const isFault = `(t) => t.textContent.includes("EXPL-001") && t.textContent.includes("Falha da saída de dados do tacógrafo")`
	b.waitJS(`[...document.querySelectorAll("#toasts .toast")].some(`+isFault+`)`, 60*time.Second, "the toast of EXPL-001's telemetry_fault episode")
	toast := b.evalString(`[...document.querySelectorAll("#toasts .toast")].find(` + isFault + `).textContent`)
	b.shot("explain-01-toast")
	if !strings.Contains(toast, "tacógrafo silencioso com o veículo a 22 km/h pelo GPS") || strings.Contains(toast, "limite") {
		t.Errorf("toast %q: want the silent tachograph at the GPS speed, and no limit", toast)
	}

	// The Alertas page: the interrupted noise_limit episode's status explains itself, and so
	// does the legend.
	const noiseRow = `document.querySelector('#alerts-table tbody tr[data-episode^="EXPL-001.noise_limit."]')`
	b.do(chromedp.Navigate(mon.base + "/#/alertas"))
	b.waitJS(noiseRow+` !== null && `+noiseRow+`.textContent.includes("Interrompido")`,
		60*time.Second, "EXPL-001's noise_limit episode interrupted on the Alertas page")
	title := b.evalString(noiseRow + `.querySelector(".chip[title]")?.title || ""`)
	if !strings.Contains(title, "pararam antes de a condição cessar") || !strings.Contains(title, "reaberto") {
		t.Errorf("the Interrompido chip's title %q does not explain it", title)
	}
	b.do(chromedp.Click(chromedp.CSS("#status-legend summary")))
	b.waitJS(`document.querySelector("#status-legend").open && document.querySelector("#status-legend dl").getBoundingClientRect().height > 0`,
		5*time.Second, "the status legend open")
	if legend := b.text("#status-legend"); !strings.Contains(legend, "Interrompido") || !strings.Contains(legend, "o fim não foi observado") {
		t.Errorf("status legend %q", legend)
	}
	b.shot("explain-02-alerts-legend")

	// The episode page: the interruption and the system-clock warning explained.
	b.do(chromedp.Click(chromedp.CSS(`#alerts-table tbody tr[data-episode^="EXPL-001.noise_limit."] a`)))
	b.waitJS(`document.querySelector("#episode-warnings") !== null && document.querySelector("#interrupted-help") !== null`,
		20*time.Second, "the episode page with its coach warnings and its interruption")
	clock := b.evalString(`[...document.querySelectorAll("#episode-warnings .chip")].find((c) => c.textContent === "relógio não confiável")?.title || ""`)
	if !strings.Contains(clock, "relógio do sistema") || !strings.Contains(clock, "não é citado") {
		t.Errorf("the chip relógio não confiável's title %q does not explain it", clock)
	}
	if legend := b.text("#clock-legend"); !strings.Contains(legend, "não serve para afirmar no auto") {
		t.Errorf("the warnings' clock legend %q", legend)
	}
	if help := b.text("#interrupted-help"); !strings.Contains(help, "o fim não foi observado") {
		t.Errorf("the episode's interruption %q", help)
	}
	b.shot("explain-03-episode")

	// The Revisão page says when a draft comes (TRENZINHO_DRAFT_SETTLE=2s here).
	b.do(chromedp.Navigate(mon.base + "/#/revisao"))
	b.waitJS(`document.querySelector("#draft-settle") !== null`, 20*time.Second, "the Revisão page's settle note")
	if note := b.text("#draft-settle"); !strings.Contains(note, "Cada minuta é feita 2 s depois da última alteração do seu episódio") {
		t.Errorf("Revisão note %q", note)
	}
	b.shot("explain-04-review")
	b.checkConsole()
}
