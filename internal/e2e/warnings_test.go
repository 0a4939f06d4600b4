package e2e

import (
	"bytes"
	"encoding/json"
	"io"
	"net/http"
	"os"
	"os/exec"
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

// warnedTown is one verified hospital, open day and night.
const warnedTown = `{"type":"FeatureCollection","features":[
{"type":"Feature","geometry":{"type":"Point","coordinates":[-40.3000,-20.8000]},
 "properties":{"id":"hospital-1","kind":"sensitive","category":"hospital","name":"Hospital Municipal","opening_hours":"24/7","source":"survey","verified_by":"fiscal","verified_at":"2026-10-01"}}
]}`

// warnedTrip is a vehicle's telemetry, one batch per 5 s, as a bridge sends it.
type warnedTrip struct {
	vehicle string
	seq     uint64
	t       time.Time
	out     []*wire.Batch
}

// north is the latitude m metres north of the hospital.
func north(m float64) float64 { return -20.8 + m/111320 }

// stand adds seconds of readings standing m metres north of the hospital at db dB(A), and the
// warnings (their t set from their offset in seconds from the start of the stand).
func (tr *warnedTrip) stand(seconds int, m, db float64, warnings map[int]wire.Warning) {
	kmh, hdop, dur := 8.0, 0.8, 1.0
	var b *wire.Batch
	for i := range seconds {
		if i%5 == 0 {
			tr.seq++
			b = &wire.Batch{V: 1, Vehicle: tr.vehicle, Epoch: "e-warn", Seq: tr.seq, Clock: wire.ClockGPS}
			tr.out = append(tr.out, b)
		}
		at := wire.NewTime(tr.t)
		level := db
		b.Tacho = append(b.Tacho, wire.Tacho{T: at, SpeedKmh: &kmh})
		b.GPS = append(b.GPS, wire.GPS{T: at, Lat: north(m), Lon: -40.3, SpeedKmh: &kmh, HDOP: &hdop, Fix: wire.Fix3D})
		b.Sound = append(b.Sound, wire.Sound{T: at, LAeqDB: &level, DurS: &dur})
		if w, ok := warnings[i]; ok {
			w.T = wire.NewTime(tr.t.Add(200 * time.Millisecond))
			b.Warnings = append(b.Warnings, w)
		}
		b.SentAt = wire.NewTime(tr.t.Add(time.Second))
		tr.t = tr.t.Add(time.Second)
	}
}

// TestWarningsThroughThePipeline: batches published to Mosquitto as a bridge sends them, judged by
// the real monitor. LOUD-001's coach warns 300 m before an open hospital and the driver keeps
// the music loud at 50 m: the episode that opens shows the warning on its timeline, and its
// draft states it as the device's own record. QUIET-001 is warned the same way and lowers the
// sound: no episode, and its warning counts as heeded; so does a warning of speed it sends alone
// in its batch.
func TestWarningsThroughThePipeline(t *testing.T) {
	bin := testenv.Build(t)
	broker := testenv.StartMosquitto(t, testenv.MosquittoOptions{})
	sites := filepath.Join(t.TempDir(), "sites.geojson")
	if err := os.WriteFile(sites, []byte(warnedTown), 0o644); err != nil {
		t.Fatal(err)
	}
	mon := startMonitorAt(t, bin, broker.URL(), "", "TRENZINHO_GEOFENCES="+sites).client

	start := time.Date(2026, 11, 26, 13, 0, 0, 0, time.UTC) // a Thursday, 10:00 in Piúma
	distance, value, limit := 300.0, 80.0, 65.0
	warn := wire.Warning{Kind: wire.WarningSiteSound, Rule: rules.RuleSensitiveZoneSound, Site: "hospital-1",
		DistanceM: &distance, Value: &value, Limit: &limit}
	loud := &warnedTrip{vehicle: "LOUD-001", t: start}
	loud.stand(5, 300, 80, map[int]wire.Warning{2: warn})
	loud.stand(30, 50, 80, nil)
	loud.stand(30, 50, 50, nil)
	quiet := &warnedTrip{vehicle: "QUIET-001", t: start}
	quiet.stand(5, 300, 80, map[int]wire.Warning{2: warn})
	quiet.stand(60, 50, 50, nil)
	// A batch of a warning alone, as a bridge closes it when the warning comes (bridge.Warn):
	// judged and stored like any other.
	quiet.seq++
	kmh, speedLimit := 28.0, 30.0
	quiet.out = append(quiet.out, &wire.Batch{V: 1, Vehicle: "QUIET-001", Epoch: "e-warn", Seq: quiet.seq, Clock: wire.ClockGPS,
		SentAt: wire.NewTime(quiet.t), Warnings: []wire.Warning{{T: wire.NewTime(quiet.t), Kind: wire.WarningSpeedNear,
			Rule: rules.RuleSpeed, Value: &kmh, Limit: &speedLimit}}})
	sentinel := &warnedTrip{vehicle: "SENT-001", t: start.Add(time.Hour)}
	sentinel.stand(1, 5000, 40, nil)

	c := mqtt.NewClient(mqtt.NewClientOptions().AddBroker(broker.URL()).SetClientID("warnings-publisher"))
	if tok := c.Connect(); !tok.WaitTimeout(30*time.Second) || tok.Error() != nil {
		t.Fatalf("publisher: %v", tok.Error())
	}
	defer c.Disconnect(100)
	for _, tr := range []*warnedTrip{loud, quiet, sentinel} {
		for _, b := range tr.out {
			p, err := wire.Encode(b, nil)
			if err != nil {
				t.Fatal(err)
			}
			if tok := c.Publish(wire.TelemetryTopic(tr.vehicle), 1, false, p); !tok.WaitTimeout(10*time.Second) || tok.Error() != nil {
				t.Fatalf("publish: %v", tok.Error())
			}
		}
	}

	var eps []rules.Episode
	testenv.WaitFor(t, "LOUD-001's episode closed", 2*time.Minute, func() bool {
		eps = mon.episodes(t, "vehicle=LOUD-001&rule="+rules.RuleSensitiveZoneSound)
		return len(eps) == 1 && eps[0].End != nil
	})
	ep := eps[0]
	if ep.Site == nil || ep.Site.ID != "hospital-1" || !ep.Start.After(start.Add(4*time.Second)) {
		t.Fatalf("episode %+v", ep)
	}
	// Every batch of QUIET-001 is judged once its warnings are stored.
	var quietWarnings struct{ Items []json.RawMessage }
	testenv.WaitFor(t, "QUIET-001's warning stored", time.Minute, func() bool {
		mon.get(t, "/api/v1/warnings?vehicle=QUIET-001", &quietWarnings)
		return len(quietWarnings.Items) == 2
	})
	// The sentinel, published last: once the monitor knows it, every batch before it is judged.
	testenv.WaitFor(t, "the sentinel judged", time.Minute, func() bool {
		var vs struct{ Items []struct{ ID string } }
		mon.get(t, "/api/v1/vehicles", &vs)
		for _, v := range vs.Items {
			if v.ID == "SENT-001" {
				return true
			}
		}
		return false
	})

	// The episode's timeline: the warning, stated.
	var detail struct {
		Warnings []struct {
			Vehicle   string
			T         wire.Time `json:"t"`
			Kind      string
			Rule      string
			Site      string
			DistanceM *float64 `json:"distance_m"`
			Clock     string
			Stated    bool
		}
	}
	mon.get(t, "/api/v1/episodes/"+ep.ID, &detail)
	if len(detail.Warnings) != 1 {
		t.Fatalf("episode warnings: %+v", detail.Warnings)
	}
	if w := detail.Warnings[0]; w.Vehicle != "LOUD-001" || !w.T.Equal(start.Add(2200*time.Millisecond)) || w.Kind != "site_sound" ||
		w.Site != "hospital-1" || w.DistanceM == nil || *w.DistanceM != 300 || w.Clock != "gps" || !w.Stated {
		t.Errorf("episode warning %+v", w)
	}

	// Heeded and followed: QUIET-001 opened nothing, LOUD-001 its episode.
	if got := mon.episodes(t, "vehicle=QUIET-001"); len(got) != 0 {
		t.Errorf("QUIET-001 lowered the sound and has episodes: %+v", got)
	}
	var summary struct {
		WindowMin float64 `json:"window_min"`
		Licensees []struct {
			Licensee                            string
			Warnings, Heeded, Followed, Pending int
		}
	}
	mon.get(t, "/api/v1/warnings/summary", &summary)
	if len(summary.Licensees) != 1 || summary.WindowMin != 10 {
		t.Fatalf("summary %+v", summary)
	}
	if l := summary.Licensees[0]; l.Warnings != 3 || l.Heeded != 2 || l.Followed != 1 || l.Pending != 0 {
		t.Errorf("summary %+v, want 3 warnings: 2 heeded, 1 followed", l)
	}

	// The dashboard: the episode's page lists the warning; the fleet page counts it per licensee.
	b := startDashBrowser(t, chromiumPath(t), 1280, 900)
	b.do(chromedp.Navigate(mon.base + "/"))
	b.waitJS(`!document.querySelector("#login-view").hidden`, 20*time.Second, "the login page")
	b.do(chromedp.SendKeys(chromedp.CSS("#login-user"), "admin"),
		chromedp.SendKeys(chromedp.CSS("#login-password"), "segredo-de-teste"),
		chromedp.Click(chromedp.CSS("#login-submit")))
	b.waitJS(`!document.querySelector("#app").hidden`, 20*time.Second, "the dashboard")
	b.do(chromedp.Navigate(mon.base + "/#/episodio/" + ep.ID))
	b.waitJS(`(document.querySelector("#episode-warnings") || {}).textContent?.includes("citado na minuta")`, 20*time.Second, "the episode's warnings")
	if got := b.text("#episode-warnings"); !strings.Contains(got, "som perto de local sensível") || !strings.Contains(got, "Hospital Municipal") ||
		!strings.Contains(got, "300 m") || !strings.Contains(got, "Alertas do sistema embarcado (1)") {
		t.Errorf("the episode's warnings card: %q", got)
	}
	b.do(chromedp.Evaluate[chromedp.Void](`document.querySelector("#episode-warnings").scrollIntoView()`))
	b.shot("warnings-episode")
	b.do(chromedp.Navigate(mon.base + "/#/frota"))
	b.waitJS(`document.querySelector("#warnings-table") !== null && document.querySelector("form.toolbar .date-input") !== null`, 20*time.Second, "the fleet page")
	b.do(chromedp.Evaluate[chromedp.Void](`(() => { const i = document.querySelector("form.toolbar .date-input"); i.value = "20/11/2026"; i.form.requestSubmit(); })()`))
	b.waitJS(`(document.querySelector("#warnings-table tbody tr[data-licensee]") || {}).textContent !== undefined`, 20*time.Second, "the warnings per licensee")
	cells, err := chromedp.Run(b.ctx, chromedp.Evaluate[[]string](`[...document.querySelectorAll("#warnings-table tbody tr[data-licensee] > *")].map((c) => c.textContent.trim())`))
	if err != nil || len(cells) != 5 || cells[1] != "3" || cells[2] != "2" || cells[3] != "1" || cells[4] != "0" {
		t.Errorf("the fleet page's warnings row: %q %v", cells, err)
	}
	b.do(chromedp.Evaluate[chromedp.Void](`document.querySelector("#warnings").scrollIntoView()`))
	b.shot("warnings-fleet")
	b.checkConsole()

	// The agent confirms the music; the draft's facts state the warning as the device's record.
	body, _ := json.Marshal(map[string]string{"kind": rules.VerifyMusic, "note": "Música alta ouvida em frente ao hospital."})
	req, _ := http.NewRequest("POST", mon.base+"/api/v1/episodes/"+ep.ID+"/verification", bytes.NewReader(body))
	req.Header.Set("Authorization", "Bearer "+mon.token)
	req.Header.Set("Content-Type", "application/json")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	msg, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("verification: %s %s", resp.Status, msg)
	}
	var list struct {
		Items []struct {
			ID         string
			EpisodeIDs []string `json:"episode_ids"`
		}
	}
	testenv.WaitFor(t, "the draft", time.Minute, func() bool {
		mon.get(t, "/api/v1/drafts?status=draft", &list)
		return len(list.Items) > 0
	})
	if len(list.Items) != 1 || len(list.Items[0].EpisodeIDs) != 1 || list.Items[0].EpisodeIDs[0] != ep.ID {
		t.Fatalf("drafts %+v", list.Items)
	}
	draft := string(mon.raw(t, "/api/v1/drafts/"+list.Items[0].ID))
	want := `o condutor foi alertado pelo sistema embarcado às 10:00:02, a 300 m de hospital \"Hospital Municipal\"`
	if !strings.Contains(draft, want) || !strings.Contains(draft, "equipamento do licenciado") {
		t.Errorf("the draft does not state the warning (%s):\n%s", want, draft)
	}
	// And the draft's PDF says it.
	pdf := filepath.Join(t.TempDir(), "auto.pdf")
	if err := os.WriteFile(pdf, mon.raw(t, "/api/v1/drafts/"+list.Items[0].ID+"/pdf"), 0o644); err != nil {
		t.Fatal(err)
	}
	if text, err := exec.Command("pdftotext", pdf, "-").Output(); err != nil {
		testenv.Missing(t, "pdftotext (Debian poppler-utils): %v", err)
	} else if flat := strings.Join(strings.Fields(string(text)), " "); !strings.Contains(flat, "o condutor foi alertado pelo sistema embarcado às 10:00:02") {
		t.Errorf("the PDF does not state the warning:\n%s", flat)
	}

	// The sealed bundle holds the batch that carried the warning, verbatim: the device's record.
	var sealed struct {
		Bundle struct {
			Batches []struct {
				Seq     uint64
				Payload string
			}
		}
	}
	mon.get(t, "/api/v1/drafts/"+list.Items[0].ID+"/export", &sealed)
	carried := false
	for _, rb := range sealed.Bundle.Batches {
		carried = carried || rb.Seq == 1 && strings.Contains(rb.Payload, `"warnings":[{"t":"2026-11-26T13:00:02.2Z","kind":"site_sound"`)
	}
	if !carried {
		t.Errorf("the bundle lacks the batch of the warning: %d batches", len(sealed.Bundle.Batches))
	}
}
