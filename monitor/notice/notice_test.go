package notice_test

import (
	"bytes"
	"context"
	"crypto/ed25519"
	"crypto/rand"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/trenzinho/trenzinho/geofences"
	"github.com/trenzinho/trenzinho/internal/testkit/fleettest"
	"github.com/trenzinho/trenzinho/monitor/drafts"
	"github.com/trenzinho/trenzinho/monitor/notice"
	"github.com/trenzinho/trenzinho/monitor/store"
	"github.com/trenzinho/trenzinho/profile"
	"github.com/trenzinho/trenzinho/rules"
	"github.com/trenzinho/trenzinho/wire"
)

// A school open on weekdays at (-20.8400, -40.7300), as in the drafts tests, as a small
// polygon so that the map draws its outline and the radius around it.
const town = `{"type":"FeatureCollection","features":[
{"type":"Feature","geometry":{"type":"Polygon","coordinates":[[[-40.73020,-20.84010],[-40.72980,-20.84010],[-40.72980,-20.83990],[-40.73020,-20.83990],[-40.73020,-20.84010]]]},
 "properties":{"id":"school","kind":"sensitive","category":"school","name":"EMEF São João","opening_hours":"Mo-Fr 07:00-18:00; PH off","source":"survey","verified_by":"fiscal Conceição","verified_at":"2026-10-01"}}]}`

type fixture struct {
	db      *store.DB
	engine  *rules.Engine
	drafter *drafts.Drafter
	key     ed25519.PrivateKey
	p       *profile.Profile
	seq     uint64
}

func newFixture(t *testing.T, geo ...string) *fixture {
	t.Helper()
	g := town
	if len(geo) > 0 {
		g = geo[0]
	}
	places, err := geofences.Read(strings.NewReader(g), "town.geojson")
	if err != nil {
		t.Fatal(err)
	}
	db, err := store.Open(context.Background(), filepath.Join(t.TempDir(), "m.db"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Close() })
	_, key, _ := ed25519.GenerateKey(rand.Reader)
	p := testProfile()
	return &fixture{db: db, engine: rules.New(p, places), key: key, p: p,
		drafter: drafts.NewDrafter(drafts.Config{Store: db, Profile: p, ProfileYAML: profile.PiumaYAML(), Places: places, Key: key, Software: "1.4.0-test", Settle: time.Minute})}
}

// second is one second of a vehicle's readings.
type second = fleettest.Second

// play sends the seconds in batches of five from start and commits them as the judge does.
func (f *fixture) play(t *testing.T, start time.Time, secs []second) time.Time {
	t.Helper()
	return fleettest.Play(t, f.engine, f.db, &f.seq, fleettest.Trip{Vehicle: "PIU-001", Card: "0000000086H101", Start: start, Seconds: secs})
}

// drive moves east along a street from (lat, lon) at the given speeds, one per second.
func drive(lat, lon float64, speeds ...float64) []second { return fleettest.Drive(lat, lon, speeds...) }

func repeat(v float64, n int) []float64 {
	s := make([]float64, n)
	for i := range s {
		s[i] = v
	}
	return s
}

func (f *fixture) draft(t *testing.T) drafts.Made {
	t.Helper()
	verifyAll(t, f.db)
	made, err := f.drafter.Run(context.Background(), time.Now().Add(5*time.Minute))
	if err != nil {
		t.Fatal(err)
	}
	if len(made) != 1 {
		t.Fatalf("%d drafts, want 1", len(made))
	}
	return made[0]
}

// speedDraft is a real speed draft (engine, store, drafter): a train at 20 km/h that runs at
// up to 45 km/h for 25 s on a street south of the school, then re-sealed as the draft of a
// registered vehicle.
func speedDraft(t *testing.T, geo ...string) (drafts.Sealed, *drafts.Bundle, *fixture) {
	f := newFixture(t, geo...)
	loc := f.p.Location()
	start := time.Date(2026, 11, 27, 19, 30, 0, 0, loc)
	speeds := repeat(20, 150)
	speeds = append(speeds, 30, 36, 40, 43, 44, 45, 45, 45, 44, 44, 43, 42, 42, 41, 40, 40, 41, 42, 40, 39, 38, 35, 30, 25, 22)
	speeds = append(speeds, repeat(20, 170)...)
	lat, lon := -20.8418, -40.7330
	f.play(t, start, drive(lat, lon, speeds...))
	m := f.draft(t)

	// The registry is not wired into the engine yet: make it the draft of a registered vehicle,
	// sealed again as the drafter would have.
	b, err := drafts.Verify(&m.Sealed, f.key.Public().(ed25519.PublicKey))
	if err != nil {
		t.Fatal(err)
	}
	b.Draft.Unregistered = false
	b.Draft.Licensee = "LIC-001"
	b.Draft.Warnings = nil
	for i := range b.Episodes {
		b.Episodes[i].Unregistered = false
	}
	raw, err := json.Marshal(b)
	if err != nil {
		t.Fatal(err)
	}
	prev := strings.Repeat("ab", 32)
	s := drafts.Seal(b.Draft.ID, 7, raw, prev, f.key)
	b, err = drafts.Verify(&s, f.key.Public().(ed25519.PublicKey))
	if err != nil {
		t.Fatal(err)
	}
	return s, b, f
}

