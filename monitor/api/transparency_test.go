package api_test

import (
	"context"
	"encoding/csv"
	"encoding/json"
	"math"
	"net/http"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/trenzinho/trenzinho/geofences"
	"github.com/trenzinho/trenzinho/internal/testkit/fleettest"
	"github.com/trenzinho/trenzinho/internal/testkit/testenv"
	"github.com/trenzinho/trenzinho/monitor/api"
	"github.com/trenzinho/trenzinho/monitor/cases"
	"github.com/trenzinho/trenzinho/monitor/store"
	"github.com/trenzinho/trenzinho/monitor/web"
	"github.com/trenzinho/trenzinho/profile"
	"github.com/trenzinho/trenzinho/rules"
)

const transparencyTown = `{"type":"FeatureCollection","features":[
{"type":"Feature","geometry":{"type":"Polygon","coordinates":[[[-40.7400,-20.8500],[-40.7200,-20.8500],[-40.7200,-20.8300],[-40.7400,-20.8300],[-40.7400,-20.8500]]]},
 "properties":{"id":"zone-res","kind":"nbr_zone","area":"mixed_residential","source":"survey"}}]}`

// TestTransparencyMonth plays a month of trips through the engine and the store (and one trip in
// the month before), issues autos through the store, and reads the public report anonymously:
// JSON and CSV show each licensee's service hours, offence hours and autos by outcome (confirmed,
// by article, and annulled) of that month only; the alerts (episodes by rule) and the autos in
// process only in aggregate; and no driver, CPF, card, plate or coordinate.
func TestTransparencyMonth(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	reg := fleettest.Registry(t, dir, nil)
	loc, err := time.LoadLocation("America/Sao_Paulo")
	if err != nil {
		t.Fatal(err)
	}
	reg.SetLocation(loc)
	p := profile.Piuma()
	places, err := geofences.Read(strings.NewReader(transparencyTown), "town.geojson")
	if err != nil {
		t.Fatal(err)
	}
	f := newFixture(t, func(c *api.Config) {
		c.RegistryStore = reg
		c.Transparency = c.Episodes.(*store.DB)
		c.Static = web.Handler(web.Options{})
	})
	engine := rules.New(p, places)
	var seq uint64
	local := func(m time.Month, d, h int) time.Time { return time.Date(2026, m, d, h, 0, 0, 0, loc) }
	street := func(speeds []float64) []fleettest.Second { return fleettest.Drive(-20.8400, -40.7300, speeds...) }
	trips := []fleettest.Trip{
		// October (played first: the engine judges a vehicle's readings in order): not in
		// November's report.
		{Vehicle: "PIU-003", Epoch: "e-3", Card: "0000000077B303", Start: local(10, 30, 11), Seconds: street(fleettest.Speeding())},
		// L1: PIU-001 speeds once on 3 November, PIU-002 (driver D2's card) speeds on 10
		// November and drives within the limit on 20 November.
		{Vehicle: "PIU-001", Card: "0000000086H101", Start: local(11, 3, 10), Seconds: street(fleettest.Speeding())},
		{Vehicle: "PIU-002", Epoch: "e-2", Card: "0000000091K202", Start: local(11, 10, 15), Seconds: street(fleettest.Speeding())},
		{Vehicle: "PIU-002", Epoch: "e-2", Card: "0000000091K202", Start: local(11, 20, 9), Seconds: street(fleettest.Repeat(20, 600))},
		// L2: PIU-003 drives within the limit on 15 November.
		{Vehicle: "PIU-003", Epoch: "e-3", Card: "0000000077B303", Start: local(11, 15, 11), Seconds: street(fleettest.Repeat(18, 300))},
	}
	for _, tr := range trips {
		fleettest.Play(t, engine, f.db, &seq, tr)
	}

	fiscal := store.Actor{User: "joao", Role: store.RoleFiscal, Agent: cases.Agent{FullName: "João Teste", Matricula: "T-1", Cargo: "Fiscal de Posturas"}}
	issuing := testenv.ConfirmedProfile(profile.Piuma())
	for _, n := range []struct {
		vehicle, licensee string
		infraction        []string
		at                time.Time
	}{
		{"PIU-001", "L1", []string{"art16"}, local(11, 5, 10)},
		{"PIU-002", "L1", []string{"art16"}, local(11, 12, 10)},
		{"PIU-003", "L2", []string{"art16"}, local(10, 30, 14)}, // issued in October
	} {
		o := &cases.Office{Ledger: f.db, Profile: issuing, Now: func() time.Time { return n.at }}
		if _, err := o.IssueManual(ctx, store.ManualNotice{Vehicle: n.vehicle, Licensee: n.licensee, LicenseeName: "x", LicenseeCNPJ: "11222333000181",
			LicenseeAddress: "Rua X, 1", Infractions: n.infraction, Offence: n.at.Add(-time.Hour)}, fiscal); err != nil {
			t.Fatal(err)
		}
	}

	// Paper notices of November: one of L1 confirmed, one of L2 annulled. The manual notices
	// above are still in process: published only in aggregate.
	if _, err := f.db.ImportNotices(ctx, []store.ImportedNotice{
		{Number: "0090/2026", Offence: local(11, 2, 10), Issued: local(11, 2, 12), Licensee: "L1", Articles: []string{"Art. 26"},
			Penalty: "Art. 45, VII", Status: "confirmed", Notified: "2026-11-02", Mode: "in_person"},
		{Number: "0091/2026", Offence: local(11, 3, 10), Issued: local(11, 3, 12), Licensee: "L2", Articles: []string{"Art. 25"},
			Penalty: "Art. 47", Status: "annulled", Notified: "2026-11-03", Mode: "in_person"},
	}, local(11, 25, 10), fiscal); err != nil {
		t.Fatal(err)
	}

	// What the report must say, from the store's own episodes.
	eps, _, err := f.db.Episodes(ctx, store.EpisodeFilter{}, 100, "")
	if err != nil {
		t.Fatal(err)
	}
	wantAlerts := map[string]int{}
	wantOffence := map[string]float64{}
	november := local(11, 1, 0)
	for _, e := range eps {
		if e.Start.Before(november) {
			continue
		}
		l := map[string]string{"PIU-001": "L1", "PIU-002": "L1", "PIU-003": "L2"}[e.Vehicle]
		wantAlerts[e.Rule]++
		if e.Article != "" && e.GroundsAuto && e.End != nil {
			wantOffence[l] += e.End.Sub(e.Start.Time).Seconds()
		}
	}
	if wantAlerts["speed"] != 2 || wantOffence["L1"] <= 0 {
		t.Fatalf("the simulated month made episodes %v with offence time %v: want two speeding episodes of L1", wantAlerts, wantOffence)
	}
	// Batches of five one-second readings: each trip is in service from its first reading to
	// its last.
	wantService := map[string]float64{"L1": 279 + 279 + 599, "L2": 299}

	code, body, h := f.do("GET", "/api/v1/public/transparency?month=2026-11", nil, session{})
	if code != http.StatusOK || !strings.HasPrefix(h.Get("Content-Type"), "application/json") {
		t.Fatalf("anonymous report: %d %s", code, body)
	}
	var rep api.TransparencyReport
	if err := json.Unmarshal(body, &rep); err != nil {
		t.Fatal(err)
	}
	if rep.Month != "2026-11" || rep.TimeZone != "America/Sao_Paulo" || rep.Partial || len(rep.Licensees) != 2 {
		t.Fatalf("report %s", body)
	}
	for _, l := range rep.Licensees {
		name := map[string]string{"L1": "Trenzinho Alegria da Orla Ltda", "L2": "Passeios Recreativos Ilha do Gambá Ltda"}[l.Licensee]
		if l.RazaoSocial != name {
			t.Errorf("%s: razão social %q, want %q", l.Licensee, l.RazaoSocial, name)
		}
		if math.Abs(l.HoursInService-wantService[l.Licensee]/3600) > 0.006 {
			t.Errorf("%s: %v hours in service, want %.4f", l.Licensee, l.HoursInService, wantService[l.Licensee]/3600)
		}
		if math.Abs(l.HoursInOffence-wantOffence[l.Licensee]/3600) > 0.006 {
			t.Errorf("%s: %v hours in offence, want %.4f", l.Licensee, l.HoursInOffence, wantOffence[l.Licensee]/3600)
		}
		wantShare := 1 - wantOffence[l.Licensee]/wantService[l.Licensee]
		if l.ShareCompliant == nil || math.Abs(*l.ShareCompliant-wantShare) > 0.0001 {
			t.Errorf("%s: share compliant %v, want %.4f", l.Licensee, l.ShareCompliant, wantShare)
		}
		wantAutos := map[string]map[string]int{"L1": {"Art. 26": 1}, "L2": {}}[l.Licensee]
		if !mapsEqual(l.AutosByArticle, wantAutos) || l.AutosConfirmed != map[string]int{"L1": 1, "L2": 0}[l.Licensee] ||
			l.AutosAnnulled != map[string]int{"L1": 0, "L2": 1}[l.Licensee] {
			t.Errorf("%s: autos confirmed %d %v, annulled %d; want %v", l.Licensee, l.AutosConfirmed, l.AutosByArticle, l.AutosAnnulled, wantAutos)
		}
		if l.Vehicles != map[string]int{"L1": 2, "L2": 1}[l.Licensee] {
			t.Errorf("%s: %d vehicles", l.Licensee, l.Vehicles)
		}
	}
	// The alerts, the autos in process (the two manual notices of November) and the
	// notificações preliminares only in aggregate, without a licensee.
	if !mapsEqual(rep.AlertsByRule, wantAlerts) || rep.AutosPending != 2 || rep.Warnings != 0 {
		t.Errorf("aggregate: alerts %v (want %v), pending %d, warnings %d", rep.AlertsByRule, wantAlerts, rep.AutosPending, rep.Warnings)
	}
	if strings.Contains(string(body), "episodes_by_rule") {
		t.Errorf("the report names the alerts by licensee:\n%s", body)
	}

	// The batch log is pruned after its retention: the service time stays.
	if n, err := f.db.PruneBatches(ctx, time.Now().Add(time.Hour)); err != nil || n == 0 {
		t.Fatalf("prune: %d %v", n, err)
	}
	code, pruned, _ := f.do("GET", "/api/v1/public/transparency?month=2026-11", nil, session{})
	var after api.TransparencyReport
	if err := json.Unmarshal(pruned, &after); err != nil || code != http.StatusOK {
		t.Fatalf("after pruning: %d %s", code, pruned)
	}
	for i, l := range after.Licensees {
		before := rep.Licensees[i]
		if l.HoursInService != before.HoursInService || l.HoursInOffence != before.HoursInOffence || *l.ShareCompliant != *before.ShareCompliant || after.Partial {
			t.Errorf("after pruning the batch log %s: %+v, before %+v", l.Licensee, l, before)
		}
	}

	code, csvBody, h := f.do("GET", "/api/v1/public/transparency.csv?month=2026-11", nil, session{})
	if code != http.StatusOK || !strings.HasPrefix(h.Get("Content-Type"), "text/csv") {
		t.Fatalf("CSV: %d %s", code, csvBody)
	}
	recs, err := csv.NewReader(strings.NewReader(string(csvBody))).ReadAll()
	if err != nil {
		t.Fatal(err)
	}
	if !slices.ContainsFunc(recs, func(r []string) bool {
		return r[1] == "L1" && r[3] == "autos_confirmados_por_artigo" && r[4] == "Art. 26" && r[5] == "1"
	}) || !slices.ContainsFunc(recs, func(r []string) bool { return r[1] == "L2" && r[3] == "autos_anulados" && r[5] == "1" }) ||
		!slices.ContainsFunc(recs, func(r []string) bool { return r[1] == "" && r[3] == "alertas" && r[4] == "speed" && r[5] == "2" }) ||
		!slices.ContainsFunc(recs, func(r []string) bool { return r[1] == "" && r[3] == "autos_em_andamento" && r[5] == "2" }) {
		t.Errorf("CSV lacks L1's confirmed autos, L2's annulled one or the aggregate alerts:\n%s", csvBody)
	}
	if slices.ContainsFunc(recs, func(r []string) bool { return r[1] != "" && r[3] == "alertas" }) {
		t.Errorf("CSV names the alerts by licensee:\n%s", csvBody)
	}

	// Nothing personal, no position: the registry's drivers, their CPFs and cards, the plates,
	// and the coordinates the trips were played at.
	for _, out := range [][]byte{body, csvBody} {
		for _, secret := range []string{"Maria Aparecida", "João Carlos", "Ana Paula", "123.456.789-09", "987.654.321-00", "111.444.777-35",
			"12345678909", "0000000086H101", "0000000091K202", "0000000077B303", "D1", "D2", "D3", "-20.8", "-40.7", "lat", "lon", "joao", "PIU-"} {
			if strings.Contains(string(out), secret) {
				t.Errorf("the public report contains %q:\n%s", secret, out)
			}
		}
	}

	// October has only its own trip and auto; a month to come and nonsense are refused.
	code, body, _ = f.do("GET", "/api/v1/public/transparency?month=2026-10", nil, session{})
	rep = api.TransparencyReport{}
	if err := json.Unmarshal(body, &rep); err != nil || code != http.StatusOK || len(rep.Licensees) != 1 || rep.Licensees[0].Licensee != "L2" ||
		rep.AutosPending != 1 || rep.Licensees[0].AutosConfirmed != 0 || rep.AlertsByRule["speed"] != 1 {
		t.Errorf("October: %d %s", code, body)
	}
	for _, m := range []string{"2999-01", "2026-13", "nov", "1999-12"} {
		if code, _, _ := f.do("GET", "/api/v1/public/transparency?month="+m, nil, session{}); code != http.StatusBadRequest {
			t.Errorf("month %q: %d, want 400", m, code)
		}
	}

	// The page is served without a session.
	code, page, h := f.do("GET", "/transparencia", nil, session{})
	if code != http.StatusOK || !strings.HasPrefix(h.Get("Content-Type"), "text/html") || !strings.Contains(string(page), "Transparência") ||
		!strings.Contains(string(page), "js/transparencia.js") {
		t.Errorf("page: %d %q", code, page)
	}
}

