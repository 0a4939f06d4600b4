package notice_test

import (
	"bytes"
	"encoding/json"
	"image"
	"image/color"
	"image/png"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/paulmach/orb/geojson"

	"github.com/trenzinho/trenzinho/geofences"
	"github.com/trenzinho/trenzinho/monitor/drafts"
	"github.com/trenzinho/trenzinho/monitor/notice"
	"github.com/trenzinho/trenzinho/profile"
)

// townWithStreets is the test town with the streets and landmarks of the synthetic Piúma
// extract, imported as `monitor geofences import-osm` does (its church left out: one more
// sensitive site would change the facts).
func townWithStreets(t *testing.T) string {
	t.Helper()
	in, err := os.Open("../../geofences/testdata/piuma-osm-extract.geojson")
	if err != nil {
		t.Fatal(err)
	}
	defer in.Close()
	extract, _, err := geofences.ImportOSM(in)
	if err != nil {
		t.Fatal(err)
	}
	fc, err := geojson.UnmarshalFeatureCollection([]byte(town))
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range extract.Features {
		if k := f.Properties["kind"]; k == string(geofences.KindStreet) || k == string(geofences.KindLandmark) {
			fc.Append(f)
		}
	}
	b, err := json.Marshal(fc)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// defenceProfile is Piúma's with the defence office filled in.
func defenceProfile(t *testing.T) *profile.Profile {
	t.Helper()
	y := strings.NewReplacer(
		"  to: \"\"", "  to: Autoridade Julgadora de Posturas",
		"  address: \"\"", "  address: Rua Dr. Jones dos Santos Neves, 100, Centro, Piúma-ES",
		"  email: \"\"", "  email: defesa@piuma.es.gov.br").Replace(string(profile.PiumaYAML()))
	p, err := profile.Parse([]byte(y), "test.yaml")
	if err != nil {
		t.Fatal(err)
	}
	return p
}

// issuedIn is the issued auto of a sealed draft, by an identified agent, on Friday 27/11/2026.
func issuedIn(s drafts.Sealed, p *profile.Profile) notice.Input {
	at := time.Date(2026, 11, 27, 14, 0, 0, 0, time.UTC)
	return notice.Input{Sealed: s, Profile: p,
		Decision: notice.Decision{Status: drafts.StatusIssued, Notice: "AI-2026/0003", DecidedBy: "joao", DecidedAt: &at,
			Agent: &notice.Agent{FullName: "João Batista Moreira", Matricula: "FP-0042", Cargo: "Agente de Fiscalização de Posturas"}}}
}

// The auto names the street and the landmark nearest to the fact from the imported extract,
// approximate and with the coordinates, besides the agent, the defence office and the deadline.
func TestIssuedAutoNamesThePlace(t *testing.T) {
	s, b, _ := speedDraft(t, townWithStreets(t))
	pl := b.Draft.Facts[0].Place
	if pl == nil || pl.Street != "Avenida Beira-Mar" || pl.Landmark != "Praça Oceânica" {
		t.Fatalf("the draft's place: %+v", pl)
	}
	text := strings.Join(strings.Fields(render(t, issuedIn(s, defenceProfile(t)), "auto-place")), " ")
	about := drafts.Num(drafts.About(pl.LandmarkDistanceM), 0)
	mustContain(t, text,
		`Local nas proximidades de Avenida Beira-Mar, a cerca de `+about+` m de "Praça Oceânica" — logradouro e ponto de referência mais próximos da posição registrada`,
		"(OpenStreetMap)", "a posição exata é a das coordenadas",
		"latitude "+strings.Replace(strings.TrimRight(strings.TrimRight(jsonNum(b.Draft.Facts[0].Lat), "0"), "."), ".", ",", 1),
		"João Batista Moreira", "FP-0042", "Rua Dr. Jones dos Santos Neves, 100, Centro, Piúma-ES",
		"Recebido em ____/____/________")
	// The fact's description states it too.
	mustContain(t, text, `Local aproximado da posição registrada no instante do valor máximo: nas proximidades de Avenida Beira-Mar`)

	// Without an extract: the coordinates alone, nothing invented.
	s, b, _ = speedDraft(t)
	if b.Draft.Facts[0].Place != nil {
		t.Fatalf("a place without an extract: %+v", b.Draft.Facts[0].Place)
	}
	text = strings.Join(strings.Fields(render(t, issuedIn(s, defenceProfile(t)), "auto-no-place")), " ")
	mustContain(t, text, "Posição latitude ")
	mustNotContain(t, text, "Avenida Beira-Mar", "nas proximidades", "Local aproximado")
}

func jsonNum(x float64) string { b, _ := json.Marshal(x); return string(b) }

// tilePNG is a 256-pixel tile of one colour.
func tilePNG(t *testing.T) []byte {
	img := image.NewRGBA(image.Rect(0, 0, 256, 256))
	for y := range 256 {
		for x := range 256 {
			img.Set(x, y, color.RGBA{R: 200, G: uint8(x), B: uint8(y), A: 255})
		}
	}
	var buf bytes.Buffer
	if err := png.Encode(&buf, img); err != nil {
		t.Fatal(err)
	}
	return buf.Bytes()
}

// images counts the images of a PDF (pdfimages -list).
func images(t *testing.T, pdf []byte) int {
	t.Helper()
	path := filepath.Join(t.TempDir(), "x.pdf")
	if err := os.WriteFile(path, pdf, 0o644); err != nil {
		t.Fatal(err)
	}
	out, err := exec.Command(tool(t, "pdfimages"), "-list", path).CombinedOutput()
	if err != nil {
		t.Fatalf("pdfimages: %v\n%s", err, out)
	}
	lines := strings.Split(strings.TrimSpace(string(out)), "\n")
	return len(lines) - 2 // two header lines
}

func renderPDF(t *testing.T, in notice.Input) []byte {
	t.Helper()
	var buf bytes.Buffer
	if err := notice.Render(&buf, in); err != nil {
		t.Fatal(err)
	}
	return buf.Bytes()
}

var tilePath = regexp.MustCompile(`^/tiles/(1[0-9])/([0-9]+)/([0-9]+)\.png$`)

// With a tile source configured, the mini-map is drawn over the tiles (the configured server
// is asked for the tiles around the track, nothing else); a server that fails or does not
// answer leaves the sketch alone, within the timeout.
func TestMiniMapOverBaseTiles(t *testing.T) {
	s, _, f := speedDraft(t)
	tile := tilePNG(t)
	var mu sync.Mutex
	var paths []string
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		paths = append(paths, r.URL.Path)
		mu.Unlock()
		if r.Header.Get("User-Agent") != "trenzinho-test" || !tilePath.MatchString(r.URL.Path) {
			http.NotFound(w, r)
			return
		}
		w.Header().Set("Content-Type", "image/png")
		w.Write(tile)
	}))
	defer srv.Close()

	in := issuedIn(s, f.p)
	sketch := renderPDF(t, in)
	if n := images(t, sketch); n != 0 {
		t.Fatalf("the sketch has %d images", n)
	}

	in.Tiles = &notice.Tiles{URL: srv.URL + "/tiles/{z}/{x}/{y}.png", UserAgent: "trenzinho-test", Timeout: 20 * time.Second}
	based := renderPDF(t, in)
	n := images(t, based)
	mu.Lock()
	asked := len(paths)
	mu.Unlock()
	if n == 0 || n != asked || asked > 36 {
		t.Errorf("%d images in the PDF, %d tiles asked (%v)", n, asked, paths)
	}
	// The second render draws the tiles from the cache: the server is not asked again.
	text := render(t, in, "notice-basemap")
	mu.Lock()
	again := len(paths)
	mu.Unlock()
	if again != asked {
		t.Errorf("the second render asked %d more tiles", again-asked)
	}
	mustContain(t, text, "Mapa de fundo: servidor de mapas 127.0.0.1")
	mustNotContain(t, text, "sem mapa de fundo")

	// A server that answers 404 for one tile: the sketch, never a partial map.
	var once sync.Once
	partial := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		missing := false
		once.Do(func() { missing = true })
		if missing {
			http.NotFound(w, r)
			return
		}
		w.Write(tile)
	}))
	defer partial.Close()
	in.Tiles = &notice.Tiles{URL: partial.URL + "/{z}/{x}/{y}.png", Timeout: 20 * time.Second}
	if n := images(t, renderPDF(t, in)); n != 0 {
		t.Errorf("a tile missing: %d images drawn", n)
	}

	// A dead server that accepts and never answers: the sketch, within the timeout (not the
	// minute the server would hold the request).
	release := make(chan struct{})
	dead := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		select {
		case <-release:
		case <-time.After(time.Minute):
		case <-r.Context().Done():
		}
	}))
	defer dead.Close()
	defer close(release)
	in.Tiles = &notice.Tiles{URL: dead.URL + "/{z}/{x}/{y}.png", Timeout: 300 * time.Millisecond}
	start := time.Now()
	pdf := renderPDF(t, in)
	if took := time.Since(start); took > 30*time.Second {
		t.Errorf("a dead tile server held the render %v", took)
	}
	if n := images(t, pdf); n != 0 {
		t.Errorf("dead server: %d images", n)
	}
	text = render(t, in, "notice-basemap-dead")
	mustContain(t, text, "sem mapa de fundo")
}
