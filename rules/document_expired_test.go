package rules

import (
	"encoding/json"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/trenzinho/trenzinho/profile"
	"github.com/trenzinho/trenzinho/registry"
	"github.com/trenzinho/trenzinho/wire"
)

// docRegistry is a small registry, as of noon on 2026-11-27 in Piúma (the tests' clock): PIU-003
// has an inspection that ran out on 2026-11-20 and a CSV valid until the 26th (expired the day
// before); PIU-002 has every document valid; driver D3's CNH ran out on 2026-11-01 and her card
// is 0000000077B303, driver D1's documents are valid.
func docRegistry(t *testing.T) *registry.Store {
	t.Helper()
	d := registry.MustDate
	r := &registry.Registry{
		Licensees: []registry.Licensee{
			{ID: "L1", RazaoSocial: "Trenzinho Alegria da Orla Ltda", CNPJ: "11.222.333/0001-81",
				Documents: []registry.Document{{Kind: registry.DocLicenca, Number: "LIC-1", ValidUntil: d("2027-02-28")}}},
		},
		Vehicles: []registry.Vehicle{
			{ID: "PIU-003", Plate: "ABC2E45", Licensee: "L1", RequiredCNHCategory: "D",
				Documents: []registry.Document{
					{Kind: registry.DocInspecao, Number: "VT-2025-031", Issued: d("2025-11-21"), ValidUntil: d("2026-11-20")},
					{Kind: registry.DocCSV, Number: "CSV-0201", ValidUntil: d("2026-11-26")},
				}},
			{ID: "PIU-002", Plate: "MTA1234", Licensee: "L1",
				Documents: []registry.Document{
					{Kind: registry.DocInspecao, Number: "VT-2026-015", ValidUntil: d("2027-04-14")},
					{Kind: registry.DocCSV, Number: "CSV-0102", ValidUntil: d("2027-02-09")},
				}},
		},
		Drivers: []registry.Driver{
			{ID: "D1", Name: "Maria Aparecida dos Santos", CPF: "123.456.789-09", CNHCategory: "D",
				CNHValidUntil: d("2030-05-17"), TachographCard: "0000000086H101", Licensee: "L1"},
			{ID: "D3", Name: "Ana Paula de Oliveira", CPF: "111.444.777-35", CNHCategory: "D",
				CNHValidUntil: d("2026-11-01"), TachographCard: "0000000077B303", Licensee: "L1"},
		},
	}
	s, err := registry.NewStore(r, "")
	if err != nil {
		t.Fatal(err)
	}
	return s
}

// docRun is a run of the engine with the registry wired as the monitor wires it.
func docRun(t *testing.T, reg *registry.Store) *run {
	r := newRun(t)
	r.e.SetRegistry(FromRegistry(reg))
	return r
}

// withCard puts the driver card into every tachograph reading.
func withCard(bs []*wire.Batch, card string) []*wire.Batch {
	for _, b := range bs {
		for i := range b.Tacho {
			b.Tacho[i].Card = card
		}
	}
	return bs
}

func docEpisodes(r *run) []Episode {
	eps := r.rule(profile.DocumentExpiredRule)
	slices.SortFunc(eps, func(a, b Episode) int { return strings.Compare(a.ID, b.ID) })
	return eps
}

