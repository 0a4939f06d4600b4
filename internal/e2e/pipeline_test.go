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

	"github.com/trenzinho/trenzinho/internal/testkit/testenv"
	"github.com/trenzinho/trenzinho/rules"
)

// maxAgeEnv lets the monitor take the simulations' fixed dates (late November 2026) whenever
// the tests run: readings older than TRENZINHO_MAX_AGE (30 days by default) are refused.
const maxAgeEnv = "TRENZINHO_MAX_AGE=87600h"

// monitorClient talks to a running monitor's API.
type monitorClient struct {
	base  string
	token string
}

func startMonitor(t *testing.T, bin string, mqttURL string) *monitorClient {
	return startMonitorAt(t, bin, mqttURL, filepath.Join(t.TempDir(), "monitor.db")).client
}

// runningMonitor is a monitor process and a logged-in client.
type runningMonitor struct {
	*testenv.Monitor
	client *monitorClient
}

// startMonitorAt starts a monitor with its database at db (a fresh one when empty) that takes
// the simulations' dates and drafts 2 s after an episode closes, then env, and logs in.
func startMonitorAt(t *testing.T, bin, mqttURL, db string, env ...string) *runningMonitor {
	t.Helper()
	m := &runningMonitor{Monitor: testenv.StartMonitor(t, bin, mqttURL, db, append([]string{maxAgeEnv, "TRENZINHO_DRAFT_SETTLE=2s"}, env...)...)}
	m.login(t)
	return m
}

// login waits for the monitor to listen and logs in.
func (m *runningMonitor) login(t *testing.T) {
	t.Helper()
	m.WaitListening(t)
	m.client = &monitorClient{base: m.URL, token: m.Login(t)}
}

func (c *monitorClient) get(t *testing.T, path string, out any) {
	t.Helper()
	testenv.Get(t, c.base, c.token, path, out)
}

// patch PATCHes a JSON body to a path and expects 200.
func (c *monitorClient) patch(t *testing.T, path string, body any) {
	t.Helper()
	b, _ := json.Marshal(body)
	req, _ := http.NewRequest("PATCH", c.base+path, bytes.NewReader(b))
	req.Header.Set("Authorization", "Bearer "+c.token)
	req.Header.Set("Content-Type", "application/json")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		msg, _ := io.ReadAll(resp.Body)
		t.Fatalf("PATCH %s: %s %s", path, resp.Status, msg)
	}
}

// raw GETs a path and returns the body.
func (c *monitorClient) raw(t *testing.T, path string) []byte {
	t.Helper()
	req, _ := http.NewRequest("GET", c.base+path, nil)
	req.Header.Set("Authorization", "Bearer "+c.token)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil || resp.StatusCode != http.StatusOK {
		t.Fatalf("GET %s: %s %v", path, resp.Status, err)
	}
	return b
}

func (c *monitorClient) episodes(t *testing.T, query string) []rules.Episode {
	var page struct{ Items []rules.Episode }
	c.get(t, "/api/v1/episodes?"+query, &page)
	return page.Items
}

