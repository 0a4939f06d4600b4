package drafts_test

import (
	"context"
	"crypto/ed25519"
	"crypto/rand"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/trenzinho/trenzinho/internal/testkit/fleettest"
	"github.com/trenzinho/trenzinho/monitor/drafts"
	"github.com/trenzinho/trenzinho/monitor/store"
	"github.com/trenzinho/trenzinho/profile"
	"github.com/trenzinho/trenzinho/registry"
	"github.com/trenzinho/trenzinho/rules"
)

// regFixture is the monitor's drafting path with a registry: the engine reads the registry as
// the monitor wires it (rules.FromRegistry), the drafter takes the registry's data at draft
// time, on a real SQLite store and a registry file in a temporary directory — the example
// registry, with PIU-002 assigned to driver D2.
type regFixture struct {
	db      *store.DB
	reg     *registry.Store
	engine  *rules.Engine
	drafter *drafts.Drafter
	key     ed25519.PrivateKey
	seq     uint64
}

func newRegFixture(t *testing.T) *regFixture {
	t.Helper()
	dir := t.TempDir()
	reg := fleettest.Registry(t, dir, nil)
	db, err := store.Open(context.Background(), filepath.Join(dir, "m.db"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Close() })
	_, key, _ := ed25519.GenerateKey(rand.Reader)
	p := profile.Piuma()
	f := &regFixture{db: db, reg: reg, engine: rules.New(p, nil), key: key,
		drafter: drafts.NewDrafter(drafts.Config{Store: db, Profile: p, ProfileYAML: profile.PiumaYAML(), Key: key,
			Software: "test", Settle: time.Minute, Registry: reg})}
	f.engine.SetRegistry(rules.FromRegistry(reg))
	return f
}

// play drives a vehicle east from the centre of Piúma at the given speeds, one per second, the
// tachograph reporting card (none when empty), and commits the batches as the judge does.
func (f *regFixture) play(t *testing.T, vehicle string, start time.Time, card string, speeds []float64) {
	t.Helper()
	fleettest.Play(t, f.engine, f.db, &f.seq, fleettest.Trip{Vehicle: vehicle, Card: card, Start: start,
		Seconds: fleettest.Drive(-20.8367, -40.7292, speeds...)})
}

// playToTheEnd is play with the service switch off once the vehicle stops: the service ends.
func (f *regFixture) playToTheEnd(t *testing.T, vehicle string, start time.Time, card string, speeds []float64) {
	t.Helper()
	fleettest.Play(t, f.engine, f.db, &f.seq, fleettest.Trip{Vehicle: vehicle, Card: card, Start: start,
		Seconds: fleettest.OffWhenStopped(fleettest.Drive(-20.8367, -40.7292, speeds...))})
}

func (f *regFixture) drafts(t *testing.T) []drafts.Made {
	t.Helper()
	made, err := f.drafter.Run(context.Background(), time.Now().Add(10*time.Minute))
	if err != nil {
		t.Fatal(err)
	}
	for _, m := range made {
		if _, err := drafts.Verify(&m.Sealed, f.key.Public().(ed25519.PublicKey)); err != nil {
			t.Fatalf("draft %s does not verify: %v", m.Draft.ID, err)
		}
	}
	return made
}

func speeding() []float64 { return fleettest.Speeding() }

// noonFriday is 12:00 in Piúma on Friday 2026-11-27: in service hours.
var noonFriday = time.Date(2026, 11, 27, 15, 0, 0, 0, time.UTC)

