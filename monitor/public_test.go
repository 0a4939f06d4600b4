package main

import (
	"bytes"
	"context"
	"crypto/ed25519"
	"crypto/rand"
	"database/sql"
	"encoding/json"
	"io"
	"log/slog"
	"mime/multipart"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/trenzinho/trenzinho/internal/clientip"
	"github.com/trenzinho/trenzinho/monitor/api"
	"github.com/trenzinho/trenzinho/monitor/drafts"
	"github.com/trenzinho/trenzinho/monitor/store"
	"github.com/trenzinho/trenzinho/profile"
	"github.com/trenzinho/trenzinho/wire"
)

// Personal data and positions of the test auto, which the public page must never show.
const (
	pubLicensee = "Trenzinho Alegria da Orla Ltda"
	pubCNPJ     = "11222333000181"
	pubCNPJFmt  = "11.222.333/0001-81"
	pubDriver   = "Maria Aparecida Driver"
	pubCNH      = "04512345678"
	pubPlate    = "MQX1A23"
	pubVehicle  = "PIU-001"
	pubLat      = "-20.8418"
	pubLon      = "-40.733"
)

// pubTool finds a command the test needs; without it the test is skipped, except on CI
// (make test installs poppler-utils and zbar-tools).
func pubTool(t *testing.T, name string) string {
	t.Helper()
	p, err := exec.LookPath(name)
	if err != nil {
		if os.Getenv("CI") != "" {
			t.Fatalf("%s not found: apt-get install -y poppler-utils zbar-tools", name)
		}
		t.Skipf("%s not found (poppler-utils, zbar-tools)", name)
	}
	return p
}

// issuedPublic stores a sealed one-fact speed draft that names its licensee, plate, driver and
// position, and issues it.
func issuedPublic(t *testing.T, db *store.DB, key ed25519.PrivateKey) string {
	t.Helper()
	ctx := context.Background()
	at := time.Date(2026, 11, 27, 22, 30, 0, 0, time.UTC)
	now := wire.NewTime(at)
	p := profile.Piuma()
	d := drafts.Draft{ID: "PIU-001.pub", EpisodeIDs: []string{"pub.ep"}, Vehicle: pubVehicle, Licensee: "LIC-001",
		Rules: []string{"speed"}, Articles: []string{"Art. 23"}, Penalty: "Art. 46, X", FineUFMP: 400, FiscalUnit: "UFMP",
		Start: now, End: now, Municipality: "Piúma-ES", FiscalOrgan: p.FiscalOrgan, Law: p.Law.Name, CreatedAt: now,
		Software: "test", ProfileID: "piuma", ProfileVer: p.Version,
		Registry: &drafts.Registered{Licensee: "LIC-001", RazaoSocial: pubLicensee, CNPJ: pubCNPJ,
			Address: "Avenida Beira-Mar, 1000, Centro, Piúma-ES", Plate: pubPlate},
		Driver: &drafts.Driver{ID: "D1", Name: pubDriver, CNHNumber: pubCNH},
		Facts: []drafts.Fact{{EpisodeID: "pub.ep", Rule: "speed", Article: "Art. 23", LegalText: "texto", Description: "Velocidade acima do limite.",
			Start: now, End: now, DurationS: 25, Peak: 45, Unit: "km/h", Limit: 20, Lat: -20.8418, Lon: -40.733, Source: "tacho"}}}
	raw, err := json.Marshal(drafts.Bundle{Format: drafts.BundleFormat, Draft: d, Batches: []drafts.RawBatch{}})
	if err != nil {
		t.Fatal(err)
	}
	if err := db.InsertDraft(ctx, drafts.Seal(d.ID, 1, raw, "", key), &d); err != nil {
		t.Fatal(err)
	}
	notice, err := db.DecideDraft(ctx, d.ID, drafts.StatusIssued, "", "joao", at.Add(time.Hour))
	if err != nil {
		t.Fatal(err)
	}
	return notice
}

