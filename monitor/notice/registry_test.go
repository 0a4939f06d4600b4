package notice_test

import (
	"context"
	"crypto/ed25519"
	"crypto/rand"
	"path/filepath"
	"slices"
	"testing"
	"time"

	"github.com/trenzinho/trenzinho/internal/testkit/fleettest"
	"github.com/trenzinho/trenzinho/monitor/drafts"
	"github.com/trenzinho/trenzinho/monitor/notice"
	"github.com/trenzinho/trenzinho/monitor/store"
	"github.com/trenzinho/trenzinho/profile"
	"github.com/trenzinho/trenzinho/registry"
	"github.com/trenzinho/trenzinho/rules"
)

// registered makes real drafts with the example registry wired as the monitor wires it (a
// registry file in a temporary directory, PIU-002 assigned to driver D2): the engine judges,
// the drafter takes the licensee, vehicle, devices, r₁ and driver from the registry. The
// notices below are rendered from the sealed drafts alone, as GET /api/v1/drafts/{id}/pdf does.
type registered struct {
	db      *store.DB
	engine  *rules.Engine
	drafter *drafts.Drafter
	p       *profile.Profile
	seq     uint64
}

func newRegistered(t *testing.T) *registered {
	t.Helper()
	dir := t.TempDir()
	reg := fleettest.Registry(t, dir, func(v *registry.Vehicle) {
		v.Devices = append(v.Devices, registry.Device{Kind: registry.DeviceSLM, Serial: "PCE-EX-0002", Model: "PCE-322A",
			Calibration: registry.MustDate("2026-07-15"), ValidUntil: registry.MustDate("2027-07-14")})
	})
	db, err := store.Open(context.Background(), filepath.Join(dir, "m.db"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Close() })
	_, key, _ := ed25519.GenerateKey(rand.Reader)
	p := testProfile()
	f := &registered{db: db, engine: rules.New(p, nil), p: p,
		drafter: drafts.NewDrafter(drafts.Config{Store: db, Profile: p, ProfileYAML: profile.PiumaYAML(), Key: key,
			Software: "1.4.0-test", Settle: time.Minute, Registry: reg})}
	f.engine.SetRegistry(rules.FromRegistry(reg))
	return f
}

// play drives vehicle east at the given speeds (one a second) with the meter at db (0: no
// meter), the tachograph reporting card, and commits as the judge does.
func (f *registered) play(t *testing.T, vehicle, card string, start time.Time, speeds []float64, db float64) {
	t.Helper()
	secs := fleettest.Drive(-20.8418, -40.7330, speeds...)
	for i := range secs {
		secs[i].DB = db
	}
	fleettest.Play(t, f.engine, f.db, &f.seq, fleettest.Trip{Vehicle: vehicle, Card: card, Start: start, Seconds: secs})
}

// playToTheEnd is play (no sound) with the service switch off once the vehicle stops: the
// service ends, and an episode that lasts while in service closes.
func (f *registered) playToTheEnd(t *testing.T, vehicle, card string, start time.Time, speeds []float64) {
	t.Helper()
	secs := fleettest.OffWhenStopped(fleettest.Drive(-20.8418, -40.7330, speeds...))
	fleettest.Play(t, f.engine, f.db, &f.seq, fleettest.Trip{Vehicle: vehicle, Card: card, Start: start, Seconds: secs})
}

func (f *registered) draft(t *testing.T) drafts.Made {
	t.Helper()
	verifyAll(t, f.db)
	made, err := f.drafter.Run(context.Background(), time.Now().Add(10*time.Minute))
	if err != nil {
		t.Fatal(err)
	}
	if len(made) != 1 {
		t.Fatalf("%d drafts, want 1", len(made))
	}
	return made[0]
}

var fridayEvening = time.Date(2026, 11, 27, 22, 30, 0, 0, time.UTC) // 19:30 in Piúma

// The speed notice of a registered vehicle names the driver the tachograph's card identifies,
// with the CNH, and lists the tachograph with its INMETRO verification.
func TestNoticeNamesTheDriverByCardAndTheDevices(t *testing.T) {
	f := newRegistered(t)
	f.play(t, "PIU-001", "0000000086H101", fridayEvening, slices.Concat(repeat(20, 60), repeat(45, 20), repeat(20, 200)), 0)
	m := f.draft(t)
	text := render(t, notice.Input{Sealed: m.Sealed, Profile: f.p}, "notice-registered-card")
	mustContain(t, text, "Maria Aparecida dos Santos", "CNH nº 10000000001",
		"identificado por: cartão do tacógrafo nº 0000000086H101",
		"Trenzinho Alegria da Orla Ltda", "11.222.333/0001-81", "placa ABC1D23",
		"VDO MTCO 1390", "VDO-EX-0001", "verificação em 10/02/2026", "09/02/2028",
		"Art. 23", "Art. 46, X")
	mustNotContain(t, text, "a identificar pelo agente", "veículo não cadastrado")
	if t.Failed() {
		t.Log(text)
	}
}