func TestDraftNamesTheDriverByCard(t *testing.T) {
	f := newRegFixture(t)
	f.play(t, "PIU-001", noonFriday, "000000000086H101", speeding()) // D1's card, as a VDO pads it
	made := f.drafts(t)
	if len(made) != 1 || made[0].Draft.Rules[0] != "speed" {
		t.Fatalf("%d drafts, want the speed draft: %+v", len(made), made)
	}
	d := made[0].Draft
	dr := d.Driver
	if dr == nil {
		t.Fatalf("no driver in the draft; warnings %v", d.Warnings)
	}
	if dr.ID != "D1" || dr.Name != "Maria Aparecida dos Santos" || dr.CNHNumber != "10000000001" ||
		dr.IdentifiedBy != drafts.DriverByCard || dr.Card != "000000000086H101" ||
		dr.Identification != "cartão do tacógrafo nº 000000000086H101" {
		t.Errorf("driver %+v", dr)
	}
	r := d.Registry
	if r == nil || d.Licensee != "L1" || r.RazaoSocial != "Trenzinho Alegria da Orla Ltda" || r.CNPJ != "11222333000181" || r.Plate != "ABC1D23" {
		t.Fatalf("registry record %+v, licensee %q", r, d.Licensee)
	}
	i := slices.IndexFunc(r.Devices, func(x drafts.Device) bool { return x.Kind == "tachograph" })
	if i < 0 || r.Devices[i].Serial != "VDO-EX-0001" || r.Devices[i].INMETROVerification != "2026-02-10" || r.Devices[i].ValidUntil != "2028-02-09" {
		t.Errorf("devices %+v", r.Devices)
	}
	j := slices.IndexFunc(r.Devices, func(x drafts.Device) bool { return x.Kind == "slm" })
	if j < 0 || r.Devices[j].Calibration != "2026-05-05" {
		t.Errorf("the sound-level meter's calibration is not recorded: %+v", r.Devices)
	}
	if d.MeterDistanceM != 2 || d.MeterDistanceSource != "registry" {
		t.Errorf("r1 %v from %q, want 2 m from the registry", d.MeterDistanceM, d.MeterDistanceSource)
	}
	for _, w := range d.Warnings {
		if strings.Contains(w, "Condutor identificado pelo cadastro") || strings.Contains(w, "não cadastrado") {
			t.Errorf("warning %q", w)
		}
	}
}

func TestDraftNamesTheAssignedDriverWithoutACard(t *testing.T) {
	f := newRegFixture(t)
	f.play(t, "PIU-002", noonFriday, "", speeding())
	made := f.drafts(t)
	if len(made) != 1 {
		t.Fatalf("%d drafts, want 1", len(made))
	}
	d := made[0].Draft
	dr := d.Driver
	if dr == nil || dr.ID != "D2" || dr.Name != "João Carlos Ferreira" || dr.CNHNumber != "10000000002" ||
		dr.IdentifiedBy != drafts.DriverByRegistry || dr.Card != "" || !strings.HasPrefix(dr.Identification, "cadastro") {
		t.Fatalf("driver %+v", dr)
	}
	if !slices.ContainsFunc(d.Warnings, func(w string) bool { return strings.Contains(w, "Condutor identificado pelo cadastro") }) {
		t.Errorf("no warning that the driver comes from the registry: %v", d.Warnings)
	}
	if d.MeterDistanceM != 2.5 || d.Registry == nil || d.Registry.Plate != "MTA1234" {
		t.Errorf("r1 %v, registry %+v", d.MeterDistanceM, d.Registry)
	}
}

// A card the registry does not know names nobody, and the assigned driver is not put in its
// place: the agent identifies the driver.
func TestDraftWithAnUnregisteredCard(t *testing.T) {
	f := newRegFixture(t)
	f.play(t, "PIU-002", noonFriday, "0000000099Z999", speeding())
	made := f.drafts(t)
	if len(made) != 1 {
		t.Fatalf("%d drafts, want 1", len(made))
	}
	d := made[0].Draft
	if d.Driver != nil {
		t.Errorf("driver %+v for a card the registry does not know", d.Driver)
	}
	if !slices.ContainsFunc(d.Warnings, func(w string) bool { return strings.Contains(w, "0000000099Z999") }) {
		t.Errorf("no warning about the unknown card: %v", d.Warnings)
	}
}