func TestDocumentExpiredInService(t *testing.T) {
	r := docRun(t, docRegistry(t))
	tr := newTrip(noon)
	tr.vehicle = "PIU-003"
	r.apply(t, tr.batches(repeat(20, 180)...), time.Second) // in service for 3 min
	r.apply(t, tr.batches(repeat(0, 400)...), time.Second)  // stopped, out of service
	eps := docEpisodes(r)
	if len(eps) != 2 {
		t.Fatalf("%d document_expired episodes, want 2 (inspection, CSV): %+v", len(eps), eps)
	}
	byKind := map[string]Episode{}
	for _, ep := range eps {
		byKind[ep.Detail] = ep
	}
	insp, csv := byKind["inspecao"], byKind["csv"]
	if insp.ID == "" || csv.ID == "" || insp.ID == csv.ID {
		t.Fatalf("episodes %q and %q: want one per document, with different ids", insp.ID, csv.ID)
	}
	if insp.Article != "Art. 32" || insp.Penalty != "Art. 45, IV" {
		t.Errorf("inspection cited as %s / %s, want Art. 32 / Art. 45, IV", insp.Article, insp.Penalty)
	}
	if csv.Article != "Art. 20, III, b" || csv.Penalty != "Art. 47" {
		t.Errorf("CSV cited as %s / %s, want Art. 20, III, b / Art. 47", csv.Article, csv.Penalty)
	}
	doc := insp.Document
	if doc == nil || doc.Number != "VT-2025-031" || doc.ValidUntil.String() != "2026-11-20" ||
		doc.Subject.Kind != registry.SubjectVehicle || doc.Subject.ID != "PIU-003" || doc.Document != registry.DocInspecao {
		t.Errorf("inspection evidence %+v", doc)
	}
	if insp.Peak != 7 || insp.Unit != "dias" || csv.Peak != 1 {
		t.Errorf("days expired: inspection %v %s, CSV %v; want 7 dias and 1", insp.Peak, insp.Unit, csv.Peak)
	}
	if !insp.Start.Equal(noon) {
		t.Errorf("start %v, want the first reading in service %v", insp.Start, noon)
	}
	if insp.End == nil || insp.Closed == nil || *insp.Closed != ClosedOutOfService || !insp.End.Equal(noon.Add(180*time.Second)) {
		t.Errorf("end %v (%v), want paused at the first stopped reading %v", insp.End, insp.Closed, noon.Add(180*time.Second))
	}
	if r.evidence[insp.ID] < 5 || r.evidence[insp.ID] > 10 {
		t.Errorf("%d evidence readings for 3 min in service, want one every 30 s", r.evidence[insp.ID])
	}
	if insp.Unregistered {
		t.Error("a registered vehicle marked unregistered")
	}
	if insp.Lat == 0 || insp.Lon == 0 {
		t.Errorf("no position on the episode (%v, %v): the first known position stands for the start", insp.Lat, insp.Lon)
	}
}

func TestDocumentExpiredOnlyInServiceAndOnlyExpired(t *testing.T) {
	reg := docRegistry(t)
	t.Run("stopped outside service", func(t *testing.T) {
		r := docRun(t, reg)
		tr := newTrip(noon)
		tr.vehicle = "PIU-003"
		r.apply(t, tr.batches(repeat(0, 600)...), time.Second)
		if eps := docEpisodes(r); len(eps) != 0 {
			t.Errorf("%d episodes for a vehicle not in service", len(eps))
		}
	})
	t.Run("documents valid", func(t *testing.T) {
		r := docRun(t, reg)
		tr := newTrip(noon)
		tr.vehicle = "PIU-002"
		r.apply(t, tr.batches(repeat(20, 600)...), time.Second)
		if eps := docEpisodes(r); len(eps) != 0 {
			t.Errorf("%d episodes for a vehicle whose documents are valid: %+v", len(eps), eps)
		}
	})
	t.Run("shorter than the confirmation", func(t *testing.T) {
		r := docRun(t, reg)
		tr := newTrip(noon)
		tr.vehicle = "PIU-003"
		r.apply(t, tr.batches(concat(repeat(20, 50), repeat(0, 400))...), time.Second)
		if eps := docEpisodes(r); len(eps) != 0 {
			t.Errorf("%d episodes after 50 s in service (confirmation 60 s)", len(eps))
		}
	})
	t.Run("not registered", func(t *testing.T) {
		r := docRun(t, reg)
		tr := newTrip(noon)
		tr.vehicle = "PIU-999"
		r.apply(t, tr.batches(repeat(20, 600)...), time.Second)
		if eps := docEpisodes(r); len(eps) != 0 {
			t.Errorf("%d episodes for a vehicle the registry does not know", len(eps))
		}
	})
	t.Run("valid through its last day in Piúma", func(t *testing.T) {
		r := docRun(t, reg)
		// From 23:50 on 2026-11-20 in Piúma (02:50 UTC on the 21st) to 00:10 on the 21st: the
		// inspection, valid until the 20th, expires at local midnight, not at UTC midnight —
		// also within a batch that spans midnight (from 23:59:57 to 00:00:01).
		tr := newTrip(time.Date(2026, 11, 21, 2, 50, 2, 0, time.UTC))
		tr.vehicle = "PIU-003"
		r.apply(t, tr.batches(repeat(20, 1200)...), time.Second)
		var insp []Episode
		for _, ep := range docEpisodes(r) {
			if ep.Detail == "inspecao" {
				insp = append(insp, ep)
			}
		}
		if midnight := time.Date(2026, 11, 21, 3, 0, 0, 0, time.UTC); len(insp) != 1 || !insp[0].Start.Equal(midnight) || insp[0].Peak != 1 {
			t.Errorf("inspection episodes %+v, want one from local midnight (%v), 1 day expired", insp, midnight)
		}
	})
	t.Run("profile without the mapping", func(t *testing.T) {
		p := profile.Piuma()
		p.DocumentExpired.Documents = nil
		r := &run{e: New(p, nil), episodes: map[string]Episode{}, evidence: map[string]int{}}
		r.e.SetRegistry(FromRegistry(reg))
		tr := newTrip(noon)
		tr.vehicle = "PIU-003"
		r.apply(t, tr.batches(repeat(20, 600)...), time.Second)
		if eps := docEpisodes(r); len(eps) != 0 {
			t.Errorf("%d episodes with no document mapped in the profile", len(eps))
		}
	})
}

