package api_test

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"mime/multipart"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/trenzinho/trenzinho/geofences"
	"github.com/trenzinho/trenzinho/internal/testkit/fleettest"
	"github.com/trenzinho/trenzinho/internal/testkit/testenv"
	"github.com/trenzinho/trenzinho/monitor/api"
	"github.com/trenzinho/trenzinho/monitor/store"
	"github.com/trenzinho/trenzinho/monitor/whatif"
	"github.com/trenzinho/trenzinho/monitor/whatif/fleetweek"
	"github.com/trenzinho/trenzinho/profile"
	"github.com/trenzinho/trenzinho/rules"
)

// whatifConfig runs the replays on the InfluxDB at influxURL (database "trenzinho"), in a
// temporary directory, with Piúma's profile in force, the sample geofences and the fixture's
// registry.
func whatifConfig(t *testing.T, influxURL string, c *api.Config) *api.WhatifConfig {
	t.Helper()
	return whatifConfigIn(t, influxURL, filepath.Join(t.TempDir(), "whatif"), c)
}

func whatifConfigIn(t *testing.T, influxURL, dir string, c *api.Config) *api.WhatifConfig {
	t.Helper()
	src, err := whatif.NewInflux(whatif.InfluxConfig{URL: influxURL, Bucket: "trenzinho"})
	if err != nil {
		t.Fatal(err)
	}
	jobs, err := whatif.NewJobs(whatif.JobsConfig{Dir: dir, Archive: src, Workers: 2})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(jobs.Close)
	sample, err := geofences.Sample()
	if err != nil {
		t.Fatal(err)
	}
	return &api.WhatifConfig{Jobs: jobs, InForce: func() whatif.Side {
		s := whatif.Side{Profile: profile.Piuma(), ProfileYAML: profile.PiumaYAML(), Places: sample, Registry: c.RegistryStore}
		if s.Registry != nil {
			s.Registry.SetLocation(s.Profile.Location())
		}
		return s
	}}
}

// whatifWorld is an archive of 2 days × 3 vehicles (fleetweek: PIU-001 and PIU-002 of L1,
// PIU-003 of L2 in the example registry) ending the day before yesterday, and the API on it
// with a user of each role and one per licensee.
type whatifWorld struct {
	*fixture
	week                                 *fleetweek.Week
	first, last                          time.Time
	admin, super, auth, fiscal, viewer   string
	orla, gamba                          string // L1's and L2's users
	influxURL, dir                       string
	liveEpisodes, liveDrafts, liveAudits int
}

func newWhatifWorld(t *testing.T) *whatifWorld {
	t.Helper()
	influx := testenv.StartInflux(t)
	url := fmt.Sprintf("http://127.0.0.1:%d", influx.Port)
	loc := profile.Piuma().Location()
	now := time.Now().In(loc)
	first := time.Date(now.Year(), now.Month(), now.Day()-3, 0, 0, 0, 0, loc)
	week, err := fleetweek.Generate(fleetweek.Config{Loc: loc, First: first, Vehicles: 3, Days: 2})
	if err != nil {
		t.Fatal(err)
	}
	if err := fleetweek.WriteArchive(context.Background(), url, influx.Database, week.Batches); err != nil {
		t.Fatal(err)
	}
	w := &whatifWorld{week: week, first: first, last: first.AddDate(0, 0, 1), influxURL: url, dir: filepath.Join(t.TempDir(), "whatif")}
	w.fixture = newFixture(t, func(c *api.Config) {
		c.RegistryStore = fleettest.Registry(t, t.TempDir(), nil)
		c.Portal = &api.PortalConfig{Store: c.Episodes.(*store.DB)}
		c.Whatif = whatifConfigIn(t, url, w.dir, c)
	})
	ctx := context.Background()
	for _, u := range []struct {
		name string
		role store.Role
	}{{"sergio", store.RoleSupervisor}, {"aurora", store.RoleAutoridade}, {"fernanda", store.RoleFiscal}} {
		if _, err := w.db.CreateUser(ctx, u.name, "senha-de-"+u.name, u.role); err != nil {
			t.Fatal(err)
		}
	}
	for _, u := range []struct{ name, licensee string }{{"orla", "L1"}, {"gamba", "L2"}} {
		if _, err := w.db.CreateLicenseeUser(ctx, u.name, "senha-de-"+u.name, u.licensee); err != nil {
			t.Fatal(err)
		}
	}
	_, w.admin = w.login("admin", adminPassword)
	_, w.super = w.login("sergio", "senha-de-sergio")
	_, w.auth = w.login("aurora", "senha-de-aurora")
	_, w.fiscal = w.login("fernanda", "senha-de-fernanda")
	_, w.viewer = w.login("maria", viewerPassword)
	_, w.orla = w.login("orla", "senha-de-orla")
	_, w.gamba = w.login("gamba", "senha-de-gamba")
	w.liveEpisodes, w.liveDrafts, w.liveAudits = w.live(t)
	return w
}

