package e2e

import (
	"context"
	"encoding/csv"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"

	mqtt "github.com/eclipse/paho.mqtt.golang"

	"github.com/trenzinho/trenzinho/internal/testkit/testenv"
	"github.com/trenzinho/trenzinho/monitor/store"
	"github.com/trenzinho/trenzinho/monitor/whatif"
	"github.com/trenzinho/trenzinho/monitor/whatif/fleetweek"
	"github.com/trenzinho/trenzinho/profile"
	"github.com/trenzinho/trenzinho/rules"
	"github.com/trenzinho/trenzinho/wire"
)

// TestWhatifWeek: a generated week of a 5-vehicle fleet goes MQTT → the real ingest →
// InfluxDB, and MQTT → the live monitor. `monitor whatif` then replays the archived week under
// the profile in force and under a 25 km/h limit: the in-force run is the live monitor's
// judgement (same episode ids, same digests, same drafts), the proposal adds exactly the
// generator's moderate bursts, and the CSV and PDF state the same totals.
func TestWhatifWeek(t *testing.T) {
	bin := testenv.Build(t)
	broker := testenv.StartMosquitto(t, testenv.MosquittoOptions{})
	influx := testenv.StartInflux(t)
	influxURL := fmt.Sprintf("http://127.0.0.1:%d", influx.Port)
	testenv.StartProcess(t, "ingest", []string{"TRENZINHO_MQTT_URL=" + broker.URL(), "TRENZINHO_INFLUX_URL=" + influxURL,
		"TRENZINHO_INFLUX_BUCKET=trenzinho/autogen", "TRENZINHO_INGEST_CLIENT_ID=ingest-" + t.Name(),
		fmt.Sprintf("TRENZINHO_METRICS_LISTEN=127.0.0.1:%d", testenv.FreePort(t))}, filepath.Join(bin, "ingest"))
	// The live monitor: the built-in profile and the sample geofences, no registry — what
	// `monitor whatif` takes as in force when nothing else is set.
	mon := startMonitorAt(t, bin, broker.URL(), "")

	p := profile.Piuma()
	loc := p.Location()
	week, err := fleetweek.Generate(fleetweek.Config{Loc: loc})
	if err != nil {
		t.Fatal(err)
	}
	c := mqtt.NewClient(mqtt.NewClientOptions().AddBroker(broker.URL()).SetClientID("whatif-fleet"))
	if tok := c.Connect(); tok.Wait() && tok.Error() != nil {
		t.Fatal(tok.Error())
	}
	for _, b := range week.Batches {
		if tok := c.Publish(wire.TelemetryTopic(b.Vehicle), 1, false, b.Payload); tok.Wait() && tok.Error() != nil {
			t.Fatal(tok.Error())
		}
	}
	c.Disconnect(250)
	gps := 0
	for _, b := range week.Batches {
		gps += len(b.Batch.GPS)
	}
	testenv.WaitFor(t, "ingest archives the week", 90*time.Second, func() bool {
		return influx.Count(t, "batch", "seq", "") == len(week.Batches) && influx.Count(t, "gps", "lat", "") == gps
	})
	testenv.WaitFor(t, "the live monitor drafts the week's speeding", 90*time.Second, func() bool {
		var page struct{ Items []struct{ ID string } }
		mon.client.get(t, "/api/v1/drafts?limit=100", &page)
		return len(page.Items) == len(week.Hard)
	})
	mon.Stop() // the live database, quiescent, is read as it is

	ctx := context.Background()
	db, err := store.Open(ctx, mon.DB)
	if err != nil {
		t.Fatal(err)
	}
	liveDigest := map[string]string{}
	liveDraft := map[string]string{}
	eps, _, err := db.Episodes(ctx, store.EpisodeFilter{}, 500, "")
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range eps {
		full, err := db.Episode(ctx, e.ID)
		if err != nil {
			t.Fatal(err)
		}
		liveDigest[e.ID] = whatif.Digest(full)
	}
	drs, _, err := db.Drafts(ctx, "", 500, "")
	if err != nil {
		t.Fatal(err)
	}
	for _, d := range drs {
		for _, id := range d.Doc.EpisodeIDs {
			liveDraft[id] = d.Doc.ID
		}
	}
	db.Close()
	if len(liveDigest) != len(week.Hard) {
		t.Fatalf("live: %d episodes, %d hard bursts", len(liveDigest), len(week.Hard))
	}

	dir := t.TempDir()
	prop := strings.Replace(string(profile.PiumaYAML()), "limit_kmh: 30", "limit_kmh: 25", 1)
	prop = strings.Replace(prop, `version: "2026-11-29"`, `version: "2026-11-29-proposta-25kmh"`, 1)
	propPath := filepath.Join(dir, "proposto.yaml")
	if err := os.WriteFile(propPath, []byte(prop), 0o644); err != nil {
		t.Fatal(err)
	}
	first := week.Batches[0].GPS[0].T.In(loc)
	last := week.Batches[len(week.Batches)-1].GPS[0].T.In(loc)
	out := filepath.Join(dir, "relatorio")
	cmd := exec.Command(filepath.Join(bin, "monitor"), "whatif", "--from", first.Format(time.DateOnly), "--to", last.Format(time.DateOnly),
		"--profile", propPath, "--out", out)
	cmd.Env = []string{"TRENZINHO_INFLUX_URL=" + influxURL, "TRENZINHO_INFLUX_BUCKET=trenzinho/autogen", "HOME=" + dir}
	stdout, err := cmd.Output()
	if err != nil {
		var stderr string
		if ee, ok := err.(*exec.ExitError); ok {
			stderr = string(ee.Stderr)
		}
		t.Fatalf("monitor whatif: %v\n%s\n%s", err, stdout, stderr)
	}
	t.Logf("monitor whatif:\n%s", stdout)

	rows := readCSV(t, filepath.Join(out, "episodios.csv"))
	col := map[string]int{}
	for k, n := range rows[0] {
		col[n] = k
	}
	var appear, wantAppear []string
	inForce := 0
	for _, r := range rows[1:] {
		id := r[col["id"]]
		switch r[col["perfil"]] {
		case "vigente":
			inForce++
			if d, ok := liveDigest[id]; !ok || d != r[col["digest"]] {
				t.Errorf("in force %s: digest %s, live %q", id, r[col["digest"]], d)
			}
			if r[col["auto"]] != liveDraft[id] || r[col["auto"]] == "" {
				t.Errorf("in force %s: draft %q, live %q", id, r[col["auto"]], liveDraft[id])
			}
			if r[col["situacao"]] != whatif.Changed {
				t.Errorf("in force %s: %s", id, r[col["situacao"]])
			}
		case "proposto":
			if r[col["situacao"]] == whatif.Appears {
				appear = append(appear, id)
			}
		}
	}
	if inForce != len(liveDigest) {
		t.Errorf("in force: %d episodes, live %d", inForce, len(liveDigest))
	}
	for _, m := range week.Moderate {
		wantAppear = append(wantAppear, rules.EpisodeID(m.Vehicle, rules.RuleSpeed, m.Start))
	}
	slices.Sort(appear)
	slices.Sort(wantAppear)
	if !slices.Equal(appear, wantAppear) {
		t.Errorf("appear:\n%v\nwant:\n%v", appear, wantAppear)
	}

	// The CSV's totals and the PDF's agree.
	sum := readCSV(t, filepath.Join(out, "resumo.csv"))
	nIn, nProp := len(week.Hard), len(week.Hard)+len(week.Moderate)
	want := []string{"total", "", "Total", fmt.Sprint(nIn), fmt.Sprint(nProp), fmt.Sprint(nProp - nIn), fmt.Sprint(nIn), fmt.Sprint(nProp),
		fmt.Sprint(nProp - nIn), fmt.Sprint(400 * nIn), fmt.Sprint(400 * nProp), fmt.Sprint(400 * (nProp - nIn))}
	if !slices.Equal(sum[1], want) {
		t.Errorf("resumo.csv total %q, want %q", sum[1], want)
	}
	pdftotext, err := exec.LookPath("pdftotext")
	if err != nil {
		testenv.Missing(t, "pdftotext (poppler-utils)")
		return
	}
	text, err := exec.Command(pdftotext, "-layout", filepath.Join(out, whatif.PDFFile), "-").Output()
	if err != nil {
		t.Fatal(err)
	}
	for _, re := range []string{
		fmt.Sprintf(`Episódios\s+%d\s+%d\s+\+%d`, nIn, nProp, nProp-nIn),
		fmt.Sprintf(`Autos \(minutas\)\s+%d\s+%d\s+\+%d`, nIn, nProp, nProp-nIn),
		fmt.Sprintf(`Multas \(UFMP\)\s+%s\s+%s\s+\+%s`, ufmpBR(400*nIn), ufmpBR(400*nProp), ufmpBR(400*(nProp-nIn))),
		`Perfil vigente: piuma, versão 2026-11-29 \(perfil embutido\)`,
		`5 veículo\(s\) com telemetria`,
	} {
		if !regexp.MustCompile(re).Match(text) {
			t.Errorf("the PDF lacks %s:\n%s", re, text[:min(len(text), 2500)])
		}
	}
}

// ufmpBR writes n UFMP as the PDF does: 14.000,00.
func ufmpBR(n int) string {
	s := fmt.Sprint(n)
	var b strings.Builder
	for k, c := range s {
		if k > 0 && (len(s)-k)%3 == 0 {
			b.WriteByte('.')
		}
		b.WriteRune(c)
	}
	return b.String() + ",00"
}

func readCSV(t *testing.T, path string) [][]string {
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
	return rows
}