type publicFixture struct {
	db     *store.DB
	key    ed25519.PrivateKey
	srv    *httptest.Server
	render func(io.Writer, *store.DraftRecord) error
}

func newPublicFixture(t *testing.T, requests int) *publicFixture {
	t.Helper()
	ctx := context.Background()
	path := filepath.Join(t.TempDir(), "monitor.db")
	db, err := store.Open(ctx, path)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Close() })
	_, key, _ := ed25519.GenerateKey(rand.Reader)
	trusted, err := clientip.Parse("127.0.0.1/32,::1/128")
	if err != nil {
		t.Fatal(err)
	}
	f := &publicFixture{db: db, key: key}
	a := api.New(api.Config{Users: db, Audit: db, Episodes: db, Drafts: db, DraftKey: key.Public().(ed25519.PublicKey),
		TrustedProxies: trusted,
		Public:         &api.PublicConfig{Store: db, Location: profile.Piuma().Location(), Requests: requests}})
	f.srv = httptest.NewServer(a.Handler())
	t.Cleanup(f.srv.Close)
	t.Cleanup(a.Hub().Close)
	f.render = noticePDF(db, profile.Piuma(), "", f.srv.URL, "test", slog.New(slog.DiscardHandler))
	return f
}

// pdf renders the issued auto as the API's PDF route does.
func (f *publicFixture) pdf(t *testing.T, id string) []byte {
	t.Helper()
	d, err := f.db.DraftByID(context.Background(), id)
	if err != nil {
		t.Fatal(err)
	}
	var buf bytes.Buffer
	if err := f.render(&buf, d); err != nil {
		t.Fatal(err)
	}
	return buf.Bytes()
}

// qrURLs extracts the images of a PDF (pdfimages) and decodes every QR code in them (zbarimg).
func qrURLs(t *testing.T, pdf []byte) []string {
	t.Helper()
	pdfimages, zbarimg := pubTool(t, "pdfimages"), pubTool(t, "zbarimg")
	dir := t.TempDir()
	path := filepath.Join(dir, "auto.pdf")
	if err := os.WriteFile(path, pdf, 0o644); err != nil {
		t.Fatal(err)
	}
	if out, err := exec.Command(pdfimages, "-png", path, filepath.Join(dir, "img")).CombinedOutput(); err != nil {
		t.Fatalf("pdfimages: %v\n%s", err, out)
	}
	imgs, _ := filepath.Glob(filepath.Join(dir, "img-*.png"))
	var urls []string
	for _, img := range imgs {
		out, err := exec.Command(zbarimg, "--quiet", "--raw", img).Output()
		if err != nil {
			continue // exit status 4: no symbol in this image
		}
		for _, l := range strings.Split(strings.TrimSpace(string(out)), "\n") {
			if l != "" {
				urls = append(urls, l)
			}
		}
	}
	return urls
}