// live counts what the live database holds: episodes, drafts, audit entries.
func (w *whatifWorld) live(t *testing.T) (episodes, drafts, audits int) {
	t.Helper()
	ctx := context.Background()
	eps, _, err := w.db.Episodes(ctx, store.EpisodeFilter{}, 1000, "")
	if err != nil {
		t.Fatal(err)
	}
	ds, _, err := w.db.Drafts(ctx, "", 1000, "")
	if err != nil {
		t.Fatal(err)
	}
	as, _, err := w.db.ListAudit(ctx, store.AuditFilter{}, 1000, "")
	if err != nil {
		t.Fatal(err)
	}
	return len(eps), len(ds), len(as)
}

// untouched fails unless the live database holds what it held before any replay.
func (w *whatifWorld) untouched(t *testing.T) {
	t.Helper()
	if e, d, a := w.live(t); e != w.liveEpisodes || d != w.liveDrafts || a != w.liveAudits {
		t.Errorf("the live database changed: %d episodes, %d drafts, %d audit entries; before %d, %d, %d",
			e, d, a, w.liveEpisodes, w.liveDrafts, w.liveAudits)
	}
}

// form is a start's multipart form: fields, then files (name → content).
func form(fields map[string]string, files map[string][]byte) (string, string) {
	var buf bytes.Buffer
	mw := multipart.NewWriter(&buf)
	for _, k := range slices.Sorted(mapsKeys(fields)) {
		_ = mw.WriteField(k, fields[k])
	}
	for _, k := range slices.Sorted(mapsKeys(files)) {
		ext := ".geojson"
		if k == "profile" {
			ext = ".yaml"
		}
		fw, _ := mw.CreateFormFile(k, k+ext)
		fw.Write(files[k])
	}
	mw.Close()
	return buf.String(), mw.FormDataContentType()
}

func mapsKeys[V any](m map[string]V) func(func(string) bool) {
	return func(yield func(string) bool) {
		for k := range m {
			if !yield(k) {
				return
			}
		}
	}
}

// start posts a start to base (/api/v1/whatif or /api/v1/portal/whatif) as token.
func (w *whatifWorld) start(base, token string, from, to time.Time, files map[string][]byte) (int, []byte) {
	w.t.Helper()
	body, ct := form(map[string]string{"from": from.Format(time.DateOnly), "to": to.Format(time.DateOnly)}, files)
	code, b, _ := w.do("POST", base, body, session{bearer: token}, "Content-Type", ct)
	return code, b
}

func (w *whatifWorld) status(t *testing.T, base, token, id string) whatif.JobStatus {
	t.Helper()
	var st whatif.JobStatus
	code, b, _ := w.do("GET", base+"/"+id, nil, session{bearer: token})
	if code != http.StatusOK || json.Unmarshal(b, &st) != nil {
		t.Fatalf("status %s: %d %s", id, code, b)
	}
	return st
}

// started decodes a 202 and waits for the run to end.
func (w *whatifWorld) finished(t *testing.T, base, token string, code int, b []byte) whatif.JobStatus {
	t.Helper()
	var st whatif.JobStatus
	if code != http.StatusAccepted || json.Unmarshal(b, &st) != nil || st.ID == "" || st.State != whatif.JobRunning {
		t.Fatalf("start: %d %s", code, b)
	}
	testenv.WaitFor(t, "the replay ends", 120*time.Second, func() bool {
		st = w.status(t, base, token, st.ID)
		return st.State != whatif.JobRunning
	})
	if st.State != whatif.JobDone {
		t.Fatalf("the replay ended %s: %s", st.State, st.Error)
	}
	return st
}

