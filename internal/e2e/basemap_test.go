package e2e

import (
	"io/fs"
	"net"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"

	"github.com/trenzinho/trenzinho/geofences"
	"github.com/trenzinho/trenzinho/internal/testkit/testenv"
)

// TestOfflineBaseMapInTheBrowser: with a tile server that cannot be reached (a closed port, as
// offline), the dashboard's map draws the street extract (GET /api/v1/basemap) as vectors under
// the geofences, every street of it, and credits it "© OpenStreetMap contributors (ODbL)" —
// labelled a sample, since the shipped extract of Piúma is one.
func TestOfflineBaseMapInTheBrowser(t *testing.T) {
	chrome := chromiumPath(t)
	bin := testenv.Build(t)
	broker := testenv.StartMosquitto(t, testenv.MosquittoOptions{})
	raw, err := fs.ReadFile(geofences.SampleStreetsFS(), "basemap/piuma-sample-streets.geojson")
	if err != nil {
		t.Fatal(err)
	}
	streetsPath := filepath.Join(t.TempDir(), "streets.geojson")
	if err := os.WriteFile(streetsPath, raw, 0o644); err != nil {
		t.Fatal(err)
	}
	streets, err := geofences.SampleStreets()
	if err != nil {
		t.Fatal(err)
	}
	// A port nobody listens on: every tile request is refused.
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	closed := ln.Addr().String()
	ln.Close()
	mon := startMonitorWithEnv(t, bin, broker.URL(), "TRENZINHO_BASEMAP="+streetsPath,
		"TRENZINHO_TILE_URL=http://"+closed+"/{z}/{x}/{y}.png")

	b := startDashBrowser(t, chrome, 1280, 800)
	b.allowConsole(`ERR_CONNECTION_REFUSED`)
	b.do(chromedp.Navigate(mon.base + "/"))
	b.waitJS(`!document.querySelector("#login-view").hidden`, 20*time.Second, "the login page")
	b.do(chromedp.SendKeys(chromedp.CSS("#login-user"), "admin"),
		chromedp.SendKeys(chromedp.CSS("#login-password"), "segredo-de-teste"),
		chromedp.Click(chromedp.CSS("#login-submit")))
	b.waitJS(`!document.querySelector("#app").hidden`, 20*time.Second, "the map")
	n := len(streets.OfKind(geofences.KindStreet))
	b.waitJS(`[...document.querySelectorAll(".leaflet-basemap-pane path.basemap-street")].filter((p) => {
		const r = p.getBoundingClientRect(); return r.width > 0 || r.height > 0; }).length === `+strconv.Itoa(n),
		20*time.Second, "every street of the base map drawn")
	b.waitJS(`document.querySelectorAll(".site-badge").length > 0`, 10*time.Second, "the geofences over it")
	// Visible: inside the window, not hidden.
	if !b.evalBool(`(() => { const a = document.querySelector(".leaflet-control-attribution"), r = a.getBoundingClientRect();
		return r.width > 0 && r.height > 0 && r.top >= 0 && r.bottom <= innerHeight && r.right <= innerWidth && getComputedStyle(a).visibility !== "hidden"; })()`) {
		t.Errorf("the attribution is not visible: %s", b.evalString(`JSON.stringify(document.querySelector(".leaflet-control-attribution").getBoundingClientRect()) + " in " + innerWidth + "x" + innerHeight`))
	}
	attribution := b.text(".leaflet-control-attribution")
	if !strings.Contains(attribution, "© OpenStreetMap contributors (ODbL)") || !strings.Contains(attribution, "amostra") {
		t.Errorf("attribution %q: want the ODbL credit and the sample label", attribution)
	}
	// The streets lie under the geofences, not over them.
	if !b.evalBool(`+getComputedStyle(document.querySelector(".leaflet-basemap-pane")).zIndex < +getComputedStyle(document.querySelector(".leaflet-overlay-pane")).zIndex`) {
		t.Error("the base map is drawn over the geofences")
	}
	b.shot("basemap-01-offline")
	b.checkConsole()
}