// One episode per document until it is renewed: an inspection expired for three service days
// is one omission (Art. 45, IV), one episode — paused out of service, reopened by the next
// in-service reading — and one draft, later days being addenda.
func TestDocumentExpiredOneEpisodeUntilRenewed(t *testing.T) {
	r := docRun(t, docRegistry(t))
	tr := newTrip(noon)
	tr.vehicle = "PIU-003"
	var ids []string
	for day := range 3 {
		tr.t = noon.Add(time.Duration(day) * 24 * time.Hour)
		r.apply(t, tr.batches(concat(repeat(20, 120), repeat(0, 120), repeat(20, 120))...), time.Second) // a 2-min stop
		r.apply(t, tr.batches(repeat(0, 400)...), time.Second)                                           // parked
		var insp []Episode
		for _, ep := range docEpisodes(r) {
			if ep.Detail == "inspecao" {
				insp = append(insp, ep)
			}
		}
		if len(insp) != 1 || insp[0].End == nil || *insp[0].Closed != ClosedOutOfService || !insp[0].Start.Equal(noon) {
			t.Fatalf("day %d: inspection episodes %+v, want one, from the first day, paused", day+1, insp)
		}
		ids = append(ids, insp[0].ID)
		if want := noon.Add(time.Duration(day)*24*time.Hour + 360*time.Second); !insp[0].End.Equal(want) {
			t.Errorf("day %d: paused at %v, want %v", day+1, insp[0].End, want)
		}
	}
	if ids[0] != ids[1] || ids[1] != ids[2] {
		t.Errorf("episode ids %v", ids)
	}
	reopened := 0
	for _, ev := range r.events {
		if ev.Kind == EventReopen && ev.Episode.Detail == "inspecao" {
			reopened++
		}
	}
	if reopened != 2 {
		t.Errorf("%d reopenings over three days, want 2", reopened)
	}
}

// A CNH expired 10 days is an alert (CTB Art. 162, V: 30 days of grace); 31 days, an episode
// that grounds an auto.
func TestDocumentExpiredCNHGrace(t *testing.T) {
	for _, c := range []struct {
		day    time.Time
		ground bool
	}{
		{time.Date(2026, 11, 11, 15, 0, 0, 0, time.UTC), false}, // D3's CNH ran out on 2026-11-01
		{time.Date(2026, 12, 2, 15, 0, 0, 0, time.UTC), true},
	} {
		r := docRun(t, docRegistry(t))
		tr := newTrip(c.day)
		tr.vehicle = "PIU-002"
		tr.service = ptr(true) // "em serviço" observed: the switch on
		r.apply(t, withCard(tr.batches(repeat(20, 180)...), "0000000077B303"), time.Second)
		var cnh []Episode
		for _, ep := range docEpisodes(r) {
			if ep.Detail == "cnh" {
				cnh = append(cnh, ep)
			}
		}
		if len(cnh) != 1 || cnh[0].GroundsAuto != c.ground || cnh[0].Draftable() != c.ground {
			t.Fatalf("%s: CNH episodes %+v, want one grounding an auto: %v", c.day.Format(time.DateOnly), cnh, c.ground)
		}
		if !c.ground && !strings.Contains(cnh[0].GroundsNote, "Art. 162") {
			t.Errorf("note %q", cnh[0].GroundsNote)
		}
	}
}