func (w *whatifWorld) report(t *testing.T, base, token, id string) whatif.ReportJSON {
	t.Helper()
	var rep whatif.ReportJSON
	code, b, _ := w.do("GET", base+"/"+id+"/report", nil, session{bearer: token})
	if code != http.StatusOK || json.Unmarshal(b, &rep) != nil {
		t.Fatalf("report %s: %d %s", id, code, b)
	}
	return rep
}

// proposed25 is Piúma's profile with the speed limit lowered to 25 km/h.
func proposed25() []byte {
	y := strings.Replace(string(profile.PiumaYAML()), "limit_kmh: 30", "limit_kmh: 25", 1)
	return []byte(strings.Replace(y, `version: "2026-11-29"`, `version: "2026-11-29-proposta-25kmh"`, 1))
}

// itineraryOf authorises a licensee on the generator's road every day from 9 to 23.
func itineraryOf(licensee string) []byte {
	return fmt.Appendf(nil, `{"type":"FeatureCollection","features":[{"type":"Feature","properties":{"id":"it-%s-proposto","kind":"itinerary",
"days":"Mo-Su","hours":"09:00-23:00","licensee":%q,"name":"Itinerário proposto (estrada oeste)","source":"survey","valid_from":"2026-01-01"},
"geometry":{"type":"LineString","coordinates":[[%.6f,%.6f],[%.6f,%.6f]]}}]}`, strings.ToLower(licensee), licensee,
		fleetweek.Lon-100/fleetweek.MetresPerDegreeEast, fleetweek.Lat, fleetweek.Lon+4200/fleetweek.MetresPerDegreeEast, fleetweek.Lat)
}

// TestWhatifRoles: the control room's replay is for supervisor, autoridade and admin; a viewer
// and a fiscal get 403 from every route, a licensee's user too (the portal's routes are
// theirs). Each of the three roles runs a 25 km/h proposal over the archive to its report —
// the generator's moderate bursts appear, each an auto of 400 UFMP — and the live database is
// untouched.
func TestWhatifRoles(t *testing.T) {
	w := newWhatifWorld(t)
	const base = "/api/v1/whatif"
	for name, tok := range map[string]string{"viewer": w.viewer, "fiscal": w.fiscal, "licensee": w.orla} {
		if code, b := w.start(base, tok, w.first, w.last, map[string][]byte{"profile": proposed25()}); code != http.StatusForbidden {
			t.Errorf("%s starts: %d %s, want 403", name, code, b)
		}
		for _, path := range []string{base, base + "/x", base + "/x/report", base + "/x/files/resumo.csv"} {
			if code, _, _ := w.do("GET", path, nil, session{bearer: tok}); code != http.StatusForbidden {
				t.Errorf("%s GET %s: %d, want 403", name, path, code)
			}
		}
		if code, _, _ := w.do("POST", base+"/x/cancel", nil, session{bearer: tok}); code != http.StatusForbidden {
			t.Errorf("%s cancels: %d, want 403", name, code)
		}
	}
	nHard, nMod := len(w.week.Hard), len(w.week.Moderate)
	if nHard == 0 || nMod == 0 {
		t.Fatalf("the generator made %d hard and %d moderate bursts", nHard, nMod)
	}
	var ids []string
	for name, tok := range map[string]string{"supervisor": w.super, "autoridade": w.auth, "admin": w.admin} {
		code, b := w.start(base, tok, w.first, w.last, map[string][]byte{"profile": proposed25()})
		st := w.finished(t, base, tok, code, b)
		ids = append(ids, st.ID)
		t.Logf("%s: %d vehicle-days, %d readings in %s", name, st.Total, st.Readings, st.Finished.Sub(st.Started).Round(time.Millisecond))
		if st.Done != st.Total || st.Total != 6 || st.Percent != 100 || st.Readings == 0 {
			t.Errorf("%s: progress %d/%d (%.0f%%), %d readings; want 6 vehicle-days", name, st.Done, st.Total, st.Percent, st.Readings)
		}
		rep := w.report(t, base, tok, st.ID)
		tot := rep.Total
		// Under both: the hard bursts and the route deviations (the generator's road is no
		// licensee's itinerary); under the proposal, the moderate bursts too.
		if tot.Proposed.Episodes-tot.InForce.Episodes != nMod || rep.AppearCount != nMod || rep.VanishCount != 0 ||
			tot.Proposed.UFMP <= tot.InForce.UFMP || tot.InForce.Autos == 0 {
			t.Errorf("%s: totals %+v, appear %d, vanish %d; want %d more episodes", name, tot, rep.AppearCount, rep.VanishCount, nMod)
		}
		var appear, want []string
		for _, d := range rep.Appear {
			appear = append(appear, d.ID)
		}
		for _, m := range w.week.Moderate {
			want = append(want, rules.EpisodeID(m.Vehicle, rules.RuleSpeed, m.Start))
		}
		slices.Sort(appear)
		slices.Sort(want)
		if !slices.Equal(appear, want) {
			t.Errorf("%s: appear %q, want the moderate bursts %q", name, appear, want)
		}
		if rep.Proposed.Version != "2026-11-29-proposta-25kmh" || len(rep.Tables) != 4 || len(rep.Coverage) != 3 {
			t.Errorf("%s: report %+v", name, rep)
		}
		for _, name := range []string{"resumo.csv", "episodios.csv", "relatorio.pdf"} {
			code, body, h := w.do("GET", base+"/"+st.ID+"/files/"+name, nil, session{bearer: tok})
			if code != http.StatusOK || len(body) == 0 || !strings.Contains(h.Get("Content-Disposition"), name) {
				t.Errorf("%s: %s: %d %d bytes %v", name, name, code, len(body), h)
			}
		}
		if code, _, _ := w.do("GET", base+"/"+st.ID+"/files/..%2Fjob.json", nil, session{bearer: tok}); code != http.StatusNotFound {
			t.Errorf("a file outside the report: %d", code)
		}
	}
	var list struct{ Items []whatif.JobStatus }
	if code, b, _ := w.do("GET", base, nil, session{bearer: w.super}); code != http.StatusOK || json.Unmarshal(b, &list) != nil || len(list.Items) != 3 {
		t.Errorf("list: %d %s", code, b)
	}
	for _, it := range list.Items {
		if !slices.Contains(ids, it.ID) || it.State != whatif.JobDone {
			t.Errorf("listed %+v, started %q", it, ids)
		}
	}
	w.untouched(t)
}

