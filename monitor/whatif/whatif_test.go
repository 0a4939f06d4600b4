package whatif_test

import (
	"bytes"
	"context"
	"encoding/csv"
	"fmt"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/trenzinho/trenzinho/geofences"
	"github.com/trenzinho/trenzinho/ingest/archive"
	"github.com/trenzinho/trenzinho/internal/testkit/testenv"
	"github.com/trenzinho/trenzinho/monitor/store"
	"github.com/trenzinho/trenzinho/monitor/whatif"
	"github.com/trenzinho/trenzinho/monitor/whatif/fleetweek"
	"github.com/trenzinho/trenzinho/profile"
	"github.com/trenzinho/trenzinho/rules"
)

// writeArchive writes batches to InfluxDB exactly as ingest does (archive.AppendLines), each
// received at receivedAt(b).
func writeArchive(t testing.TB, influx *testenv.Influx, batches []fleetweek.Batch, receivedAt func(fleetweek.Batch) time.Time) {
	t.Helper()
	var buf []byte
	flush := func() {
		if len(buf) == 0 {
			return
		}
		resp, err := http.Post(fmt.Sprintf("http://127.0.0.1:%d/write?db=%s&precision=ns", influx.Port, influx.Database), "text/plain", bytes.NewReader(buf))
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		if resp.StatusCode != http.StatusNoContent {
			t.Fatalf("write: %s", resp.Status)
		}
		buf = buf[:0]
	}
	for _, b := range batches {
		var err error
		if buf, _, err = archive.AppendLines(buf, b.Batch, receivedAt(b), len(b.Payload)); err != nil {
			t.Fatal(err)
		}
		if len(buf) > 4<<20 {
			flush()
		}
	}
	flush()
}

// proposed25 is Piúma's profile with the speed limit lowered to 25 km/h.
func proposed25(t testing.TB, dir string) (string, *profile.Profile) {
	t.Helper()
	y := strings.Replace(string(profile.PiumaYAML()), "limit_kmh: 30", "limit_kmh: 25", 1)
	y = strings.Replace(y, `version: "2026-11-29"`, `version: "2026-11-29-proposta-25kmh"`, 1)
	path := filepath.Join(dir, "proposto.yaml")
	if err := os.WriteFile(path, []byte(y), 0o644); err != nil {
		t.Fatal(err)
	}
	p, err := profile.Load(path)
	if err != nil {
		t.Fatal(err)
	}
	if p.Speed.LimitKmh != 25 {
		t.Fatalf("limit %v", p.Speed.LimitKmh)
	}
	return path, p
}

// live judges the batches as the monitor's live path does (Apply at the receive time, Drain,
// Commit to a store, the receive clock ticking every second through a silence) and returns
// the stored episodes with their readings, by id.
func live(t testing.TB, p *profile.Profile, set *geofences.Set, batches []fleetweek.Batch, receivedAt func(fleetweek.Batch) time.Time) map[string]*rules.Episode {
	t.Helper()
	ctx := context.Background()
	db, err := store.Open(ctx, filepath.Join(t.TempDir(), "live.db"))
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	e := rules.New(p, set)
	byVehicle := map[string][]fleetweek.Batch{}
	for _, b := range batches {
		byVehicle[b.Vehicle] = append(byVehicle[b.Vehicle], b)
	}
	gap := time.Duration(p.GapTimeoutS * float64(time.Second))
	var last time.Time
	for _, b := range batches {
		r := receivedAt(b)
		for tk := last.Add(gap); !last.IsZero() && !tk.After(r); tk = tk.Add(time.Second) {
			e.Tick(tk)
		}
		e.Apply(b.Batch, r)
		c, err := e.Drain()
		if err != nil {
			t.Fatal(err)
		}
		if err := db.Commit(ctx, &c, nil); err != nil {
			t.Fatal(err)
		}
		last = r
	}
	return storedEpisodes(t, db)
}