// The driver's CNH counts only when the tachograph reports a card that names the driver.
func TestDocumentExpiredDriverByCard(t *testing.T) {
	reg := docRegistry(t)
	cnh := func(r *run) []Episode {
		var out []Episode
		for _, ep := range docEpisodes(r) {
			if ep.Detail == "cnh" {
				out = append(out, ep)
			}
		}
		return out
	}
	r := docRun(t, reg)
	tr := newTrip(noon)
	tr.vehicle = "PIU-002"
	r.apply(t, withCard(tr.batches(repeat(20, 180)...), "000000000077B303"), time.Second) // VDO-padded
	eps := cnh(r)
	if len(eps) != 1 {
		t.Fatalf("%d CNH episodes with D3's card, want 1: %+v", len(eps), docEpisodes(r))
	}
	ep := eps[0]
	if ep.Article != "Art. 20, II, b" || ep.Penalty != "Art. 45, II" || ep.Document.Subject.ID != "D3" ||
		ep.Document.ValidUntil.String() != "2026-11-01" || ep.Peak != 26 {
		t.Errorf("CNH episode %s / %s, document %+v, peak %v", ep.Article, ep.Penalty, ep.Document, ep.Peak)
	}
	if b, _ := json.Marshal(ep); strings.Contains(string(b), "Ana Paula") || strings.Contains(string(b), "11144477735") {
		t.Errorf("the episode carries personal data: %s", b)
	}

	for name, card := range map[string]string{"no card": "", "D1's card": "0000000086H101", "unregistered card": "0000000099Z999"} {
		r := docRun(t, reg)
		tr := newTrip(noon)
		tr.vehicle = "PIU-002"
		r.apply(t, withCard(tr.batches(repeat(20, 180)...), card), time.Second)
		if eps := cnh(r); len(eps) != 0 {
			t.Errorf("%s: %d CNH episodes", name, len(eps))
		}
	}
}

// A renewal entered in the registry while the vehicle runs applies from the next batch: the
// episode closes after the clearing time.
func TestDocumentExpiredRenewedLive(t *testing.T) {
	reg := docRegistry(t)
	r := docRun(t, reg)
	tr := newTrip(noon)
	tr.vehicle = "PIU-003"
	r.apply(t, tr.batches(repeat(20, 120)...), time.Second)
	v, _ := reg.Vehicle("PIU-003")
	v.Documents = append(v.Documents, registry.Document{Kind: registry.DocInspecao, Number: "VT-2026-099",
		ValidUntil: registry.MustDate("2027-11-26")})
	if _, err := reg.PutVehicle(v); err != nil {
		t.Fatal(err)
	}
	r.apply(t, tr.batches(repeat(20, 400)...), time.Second) // still in service
	for _, ep := range docEpisodes(r) {
		switch ep.Detail {
		case "inspecao":
			if ep.End == nil || *ep.Closed != ClosedCleared || !ep.End.Equal(noon.Add(120*time.Second)) {
				t.Errorf("inspection episode after the renewal: end %v (%v), want cleared at %v", ep.End, ep.Closed, noon.Add(120*time.Second))
			}
		case "csv":
			if ep.End != nil {
				t.Errorf("the CSV, not renewed, closed at %v", ep.End)
			}
		}
	}
}

// The rule's state survives a restart (the judge restores the vehicle snapshots): the episode
// goes on and closes once, as it would have without the restart.
func TestDocumentExpiredSurvivesRestart(t *testing.T) {
	reg := docRegistry(t)
	tr := newTrip(noon)
	tr.vehicle = "PIU-003"
	first := tr.batches(repeat(20, 100)...)
	second := tr.batches(concat(repeat(20, 80), repeat(0, 400))...)

	whole := docRun(t, reg)
	whole.apply(t, first, time.Second)
	whole.apply(t, second, time.Second)

	a := docRun(t, reg)
	var snaps map[string][]byte
	for _, b := range first {
		a.e.Apply(b, b.SentAt.Add(time.Second))
		c, err := a.e.Drain()
		if err != nil {
			t.Fatal(err)
		}
		for _, ep := range c.Episodes {
			a.episodes[ep.ID] = ep
		}
		snaps = c.Snapshots
	}
	b := docRun(t, reg) // the monitor restarted
	for _, s := range snaps {
		if err := b.e.Restore(s); err != nil {
			t.Fatal(err)
		}
	}
	b.episodes = a.episodes
	b.apply(t, second, time.Second)
	got, want := docEpisodes(b), docEpisodes(whole)
	if len(got) != 2 || len(got) != len(want) {
		t.Fatalf("%d episodes after a restart, %d without: %+v", len(got), len(want), got)
	}
	for i := range got {
		if got[i].ID != want[i].ID || got[i].End == nil || !got[i].End.Equal(want[i].End.Time) {
			t.Errorf("after a restart %s ends %v; without %s ends %v", got[i].ID, got[i].End, want[i].ID, want[i].End)
		}
	}
}