// TestWhatifBounds: the period (dates, order, not in the future, at most 92 days), the form,
// the size of each file (256 KiB) and the proposal itself (a profile the monitor would refuse,
// geofences that do not load, a licensee's itinerary that is not theirs) are refused with what
// is wrong, in Portuguese, before any run.
func TestWhatifBounds(t *testing.T) {
	w := newWhatifWorld(t)
	const base, portal = "/api/v1/whatif", "/api/v1/portal/whatif"
	today := time.Now().In(profile.Piuma().Location())
	bad := strings.Replace(string(profile.PiumaYAML()), "limit_kmh: 30", "limit_kmh: -5", 1)
	big := append(proposed25(), []byte("\n# "+strings.Repeat("x", api.MaxWhatifUpload))...)
	for _, c := range []struct {
		name        string
		base, token string
		fields      map[string]string
		files       map[string][]byte
		contentType string
		code        int
		msg         string
	}{
		{"json, not a form", base, w.admin, nil, nil, "application/json", 400, "multipart/form-data"},
		{"no dates", base, w.admin, map[string]string{}, map[string][]byte{"profile": proposed25()}, "", 400, "AAAA-MM-DD"},
		{"a bad date", base, w.admin, map[string]string{"from": "2026-02-30", "to": "2026-03-01"}, map[string][]byte{"profile": proposed25()}, "", 400, "AAAA-MM-DD"},
		{"reversed", base, w.admin, map[string]string{"from": w.last.Format(time.DateOnly), "to": w.first.Format(time.DateOnly)}, map[string][]byte{"profile": proposed25()}, "", 400, "anterior ao primeiro"},
		{"the future", base, w.admin, map[string]string{"from": w.first.Format(time.DateOnly), "to": today.AddDate(0, 0, 1).Format(time.DateOnly)}, map[string][]byte{"profile": proposed25()}, "", 400, "depois de hoje"},
		{"93 days", base, w.admin, map[string]string{"from": w.last.AddDate(0, 0, -92).Format(time.DateOnly), "to": w.last.Format(time.DateOnly)}, map[string][]byte{"profile": proposed25()}, "", 400, "93 dias; o máximo é 92"},
		{"no proposal", base, w.admin, nil, nil, "", 400, "sem mudança não há o que comparar"},
		{"a profile over 256 KiB", base, w.admin, nil, map[string][]byte{"profile": big}, "", 413, "256 KiB"},
		{"an invalid profile", base, w.admin, nil, map[string][]byte{"profile": []byte(bad)}, "", 400, "perfil proposto inválido: "},
		{"not YAML", base, w.admin, nil, map[string][]byte{"profile": []byte("{{{")}, "", 400, "perfil proposto inválido: "},
		{"bad geofences", base, w.admin, nil, map[string][]byte{"geofences": []byte(`{"type":"FeatureCollection","features":[{"type":"Feature","properties":{"id":"x","kind":"school"},"geometry":{"type":"Point","coordinates":[1,2]}}]}`)}, "", 400, "geocercas propostas inválidas"},
		{"an unknown field", base, w.admin, map[string]string{"quem": "eu"}, map[string][]byte{"profile": proposed25()}, "", 400, "campo desconhecido"},
		{"the portal without an itinerary", portal, w.orla, nil, nil, "", 400, "envie o itinerário proposto"},
		{"another licensee's itinerary", portal, w.orla, nil, map[string][]byte{"itinerary": itineraryOf("L2")}, "", 400, "deve ser do permissionário L1"},
		{"not an itinerary", portal, w.orla, nil, map[string][]byte{"itinerary": []byte(`{"type":"FeatureCollection","features":[{"type":"Feature","properties":{"id":"g","kind":"garage","licensee":"L1"},"geometry":{"type":"Point","coordinates":[1,2]}}]}`)}, "", 400, "só itinerários"},
		{"a profile on the portal", portal, w.orla, nil, map[string][]byte{"itinerary": itineraryOf("L1"), "profile": proposed25()}, "", 400, "o perfil legal é o vigente"},
	} {
		fields := c.fields
		if fields == nil {
			fields = map[string]string{"from": w.first.Format(time.DateOnly), "to": w.last.Format(time.DateOnly)}
		}
		body, ct := form(fields, c.files)
		if c.contentType != "" {
			body, ct = `{"from":"2026-01-01"}`, c.contentType
		}
		code, b, _ := w.do("POST", c.base, body, session{bearer: c.token}, "Content-Type", ct)
		if code != c.code || !strings.Contains(errorMessage(t, b), c.msg) {
			t.Errorf("%s: %d %s, want %d %q", c.name, code, b, c.code, c.msg)
		}
	}
	// A body beyond both files' bound is refused as it arrives.
	huge := strings.Repeat("x", 2<<20)
	if code, b, _ := w.do("POST", base, huge, session{bearer: w.admin}, "Content-Type", "multipart/form-data; boundary=x"); code != http.StatusRequestEntityTooLarge {
		t.Errorf("2 MiB: %d %s", code, b)
	}
	var list struct{ Items []whatif.JobStatus }
	if code, b, _ := w.do("GET", base, nil, session{bearer: w.admin}); code != http.StatusOK || json.Unmarshal(b, &list) != nil || len(list.Items) != 0 {
		t.Errorf("runs after the refusals: %d %s", code, b)
	}
	w.untouched(t)
}