func storedEpisodes(t testing.TB, db *store.DB) map[string]*rules.Episode {
	t.Helper()
	ctx := context.Background()
	out := map[string]*rules.Episode{}
	cursor := ""
	for {
		eps, next, err := db.Episodes(ctx, store.EpisodeFilter{}, 500, cursor)
		if err != nil {
			t.Fatal(err)
		}
		for _, e := range eps {
			full, err := db.Episode(ctx, e.ID)
			if err != nil {
				t.Fatal(err)
			}
			out[e.ID] = full
		}
		if next == "" {
			return out
		}
		cursor = next
	}
}

// TestReplayWeek: a generated week of 5 vehicles, archived as ingest archives it, replayed
// under Piúma's profile, reproduces the live path's episodes (same ids, same digests); under a
// 25 km/h limit it adds exactly the moderate bursts the generator put in, and loses nothing.
func TestReplayWeek(t *testing.T) {
	influx := testenv.StartInflux(t)
	inForce := profile.Piuma()
	loc := inForce.Location()
	week, err := fleetweek.Generate(fleetweek.Config{Loc: loc})
	if err != nil {
		t.Fatal(err)
	}
	// Each batch is received 400 ms after it was sent, as over a good link.
	recv := func(b fleetweek.Batch) time.Time { return b.SentAt.Add(400 * time.Millisecond) }
	writeArchive(t, influx, week.Batches, recv)
	set, err := geofences.Sample()
	if err != nil {
		t.Fatal(err)
	}
	want := live(t, inForce, set, week.Batches, recv)
	if len(want) != len(week.Hard) {
		t.Fatalf("live: %d episodes, the generator put %d hard bursts", len(want), len(week.Hard))
	}

	dir := t.TempDir()
	path, prop := proposed25(t, dir)
	src, err := whatif.NewInflux(whatif.InfluxConfig{URL: fmt.Sprintf("http://127.0.0.1:%d", influx.Port), Bucket: influx.Database + "/autogen"})
	if err != nil {
		t.Fatal(err)
	}
	src.ChunkSize = 100 // many chunks per query
	first := week.Batches[0].GPS[0].T.In(loc)
	from := time.Date(first.Year(), first.Month(), first.Day(), 0, 0, 0, 0, loc)
	var progress []whatif.Progress
	res, err := whatif.Run(context.Background(), whatif.Config{
		Archive: src, From: from, To: from.AddDate(0, 0, 7),
		InForce:  whatif.Side{Label: "vigente", Profile: inForce, ProfileYAML: profile.PiumaYAML(), Places: set},
		Proposed: whatif.Side{Label: "proposto", Path: path, Profile: prop, ProfileYAML: []byte("x"), Places: set},
		Dir:      filepath.Join(dir, "stores"), Workers: 2,
		Progress: func(p whatif.Progress) { progress = append(progress, p) },
	})
	if err != nil {
		t.Fatal(err)
	}
	// The in-force replay is the live judgement.
	if len(res.InForce.Episodes) != len(want) {
		t.Errorf("in force: %d episodes, live %d", len(res.InForce.Episodes), len(want))
	}
	for _, e := range res.InForce.Episodes {
		w, ok := want[e.ID]
		if !ok {
			t.Errorf("in force: %s not live", e.ID)
			continue
		}
		if d := whatif.Digest(w); d != e.Digest {
			t.Errorf("%s: digest %s, live %s", e.ID, e.Digest, d)
		}
	}
	// The proposed limit adds the moderate bursts, exactly, and loses nothing.
	var appear []string
	for _, d := range res.Appear {
		appear = append(appear, d.ID)
		if d.Rule != rules.RuleSpeed || len(d.Readings) == 0 || d.Peak != 34 || d.Limit != 25 {
			t.Errorf("appears: %s %s peak %v limit %v, %d readings", d.ID, d.Rule, d.Peak, d.Limit, len(d.Readings))
		}
	}
	var wantAppear []string
	for _, m := range week.Moderate {
		wantAppear = append(wantAppear, rules.EpisodeID(m.Vehicle, rules.RuleSpeed, m.Start))
	}
	slices.Sort(appear)
	slices.Sort(wantAppear)
	if !slices.Equal(appear, wantAppear) {
		t.Errorf("appear %d:\n%v\nwant %d:\n%v", len(appear), appear, len(wantAppear), wantAppear)
	}
	if len(res.Vanish) != 0 {
		t.Errorf("vanish: %d", len(res.Vanish))
	}
	// The hard bursts are in both, with another limit.
	if res.Changed != len(week.Hard) || res.Same != 0 {
		t.Errorf("changed %d, same %d; hard bursts %d", res.Changed, res.Same, len(week.Hard))
	}
	// Drafts: one per episode that grounds an auto, the fine of Art. 46 each.
	if len(res.Proposed.Drafts) != len(week.Hard)+len(week.Moderate) || len(res.InForce.Drafts) != len(week.Hard) {
		t.Errorf("drafts: in force %d, proposed %d", len(res.InForce.Drafts), len(res.Proposed.Drafts))
	}
	if got, want := res.Proposed.FineUFMP()-res.InForce.FineUFMP(), 400*float64(len(week.Moderate)); got != want {
		t.Errorf("fine difference %v UFMP, want %v", got, want)
	}
	// Coverage: every reading judged, none lost, none orphaned.
	tot := res.Coverage.Totals()
	if tot.Readings != week.Readings || tot.Missing != 0 || tot.Orphans != 0 || len(res.Coverage.Vehicles) != 5 {
		t.Errorf("coverage %+v, generated %d readings", tot, week.Readings)
	}
	checkReports(t, res, filepath.Join(dir, "report"))

	// Windows of 10 h 3 min 2.5 s cut trips (the first in the middle of a burst, between two
	// readings of a batch): the same judgement.
	small, err := whatif.Run(context.Background(), whatif.Config{
		Archive: src, From: from, To: from.AddDate(0, 0, 7), Window: 10*time.Hour + 3*time.Minute + 2500*time.Millisecond,
		InForce:  whatif.Side{Label: "vigente", Profile: inForce, ProfileYAML: profile.PiumaYAML(), Places: set},
		Proposed: whatif.Side{Label: "proposto", Path: path, Profile: prop, ProfileYAML: []byte("x"), Places: set},
		Dir:      filepath.Join(dir, "stores-cut"), Workers: 1,
	})
	if err != nil {
		t.Fatal(err)
	}
	for k, j := range []*whatif.Judgement{small.InForce, small.Proposed} {
		ref := []*whatif.Judgement{res.InForce, res.Proposed}[k]
		if len(j.Episodes) != len(ref.Episodes) {
			t.Errorf("cut windows, %s: %d episodes, %d with a day", j.Label, len(j.Episodes), len(ref.Episodes))
			continue
		}
		for n := range j.Episodes {
			if j.Episodes[n].ID != ref.Episodes[n].ID || j.Episodes[n].Digest != ref.Episodes[n].Digest {
				t.Errorf("cut windows, %s: %s %s, with a day %s %s", j.Label, j.Episodes[n].ID, j.Episodes[n].Digest, ref.Episodes[n].ID, ref.Episodes[n].Digest)
			}
		}
	}
	if st := small.Coverage.Totals(); st.Readings != week.Readings || st.Orphans != 0 || st.Missing != 0 {
		t.Errorf("cut windows: coverage %+v", st)
	}
	if len(progress) != 5*7 || progress[len(progress)-1].Done != 35 || progress[len(progress)-1].ETA.IsZero() {
		t.Errorf("progress: %d lines, last %+v", len(progress), progress[len(progress)-1])
	}
}