// TestSpeedEpisodeThroughThePipeline: simulator → pty → bridge → Mosquitto → monitor. A trip
// that holds 45 km/h for 30 s makes one speed episode; a trip at 25 km/h makes none.
func TestSpeedEpisodeThroughThePipeline(t *testing.T) {
	bin := testenv.Build(t)
	broker := testenv.StartMosquitto(t, testenv.MosquittoOptions{})
	mon := startMonitor(t, bin, broker.URL())

	// Friday noon in Piúma: in service hours, so only the speed rule can fire.
	start := "2026-11-27T15:00:00Z"
	fast := startSimulation(t, bin, "--vehicles=1", "--prefix=FAST", "--scenario=20:15,45:30,20:30", "--duration=75s", "--speed-up=3", "--start="+start)
	slow := startSimulation(t, bin, "--vehicles=1", "--prefix=SLOW", "--scenario=25:75", "--duration=75s", "--speed-up=3", "--start="+start)
	startBridge(t, bin, broker.URL(), "FAST-001", fast.devices["FAST-001"], serviceInput(t, fast.devices["FAST-001"])...)
	startBridge(t, bin, broker.URL(), "SLOW-001", slow.devices["SLOW-001"], serviceInput(t, slow.devices["SLOW-001"])...)

	deadline := time.Now().Add(3 * time.Minute)
	var got []rules.Episode
	for time.Now().Before(deadline) {
		got = mon.episodes(t, "vehicle=FAST-001&rule=speed")
		if len(got) == 1 && got[0].End != nil {
			break
		}
		time.Sleep(time.Second)
	}
	if len(got) != 1 || got[0].End == nil {
		t.Fatalf("FAST-001: %d speed episodes (want 1, closed): %+v", len(got), got)
	}
	ep := got[0]
	wantStart, _ := time.Parse(time.RFC3339, "2026-11-27T15:00:15Z")
	// The tachograph reports speed in 1/256 km/h: 45 km/h is exact.
	if ep.Peak != 45 || ep.Source != "tacho" || ep.Article != "Art. 23" {
		t.Errorf("episode %+v", ep)
	}
	if d := ep.Start.Sub(wantStart); d < -time.Second || d > time.Second || ep.DurationS < 29 || ep.DurationS > 31 {
		t.Errorf("episode from %v for %v s; want from %v for 30 s", ep.Start, ep.DurationS, wantStart)
	}
	// SLOW-001's trip judged to its end (device time 75 s after the start; 70 s leaves room
	// for the last batch): an episode it made would be there by now.
	startT, _ := time.Parse(time.RFC3339, start)
	testenv.WaitFor(t, "SLOW-001's trip judged", 3*time.Minute, func() bool {
		seen := testenv.Scrape(t, mon.base+"/metrics")[`trenzinho_monitor_vehicle_last_seen_timestamp_seconds{vehicle="SLOW-001"}`]
		return seen >= float64(startT.Add(70*time.Second).Unix())
	})
	if slowEps := mon.episodes(t, "vehicle=SLOW-001&rule=speed"); len(slowEps) != 0 {
		t.Errorf("SLOW-001 at 25 km/h: %d speed episodes", len(slowEps))
	}
	var detail rules.Episode
	mon.get(t, "/api/v1/episodes/"+ep.ID, &detail)
	if len(detail.Readings) < 30 {
		t.Errorf("%d readings of evidence for a 30 s episode", len(detail.Readings))
	}
	var vehicles struct {
		Items []struct {
			ID       string
			SpeedKmh *float64 `json:"speed_kmh"`
		}
	}
	mon.get(t, "/api/v1/vehicles", &vehicles)
	if len(vehicles.Items) != 2 {
		t.Errorf("vehicles: %+v", vehicles.Items)
	}

	// The closed episode becomes a draft, sealed; its export verifies offline.
	var list struct {
		Items []struct {
			ID         string
			EpisodeIDs []string `json:"episode_ids"`
			Penalty    string
			FineUFMP   float64 `json:"fine_ufmp"`
			Integrity  string
		}
	}
	deadline = time.Now().Add(time.Minute)
	for time.Now().Before(deadline) {
		mon.get(t, "/api/v1/drafts?status=draft", &list)
		if len(list.Items) > 0 {
			break
		}
		time.Sleep(time.Second)
	}
	if len(list.Items) != 1 || list.Items[0].Penalty != "Art. 46, X" || list.Items[0].FineUFMP != 400 ||
		list.Items[0].Integrity != "ok" || len(list.Items[0].EpisodeIDs) != 1 || list.Items[0].EpisodeIDs[0] != ep.ID {
		t.Fatalf("drafts: %+v", list.Items)
	}
	var sealed json.RawMessage
	mon.get(t, "/api/v1/drafts/"+list.Items[0].ID+"/export", &sealed)
	file := filepath.Join(t.TempDir(), "auto.json")
	if err := os.WriteFile(file, sealed, 0o644); err != nil {
		t.Fatal(err)
	}
	out, err := exec.Command(filepath.Join(bin, "monitor"), "verify", file).CombinedOutput()
	if err != nil || !strings.Contains(string(out), "íntegro") {
		t.Fatalf("monitor verify: %v\n%s", err, out)
	}

	// And its PDF names the vehicle, the article, the fine and the measured speed.
	pdf := filepath.Join(t.TempDir(), "auto.pdf")
	if err := os.WriteFile(pdf, mon.raw(t, "/api/v1/drafts/"+list.Items[0].ID+"/pdf"), 0o644); err != nil {
		t.Fatal(err)
	}
	text, err := exec.Command("pdftotext", "-layout", pdf, "-").Output()
	if err != nil {
		testenv.Missing(t, "pdftotext (Debian poppler-utils): %v", err)
	}
	for _, want := range []string{"FAST-001", "Art. 23", "Art. 46, X", "400 UFMP", "45 km/h", "10 dias"} {
		if !strings.Contains(string(text), want) {
			t.Errorf("the PDF does not say %q", want)
		}
	}
}