// TestWhatifCancel: a run of the longest period (92 days, most of them without data) shows its
// progress with an expected end; while it runs a second start answers 409 saying who runs
// what; cancelled, it stops before its end, keeps its record without a report, and its
// isolated stores are gone; the next start is accepted.
func TestWhatifCancel(t *testing.T) {
	w := newWhatifWorld(t)
	const base = "/api/v1/whatif"
	from := w.last.AddDate(0, 0, -91)
	code, b := w.start(base, w.super, from, w.last, map[string][]byte{"profile": proposed25()})
	var st whatif.JobStatus
	if code != http.StatusAccepted || json.Unmarshal(b, &st) != nil {
		t.Fatalf("start: %d %s", code, b)
	}
	testenv.WaitFor(t, "the run's first progress", 60*time.Second, func() bool {
		st = w.status(t, base, w.super, st.ID)
		return st.Done > 0 || st.State != whatif.JobRunning
	})
	if st.State != whatif.JobRunning || st.Total != 92*3 || st.ETA.IsZero() || st.Percent <= 0 {
		t.Fatalf("progress: %+v", st)
	}
	code, b = w.start(base, w.admin, w.first, w.last, map[string][]byte{"profile": proposed25()})
	if msg := errorMessage(t, b); code != http.StatusConflict || !strings.Contains(msg, "já há uma simulação em andamento, iniciada por sergio") ||
		!strings.Contains(msg, "término previsto") {
		t.Errorf("a second start: %d %q", code, msg)
	}
	code, b = w.start("/api/v1/portal/whatif", w.orla, w.first, w.last, map[string][]byte{"itinerary": itineraryOf("L1")})
	if msg := errorMessage(t, b); code != http.StatusConflict || strings.Contains(msg, "sergio") {
		t.Errorf("a licensee's start meanwhile: %d %q", code, msg)
	}
	code, b, _ = w.do("POST", base+"/"+st.ID+"/cancel", nil, session{bearer: w.admin})
	if code != http.StatusOK || json.Unmarshal(b, &st) != nil || st.State != whatif.JobCanceled || st.Done >= st.Total || st.Finished.IsZero() {
		t.Fatalf("cancel: %d %s", code, b)
	}
	t.Logf("canceled at %d of %d vehicle-days, %s after the start", st.Done, st.Total, st.Finished.Sub(st.Started).Round(time.Millisecond))
	if code, _, _ := w.do("POST", base+"/"+st.ID+"/cancel", nil, session{bearer: w.admin}); code != http.StatusConflict {
		t.Errorf("cancel again: %d, want 409", code)
	}
	if code, b, _ := w.do("GET", base+"/"+st.ID+"/report", nil, session{bearer: w.admin}); code != http.StatusConflict || !strings.Contains(errorMessage(t, b), "cancelada") {
		t.Errorf("the report of a canceled run: %d %s", code, b)
	}
	if code, _, _ := w.do("GET", base+"/"+st.ID+"/files/resumo.csv", nil, session{bearer: w.admin}); code != http.StatusNotFound {
		t.Errorf("a file of a canceled run: %d", code)
	}
	stores, err := filepath.Glob(filepath.Join(w.dir, st.ID, "*"))
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(stores, []string{filepath.Join(w.dir, st.ID, "job.json")}) {
		t.Errorf("the canceled run's directory holds %q", stores)
	}
	code, b = w.start(base, w.admin, w.first, w.last, map[string][]byte{"profile": proposed25()})
	w.finished(t, base, w.admin, code, b)
	w.untouched(t)
}