// A speed auto refers to the tachograph's record as the legal record (Art. 22, III, quoted) and
// names the tachograph with the verification the issue found valid on the fact's date, which
// replaces the record sealed with the draft.
func TestNoticeNamesTheTachographAsTheLegalRecord(t *testing.T) {
	f := newRegistered(t)
	f.play(t, "PIU-001", "0000000086H101", fridayEvening, slices.Concat(repeat(20, 60), repeat(45, 20), repeat(20, 200)), 0)
	m := f.draft(t)
	if in := m.Draft.Facts[0].Instrument; in == nil || in.Serial != "VDO-EX-0001" || in.INMETROVerification != "2026-02-10" {
		t.Fatalf("the speed fact seals %+v", in)
	}
	text := render(t, notice.Input{Sealed: m.Sealed, Profile: f.p}, "notice-legal-record")
	mustContain(t, text, "Registro legal da velocidade e do tempo",
		"equipamento registrador instantâneo e inalterável de velocidade e tempo (tacógrafo), em perfeito estado de funcionamento",
		"Art. 22, III", "nº de série VDO-EX-0001, verificado pelo INMETRO em 10/02/2026")
	verified := notice.DeviceOf(drafts.Device{Kind: "tachograph", Serial: "VDO-EX-0001", Model: "VDO MTCO 1390",
		INMETROVerification: "2026-11-02", ValidUntil: "2028-11-01"})
	text = render(t, notice.Input{Sealed: m.Sealed, Profile: f.p, Verified: []notice.Device{verified}}, "notice-legal-record-renewed")
	mustContain(t, text, "verificado pelo INMETRO em 02/11/2026", "verificação em 02/11/2026", "01/11/2028")
	mustNotContain(t, text, "10/02/2026", "dados do equipamento não cadastrados")
	if t.Failed() {
		t.Log(text)
	}
}

// Without a card, the notice names the driver the registry assigns to the vehicle and says so;
// a noise draft prints the registry's r₁ and the sound-level meter's calibration.
func TestNoticeNamesTheAssignedDriverAndTheMeter(t *testing.T) {
	f := newRegistered(t)
	start := time.Date(2026, 11, 27, 13, 0, 0, 0, time.UTC) // 10:00 in Piúma
	f.play(t, "PIU-002", "", start, repeat(5, 320), 0)
	// 80 dB(A) at the meter for 2 minutes, at 5 km/h: estimated at the façade with r₁ = 2.5 m,
	// above the mixed residential day limit (55 dB(A)).
	f.play(t, "PIU-002", "", start.Add(320*time.Second), repeat(5, 120), 80)
	f.play(t, "PIU-002", "", start.Add(440*time.Second), repeat(5, 200), 50)
	m := f.draft(t)
	if len(m.Draft.Facts) != 1 || m.Draft.Facts[0].Rule != "noise_limit" {
		t.Fatalf("facts %+v", m.Draft.Facts)
	}
	text := render(t, notice.Input{Sealed: m.Sealed, Profile: f.p}, "notice-registered-assigned")
	mustContain(t, text, "João Carlos Ferreira", "CNH nº 10000000002",
		"identificado por: cadastro — condutor designado para o veículo",
		"Condutor identificado pelo cadastro",
		"r1 = 2,5 m", "placa MTA-1234",
		"PCE-322A", "PCE-EX-0002", "calibração em 15/07/2026", "válida até", "14/07/2027")
	mustNotContain(t, text, "a identificar pelo agente", "r1 = 2 m")
	if t.Failed() {
		t.Log(text)
	}
}

// A document_expired draft: the notice cites the article the profile maps the document to, and
// says which document, its number and its last valid day.
func TestNoticeOfAnExpiredDocument(t *testing.T) {
	f := newRegistered(t)
	start := time.Date(2026, 11, 27, 15, 0, 0, 0, time.UTC) // 12:00 in Piúma
	// PIU-003's inspection ran out on 2026-11-20 (the example registry); D3's card.
	f.playToTheEnd(t, "PIU-003", "0000000077B303", start, slices.Concat(repeat(20, 180), repeat(0, 400)))
	m := f.draft(t)
	text := render(t, notice.Input{Sealed: m.Sealed, Profile: f.p}, "notice-document-expired")
	mustContain(t, text, "Art. 32", "Art. 45, IV", "300 UFMP", "inspeções técnicas determinadas por esta lei",
		"inspeção técnica veicular nº VT-2025-031", "válido até 20/11/2026", "vencido havia 7 dias",
		"Passeios Recreativos Ilha do Gambá Ltda", "12.ABC.345/01DE-35", "Ana Paula de Oliveira", "CNH nº 10000000003")
	if t.Failed() {
		t.Log(text)
	}
}