func TestDocumentExpiredDraftCitesTheMappedArticle(t *testing.T) {
	f := newRegFixture(t)
	// PIU-003's inspection ran out on 2026-11-20 (the example registry); D3 drives it.
	f.playToTheEnd(t, "PIU-003", noonFriday, "0000000077B303", slices.Concat(repeat(20, 180), repeat(0, 400)))
	made := f.drafts(t)
	if len(made) != 1 {
		t.Fatalf("%d drafts, want 1 (the inspection): %+v", len(made), made)
	}
	d := made[0].Draft
	if d.Penalty != "Art. 45, IV" || d.FineUFMP != 300 || len(d.Articles) != 1 || d.Articles[0] != "Art. 32" ||
		len(d.Rules) != 1 || d.Rules[0] != "document_expired" {
		t.Fatalf("draft cites %v / %s, %v UFMP, rules %v; want Art. 32 / Art. 45, IV, 300", d.Articles, d.Penalty, d.FineUFMP, d.Rules)
	}
	fact := d.Facts[0]
	for _, want := range []string{"inspeção técnica veicular", "VT-2025-031", "20/11/2026", "veículo PIU-003", "vencido havia 7 dias", "27/11/2026 12:00:00"} {
		if !strings.Contains(fact.Description, want) {
			t.Errorf("the fact does not say %q: %s", want, fact.Description)
		}
	}
	if fact.Document == nil || fact.Document.Number != "VT-2025-031" || fact.Detail != "inspecao" ||
		!strings.Contains(fact.LegalText, "inspeções técnicas") {
		t.Errorf("fact %+v", fact)
	}
	if d.Driver == nil || d.Driver.ID != "D3" || d.Driver.Name != "Ana Paula de Oliveira" {
		t.Errorf("driver %+v", d.Driver)
	}
	if d.Licensee != "L2" || d.Registry == nil || d.Registry.CNPJ != "12ABC34501DE35" {
		t.Errorf("licensee %q, registry %+v", d.Licensee, d.Registry)
	}
}

// A document kind the profile maps as an alert (an expired meter calibration) opens an episode
// but makes no draft; the same vehicle's speeding draft warns that its meter was out of date
// when the meter measured — here it did not, so only a tachograph out of date would.
func TestDocumentAlertIsNotDrafted(t *testing.T) {
	f := newRegFixture(t)
	v, _ := f.reg.Vehicle("PIU-001")
	for i := range v.Devices {
		if v.Devices[i].Kind == registry.DeviceSLM {
			v.Devices[i].ValidUntil = registry.MustDate("2026-11-01")
		}
		if v.Devices[i].Kind == registry.DeviceTachograph {
			v.Devices[i].ValidUntil = registry.MustDate("2026-11-02")
		}
	}
	v.Documents = slices.DeleteFunc(v.Documents, func(d registry.Document) bool { return d.Kind == registry.DocAfericaoTacografo })
	if _, err := f.reg.PutVehicle(v); err != nil {
		t.Fatal(err)
	}
	f.playToTheEnd(t, "PIU-001", noonFriday, "0000000086H101", slices.Concat(repeat(20, 180), repeat(0, 400)))
	eps, _, err := f.db.Episodes(context.Background(), store.EpisodeFilter{Rule: "document_expired"}, 100, "")
	if err != nil {
		t.Fatal(err)
	}
	kinds := map[string]bool{}
	for _, ep := range eps {
		kinds[ep.Detail] = true
	}
	if !kinds["verificacao_dispositivo"] || !kinds["afericao_tacografo"] {
		t.Fatalf("episodes %v, want the meter's calibration and the tachograph's verification", kinds)
	}
	made := f.drafts(t)
	if len(made) != 1 || made[0].Draft.Facts[0].Detail != "afericao_tacografo" || made[0].Draft.Penalty != "Art. 47" {
		t.Fatalf("drafts %+v, want only the tachograph's verification (Art. 47)", made)
	}
	if a := made[0].Draft.Articles; len(a) != 1 || a[0] != "Art. 20, III, e" {
		t.Errorf("articles %v", a)
	}
	if !strings.Contains(made[0].Draft.Facts[0].Description, "tacógrafo nº VDO-EX-0001") {
		t.Errorf("the fact does not name the tachograph: %s", made[0].Draft.Facts[0].Description)
	}
	// The alert is never drafted, and not read again on every run either.
	if !slices.Contains(f.drafter.Kinds(), drafts.Kind{Rule: "document_expired", Detail: "afericao_tacografo"}) ||
		slices.ContainsFunc(f.drafter.Kinds(), func(k drafts.Kind) bool {
			return k.Detail == "verificacao_dispositivo" || k == drafts.Kind{Rule: "document_expired"}
		}) {
		t.Errorf("the drafter reads %v", f.drafter.Kinds())
	}
	pending, err := f.db.UndraftedEpisodes(context.Background(), f.drafter.Kinds())
	if err != nil || len(pending) != 0 {
		t.Errorf("undrafted episodes read: %d %v", len(pending), err)
	}
	// The alert is stored and shown, but says it cannot ground an auto, and the store does
	// not offer it for drafting even when asked for every document kind.
	all, err := f.db.UndraftedEpisodes(context.Background(), []drafts.Kind{{Rule: "document_expired"}})
	if err != nil || len(all) != 0 {
		t.Errorf("every undrafted document episode: %+v %v", all, err)
	}
	for _, ep := range eps {
		if ep.Detail == "verificacao_dispositivo" && (ep.GroundsAuto || ep.GroundsNote == "") {
			t.Errorf("the meter's calibration alert: grounds_auto %v, note %q", ep.GroundsAuto, ep.GroundsNote)
		}
	}
}