// checkReports writes the CSV files and the PDF and checks that their totals agree with the
// result and with each other.
func checkReports(t *testing.T, res *whatif.Result, dir string) {
	t.Helper()
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := res.WriteCSV(dir); err != nil {
		t.Fatal(err)
	}
	pdfPath := filepath.Join(dir, whatif.PDFFile)
	if err := res.WritePDF(pdfPath); err != nil {
		t.Fatal(err)
	}
	tot := res.Total()
	f, err := os.Open(filepath.Join(dir, "resumo.csv"))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	rows, err := csv.NewReader(f).ReadAll()
	if err != nil {
		t.Fatal(err)
	}
	wantTotal := []string{"total", "", "Total", fmt.Sprint(tot.InForce.Episodes), fmt.Sprint(tot.Proposed.Episodes),
		fmt.Sprint(tot.Proposed.Episodes - tot.InForce.Episodes), fmt.Sprint(tot.InForce.Autos), fmt.Sprint(tot.Proposed.Autos),
		fmt.Sprint(tot.Proposed.Autos - tot.InForce.Autos), fmt.Sprint(tot.InForce.UFMP), fmt.Sprint(tot.Proposed.UFMP),
		fmt.Sprint(tot.Proposed.UFMP - tot.InForce.UFMP)}
	if len(rows) < 2 || !slices.Equal(rows[1], wantTotal) {
		t.Fatalf("resumo.csv total %q, want %q", rows[1], wantTotal)
	}
	// Every dimension adds up to the total episodes.
	sums := map[string][2]int{}
	for _, r := range rows[2:] {
		a, _ := strconv.Atoi(r[3])
		b, _ := strconv.Atoi(r[4])
		s := sums[r[0]]
		sums[r[0]] = [2]int{s[0] + a, s[1] + b}
	}
	for _, d := range []string{"regra", "permissionario", "local", "hora"} {
		if sums[d] != [2]int{tot.InForce.Episodes, tot.Proposed.Episodes} {
			t.Errorf("resumo.csv %s sums to %v, total %d/%d", d, sums[d], tot.InForce.Episodes, tot.Proposed.Episodes)
		}
	}
	// episodios.csv lists every episode of both sides, evidencias.csv the readings of those
	// that appear or vanish.
	if n := csvRows(t, filepath.Join(dir, "episodios.csv")); n != tot.InForce.Episodes+tot.Proposed.Episodes {
		t.Errorf("episodios.csv: %d rows", n)
	}
	readings := 0
	for _, d := range slices.Concat(res.Appear, res.Vanish) {
		readings += len(d.Readings)
	}
	if n := csvRows(t, filepath.Join(dir, "evidencias.csv")); n != readings || n == 0 {
		t.Errorf("evidencias.csv: %d rows, %d readings", n, readings)
	}
	// The PDF states the same totals.
	bin, err := exec.LookPath("pdftotext")
	if err != nil {
		testenv.Missing(t, "pdftotext (poppler-utils)")
		return
	}
	out, err := exec.Command(bin, "-layout", pdfPath, "-").Output()
	if err != nil {
		t.Fatal(err)
	}
	text := string(out)
	for _, re := range []string{
		fmt.Sprintf(`Episódios\s+%d\s+%d\s+%s`, tot.InForce.Episodes, tot.Proposed.Episodes, regexp.QuoteMeta(signedInt(tot.Proposed.Episodes-tot.InForce.Episodes))),
		fmt.Sprintf(`Autos \(minutas\)\s+%d\s+%d`, tot.InForce.Autos, tot.Proposed.Autos),
		`Perfil proposto: piuma, versão 2026-11-29-proposta-25kmh`,
		`horas com telemetria`,
		fmt.Sprintf(`Episódios que surgem com o perfil proposto \(%d\)`, len(res.Appear)),
	} {
		if !regexp.MustCompile(re).MatchString(text) {
			t.Errorf("the PDF lacks %s:\n%s", re, text[:min(len(text), 3000)])
		}
	}
}

func signedInt(n int) string {
	if n > 0 {
		return fmt.Sprintf("+%d", n)
	}
	return fmt.Sprint(n)
}

func csvRows(t *testing.T, path string) int {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	rows, err := csv.NewReader(f).ReadAll()
	if err != nil {
		t.Fatal(err)
	}
	return len(rows) - 1
}
