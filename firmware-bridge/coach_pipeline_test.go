package main

import (
	"context"
	"crypto/ed25519"
	"crypto/rand"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/trenzinho/trenzinho/configbundle"
	"github.com/trenzinho/trenzinho/firmware-bridge/coach"
	"github.com/trenzinho/trenzinho/firmware-bridge/sim"
	"github.com/trenzinho/trenzinho/profile"
)

// TestCoachThroughTheBridge: `firmware-bridge run`, offline (no broker answers), with a signed
// bundle in its state directory (the Piúma profile, a hospital open 24/7), reads a simulated
// train driving loud towards the hospital through real pseudo-terminals; the coach warns at
// the lead distance, the buzzer's value file toggles, and the status page says so.
func TestCoachThroughTheBridge(t *testing.T) {
	gps, err := sim.OpenPTY(filepath.Join(t.TempDir(), "gps"))
	if err != nil {
		t.Skipf("no pseudo-terminals: %v", err)
	}
	defer gps.Close()
	tch, err := sim.OpenPTY(filepath.Join(t.TempDir(), "tacho"))
	if err != nil {
		t.Fatal(err)
	}
	defer tch.Close()
	slm, err := sim.OpenPTY(filepath.Join(t.TempDir(), "slm"))
	if err != nil {
		t.Fatal(err)
	}
	defer slm.Close()

	// A street east from the start; the hospital beside it 700 m on: the warning is due 500 m
	// before it (300 m of lead + its 200 m radius), 200 m — about 30 s at 25 km/h — after the
	// start, once the meter's 5 s emission window is full.
	const lat0, lon0, perDegLon = -20.8367, -40.7292, 111320 * 0.93459
	lonAt := func(m float64) float64 { return lon0 + m/perDegLon }
	route := sim.NewRoute("rumo-ao-hospital", sim.Point{Lat: lat0, Lon: lon0}, sim.Point{Lat: lat0, Lon: lonAt(3000)})
	gf, _ := json.Marshal(map[string]any{"type": "FeatureCollection", "features": []any{
		map[string]any{"type": "Feature", "properties": map[string]any{"id": "s-hospital", "kind": "sensitive",
			"category": "hospital", "name": "Hospital Municipal", "source": "survey", "opening_hours": "24/7"},
			"geometry": map[string]any{"type": "Point", "coordinates": []float64{lonAt(700), lat0}}},
	}})
	pub, priv, _ := ed25519.GenerateKey(rand.Reader)
	now := time.Now().UTC().Truncate(time.Second)
	msg, err := configbundle.Sign(&configbundle.Bundle{Format: configbundle.Format, Vehicle: "PIU-001", Licensee: "L1",
		Version: 12, IssuedAt: now.Add(-time.Hour), ValidUntil: now.Add(time.Hour),
		Profile: configbundle.Profile{ID: "piuma", YAML: string(profile.PiumaYAML())}, Geofences: gf}, priv)
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	state := filepath.Join(dir, "state")
	if err := os.MkdirAll(state, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(state, "config.bundle"), msg, 0o644); err != nil {
		t.Fatal(err)
	}
	buzzer := filepath.Join(dir, "gpio22-value")
	if err := os.WriteFile(buzzer, []byte("0\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	page := ln.Addr().String()
	ln.Close()

	ctx, cancel := context.WithCancel(context.Background())
	var wg sync.WaitGroup
	defer func() { cancel(); wg.Wait() }()
	wg.Add(2)
	go func() {
		defer wg.Done()
		v := &sim.Vehicle{ID: "PIU-001", Route: route, Scenario: sim.Scenario{{Duration: time.Hour, SpeedKmh: 25, LAeqDB: 82}}}
		_, _ = sim.Play(ctx, v, sim.Outputs{GPS: gps.Master, Tacho: tch.Master, SLM: slm.Master},
			sim.PlayConfig{Start: time.Now().UTC(), SpeedUp: 1, GPSHz: 1, MeterClock: true})
	}()
	runErr := make(chan error, 1)
	go func() {
		defer wg.Done()
		runErr <- cmdRun(ctx, []string{"--vehicle", "PIU-001", "--state-dir", state, "--mqtt-url", "tcp://127.0.0.1:1",
			"--gps-port", gps.Path, "--tacho-port", tch.Path, "--slm-port", slm.Path,
			"--config-key", base64.StdEncoding.EncodeToString(pub), "--log-level", "error",
			"--coach-listen", page, "--buzzer-gpio", buzzer})
	}()

	// The buzzer's value file goes to 1 (the site_sound pattern) — polled faster than its
	// 400 ms beeps.
	var sounded bool
	deadline := time.Now().Add(90 * time.Second)
	for !sounded && time.Now().Before(deadline) {
		select {
		case err := <-runErr:
			t.Fatalf("run stopped: %v", err)
		default:
		}
		b, _ := os.ReadFile(buzzer)
		sounded = strings.TrimSpace(string(b)) == "1"
		time.Sleep(20 * time.Millisecond)
	}
	if !sounded {
		t.Fatal("the buzzer's value file never went to 1")
	}
	var st coach.State
	res, err := http.Get(fmt.Sprintf("http://%s/state.json", page))
	if err != nil {
		t.Fatal(err)
	}
	defer res.Body.Close()
	if err := json.NewDecoder(res.Body).Decode(&st); err != nil {
		t.Fatal(err)
	}
	if st.ConfigVersion != 12 || len(st.Active) == 0 {
		t.Fatalf("status page: %+v", st)
	}
	a := st.Active[0]
	// Warned within the lead distance, before the 200 m where an episode could start.
	if a.Kind != coach.KindSiteSound || a.Site != "s-hospital" || a.DistanceM > 520 || a.DistanceM < 300 ||
		!strings.HasPrefix(a.Text, "HOSPITAL A ") {
		t.Errorf("active warning %+v", a)
	}
	t.Logf("warned: %s", a.Text)

	// The warning is evidence: Warn closed its batch, so the spool holds it within moments.
	var spooled bool
	for deadline := time.Now().Add(30 * time.Second); !spooled && time.Now().Before(deadline); time.Sleep(50 * time.Millisecond) {
		_ = filepath.WalkDir(state, func(path string, d os.DirEntry, err error) error {
			if err != nil || d.IsDir() || spooled {
				return nil
			}
			b, _ := os.ReadFile(path)
			spooled = strings.Contains(string(b), `"warnings":[{`) && strings.Contains(string(b), `"kind":"site_sound"`) &&
				strings.Contains(string(b), `"site":"s-hospital"`)
			return nil
		})
	}
	if !spooled {
		t.Error("no spooled batch carries the coach's site_sound warning")
	}
}