// loudDraft is the loud music near a school, as the drafter makes it: one draft, two facts.
func loudDraft(t *testing.T, geo ...string) (drafts.Made, *fixture) {
	f := newFixture(t, geo...)
	loc := f.p.Location()
	start := time.Date(2026, 11, 27, 10, 0, 0, 0, loc) // a Friday, the school is open
	// Along the street 50 m north of the school, eastwards: at 12 km/h with the music low,
	// then crawling at 5 km/h past the school with 80 dB(A) at the meter (Art. 28 and,
	// estimated at the façade, Art. 27), then quiet.
	lat := -20.8400 + 50.0/110700
	secs := drive(lat, -40.7318, repeat(12, 40)...)
	secs = append(secs, drive(lat, secs[len(secs)-1].Lon, repeat(5, 320)...)...)
	for i := range secs {
		switch {
		case i < 40:
			secs[i].DB = 62
		case i < 160:
			secs[i].DB = 80
		default:
			secs[i].DB = 50
		}
	}
	f.play(t, start, secs)
	return f.draft(t), f
}

// artifacts is where the PDFs and PNGs go: a temporary directory, or test-artifacts/ at the
// module root when TRENZINHO_ARTIFACTS is set.
func artifacts(t *testing.T) string {
	if os.Getenv("TRENZINHO_ARTIFACTS") == "" {
		return t.TempDir()
	}
	dir := filepath.Join("..", "..", "test-artifacts")
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	return dir
}

func tool(t *testing.T, name string) string {
	t.Helper()
	p, err := exec.LookPath(name)
	if err != nil {
		if os.Getenv("CI") != "" {
			t.Fatalf("%s not found: install poppler-utils (apt-get install poppler-utils) to check the notice PDFs", name)
		}
		t.Skipf("%s not found (poppler-utils): skipping the PDF text check", name)
	}
	return p
}

// render writes the notice to dir/name.pdf, and returns its text (pdftotext -layout) and
// checks that page 1 renders to a non-trivial PNG.
func render(t *testing.T, in notice.Input, name string) string {
	t.Helper()
	var buf bytes.Buffer
	if err := notice.Render(&buf, in); err != nil {
		t.Fatal(err)
	}
	if !bytes.HasPrefix(buf.Bytes(), []byte("%PDF-")) {
		t.Fatalf("not a PDF: %q", buf.Bytes()[:min(20, buf.Len())])
	}
	dir := artifacts(t)
	pdfPath := filepath.Join(dir, name+".pdf")
	if err := os.WriteFile(pdfPath, buf.Bytes(), 0o644); err != nil {
		t.Fatal(err)
	}
	out, err := exec.Command(tool(t, "pdftotext"), "-layout", "-enc", "UTF-8", pdfPath, "-").CombinedOutput()
	if err != nil {
		t.Fatalf("pdftotext: %v\n%s", err, out)
	}
	text := string(out)
	noOrphanHeadings(t, text)

	prefix := filepath.Join(dir, name)
	if o, err := exec.Command(tool(t, "pdftoppm"), "-png", "-r", "60", "-f", "1", "-l", "1", "-singlefile", pdfPath, prefix).CombinedOutput(); err != nil {
		t.Fatalf("pdftoppm: %v\n%s", err, o)
	}
	st, err := os.Stat(prefix + ".png")
	if err != nil {
		t.Fatal(err)
	}
	if st.Size() < 20<<10 {
		t.Errorf("page 1 PNG is only %d bytes", st.Size())
	}
	return text
}

var headingRE = regexp.MustCompile(`^\d+\. [A-ZÁÉÍÓÚÂÊÔÃÕÇ][A-ZÁÉÍÓÚÂÊÔÃÕÇ ,()—–.0-9]+$`)