func repeat(v float64, n int) []float64 {
	s := make([]float64, n)
	for i := range s {
		s[i] = v
	}
	return s
}

// A vehicle in service after it failed an inspection (no repair or accident on record): the
// draft cites Art. 32, § 3º and the penalty the profile documents, Art. 47 (250 UFMP) — not
// Art. 45, VI, which punishes not re-inspecting after a repair or an accident.
func TestFailedInspectionDraftCitesArt32(t *testing.T) {
	f := newRegFixture(t)
	v, _ := f.reg.Vehicle("PIU-001")
	v.Events = []registry.VehicleEvent{{Date: registry.MustDate("2026-11-20"), Kind: registry.EventInspection, Note: "freios reprovados"}}
	if _, err := f.reg.PutVehicle(v); err != nil {
		t.Fatal(err)
	}
	f.playToTheEnd(t, "PIU-001", noonFriday, "0000000086H101", slices.Concat(repeat(20, 180), repeat(0, 400)))
	var d *drafts.Draft
	for _, m := range f.drafts(t) {
		if m.Draft.Rules[0] == rules.RuleUninspectedCirculating {
			d = &m.Draft
		}
	}
	if d == nil {
		t.Fatal("no uninspected_circulating draft")
	}
	if d.Penalty != "Art. 47" || d.FineUFMP != 250 || len(d.Articles) != 1 || d.Articles[0] != "Art. 32, § 3º" {
		t.Fatalf("draft cites %v / %s, %v UFMP; want Art. 32, § 3º / Art. 47, 250", d.Articles, d.Penalty, d.FineUFMP)
	}
	if lt := d.Facts[0].LegalText; !strings.Contains(lt, "impossibilitados de trafegar") {
		t.Errorf("legal text %q", lt)
	}
}

