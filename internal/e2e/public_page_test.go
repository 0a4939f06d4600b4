package e2e

import (
	"context"
	"crypto/ed25519"
	"crypto/rand"
	"encoding/json"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"

	"github.com/trenzinho/trenzinho/monitor/api"
	"github.com/trenzinho/trenzinho/monitor/drafts"
	"github.com/trenzinho/trenzinho/monitor/store"
	"github.com/trenzinho/trenzinho/wire"
)

// TestPublicPageInTheBrowser opens an issued auto's public verification page in headless
// Chromium, as a citizen with the QR code would (no login): it says the seal holds, and the
// form checks the auto's evidence bundle against the record. Any console error (a blocked
// style under the page's Content-Security-Policy, a failed load) fails the test.
func TestPublicPageInTheBrowser(t *testing.T) {
	chrome := chromiumPath(t)
	ctx := context.Background()
	db, err := store.Open(ctx, filepath.Join(t.TempDir(), "monitor.db"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Close() })
	_, key, _ := ed25519.GenerateKey(rand.Reader)
	now := wire.NewTime(time.Date(2026, 11, 27, 22, 30, 0, 0, time.UTC))
	d := drafts.Draft{ID: "PIU-001.web", EpisodeIDs: []string{"web.ep"}, Vehicle: "PIU-001", Rules: []string{"speed"},
		Articles: []string{"Art. 23"}, Penalty: "Art. 46, X", FineUFMP: 400, Start: now, End: now, CreatedAt: now,
		Facts: []drafts.Fact{{EpisodeID: "web.ep", Rule: "speed", Article: "Art. 23", Start: now, End: now, Lat: -20.8418, Lon: -40.733}}}
	raw, err := json.Marshal(drafts.Bundle{Format: drafts.BundleFormat, Draft: d, Batches: []drafts.RawBatch{}})
	if err != nil {
		t.Fatal(err)
	}
	if err := db.InsertDraft(ctx, drafts.Seal(d.ID, 1, raw, "", key), &d); err != nil {
		t.Fatal(err)
	}
	notice, err := db.DecideDraft(ctx, d.ID, drafts.StatusIssued, "", "joao", now.Add(time.Hour))
	if err != nil {
		t.Fatal(err)
	}
	code, err := db.PublicCode(ctx, d.ID)
	if err != nil {
		t.Fatal(err)
	}
	srv := api.New(api.Config{Users: db, Audit: db, Episodes: db, Drafts: db, DraftKey: key.Public().(ed25519.PublicKey),
		Public: &api.PublicConfig{Store: db}})
	hs := httptest.NewServer(srv.Handler())
	t.Cleanup(hs.Close)
	t.Cleanup(srv.Hub().Close)
	bundle := filepath.Join(t.TempDir(), "pacote.json")
	if err := os.WriteFile(bundle, raw, 0o644); err != nil {
		t.Fatal(err)
	}

	b := startDashBrowser(t, chrome, 390, 844) // a phone
	b.do(chromedp.Navigate(hs.URL + "/v/" + code))
	b.waitJS(`document.body.textContent.includes("Selo íntegro")`, 10*time.Second, "the seal's result")
	if body := b.text("body"); !strings.Contains(body, notice) || !strings.Contains(body, "Art. 23") || strings.Contains(body, "PIU-001") {
		t.Errorf("the page:\n%s", body)
	}
	if w := b.evalFloat(`parseFloat(getComputedStyle(document.querySelector(".ok")).borderTopWidth)`); w < 1 {
		t.Errorf("the page's style was not applied (border %v px): blocked by the CSP?", w)
	}
	b.shot("public-page")
	b.do(chromedp.SetUploadFiles(chromedp.CSS("#arquivo"), []string{bundle}), chromedp.Click(chromedp.CSS(`button[type="submit"]`)))
	b.waitJS(`document.body.textContent.includes("Confere com o registro.")`, 10*time.Second, "the upload's result")
	b.shot("public-page-upload")
	b.checkConsole()
}