// noOrphanHeadings fails when a page's last line (before the footer) is a section heading:
// a heading keeps its first lines with it.
func noOrphanHeadings(t *testing.T, text string) {
	t.Helper()
	for i, page := range strings.Split(text, "\f") {
		var last string
		for l := range strings.SplitSeq(page, "\n") {
			l = strings.TrimSpace(l)
			if l == "" || strings.Contains(l, "Página ") {
				continue
			}
			last = l
		}
		if headingRE.MatchString(last) {
			t.Errorf("page %d ends with the heading %q", i+1, last)
		}
	}
}

func mustContain(t *testing.T, text string, want ...string) {
	t.Helper()
	flat := strings.Join(strings.Fields(text), " ")
	for _, w := range want {
		if !strings.Contains(text, w) && !strings.Contains(flat, w) {
			t.Errorf("the notice does not say %q", w)
		}
	}
}

func mustNotContain(t *testing.T, text string, bad ...string) {
	t.Helper()
	for _, b := range bad {
		if strings.Contains(text, b) {
			t.Errorf("the notice says %q", b)
		}
	}
}

// hexIn reports whether the hex string appears in the text, possibly wrapped across lines.
func hexIn(text, hex string) bool {
	return strings.Contains(regexp.MustCompile(`[^0-9a-f]`).ReplaceAllString(text, ""), hex)
}

// accents: the cp1252 translation must give real letters, never "?" or "." in their place.
var accents = []string{"AUTO DE INFRAÇÃO — MINUTA", "MINUTA — NÃO É AUTO DE INFRAÇÃO", "MUNICÍPIO DE PIÚMA-ES", "Município",
	"infração", "Fiscalização", "Lei Municipal nº 2.277/2018", "ENQUADRAMENTO LEGAL", "Condutor", "Página 1 de",
	"Matrícula", "recusou-se a assinar", "por via postal com AR", "em mãos", "por edital", "10 dias", "Art. 55", "Art. 57",
	"suspende a exigibilidade da multa", "Verifique com: monitor verify ARQUIVO.json"}

func TestSpeedNotice(t *testing.T) {
	s, b, f := speedDraft(t)
	d := b.Draft
	if len(d.Facts) != 1 || d.Facts[0].Rule != "speed" {
		t.Fatalf("facts %+v", d.Facts)
	}
	in := notice.Input{Sealed: s, Bundle: b, Profile: f.p,
		Licensee: &notice.Licensee{Name: "Trenzinho Alegria de Piúma Ltda.", CNPJ: "11222333000181", Address: "Av. Beira-Mar, 100, Centro, Piúma-ES"},
		Vehicle:  &notice.Vehicle{Plate: "MTQ4B21", ManufactureYear: 2012, Description: "trator Agrale com 3 vagões"},
		Devices: []notice.Device{{Kind: "tachograph", Model: "VDO 1318", Serial: "TC-99812",
			Verification: time.Date(2026, 3, 10, 0, 0, 0, 0, time.UTC), ValidUntil: time.Date(2027, 3, 9, 0, 0, 0, 0, time.UTC)}},
	}
	text := render(t, in, "notice-speed")
	mustContain(t, text, accents...)
	mustContain(t, text, "PIU-001", "Art. 23", "Art. 46, X", "400 UFMP", "45 km/h", "30 km/h", "7 km/h", "37 km/h",
		"Trenzinho Alegria de Piúma Ltda.", "11.222.333/0001-81", "MTQ4B21", "VDO 1318", "TC-99812", "10/03/2026",
		"dados do equipamento não cadastrados", // the GPS that gave the positions is not registered
		"cálculo de reincidência no momento da emissão", "27/11/2026", "sexta-feira", "UTC-03:00",
		"dirigir o veículo desenvolvendo velocidade acima da permitida", "tacógrafo", "Condutor",
		"0000000086H101", "1.4.0-test", "piuma", "2026-11-29", "Posição na cadeia", "Croqui")
	mustNotContain(t, text, "veículo não cadastrado", "ESTIMATIVA")
	if !regexp.MustCompile(`latitude -20,841800, longitude -40,7\d{5}`).MatchString(text) {
		t.Errorf("no coordinates with 6 decimals in:\n%s", text)
	}
	for _, h := range []string{s.Hash, s.PrevHash, s.PublicKey, s.Signature} {
		if !hexIn(text, h) {
			t.Errorf("hex %s… not printed", h[:16])
		}
	}
	if t.Failed() {
		t.Log(text)
	}
}

