package e2e

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"math"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	mqtt "github.com/eclipse/paho.mqtt.golang"

	"github.com/chromedp/chromedp"

	"github.com/trenzinho/trenzinho/internal/testkit/fleettest"
	"github.com/trenzinho/trenzinho/internal/testkit/testenv"
	"github.com/trenzinho/trenzinho/monitor/api"
	"github.com/trenzinho/trenzinho/monitor/complaints"
	"github.com/trenzinho/trenzinho/rules"
	"github.com/trenzinho/trenzinho/wire"
)

// complaintGeofences: a mixed residential NBR zone (55 dB(A) by day, 50 at night) around the
// Avenida Beira-Mar, whose middle is the zone's centre (the form's map opens there).
const complaintGeofences = `{"type":"FeatureCollection","features":[
{"type":"Feature","geometry":{"type":"Polygon","coordinates":[[[-40.7400,-20.8518],[-40.7200,-20.8518],[-40.7200,-20.8318],[-40.7400,-20.8318],[-40.7400,-20.8518]]]},
 "properties":{"id":"zone-res","kind":"nbr_zone","area":"mixed_residential","source":"survey"}},
{"type":"Feature","properties":{"id":"osm-way-1","kind":"street","name":"Avenida Beira-Mar","source":"osm"},"geometry":{"type":"LineString","coordinates":[[-40.74,-20.8418],[-40.72,-20.8418]]}}]}`