func mapsEqual(a, b map[string]int) bool {
	if len(a) != len(b) {
		return false
	}
	for k, v := range a {
		if b[k] != v {
			return false
		}
	}
	return true
}

// TestTransparencyRateLimited: anonymous clients get 60 requests a minute per address on the
// public routes (page, JSON and CSV together), then 429 with Retry-After; signed-in routes are
// not affected.
func TestTransparencyRateLimited(t *testing.T) {
	f := hardeningFixture(t, nil)
	paths := []string{"/api/v1/public/transparency", "/api/v1/public/transparency.csv", "/transparencia"}
	ok := 0
	for i := range 70 {
		code, _, h := f.send("GET", paths[i%len(paths)], nil)
		switch {
		case code == http.StatusOK:
			ok++
		case code == http.StatusTooManyRequests && h.Get("Retry-After") != "":
		default:
			t.Fatalf("request %d: %d", i, code)
		}
	}
	if ok != 60 {
		t.Errorf("%d of 70 requests served in a minute, want 60", ok)
	}
	_, admin := f.login("admin", adminPassword)
	if code, _, _ := f.send("GET", "/api/v1/vehicles", nil, "Authorization", "Bearer "+admin); code != http.StatusOK {
		t.Errorf("a signed-in route after the public limit: %d", code)
	}
}