func TestLoudMusicNearASchoolNotice(t *testing.T) {
	m, f := loudDraft(t)
	d := m.Draft
	if len(d.Facts) != 2 {
		t.Fatalf("%d facts, want 2", len(d.Facts))
	}
	text := render(t, notice.Input{Sealed: m.Sealed, Profile: f.p}, "notice-loud-music")
	mustContain(t, text, accents...)
	mustContain(t, text, "PIU-001", "Art. 28", "Art. 27", "Art. 45, VII", "300 UFMP", "veículo não cadastrado",
		"ESTIMATIVA", "Fato 1", "Fato 2", "EMEF São João", "estabelecimento de ensino", "seg. a sex. 07:00-18:00",
		"feriados fechado", "verificados por fiscal Conceição em 01/10/2026", "80 dB(A)", "70 dB(A)", "55 dB(A)",
		"dados do equipamento não cadastrados", "decibelímetro", "ATENÇÃO — AVISOS AO AGENTE", "Veículo não cadastrado",
		"único auto", "ABNT NBR 10151:2019", "raio de 200 m", "cálculo de reincidência no momento da emissão",
		"Condutor", "a identificar pelo agente", "(primeiro registro da cadeia)")
	if !hexIn(text, m.Sealed.Hash) || !hexIn(text, m.Sealed.Signature) || !hexIn(text, m.Sealed.PublicKey) {
		t.Error("hash, signature or public key not printed")
	}
	for _, w := range d.Warnings {
		mustContain(t, text, w)
	}
	if t.Failed() {
		t.Log(text)
	}
}

func TestIssuedNoticeWithPenalty(t *testing.T) {
	s, b, f := speedDraft(t)
	at := time.Date(2026, 11, 28, 14, 0, 0, 0, time.UTC)
	in := notice.Input{Sealed: s, Profile: f.p, // the bundle is decoded from the sealed draft
		Decision: notice.Decision{Status: drafts.StatusIssued, Notice: "0042/2026", DecidedBy: "Maria Conceição", DecidedAt: &at},
		Driver:   &notice.Driver{Name: "João da Silva", CNH: "01234567890", Card: "0000000086H101"},
		Penalty:  &notice.Penalty{FineUFMP: 800, FineBRL: "3360.00", UnitValueBRL: "4.2000", UnitDate: at, Recidivism: "Reincidente: multa anterior pelo Art. 23 confirmada em 10/09/2026; multa em dobro (Art. 48).", Recommendation: "Recomenda-se a suspensão do serviço por 10 a 45 dias (Art. 52)."},
		Addenda:  1,
	}
	text := render(t, in, "notice-issued")
	mustContain(t, text, "AUTO DE INFRAÇÃO Nº 0042/2026", "800 UFMP", "R$ 3.360,00", "R$ 4,20", "Reincidente",
		"João da Silva", "Maria Conceição", "28/11/2026 11:00:00", b.Draft.ID)
	// The issued auto states only the auto: the recommendation and the addendum note are the
	// review's.
	mustNotContain(t, text, "MINUTA — NÃO É AUTO DE INFRAÇÃO", "cálculo de reincidência no momento da emissão", "a identificar pelo agente",
		"suspensão do serviço", "Recomendação", "adendo")
}

func TestDismissedAndTampered(t *testing.T) {
	// An unverified site never grounds a draft any more: the dismissed draft is
	// the verified school's.
	m, f := loudDraft(t)
	at := time.Date(2026, 11, 28, 9, 0, 0, 0, time.UTC)
	text := render(t, notice.Input{Sealed: m.Sealed, Profile: f.p,
		Decision: notice.Decision{Status: drafts.StatusDismissed, DecidedAt: &at, Reason: "Escola em recesso: horário de funcionamento desatualizado."}}, "notice-dismissed")
	mustContain(t, text, "MINUTA ARQUIVADA", "Escola em recesso")

	bad := m.Sealed
	bad.Bundle = bytes.Replace(bad.Bundle, []byte(`"fine_ufmp":300`), []byte(`"fine_ufmp":30`), 1)
	if err := notice.Render(&bytes.Buffer{}, notice.Input{Sealed: bad, Profile: f.p}); err == nil {
		t.Error("a tampered draft was rendered")
	}
	if err := notice.Render(&bytes.Buffer{}, notice.Input{Sealed: m.Sealed}); err == nil {
		t.Error("rendered without a profile")
	}
}

