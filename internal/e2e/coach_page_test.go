package e2e

import (
	"crypto/ed25519"
	"crypto/rand"
	"encoding/json"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"testing"
	"time"

	"github.com/chromedp/chromedp"

	"github.com/trenzinho/trenzinho/configbundle"
	"github.com/trenzinho/trenzinho/firmware-bridge/bridge"
	"github.com/trenzinho/trenzinho/firmware-bridge/coach"
	"github.com/trenzinho/trenzinho/profile"
	"github.com/trenzinho/trenzinho/wire"
)

// TestCoachPageInTheBrowser: a bridge verifies a signed bundle (the Piúma profile, a school on
// the street) and hands it to its driver's coach; the coach is driven loud towards the school
// during its hours, then over the speed limit; the local status page, in headless Chromium,
// shows "ESCOLA A 180 m — ABAIXE O SOM" and then "31 km/h — LIMITE 30", with no console error.
func TestCoachPageInTheBrowser(t *testing.T) {
	chrome := chromiumPath(t)
	const lat0, lon0, perDegLon = -20.8367, -40.7292, 111320 * 0.93459
	lonAt := func(m float64) float64 { return lon0 + m/perDegLon }
	gf, _ := json.Marshal(map[string]any{"type": "FeatureCollection", "features": []any{
		map[string]any{"type": "Feature", "properties": map[string]any{"id": "s-escola", "kind": "sensitive",
			"category": "school", "name": "Escola do Centro", "source": "survey", "opening_hours": "Mo-Fr 07:00-12:00"},
			"geometry": map[string]any{"type": "Point", "coordinates": []float64{lonAt(1000), lat0}}},
	}})
	issued := time.Now().Add(-time.Hour)
	pub, priv, _ := ed25519.GenerateKey(rand.Reader)
	msg, err := configbundle.Sign(&configbundle.Bundle{Format: configbundle.Format, Vehicle: "PIU-001", Licensee: "L1",
		Version: 9, IssuedAt: issued, ValidUntil: issued.Add(24 * time.Hour),
		Profile: configbundle.Profile{ID: "piuma", YAML: string(profile.PiumaYAML())}, Geofences: gf}, priv)
	if err != nil {
		t.Fatal(err)
	}
	log := slog.New(slog.DiscardHandler)
	co := coach.New(coach.Options{Vehicle: "PIU-001", Logger: log})
	br, err := bridge.Open(bridge.Config{Vehicle: "PIU-001", StateDir: t.TempDir(), ConfigKey: pub, Coach: co, Logger: log})
	if err != nil {
		t.Fatal(err)
	}
	if err := br.ReceiveConfig(msg); err != nil {
		t.Fatal(err)
	}

	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	srv := &http.Server{Handler: coach.Page(co, ""), ReadHeaderTimeout: 5 * time.Second}
	go srv.Serve(ln)
	t.Cleanup(func() { srv.Close() })

	// A Wednesday, 10:00 in Piúma: the school is open.
	start := time.Date(2026, 12, 2, 13, 0, 0, 0, time.UTC)
	x, i := 0.0, 0
	drive := func(kmh, db float64) {
		t.Helper()
		x += kmh / 3.6
		tt := wire.NewTime(start.Add(time.Duration(i) * time.Second))
		i++
		co.Apply(&wire.Batch{
			GPS:   []wire.GPS{{T: tt, Lat: lat0, Lon: lonAt(x), SpeedKmh: &kmh, HDOP: ptrF(0.8), Fix: wire.Fix3D}},
			Tacho: []wire.Tacho{{T: tt, SpeedKmh: &kmh}},
			Sound: []wire.Sound{{T: tt, LAeqDB: &db}},
		})
	}
	for range 118 { // 819.4 m at 25 km/h, loud
		drive(25, 80)
	}
	drive((820-x)*3.6, 80) // to 180 m from the school
	for range 5 {
		drive(0, 80)
	}

	b := startDashBrowser(t, chrome, 1280, 720)
	b.do(chromedp.Navigate(fmt.Sprintf("http://%s/", ln.Addr())))
	b.waitJS(`[...document.querySelectorAll('.alerta')].some(e => e.textContent === 'ESCOLA A 180 m — ABAIXE O SOM')`,
		20*time.Second, "the school warning on the page")
	if got := b.text("#rodape"); got != "Configuração v9 · 1 alerta(s) emitido(s)" {
		t.Errorf("footer %q", got)
	}
	b.shot("escola")
	for range 4 { // quieter, and faster than the limit
		drive(31, 60)
	}
	b.waitJS(`[...document.querySelectorAll('.alerta[data-kind=speed_over]')].some(e => e.textContent === '31 km/h — LIMITE 30')`,
		20*time.Second, "the speed warning on the page")
	if fs := b.evalFloat(`parseFloat(getComputedStyle(document.querySelector('.alerta')).fontSize)`); fs < 48 {
		t.Errorf("warning text %v px: not big", fs)
	}
	b.shot("velocidade")
	for range 6 { // back under the margin, and past the school's lead distance
		drive(20, 60)
	}
	b.waitJS(`document.querySelectorAll('.alerta').length === 0 && !document.getElementById('calmo').hidden`,
		20*time.Second, "the warnings gone")
	b.checkConsole()
}

func ptrF(v float64) *float64 { return &v }