// TestWhatifPortalScope: "e se eu mudar o itinerário?" — L1's user proposes their itinerary on
// the generator's road through the portal: the replay judges L1's vehicles only, their route
// deviations vanish, and nothing of L2 (PIU-003) is in the report, the CSV files or the PDF.
// L2's user does not see L1's run (404, not listed); the control room does.
func TestWhatifPortalScope(t *testing.T) {
	w := newWhatifWorld(t)
	const portal = "/api/v1/portal/whatif"
	code, b := w.start(portal, w.orla, w.first, w.last, map[string][]byte{"itinerary": itineraryOf("L1")})
	st := w.finished(t, portal, w.orla, code, b)
	if st.Licensee != "L1" || st.Total != 2*2 {
		t.Errorf("the licensee's run: %+v, want L1's 2 vehicles × 2 days", st)
	}
	rep := w.report(t, portal, w.orla, st.ID)
	if rep.VanishCount != 4 || rep.AppearCount != 0 {
		t.Errorf("vanish %d, appear %d; want L1's 4 route deviations to vanish", rep.VanishCount, rep.AppearCount)
	}
	for _, d := range rep.Vanish {
		if d.Licensee != "L1" || (d.Vehicle != "PIU-001" && d.Vehicle != "PIU-002") || d.Rule != "route_deviation" {
			t.Errorf("vanish %+v", d)
		}
	}
	var covered []string
	for _, c := range rep.Coverage {
		covered = append(covered, c.Vehicle)
	}
	if !slices.Equal(covered, []string{"PIU-001", "PIU-002"}) && !slices.Equal(covered, []string{"PIU-002", "PIU-001"}) {
		t.Errorf("coverage of %q", covered)
	}
	rb, _ := json.Marshal(rep)
	texts := map[string][]byte{"report": rb}
	for _, name := range append(slices.Clone(whatif.CSVFiles), whatif.PDFFile) {
		code, body, _ := w.do("GET", portal+"/"+st.ID+"/files/"+name, nil, session{bearer: w.orla})
		if code != http.StatusOK {
			t.Fatalf("%s: %d", name, code)
		}
		texts[name] = body
	}
	if pdftotext, err := exec.LookPath("pdftotext"); err != nil {
		testenv.Missing(t, "pdftotext (poppler-utils)")
	} else {
		path := filepath.Join(t.TempDir(), "r.pdf")
		if err := os.WriteFile(path, texts[whatif.PDFFile], 0o600); err != nil {
			t.Fatal(err)
		}
		out, err := exec.Command(pdftotext, "-layout", path, "-").Output()
		if err != nil {
			t.Fatal(err)
		}
		texts[whatif.PDFFile] = out
		if !bytes.Contains(out, []byte("PIU-001")) {
			t.Errorf("the PDF lacks L1's vehicle:\n%s", out)
		}
	}
	for name, text := range texts {
		for _, other := range []string{"PIU-003", "L2"} {
			if bytes.Contains(text, []byte(other)) {
				t.Errorf("%s shows %q", name, other)
			}
		}
	}
	if !bytes.Contains(texts["episodios.csv"], []byte("PIU-002")) {
		t.Errorf("episodios.csv lacks PIU-002:\n%s", texts["episodios.csv"])
	}
	// Each licensee downloads their own itineraries in force, to edit.
	for tok, lic := range map[string]string{w.orla: "L1", w.gamba: "L2"} {
		code, body, h := w.do("GET", portal+"/itinerary", nil, session{bearer: tok})
		var fc struct {
			Type     string
			Features []struct{ Properties map[string]any }
		}
		if code != http.StatusOK || json.Unmarshal(body, &fc) != nil || fc.Type != "FeatureCollection" || len(fc.Features) == 0 ||
			!strings.Contains(h.Get("Content-Disposition"), "itinerario-"+lic) {
			t.Fatalf("%s's itinerary in force: %d %s", lic, code, body)
		}
		for _, f := range fc.Features {
			if f.Properties["licensee"] != lic || f.Properties["kind"] != "itinerary" {
				t.Errorf("%s's itinerary in force holds %v", lic, f.Properties)
			}
		}
	}
	// L2 does not see it; the control room does.
	for _, path := range []string{"/" + st.ID, "/" + st.ID + "/report", "/" + st.ID + "/files/resumo.csv"} {
		if code, b, _ := w.do("GET", portal+path, nil, session{bearer: w.gamba}); code != http.StatusNotFound || bytes.Contains(b, []byte("L1")) {
			t.Errorf("L2 GET %s: %d %s, want 404", path, code, b)
		}
	}
	if code, _, _ := w.do("POST", portal+"/"+st.ID+"/cancel", nil, session{bearer: w.gamba}); code != http.StatusNotFound {
		t.Errorf("L2 cancels L1's run: %d", code)
	}
	var list struct{ Items []whatif.JobStatus }
	if code, b, _ := w.do("GET", portal, nil, session{bearer: w.gamba}); code != http.StatusOK || json.Unmarshal(b, &list) != nil || len(list.Items) != 0 {
		t.Errorf("L2's list: %d %s", code, b)
	}
	if code, b, _ := w.do("GET", "/api/v1/whatif", nil, session{bearer: w.super}); code != http.StatusOK || json.Unmarshal(b, &list) != nil ||
		len(list.Items) != 1 || list.Items[0].Licensee != "L1" {
		t.Errorf("the control room's list: %d %s", code, b)
	}
	w.untouched(t)
}

// whatifRun starts a run on the portal as a licensee's user (token) with their itinerary and
// waits for it to end (on the fixtures' archive that does not answer: failed, still listed);
// it returns the run's id.
func (pf *portalFixture) whatifRun(t *testing.T, token string) string {
	t.Helper()
	var me api.PortalMe
	if code := pf.get(t, "/api/v1/portal/me", token, &me); code != http.StatusOK {
		t.Fatalf("me: %d", code)
	}
	body, ct := form(map[string]string{"from": "2026-11-01", "to": "2026-11-02"}, map[string][]byte{"itinerary": itineraryOf(me.Licensee)})
	code, b, _ := pf.do("POST", "/api/v1/portal/whatif", body, session{bearer: token}, "Content-Type", ct)
	var st whatif.JobStatus
	if code != http.StatusAccepted || json.Unmarshal(b, &st) != nil {
		t.Fatalf("start: %d %s", code, b)
	}
	testenv.WaitFor(t, "the run ends", 30*time.Second, func() bool {
		return pf.get(t, "/api/v1/portal/whatif/"+st.ID, token, &st) == http.StatusOK && st.State != whatif.JobRunning
	})
	return st.ID
}