// A draft with no readings, no places and no position still renders.
func TestBareDraft(t *testing.T) {
	_, key, _ := ed25519.GenerateKey(rand.Reader)
	p := profile.Piuma()
	now := wire.NewTime(time.Date(2026, 11, 29, 2, 10, 0, 0, time.UTC))
	d := drafts.Draft{ID: "PIU-002.art47.20261129T021000.000Z", Vehicle: "PIU-002", Rules: []string{"hours"}, Articles: []string{"Art. 29"},
		Penalty: "Art. 47", FineUFMP: 250, FiscalUnit: "UFMP", Start: now, End: now, Municipality: "Piúma-ES", FiscalOrgan: p.FiscalOrgan,
		Law: p.Law.Name, CreatedAt: now, Software: "test", ProfileID: "piuma", ProfileVer: p.Version, Unregistered: true,
		Facts: []drafts.Fact{{EpisodeID: "x", Rule: "hours", Article: "Art. 29", LegalText: p.Rules["hours"].Text, Description: "Veículo em serviço fora do horário.",
			Start: now, End: now, DurationS: 600, Peak: 30, Unit: "min", Limit: 20, Source: "clock"}}}
	raw, err := json.Marshal(drafts.Bundle{Format: 1, Draft: d, Batches: []drafts.RawBatch{}})
	if err != nil {
		t.Fatal(err)
	}
	text := render(t, notice.Input{Sealed: drafts.Seal(d.ID, 1, raw, "", key), Profile: p}, "notice-bare")
	mustContain(t, text, "250 UFMP", "Art. 29", "Croqui", "indisponível: sem posições GPS válidas", "28/11/2026", "30 min")
}

// The same draft gives the same bytes: a notice can be produced again and compared.
func TestRenderIsDeterministic(t *testing.T) {
	m, f := loudDraft(t)
	var a, b bytes.Buffer
	for _, buf := range []*bytes.Buffer{&a, &b} {
		if err := notice.Render(buf, notice.Input{Sealed: m.Sealed, Profile: f.p}); err != nil {
			t.Fatal(err)
		}
	}
	if !bytes.Equal(a.Bytes(), b.Bytes()) {
		t.Error("two renderings of one draft differ")
	}
}

// The calculus at issue decides the penalty the notice states: a repetition moves it to
// another article (Art. 47), and a first offence of a rule with a notificação preliminar is no
// fine at all.
func TestIssuedNoticeStatesTheCalculusPenalty(t *testing.T) {
	s, _, f := speedDraft(t) // the draft says Art. 46, X
	at := time.Date(2026, 11, 28, 14, 0, 0, 0, time.UTC)
	issued := notice.Decision{Status: drafts.StatusIssued, Notice: "AI-2026/0007", DecidedBy: "Maria Conceição", DecidedAt: &at}

	text := render(t, notice.Input{Sealed: s, Profile: f.p, Decision: issued,
		Penalty: &notice.Penalty{Article: "Art. 47", FineUFMP: 250, FineBRL: "1050.00", UnitValueBRL: "4.2000", UnitDate: at}}, "notice-repeat")
	mustContain(t, text, "Multa (Art. 47)", "penalidade: Art. 47", "Penalidade: Art. 47", "por repetição de infração já notificada", "R$ 1.050,00")
	mustNotContain(t, text, "Multa (Art. 46, X)", "penalidade: Art. 46, X")

	text = render(t, notice.Input{Sealed: s, Profile: f.p, Decision: issued,
		Penalty: &notice.Penalty{Article: "Art. 41, I", Warning: true, FineBRL: "0.00", UnitDate: at}}, "notice-warning")
	mustContain(t, text, "AUTO DE INFRAÇÃO Nº AI-2026/0007 — NOTIFICAÇÃO PRELIMINAR", "notificação preliminar, sem multa", "Medida (Art. 41, I)")
	mustNotContain(t, text, "0 UFMP", "R$ 0,00", "Multa (")
}

// TestNoticeSaysWhetherEvidenceIsSigned: the notice prints the draft's evidence_signed line (the
// speed draft's batches are not signed).
func TestNoticeSaysWhetherEvidenceIsSigned(t *testing.T) {
	s, b, f := speedDraft(t)
	if b.Draft.EvidenceSigned != "sem assinatura" {
		t.Fatalf("evidence_signed %q, want %q", b.Draft.EvidenceSigned, "sem assinatura")
	}
	text := render(t, notice.Input{Sealed: s, Bundle: b, Profile: f.p}, "notice-evidence-unsigned")
	mustContain(t, text, "Assinatura dos lotes pelo equipamento de bordo (verificada com a chave cadastrada do veículo na selagem das evidências): sem assinatura.")
}