// TestComplaintsThroughThePipeline: a train's telemetry goes MQTT → ingest → InfluxDB (and the
// monitor); a complaint 44 m from where it passed loud, two minutes later, is matched at once
// against what InfluxDB holds: the train, its closest approach and the level estimated at the
// place above the area's limit. A complaint where no train passed gets "nenhum trenzinho". The
// inspector links the first to the noise episode the monitor opened. Then a citizen fills the
// form in headless Chromium (a phone) and gets the answer page, with no console error.
func TestComplaintsThroughThePipeline(t *testing.T) {
	bin := testenv.Build(t)
	broker := testenv.StartMosquitto(t, testenv.MosquittoOptions{})
	influx := testenv.StartInflux(t)
	influxURL := fmt.Sprintf("http://127.0.0.1:%d", influx.Port)
	testenv.StartProcess(t, "ingest", []string{"TRENZINHO_MQTT_URL=" + broker.URL(), "TRENZINHO_INFLUX_URL=" + influxURL,
		"TRENZINHO_INFLUX_BUCKET=trenzinho/autogen", "TRENZINHO_INGEST_CLIENT_ID=ingest-" + t.Name(),
		fmt.Sprintf("TRENZINHO_METRICS_LISTEN=127.0.0.1:%d", testenv.FreePort(t))}, filepath.Join(bin, "ingest"))
	geo := filepath.Join(t.TempDir(), "town.geojson")
	if err := os.WriteFile(geo, []byte(complaintGeofences), 0o644); err != nil {
		t.Fatal(err)
	}
	const token = "token-156-de-teste"
	mon := startMonitorAt(t, bin, broker.URL(), "", "TRENZINHO_GEOFENCES="+geo, "TRENZINHO_INFLUX_URL="+influxURL,
		"TRENZINHO_INFLUX_BUCKET=trenzinho/autogen", "TRENZINHO_COMPLAINTS_TOKEN="+token, "TRENZINHO_COMPLAINTS_POW_BITS=12")

	// PIU-002 drives east along a street 44 m south of the avenue for 4 minutes at 18 km/h with
	// its meter at 88 dB(A), passing lon -40.7300 at `pass`.
	const lat = -20.8422
	const mPerDegLon = 111320 * 0.9346
	start := time.Now().Add(-30 * time.Minute).Truncate(time.Second)
	pass := start.Add(120 * time.Second)
	trip := fleettest.Trip{Vehicle: "PIU-002", Start: start}
	for i := range 240 {
		trip.Seconds = append(trip.Seconds, fleettest.Second{Lat: lat, Lon: -40.7300 + float64(i-120)*5/mPerDegLon, Kmh: 18, DB: 88})
	}
	var seq uint64
	batches := trip.Batches(t, &seq)
	c := mqtt.NewClient(mqtt.NewClientOptions().AddBroker(broker.URL()).SetClientID("complaints-fleet"))
	if tok := c.Connect(); tok.Wait() && tok.Error() != nil {
		t.Fatal(tok.Error())
	}
	for _, b := range batches {
		if tok := c.Publish(wire.TelemetryTopic("PIU-002"), 1, false, b.Payload); tok.Wait() && tok.Error() != nil {
			t.Fatal(tok.Error())
		}
	}
	c.Disconnect(250)
	testenv.WaitFor(t, "ingest stores the trip", 90*time.Second, func() bool {
		return influx.Count(t, "gps", "lat", `"vehicle" = 'PIU-002'`) == 240 && influx.Count(t, "sound", "laeq_db", `"vehicle" = 'PIU-002'`) == 240
	})

	post := func(path string, body any, bearer string) (int, []byte) {
		b, _ := json.Marshal(body)
		req, _ := http.NewRequest("POST", mon.URL+path, bytes.NewReader(b))
		req.Header.Set("Content-Type", "application/json")
		if bearer != "" {
			req.Header.Set("Authorization", "Bearer "+bearer)
		}
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		out, _ := io.ReadAll(resp.Body)
		return resp.StatusCode, out
	}
	// The public form's way: a challenge solved.
	var ch complaints.Challenge
	testenv.Get(t, mon.URL, "", "/api/v1/public/complaints/challenge", &ch)
	nonce := ""
	for n := 0; nonce == ""; n++ {
		if complaints.LeadingZeroBits(ch.Challenge, fmt.Sprint(n)) >= ch.Difficulty {
			nonce = fmt.Sprint(n)
		}
	}
	at := pass.Add(2 * time.Minute)
	code, b := post("/api/v1/public/complaints", map[string]any{"lat": -20.8418, "lon": -40.7300, "at": at.Format(time.RFC3339),
		"kind": "som_alto", "contact": "vizinha@example.com", "challenge": ch.Challenge, "nonce": nonce}, "")
	var rc api.ComplaintReceipt
	if code != http.StatusCreated || json.Unmarshal(b, &rc) != nil {
		t.Fatalf("complaint: %d %s\n%s", code, b, mon.Tail(4096))
	}
	// The public receipt names no vehicle and no speed (LGPD); the staff read the matching.
	if rc.Result != nil || strings.Contains(string(b), "PIU-002") || strings.Contains(string(b), "km/h") {
		t.Errorf("the public receipt shows the matching: %s", b)
	}
	var staff struct {
		Detail []string          `json:"detail"`
		Result complaints.Result `json:"result"`
	}
	mon.client.get(t, "/api/v1/complaints/"+rc.ID, &staff)
	if len(staff.Result.Matches) != 1 {
		t.Fatalf("matches: %+v", staff)
	}
	m := staff.Result.Matches[0]
	// 88 dB(A) at r₁ = 2 m (the profile's), 44.5 m away: 88 − 20·log10(44.5/2) ≈ 61 dB(A).
	wantLevel := rules.ReceptorLevel(88, 2, m.DistanceM)
	if m.Vehicle != "PIU-002" || math.Abs(m.DistanceM-44.5) > 1.5 || m.At.Sub(pass).Abs() > time.Second || m.LevelDB == nil ||
		math.Abs(*m.LevelDB-wantLevel) > 0.01 || !m.Above || m.SpeedKmh == nil || *m.SpeedKmh != 18 {
		t.Errorf("match %+v", staff.Result)
	}
	if staff.Result.LimitDB == nil || (*staff.Result.LimitDB != 55 && *staff.Result.LimitDB != 50) {
		t.Errorf("limit: %+v", staff.Result)
	}
	if len(staff.Detail) != 1 || !strings.HasPrefix(staff.Detail[0], "PIU-002 passou às ") ||
		!strings.Contains(staff.Detail[0], fmt.Sprintf("a cerca de 45 m, a 18 km/h, com nível estimado de %.0f dB(A) — acima do limite da área", wantLevel)) {
		t.Errorf("detail %q", staff.Detail)
	}
	if len(rc.Answer) != 1 || !strings.HasPrefix(rc.Answer[0], "Um trenzinho passou às ") ||
		!strings.Contains(rc.Answer[0], fmt.Sprintf("a cerca de 45 m do local, com nível sonoro estimado de %.0f dB(A) no local, acima do limiar de triagem", wantLevel)) ||
		!strings.HasSuffix(rc.Answer[0], "o caso foi encaminhado à fiscalização.") {
		t.Errorf("answer %q", rc.Answer)
	}

	// The 156 system's way: two kilometres away, nobody.
	code, b = post("/api/v1/ouvidoria/complaints", map[string]any{"lat": -20.8600, "lon": -40.7500, "at": at.Format(time.RFC3339),
		"kind": "som_alto", "external_ref": "156-2026-42"}, token)
	var none api.ComplaintReceipt
	if code != http.StatusCreated || json.Unmarshal(b, &none) != nil || len(none.Result.Matches) != 0 ||
		len(none.Answer) != 1 || !strings.HasPrefix(none.Answer[0], "Nenhum trenzinho a menos de 300 m entre ") {
		t.Errorf("no train: %d %s", code, b)
	}

	// The answer page, anonymous.
	resp, err := http.Get(mon.URL + rc.AnswerURL)
	if err != nil {
		t.Fatal(err)
	}
	page, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if resp.StatusCode != http.StatusOK || !strings.Contains(string(page), "Um trenzinho passou às") || strings.Contains(string(page), "PIU-002") ||
		strings.Contains(string(page), "vizinha@") {
		t.Errorf("answer page %d:\n%s", resp.StatusCode, page)
	}

	// The monitor opened a noise episode of the same passage: the inspector links the complaint
	// to it, and the episode lists it.
	var ep rules.Episode
	testenv.WaitFor(t, "the noise_limit episode", 60*time.Second, func() bool {
		eps := mon.client.episodes(t, "vehicle=PIU-002&rule=noise_limit")
		if len(eps) > 0 {
			ep = eps[0]
		}
		return len(eps) > 0
	})
	code, b = mon.client.postJSON(t, "/api/v1/complaints/"+rc.ID+"/confirm", map[string]string{"episode_id": ep.ID})
	if code != http.StatusOK {
		t.Fatalf("confirm: %d %s", code, b)
	}
	var linked struct{ Items []struct{ ID string } }
	mon.client.get(t, "/api/v1/episodes/"+ep.ID+"/complaints", &linked)
	if len(linked.Items) != 1 || linked.Items[0].ID != rc.ID {
		t.Errorf("the episode's complaints: %+v", linked.Items)
	}

	t.Run("form in the browser", func(t *testing.T) {
		chrome := chromiumPath(t)
		br := startDashBrowser(t, chrome, 390, 844) // a phone
		br.do(chromedp.Navigate(mon.URL + "/reclamacao"))
		br.waitJS(`document.querySelector("#mapa .leaflet-container, #mapa.leaflet-container")`, 15*time.Second, "the map")
		// The map opens on the middle of the geofences — the avenue, 44 m north of the train's
		// street: a tap there marks the place.
		br.do(chromedp.ScrollIntoView("#mapa"))
		x := br.evalFloat(`(() => { const r = document.getElementById("mapa").getBoundingClientRect(); return r.left + r.width / 2; })()`)
		y := br.evalFloat(`(() => { const r = document.getElementById("mapa").getBoundingClientRect(); return r.top + r.height / 2; })()`)
		br.do(chromedp.MouseClickXY(x, y))
		br.waitJS(`document.getElementById("local-marcado").textContent.startsWith("Local marcado")`, 10*time.Second, "the marked place")
		local := at.In(time.FixedZone("BRT", -3*3600)).Format("2006-01-02T15:04")
		br.do(chromedp.SetValue("#horario", local), chromedp.SetValue("#tipo", "som_alto"),
			chromedp.SendKeys("#texto", "Som muito alto passando na avenida"))
		br.shot("complaint-form")
		br.do(chromedp.Click("#enviar"))
		br.waitJS(`location.pathname.startsWith("/r/") && document.getElementById("resposta")`, 60*time.Second, "the answer page")
		body := br.text("body")
		if !strings.Contains(body, "Um trenzinho passou às") || strings.Contains(body, "PIU-002") || !strings.Contains(body, "nível sonoro estimado de") ||
			!strings.Contains(body, "Aguardando análise") {
			t.Errorf("answer page:\n%s", body)
		}
		br.shot("complaint-answer")

		// The inspector's side: the queue shows the complaint with its match; the episode lists
		// the complaint linked to it.
		br.do(chromedp.Navigate(mon.URL + "/"))
		br.waitJS(`!document.querySelector("#login-view").hidden`, 20*time.Second, "the login page")
		br.do(chromedp.SendKeys("#login-user", "admin"), chromedp.SendKeys("#login-password", "segredo-de-teste"),
			chromedp.Click("#login-submit"))
		br.waitJS(`!document.querySelector("#app").hidden`, 20*time.Second, "the dashboard")
		br.do(chromedp.Navigate(mon.URL + "/#/reclamacoes"))
		br.waitJS(`[...document.querySelectorAll("#complaints-table tbody tr")].some((tr) => tr.textContent.includes("PIU-002 a 4") && tr.textContent.includes("dB(A) estimado"))`,
			20*time.Second, "the complaint in the queue with its match")
		if q := br.text("#complaints-table"); strings.Contains(q, "vizinha@") {
			t.Errorf("the queue shows a contact:\n%s", q)
		}
		br.shot("complaint-queue")
		br.do(chromedp.Navigate(mon.URL + "/#/episodio/" + ep.ID))
		br.waitJS(`document.querySelector("#episode-complaints") && !document.querySelector("#episode-complaints").hidden && document.querySelector("#episode-complaints").textContent.includes("Som alto")`,
			20*time.Second, "the linked complaint on the episode page")
		br.shot("complaint-episode")
		br.checkConsole()
	})
}

// postJSON POSTs a JSON body with the session and returns the status and the body.
func (c *monitorClient) postJSON(t *testing.T, path string, body any) (int, []byte) {
	t.Helper()
	b, _ := json.Marshal(body)
	req, _ := http.NewRequest("POST", c.base+path, bytes.NewReader(b))
	req.Header.Set("Authorization", "Bearer "+c.token)
	req.Header.Set("Content-Type", "application/json")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	out, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, out
}
