package e2e

import (
	"bytes"
	"crypto/ed25519"
	"crypto/rand"
	"crypto/x509"
	"encoding/base64"
	"encoding/json"
	"encoding/pem"
	"fmt"
	"io"
	"math"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/trenzinho/trenzinho/firmware-bridge/coach"
	"github.com/trenzinho/trenzinho/firmware-bridge/sim"
	"github.com/trenzinho/trenzinho/internal/testkit/testenv"
	"github.com/trenzinho/trenzinho/rules"
	"github.com/trenzinho/trenzinho/wire"
)

// coachRegistry: two licensees, one vehicle each — the monitor issues a configuration bundle
// for every vehicle of its registry.
const coachRegistry = `licensees:
  - id: L1
    razao_social: Trenzinho Alegria da Orla Ltda
    cnpj: 11.222.333/0001-81
  - id: L2
    razao_social: Passeios Recreativos Ilha do Gambá Ltda
    cnpj: 12.ABC.345/01DE-35
vehicles:
  - id: LOUD-001
    plate: ABC1D23
    licensee: L1
  - id: QUIET-001
    plate: ABC1D24
    licensee: L2
`

// TestCoachWarningsThroughTheRealPipeline: the monitor, with its registry, publishes each vehicle's
// configuration bundle (signed with its key) on a real Mosquitto; two real bridges, which pin
// that key, apply it and run the driver's coach over what two simulated trains write into
// pseudo-terminals (`firmware-bridge simulate`, 4× real time); the bridges' batches go to the
// monitor and, through ingest, to InfluxDB. Both trains drive the Piúma loop towards a hospital
// open 24 h with music at 82 dB(A):
//
//   - LOUD-001 keeps it loud past the hospital: its coach warns when the hospital's 200 m
//     radius comes within the bundle's lead distance (300 m), before the episode opens; the
//     warning is stored by ingest, listed on the sensitive_zone_sound episode, and stated in
//     the facts of its draft once an agent has confirmed the music;
//   - QUIET-001 is warned the same way and lowers the music to 50 dB(A) well before the
//     radius: no episode, and the warnings summary counts its warning heeded.
func TestCoachWarningsThroughTheRealPipeline(t *testing.T) {
	bin := testenv.Build(t)
	broker := testenv.StartMosquitto(t, testenv.MosquittoOptions{})
	dir := t.TempDir()

	// The hospital 900 m along the loop the simulator drives, 20 m to its side.
	route := sim.PiumaLoop()
	const hospitalAt, lead, radius = 900.0, 300.0, 200.0
	p, course := route.At(hospitalAt)
	side := (course + 90) * math.Pi / 180
	hLat := p.Lat + 20*math.Cos(side)/111320
	hLon := p.Lon + 20*math.Sin(side)/(111320*math.Cos(p.Lat*math.Pi/180))
	town := fmt.Sprintf(`{"type":"FeatureCollection","features":[
{"type":"Feature","geometry":{"type":"Point","coordinates":[%.6f,%.6f]},
 "properties":{"id":"hospital-1","kind":"sensitive","category":"hospital","name":"Hospital Municipal","opening_hours":"24/7","source":"survey","verified_by":"fiscal","verified_at":"2026-10-01"}}
]}`, hLon, hLat)
	sites := filepath.Join(dir, "sites.geojson")
	reg := filepath.Join(dir, "registry.yaml")
	if err := os.WriteFile(sites, []byte(town), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(reg, []byte(coachRegistry), 0o644); err != nil {
		t.Fatal(err)
	}
	// The monitor's signing key, which the bridges pin (what `monitor vehicle add` writes into
	// a Pi's bridge.env as TRENZINHO_CONFIG_KEY).
	pub, priv, _ := ed25519.GenerateKey(rand.Reader)
	der, err := x509.MarshalPKCS8PrivateKey(priv)
	if err != nil {
		t.Fatal(err)
	}
	keyPath := filepath.Join(dir, "monitor-signing.key")
	if err := os.WriteFile(keyPath, pem.EncodeToMemory(&pem.Block{Type: "PRIVATE KEY", Bytes: der}), 0o600); err != nil {
		t.Fatal(err)
	}

	var influx *testenv.Influx
	if os.Getenv("TRENZINHO_INFLUXD") != "" {
		influx = testenv.StartInflux(t)
		testenv.StartProcess(t, "ingest", []string{"TRENZINHO_MQTT_URL=" + broker.URL(),
			fmt.Sprintf("TRENZINHO_INFLUX_URL=http://127.0.0.1:%d", influx.Port),
			"TRENZINHO_INFLUX_BUCKET=trenzinho/autogen", "TRENZINHO_INGEST_CLIENT_ID=ingest-" + t.Name(),
			fmt.Sprintf("TRENZINHO_METRICS_LISTEN=127.0.0.1:%d", testenv.FreePort(t))}, filepath.Join(bin, "ingest"))
	} else {
		t.Log("TRENZINHO_INFLUXD not set: ingest and InfluxDB left out")
	}
	mon := startMonitorAt(t, bin, broker.URL(), "", "TRENZINHO_GEOFENCES="+sites, "TRENZINHO_REGISTRY="+reg,
		"TRENZINHO_SIGNING_KEY="+keyPath, fmt.Sprintf("TRENZINHO_BUNDLE_LEAD_M=%.0f", lead)).client

	// Yesterday (or today) at 14:00 in Piúma: within the service hours, in the past (a
	// receiver refuses readings from the future) by more than the warnings' 10 min window.
	loc, err := time.LoadLocation("America/Sao_Paulo")
	if err != nil {
		t.Fatal(err)
	}
	now := time.Now().In(loc)
	start := time.Date(now.Year(), now.Month(), now.Day(), 14, 0, 0, 0, loc)
	if start.After(now.Add(-time.Hour)) {
		start = start.AddDate(0, 0, -1)
	}
	start = start.UTC()
	// 25 km/h (6.94 m/s), under the speed warning's margin. LOUD-001: loud for 170 s (1180 m,
	// past the hospital and out of its radius at 1100 m), then quiet. QUIET-001: loud for 70 s
	// (486 m: warned at about 400 m), then quiet, 30 s before the radius begins at 700 m.
	const speedUp = 4
	scenarios := map[string]string{"LOUD": "25:170:82,25:60:50", "QUIET": "25:70:82,25:150:50"}
	pages := map[string]string{}
	for prefix, sc := range scenarios {
		s := startSimulation(t, bin, "--vehicles=1", "--prefix="+prefix, "--scenario="+sc, "--inputs=false", "--meter-clock",
			fmt.Sprintf("--speed-up=%d", speedUp), "--start="+start.Format(time.RFC3339), "--duration=240s")
		id := prefix + "-001"
		pages[id] = fmt.Sprintf("127.0.0.1:%d", testenv.FreePort(t))
		// One device second per batch, so that the coach evaluates every second of the trip.
		startBridge(t, bin, broker.URL(), id, s.devices[id], "--batch-interval", fmt.Sprintf("%dms", 1000/speedUp),
			"--config-key", base64.StdEncoding.EncodeToString(pub), "--coach-listen", pages[id])
	}

	// The bridge's local page shows the warning while LOUD-001 approaches.
	var shown coach.Active
	testenv.WaitFor(t, "LOUD-001's local page to show the warning", 2*time.Minute, func() bool {
		var st coach.State
		res, err := http.Get("http://" + pages["LOUD-001"] + "/state.json")
		if err != nil {
			return false
		}
		defer res.Body.Close()
		if json.NewDecoder(res.Body).Decode(&st) != nil {
			return false
		}
		for _, a := range st.Active {
			if a.Kind == coach.KindSiteSound {
				shown = a
				return true
			}
		}
		return false
	})
	if shown.Site != "hospital-1" || !strings.HasPrefix(shown.Text, "HOSPITAL A ") {
		t.Errorf("the local page shows %+v", shown)
	}

	// LOUD-001's episode opens and closes.
	var eps []rules.Episode
	testenv.WaitFor(t, "LOUD-001's sensitive_zone_sound episode closed", 3*time.Minute, func() bool {
		eps = mon.episodes(t, "vehicle=LOUD-001&rule="+rules.RuleSensitiveZoneSound)
		return len(eps) == 1 && eps[0].End != nil
	})
	ep := eps[0]

	// Both trains' warnings reached the monitor; QUIET-001's trip is over once its last quiet
	// readings are judged (its status goes on; its warnings are in).
	type storedWarning struct {
		Vehicle   string
		T         wire.Time `json:"t"`
		Kind      string
		Rule      string
		Site      string
		DistanceM *float64 `json:"distance_m"`
		Value     *float64
		Clock     string
	}
	siteWarnings := func(vehicle string) []storedWarning {
		var list struct{ Items []storedWarning }
		mon.get(t, "/api/v1/warnings?vehicle="+vehicle, &list)
		var out []storedWarning
		for _, w := range list.Items {
			if w.Kind == string(wire.WarningSiteSound) {
				out = append(out, w)
			}
		}
		return out
	}
	var loud, quiet []storedWarning
	testenv.WaitFor(t, "both trains' site warnings at the monitor", 3*time.Minute, func() bool {
		loud, quiet = siteWarnings("LOUD-001"), siteWarnings("QUIET-001")
		return len(loud) > 0 && len(quiet) > 0
	})
	first := func(ws []storedWarning) storedWarning {
		f := ws[0]
		for _, w := range ws[1:] {
			if w.T.Before(f.T.Time) {
				f = w
			}
		}
		return f
	}
	for id, w := range map[string]storedWarning{"LOUD-001": first(loud), "QUIET-001": first(quiet)} {
		// At the lead distance: the radius within 300 m, i.e. the hospital within 500 m, first
		// seen at most a few seconds (25 km/h: 7 m a second) after it came within it.
		if w.Site != "hospital-1" || w.Rule != rules.RuleSensitiveZoneSound || w.DistanceM == nil ||
			*w.DistanceM > lead+radius+1 || *w.DistanceM < lead+radius-60 || w.Value == nil || *w.Value < 70 || w.Clock != "gps" {
			t.Errorf("%s's first warning %+v (distance %v), want at the lead distance (≤ %.0f m from the hospital)", id, w, deref64(w.DistanceM), lead+radius)
		}
		t.Logf("%s warned at %s, %.0f m from the hospital", id, w.T.Sub(start), deref64(w.DistanceM))
	}
	if w := first(loud); !w.T.Before(ep.Start.Time) {
		t.Errorf("LOUD-001 warned at %s, not before its episode began at %s", w.T.Time, ep.Start.Time)
	} else {
		t.Logf("LOUD-001 warned %s before the episode began", ep.Start.Sub(w.T.Time))
	}

	// The episode lists the warning.
	var detail struct {
		Warnings []storedWarning
	}
	mon.get(t, "/api/v1/episodes/"+ep.ID, &detail)
	listed := false
	for _, w := range detail.Warnings {
		listed = listed || w.Vehicle == "LOUD-001" && w.Kind == "site_sound" && w.Site == "hospital-1"
	}
	if !listed {
		t.Errorf("the episode lists no site warning: %+v", detail.Warnings)
	}

	// QUIET-001 lowered the music: no episode of the rule, and the summary counts it heeded
	// (the trip is more than the 10 min window in the past).
	if got := mon.episodes(t, "vehicle=QUIET-001&rule="+rules.RuleSensitiveZoneSound); len(got) != 0 {
		t.Errorf("QUIET-001 lowered the sound and has episodes: %+v", got)
	}
	var summary struct {
		Licensees []struct {
			Licensee                            string
			Warnings, Heeded, Followed, Pending int
		}
	}
	mon.get(t, "/api/v1/warnings/summary", &summary)
	byLicensee := map[string]int{}
	for i, l := range summary.Licensees {
		byLicensee[l.Licensee] = i
	}
	if i, ok := byLicensee["L2"]; !ok || summary.Licensees[i].Heeded < 1 || summary.Licensees[i].Pending != 0 {
		t.Errorf("summary %+v: want QUIET-001's licensee L2 with its warning heeded", summary.Licensees)
	}
	if i, ok := byLicensee["L1"]; !ok || summary.Licensees[i].Followed < 1 {
		t.Errorf("summary %+v: want LOUD-001's licensee L1 with a warning followed by its episode", summary.Licensees)
	}

	// The agent confirms the music; the draft's facts state the warning.
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
	var drafts struct {
		Items []struct {
			ID         string
			EpisodeIDs []string `json:"episode_ids"`
		}
	}
	var draft string
	testenv.WaitFor(t, "the episode's draft", time.Minute, func() bool {
		mon.get(t, "/api/v1/drafts?status=draft&limit=100", &drafts)
		for _, d := range drafts.Items {
			for _, id := range d.EpisodeIDs {
				if id == ep.ID {
					draft = string(mon.raw(t, "/api/v1/drafts/"+d.ID))
					return true
				}
			}
		}
		return false
	})
	w := first(loud)
	want := fmt.Sprintf(`o condutor foi alertado pelo sistema embarcado às %s, a %.0f m de hospital \"Hospital Municipal\"`,
		w.T.In(loc).Format("15:04:05"), *w.DistanceM)
	if !strings.Contains(draft, want) {
		t.Errorf("the draft does not state the warning (%s):\n%s", want, draft)
	}

	// Ingest stored the warnings in InfluxDB.
	if influx != nil {
		testenv.WaitFor(t, "the warnings in InfluxDB", time.Minute, func() bool {
			return influx.Count(t, "warning", "distance_m", `"site" = 'hospital-1' AND "vehicle" = 'LOUD-001'`) >= 1 &&
				influx.Count(t, "warning", "distance_m", `"site" = 'hospital-1' AND "vehicle" = 'QUIET-001'`) >= 1
		})
	}
}

func deref64(p *float64) any {
	if p == nil {
		return nil
	}
	return *p
}