// testProfile is Piúma's with a default NBR area for the test towns, which have no nbr_zone.
func testProfile() *profile.Profile {
	p := fleettest.WithCalendars(profile.Piuma())
	p.Noise.DefaultArea = "mixed_residential"
	p.Noise.DefaultAreaReason = "cidade de teste sem zoneamento"
	return p
}

// verifyAll records, as an agent would (POST /api/v1/episodes/{id}/verification), the
// verification every stored episode needs: the music confirmed, an NBR 10151 measurement.
func verifyAll(t *testing.T, db *store.DB) {
	t.Helper()
	ctx := context.Background()
	eps, _, err := db.Episodes(ctx, store.EpisodeFilter{}, 500, "")
	if err != nil {
		t.Fatal(err)
	}
	for _, ep := range eps {
		if ep.Needs == "" || ep.Verification != nil {
			continue
		}
		v := &rules.Verification{Kind: ep.Needs, By: "fiscal Conceição", At: ep.Start, Note: "música alta audível da calçada"}
		if ep.Needs == rules.VerifyNBR10151 {
			music := true // Art. 45, VII: the music confirmed with the measurement
			v.Note, v.MusicAudible = "", &music
			v.Measurement = &rules.Measurement{Meter: "B&K 2250 nº 3012345", Class: 1, Calibration: "RBC 1234/2026",
				Position: "calçada, 1,2 m de altura", LAeqDB: 67.3, ResidualDB: 49.8, LimitDB: 55, Date: ep.Start}
		}
		if _, _, err := db.RecordVerification(ctx, ep.ID, v); err != nil {
			t.Fatal(err)
		}
	}
}

// TestDemonstrationLabelOnEveryPage: a draft or an auto printed under a demonstration profile
// says so at the top of every page; one printed under another profile does not.
func TestDemonstrationLabelOnEveryPage(t *testing.T) {
	s, _, f := speedDraft(t)
	demo := *f.p
	demo.Version = "demonstração " + demo.Version
	at := time.Date(2026, 11, 28, 14, 0, 0, 0, time.UTC)
	issued := notice.Decision{Status: drafts.StatusIssued, Notice: "0042/2026", DecidedBy: "Maria Conceição", DecidedAt: &at}
	for _, c := range []struct {
		name     string
		p        *profile.Profile
		decision notice.Decision
		want     bool
	}{
		{"notice-demo-draft", &demo, notice.Decision{}, true},
		{"notice-demo-issued", &demo, issued, true},
		{"notice-law-issued", f.p, issued, false},
	} {
		text := render(t, notice.Input{Sealed: s, Profile: c.p, Decision: c.decision}, c.name)
		pages := strings.Split(strings.TrimRight(text, "\f\n"), "\f")
		if c.want && len(pages) < 2 {
			t.Errorf("%s: %d pages", c.name, len(pages))
		}
		for i, pg := range pages {
			if got := strings.Contains(pg, notice.DemonstrationLabel); got != c.want {
				t.Errorf("%s: page %d: label %v, want %v", c.name, i+1, got, c.want)
			}
		}
	}
}

// TestReceiptDemonstrationLabel: a filing's receipt under a demonstration profile says so.
func TestReceiptDemonstrationLabel(t *testing.T) {
	for _, demo := range []bool{true, false} {
		var buf bytes.Buffer
		if err := notice.Receipt(&buf, notice.ReceiptInput{Protocolo: "P-1", Kind: "defence", FiledAt: time.Now(), Demonstration: demo}); err != nil {
			t.Fatal(err)
		}
		p := filepath.Join(t.TempDir(), "receipt.pdf")
		if err := os.WriteFile(p, buf.Bytes(), 0o644); err != nil {
			t.Fatal(err)
		}
		out, err := exec.Command(tool(t, "pdftotext"), "-enc", "UTF-8", p, "-").CombinedOutput()
		if err != nil {
			t.Fatalf("pdftotext: %v\n%s", err, out)
		}
		if got := strings.Contains(string(out), notice.DemonstrationLabel); got != demo {
			t.Errorf("demonstration %v: label %v:\n%s", demo, got, out)
		}
	}
}