func get(t *testing.T, url, forwardedFor string) (int, string) {
	t.Helper()
	req, _ := http.NewRequest("GET", url, nil)
	if forwardedFor != "" {
		req.Header.Set("X-Forwarded-For", forwardedFor)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, string(b)
}

func upload(t *testing.T, url string, file []byte) (int, string) {
	t.Helper()
	var body bytes.Buffer
	mw := multipart.NewWriter(&body)
	fw, _ := mw.CreateFormFile("arquivo", "auto.pdf")
	fw.Write(file)
	mw.Close()
	resp, err := http.Post(url, mw.FormDataContentType(), &body)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, string(b)
}

// The QR code of an issued auto's PDF decodes (zbarimg) to the public page, which says the
// seal holds, shows the auto and the key's fingerprint and no personal data; uploads of the
// PDF and of the export are recognised, an edited PDF is not; after the evidence is edited in
// the database the page says the seal is broken.
func TestPublicVerificationByQRCode(t *testing.T) {
	f := newPublicFixture(t, 100)
	notice := issuedPublic(t, f.db, f.key)
	pdf := f.pdf(t, "PIU-001.pub")

	urls := qrURLs(t, pdf)
	if len(urls) != 1 {
		t.Fatalf("QR codes in the PDF: %q, want one", urls)
	}
	url := urls[0]
	if !strings.HasPrefix(url, f.srv.URL+"/v/") {
		t.Fatalf("QR code %q is not the public page under %s", url, f.srv.URL)
	}
	code := strings.TrimPrefix(url, f.srv.URL+"/v/")
	if !store.ValidPublicCode(code) || strings.Contains(code, "0001") {
		t.Fatalf("code %q", code)
	}
	if got := exec.Command(pubTool(t, "pdftotext"), "-", "-"); got != nil {
		got.Stdin = bytes.NewReader(pdf)
		out, err := got.Output()
		if err != nil || !strings.Contains(string(out), "/v/"+code) {
			t.Errorf("the PDF does not print the URL: %v", err)
		}
		fp := api.KeyFingerprint(f.key.Public().(ed25519.PublicKey))
		if text := strings.Join(strings.Fields(string(out)), " "); !strings.Contains(text, "Impressão digital da chave do monitor: "+fp) {
			t.Errorf("the PDF does not print the key's fingerprint %s", fp)
		}
	}

	status, page := get(t, url, "")
	if status != http.StatusOK {
		t.Fatalf("public page: %d\n%s", status, page)
	}
	fp := api.KeyFingerprint(f.key.Public().(ed25519.PublicKey))
	for _, want := range []string{"Selo íntegro", notice, "Art. 23", "Art. 46, X", "27/11/2026", fp, "Confere com o registro?"} {
		if !strings.Contains(page, want) {
			t.Errorf("the page lacks %q", want)
		}
	}
	noPersonalData(t, page)

	// Uploads: the PDF, the export, and an edited PDF.
	if status, page := upload(t, url, pdf); status != http.StatusOK || !strings.Contains(page, "<strong>Confere com o registro.</strong> É um PDF deste auto") {
		t.Errorf("the issued PDF uploaded: %d\n%s", status, page)
	}
	d, err := f.db.DraftByID(context.Background(), "PIU-001.pub")
	if err != nil {
		t.Fatal(err)
	}
	export, _ := json.Marshal(d.Sealed)
	if status, page := upload(t, url, export); status != http.StatusOK || !strings.Contains(page, "É a exportação deste auto") {
		t.Errorf("the export uploaded: %d\n%s", status, page)
	}
	if status, page := upload(t, url, d.Sealed.Bundle); status != http.StatusOK || !strings.Contains(page, "É o pacote de evidências selado") {
		t.Errorf("the bundle uploaded: %d\n%s", status, page)
	}
	edited := bytes.Clone(pdf)
	edited[len(edited)/2] ^= 1 // one bit of the content streams
	if status, page := upload(t, url, edited); status != http.StatusOK || !strings.Contains(page, "Não confere com o registro") {
		t.Errorf("an edited PDF uploaded: %d\n%s", status, page)
	}
	tooBig := append([]byte("%PDF-"), make([]byte, 21<<20)...)
	if status, _ := upload(t, url, tooBig); status != http.StatusRequestEntityTooLarge {
		t.Errorf("a 21 MiB upload: %d, want 413", status)
	}
	// A code that was never issued, and the notice number, open nothing.
	for _, bad := range []string{store.NewPublicCode(), "AI-2026-0001", "PIU-001.pub"} {
		if status, page := get(t, f.srv.URL+"/v/"+bad, ""); status != http.StatusNotFound || strings.Contains(page, "Selo") {
			t.Errorf("/v/%s: %d", bad, status)
		}
	}

	// Someone edits the sealed evidence in the database.
	raw, err := sql.Open("sqlite", f.db.Path())
	if err != nil {
		t.Fatal(err)
	}
	defer raw.Close()
	if _, err := raw.Exec(`UPDATE drafts SET bundle = CAST(replace(CAST(bundle AS TEXT), '"peak":45', '"peak":35') AS BLOB) WHERE id = 'PIU-001.pub'`); err != nil {
		t.Fatal(err)
	}
	status, page = get(t, url, "")
	if status != http.StatusOK || !strings.Contains(page, "Selo violado") || strings.Contains(page, "Selo íntegro") ||
		!strings.Contains(page, drafts.ErrHashMismatch.Error()) {
		t.Fatalf("after tampering: %d\n%s", status, page)
	}
	noPersonalData(t, page)
}

func noPersonalData(t *testing.T, page string) {
	t.Helper()
	for _, bad := range []string{pubLicensee, "Alegria", pubCNPJ, pubCNPJFmt, pubDriver, pubCNH, pubPlate, pubVehicle, "LIC-001",
		pubLat, pubLon, "20,84", "40,73", "Beira-Mar", "joao"} {
		if strings.Contains(page, bad) {
			t.Errorf("the public page shows %q", bad)
		}
	}
}

// The public page admits a bounded number of requests per client address in its window, and
// refuses the rest with 429; another address is not affected.
func TestPublicVerificationRateLimit(t *testing.T) {
	const limit = 5
	f := newPublicFixture(t, limit)
	issuedPublic(t, f.db, f.key)
	code, err := f.db.PublicCode(context.Background(), "PIU-001.pub")
	if err != nil {
		t.Fatal(err)
	}
	url := f.srv.URL + "/v/" + code
	for i := range limit {
		if status, _ := get(t, url, "198.51.100.7"); status != http.StatusOK {
			t.Fatalf("request %d: %d", i+1, status)
		}
	}
	// Wrong codes count too: the limit bounds guessing.
	for _, u := range []string{url, f.srv.URL + "/v/" + store.NewPublicCode()} {
		if status, page := get(t, u, "198.51.100.7"); status != http.StatusTooManyRequests || !strings.Contains(page, "Muitas consultas") {
			t.Errorf("over the limit: %d", status)
		}
	}
	if status, _ := get(t, url, "198.51.100.8"); status != http.StatusOK {
		t.Errorf("another address: %d", status)
	}
}

// Without TRENZINHO_PUBLIC_URL the issued auto prints the path of its public page and no QR
// code.
func TestPublicPathWithoutURL(t *testing.T) {
	f := newPublicFixture(t, 100)
	issuedPublic(t, f.db, f.key)
	f.render = noticePDF(f.db, profile.Piuma(), "", "", "test", slog.New(slog.DiscardHandler))
	pdf := f.pdf(t, "PIU-001.pub")
	if urls := qrURLs(t, pdf); len(urls) != 0 {
		t.Errorf("QR codes without a public URL: %q", urls)
	}
	code, err := f.db.PublicCode(context.Background(), "PIU-001.pub")
	if err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(pubTool(t, "pdftotext"), "-", "-")
	cmd.Stdin = bytes.NewReader(pdf)
	out, err := cmd.Output()
	if err != nil {
		t.Fatal(err)
	}
	text := string(out)
	if !strings.Contains(text, "/v/"+code) || strings.Contains(text, "http") || !strings.Contains(text, "Verificação pública") {
		t.Errorf("the PDF does not print the path alone:\n%s", text)
	}
}

func TestPublicBase(t *testing.T) {
	for in, want := range map[string]string{"": "", "https://monitor.piuma.es.gov.br/": "https://monitor.piuma.es.gov.br",
		"http://10.0.0.2:8080": "http://10.0.0.2:8080", "https://x.org/monitor": "https://x.org/monitor"} {
		if got, err := publicBase(in); err != nil || got != want {
			t.Errorf("publicBase(%q) = %q, %v; want %q", in, got, err, want)
		}
	}
	for _, bad := range []string{"monitor.piuma.es.gov.br", "ftp://x.org", "https://", "https://x.org/?a=1", "https://u:p@x.org", "https://x.org/#f", "://"} {
		if _, err := publicBase(bad); err == nil {
			t.Errorf("publicBase(%q) accepted", bad)
		}
	}
}