// Art. 45, IV fines "não submeter o veículo às inspeções técnicas determinadas por esta lei,
// nos prazos e datas estabelecidos, salvo justificativa formal aprovada": an expired inspection
// grounds an auto only once the date the organ set passed without the vehicle submitted and
// without a justification approved. The example registry sets 2026-11-24 for PIU-003, and the
// draft cites Art. 32 and Art. 45, IV, 300 UFMP; with no date set, or the justification
// approved, the episode is an alert and no draft is made.
func TestInspectionGroundsAnAutoOnlyOnceTheDateSetPassed(t *testing.T) {
	for _, c := range []struct {
		name  string
		edit  func(v *registry.Vehicle)
		draft bool
	}{
		{"date set passed", nil, true},
		{"no date set", func(v *registry.Vehicle) { v.InspectionRequests = nil }, false},
		{"date set not passed", func(v *registry.Vehicle) { v.InspectionRequests[0].ScheduledFor = registry.MustDate("2026-11-30") }, false},
		{"justification approved", func(v *registry.Vehicle) {
			v.InspectionRequests[0].JustificationApproved = registry.MustDate("2026-11-23")
		}, false},
		{"submitted on the date set", func(v *registry.Vehicle) {
			v.Events = append(v.Events, registry.VehicleEvent{Date: registry.MustDate("2026-11-24"), Kind: registry.EventInspection, Note: "reprovado"})
		}, false}, // submitted and failed: no omission (the vehicle may not circulate: Art. 32, § 3º, another rule)
	} {
		t.Run(c.name, func(t *testing.T) {
			f := newRegFixture(t)
			if c.edit != nil {
				v, _ := f.reg.Vehicle("PIU-003")
				c.edit(&v)
				if _, err := f.reg.PutVehicle(v); err != nil {
					t.Fatal(err)
				}
			}
			f.playToTheEnd(t, "PIU-003", noonFriday, "0000000077B303", slices.Concat(repeat(20, 180), repeat(0, 400)))
			made := f.drafts(t)
			eps, _, err := f.db.Episodes(context.Background(), store.EpisodeFilter{Rule: "document_expired"}, 10, "")
			if err != nil || len(eps) != 1 {
				t.Fatalf("episodes %+v %v", eps, err)
			}
			ep := eps[0]
			var docDrafts []drafts.Draft
			for _, m := range made {
				if slices.Contains(m.Draft.Rules, "document_expired") {
					docDrafts = append(docDrafts, m.Draft)
				}
			}
			if ep.GroundsAuto != c.draft || len(docDrafts) != map[bool]int{true: 1}[c.draft] {
				t.Fatalf("grounds_auto %v (%s), %d drafts; want grounds %v", ep.GroundsAuto, ep.GroundsNote, len(docDrafts), c.draft)
			}
			if !c.draft {
				if !strings.Contains(ep.GroundsNote, "Art. 45, IV") {
					t.Errorf("note %q", ep.GroundsNote)
				}
				return
			}
			d := docDrafts[0]
			if d.Penalty != "Art. 45, IV" || d.FineUFMP != 300 || len(d.Articles) != 1 || d.Articles[0] != "Art. 32" {
				t.Errorf("draft cites %v / %s, %v UFMP", d.Articles, d.Penalty, d.FineUFMP)
			}
		})
	}
}

// An expired licence: what forbids operating without a licence in force is Art. 2, which Art. 7
// (the licence's one-year term) completes; the draft cites both, with the penalty the profile
// documents, Art. 47 (250 UFMP), and its fact names the licence.
func TestExpiredLicenceDraftCitesArt2WithArt7(t *testing.T) {
	f := newRegFixture(t)
	l, ok := f.reg.Licensee("L1")
	if !ok {
		t.Fatal("no licensee L1 in the example registry")
	}
	for i := range l.Documents {
		if l.Documents[i].Kind == registry.DocLicenca {
			l.Documents[i].ValidUntil = registry.MustDate("2026-11-20")
		}
	}
	if _, err := f.reg.PutLicensee(l); err != nil {
		t.Fatal(err)
	}
	f.playToTheEnd(t, "PIU-001", noonFriday, "0000000086H101", slices.Concat(repeat(20, 180), repeat(0, 400)))
	var d *drafts.Draft
	for _, m := range f.drafts(t) {
		if m.Draft.Rules[0] == "document_expired" && m.Draft.Facts[0].Detail == "licenca" {
			d = &m.Draft
		}
	}
	if d == nil {
		t.Fatal("no draft of the expired licence")
	}
	if d.Penalty != "Art. 47" || d.FineUFMP != 250 || len(d.Articles) != 1 || d.Articles[0] != "Art. 2 c/c Art. 7" {
		t.Fatalf("draft cites %v / %s, %v UFMP; want Art. 2 c/c Art. 7 / Art. 47, 250", d.Articles, d.Penalty, d.FineUFMP)
	}
	if fact := d.Facts[0]; !strings.Contains(fact.Description, "LIC-2026/001") || !strings.Contains(fact.Description, "20/11/2026") {
		t.Errorf("the fact does not name the licence and its end: %s", fact.Description)
	}
}
