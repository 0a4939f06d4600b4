package e2e

import (
	"bytes"
	"context"
	"fmt"
	"image"
	"image/jpeg"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/chromedp/cdproto/browser"
	"github.com/chromedp/cdproto/cdp"
	"github.com/chromedp/cdproto/emulation"
	"github.com/chromedp/cdproto/network"
	"github.com/chromedp/cdproto/page"
	"github.com/chromedp/chromedp"
	"github.com/chromedp/chromedp/device"

	"github.com/trenzinho/trenzinho/internal/testkit/testenv"
	"github.com/trenzinho/trenzinho/monitor/photo"
	"github.com/trenzinho/trenzinho/rules"
)

// networkConditions are the parameters of Network.emulateNetworkConditions: the command
// DevTools offers for "offline" (navigator.onLine false, every request of the page failing).
type networkConditions struct {
	Offline            bool    `json:"offline"`
	Latency            float64 `json:"latency"`
	DownloadThroughput float64 `json:"downloadThroughput"`
	UploadThroughput   float64 `json:"uploadThroughput"`
}

var emulateNetworkConditions = cdp.Command[networkConditions, cdp.Empty]{Method: "Network.emulateNetworkConditions"}

// TestPocketDashboard drives the dashboard as an inspector on the street does, in headless
// Chromium emulating a Pixel 5 against the real pipeline (Mosquitto → monitor): the page is an
// installable app (Chromium's own installability check: manifest and service worker found, no
// errors); with the phone's position set beside a speeding train, "Perto de mim" lists it with
// its speed, sound and open alert; the network goes away, and the inspector records a
// constatação em campo with a camera photo — kept on the phone, signed, timestamped; the network
// comes back, the item is delivered by itself with its capture time (distinct from the monitor's
// receipt time) and the photo's EXIF statements, and the episode page shows it with the photo.
func TestPocketDashboard(t *testing.T) {
	chrome := chromiumPath(t)
	bin := testenv.Build(t)
	broker := testenv.StartMosquitto(t, testenv.MosquittoOptions{})
	mon := startMonitorWithEnv(t, bin, broker.URL())

	// One train (B001) driving circles of ~165 m around (-20.848, -40.745) at 45 km/h: a speed
	// episode opens and stays open while it drives.
	ctx, stop := context.WithCancel(context.Background())
	var wg sync.WaitGroup
	wg.Add(1)
	go func() { defer wg.Done(); publishFleet(ctx, t, broker.URL(), 1) }()
	defer wg.Wait()
	defer stop()
	var epID string
	testenv.WaitFor(t, "B001's open speed episode", 2*time.Minute, func() bool {
		var page struct{ Items []rules.Episode }
		mon.get(t, "/api/v1/episodes?open=true&vehicle=B001&rule=speed", &page)
		if len(page.Items) > 0 {
			epID = page.Items[0].ID
		}
		return epID != ""
	})

	b := startDashBrowser(t, chrome, 393, 851)
	lat, lon, acc := -20.8482, -40.7449, 12.0
	b.do(chromedp.Emulate(device.Pixel5), chromedp.Func(func(ctx context.Context, tg *chromedp.Target) error {
		_, err := cdp.Call(ctx, chromedp.FromContext(ctx).Browser, browser.SetPermission, browser.SetPermissionParams{
			Permission: &browser.PermissionDescriptor{Name: "geolocation"}, Setting: browser.PermissionSettingGranted, Origin: mon.base})
		if err != nil {
			return fmt.Errorf("grant geolocation: %w", err)
		}
		_, err = cdp.Call(ctx, tg, emulation.SetGeolocationOverride, emulation.SetGeolocationOverrideParams{Latitude: &lat, Longitude: &lon, Accuracy: &acc})
		return err
	}))

	// 1. Log in on the phone; the page is an installable app.
	b.do(chromedp.Navigate(mon.base + "/"))
	b.waitJS(`!document.querySelector("#login-view").hidden`, 20*time.Second, "the login page")
	b.do(chromedp.SendKeys(chromedp.CSS("#login-user"), "admin"), chromedp.SendKeys(chromedp.CSS("#login-password"), "segredo-de-teste"),
		chromedp.Click(chromedp.CSS("#login-submit")))
	b.waitJS(`!document.querySelector("#app").hidden`, 20*time.Second, "the dashboard")
	b.waitJS(`navigator.serviceWorker.controller !== null`, 30*time.Second, "the service worker controlling the page")
	var installErrs page.GetInstallabilityErrorsResult
	var manifest page.GetAppManifestResult
	b.do(chromedp.Func(func(ctx context.Context, tg *chromedp.Target) error {
		var err error
		if installErrs, err = cdp.Call(ctx, tg, page.GetInstallabilityErrors, cdp.Empty{}); err != nil {
			return err
		}
		manifest, err = cdp.Call(ctx, tg, page.GetAppManifest, page.GetAppManifestParams{})
		return err
	}))
	for _, e := range installErrs.InstallabilityErrors {
		var args []string
		for _, a := range e.ErrorArguments {
			args = append(args, a.Name+"="+a.Value)
		}
		t.Errorf("installability error %s %v", e.ErrorID, args)
	}
	if !strings.HasSuffix(manifest.URL, "/manifest.webmanifest") || len(manifest.Errors) > 0 || !strings.Contains(manifest.Data, `"short_name": "Fiscalização"`) {
		t.Errorf("manifest %s: errors %+v", manifest.URL, manifest.Errors)
	}
	t.Logf("installable: manifest %s, %d installability errors", manifest.URL, len(installErrs.InstallabilityErrors))

	// 2. Perto de mim: the train ~170 m away, with its speed, sound and open alert.
	b.do(chromedp.Evaluate[chromedp.Void](`location.hash = "#/perto"`))
	card := `document.querySelector('#nearby-list li[data-vehicle="B001"]')`
	b.waitJS(card+` !== null`, 30*time.Second, "B001 in Perto de mim")
	b.waitJS(fmt.Sprintf(`%s.querySelector('.nearby-alert[data-episode=%q]') !== null`, card, epID), 20*time.Second, "its open speed alert")
	text := b.evalString(card + `.textContent`)
	for _, want := range []string{"B001", "km/h", "dB(A)", "Excesso de velocidade", "Constatar"} {
		if !strings.Contains(text, want) {
			t.Errorf("nearby card %q lacks %q", text, want)
		}
	}
	if d := b.evalFloat(fmt.Sprintf(`parseFloat(%s.querySelector(".nearby-distance").textContent.replace(/\./g, "").replace(",", "."))`, card)); d <= 0 || d > 1000 {
		t.Errorf("distance %v m", d)
	}
	b.shot("01-perto-de-mim")

	// 3. Offline: a constatação with a camera photo stays on the phone.
	taken := time.Now().Add(-time.Minute).In(time.FixedZone("", -3*3600)).Truncate(time.Second)
	jpg := cameraPhoto(t, taken, lat, lon)
	photoPath := filepath.Join(t.TempDir(), "IMG_20261202_foto.jpg")
	if err := os.WriteFile(photoPath, jpg, 0o644); err != nil {
		t.Fatal(err)
	}
	b.allowConsole(`ERR_INTERNET_DISCONNECTED`)
	setOffline := func(offline bool) {
		b.do(chromedp.Func(func(ctx context.Context, tg *chromedp.Target) error {
			if _, err := cdp.Call(ctx, tg, network.Enable, network.EnableParams{}); err != nil {
				return err
			}
			_, err := cdp.Call(ctx, tg, emulateNetworkConditions, networkConditions{Offline: offline, DownloadThroughput: -1, UploadThroughput: -1})
			return err
		}))
	}
	setOffline(true)
	b.waitJS(`navigator.onLine === false`, 10*time.Second, "the phone offline")
	b.do(chromedp.Click(chromedp.CSS(fmt.Sprintf(`#nearby-list .nearby-alert[data-episode=%q] .nearby-verify`, epID))))
	b.waitJS(`document.querySelector("#field-form") !== null`, 10*time.Second, "the constatação form, offline")
	note := "trenzinho a 45 km/h na orla, passageiros embarcando com o veículo em movimento"
	b.do(chromedp.Click(chromedp.CSS(`#field-form input[name="music"][value="nao"]`)),
		chromedp.Click(chromedp.CSS(`#field-form input[name="boarding"][value="sim"]`)),
		chromedp.SendKeys(chromedp.CSS("#field-note"), note),
		chromedp.SetUploadFiles(chromedp.CSS("#field-photos"), []string{photoPath}))
	before := time.Now()
	b.do(chromedp.Click(chromedp.CSS("#field-submit")))
	b.waitJS(`(document.querySelector("#field-status") || {}).dataset?.state === "queued"`, 10*time.Second, "the item queued on the phone")
	b.waitJS(`document.querySelector("#field-queue").dataset.pending === "1"`, 5*time.Second, "one item waiting")
	after := time.Now()
	b.shot("02-offline-queued")
	var ep rules.Episode
	mon.get(t, "/api/v1/episodes/"+epID, &ep)
	if ep.Verification != nil {
		t.Fatalf("the verification reached the monitor while offline: %+v", ep.Verification)
	}
	time.Sleep(2 * time.Second) // capture and receipt a visible moment apart

	// 4. Back online: delivered by itself, with the capture time and the photo.
	online := time.Now()
	setOffline(false)
	testenv.WaitFor(t, "the verification delivered after reconnection", time.Minute, func() bool {
		mon.get(t, "/api/v1/episodes/"+epID, &ep)
		return ep.Verification != nil
	})
	v := ep.Verification
	if v.CapturedAt == nil || v.CapturedAt.Before(before.Add(-time.Second)) || v.CapturedAt.After(after) {
		t.Errorf("captured_at %v, want between %v and %v", v.CapturedAt, before, after)
	}
	if v.At.Before(online.Add(-time.Second)) || !v.At.After(v.CapturedAt.Time) {
		t.Errorf("received at %v, captured at %v, back online at %v", v.At, v.CapturedAt, online)
	}
	if v.Kind != rules.VerifyField || v.By != "admin" || v.Note != note || v.Boarding == nil || !*v.Boarding || v.MusicAudible == nil || *v.MusicAudible ||
		v.Signature == nil || !v.Signature.Verified {
		t.Errorf("verification %+v (signature %+v)", v, v.Signature)
	}
	if len(v.Photos) != 1 || v.Photos[0].Size != len(jpg) || v.Photos[0].EXIFTakenAt != taken.Format(time.RFC3339) || v.Photos[0].EXIFLat == nil {
		t.Errorf("photos %+v", v.Photos)
	}
	b.waitJS(`document.querySelector("#field-queue").dataset.pending === "0"`, 20*time.Second, "the phone's queue empty")
	t.Logf("captured %s (phone), received %s (monitor), photo taken %s (EXIF)", v.CapturedAt.Format(time.RFC3339Nano), v.At.Format(time.RFC3339Nano), v.Photos[0].EXIFTakenAt)

	// 5. The episode shows it, photo included.
	b.do(chromedp.Evaluate[chromedp.Void](fmt.Sprintf(`location.hash = "#/episodio/" + encodeURIComponent(%q)`, epID)))
	b.waitJS(`document.querySelector("#verification-photos img") !== null`, 20*time.Second, "the verification on the episode")
	b.do(chromedp.ScrollIntoView(chromedp.CSS("#verification-photos"))) // the photos load lazily, as they come into view
	b.waitJS(`(() => { const i = document.querySelector("#verification-photos img"); return i.complete && i.naturalWidth === 64; })()`,
		20*time.Second, "the verification's photo loaded")
	card2 := b.text("#verification")
	for _, want := range []string{"Constatação em campo", "Constatada em", "relógio do aparelho", "Recebida pelo monitor", "assinada pela sessão", "Tirada em"} {
		if !strings.Contains(card2, want) {
			t.Errorf("verification card %q lacks %q", card2, want)
		}
	}
	b.shot("03-episode-verification")
	b.checkConsole()
}

// cameraPhoto is a JPEG as a phone camera writes it: 64×48 pixels, with its EXIF capture time
// and GPS position.
func cameraPhoto(t *testing.T, taken time.Time, lat, lon float64) []byte {
	t.Helper()
	img := image.NewRGBA(image.Rect(0, 0, 64, 48))
	for i := range img.Pix {
		img.Pix[i] = byte(i * 13)
	}
	var b bytes.Buffer
	if err := jpeg.Encode(&b, img, nil); err != nil {
		t.Fatal(err)
	}
	out, err := photo.WithEXIF(b.Bytes(), taken, &lat, &lon)
	if err != nil {
		t.Fatal(err)
	}
	return out
}
