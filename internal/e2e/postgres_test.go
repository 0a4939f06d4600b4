package e2e

import (
	"database/sql"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/trenzinho/trenzinho/internal/testkit/pgtest"
	"github.com/trenzinho/trenzinho/internal/testkit/testenv"
	"github.com/trenzinho/trenzinho/rules"
)

// TestPipelineOnPostgres: the monitor with its store on a real PostgreSQL (TRENZINHO_DB a
// postgres:// URL): simulator → pty → bridge → Mosquitto → monitor judges a trip at 45 km/h
// into one speed episode and its sealed draft, which verifies offline; killed with SIGKILL and
// started again on the same database (a new process, a new port), it knows its admin, the
// episode and the draft — the chain intact — and judges on.
func TestPipelineOnPostgres(t *testing.T) {
	bin := testenv.Build(t)
	broker := testenv.StartMosquitto(t, testenv.MosquittoOptions{})
	url := pgtest.Start(t).NewDatabase(t)
	data := t.TempDir()
	env := []string{"TRENZINHO_DATA_DIR=" + data}
	m := startMonitorAt(t, bin, broker.URL(), url, env...)
	if _, err := os.Stat(filepath.Join(data, "monitor-signing.key")); err != nil {
		t.Fatalf("the signing key is not in TRENZINHO_DATA_DIR: %v", err)
	}

	start := "2026-11-27T15:00:00Z" // Friday noon in Piúma: only the speed rule can fire
	fast := startSimulation(t, bin, "--vehicles=1", "--prefix=PG", "--scenario=20:15,45:30,20:30", "--duration=75s", "--speed-up=3", "--start="+start)
	startBridge(t, bin, broker.URL(), "PG-001", fast.devices["PG-001"], serviceInput(t, fast.devices["PG-001"])...)
	var eps []rules.Episode
	testenv.WaitFor(t, "PG-001's speed episode, closed", 3*time.Minute, func() bool {
		eps = m.client.episodes(t, "vehicle=PG-001&rule=speed")
		return len(eps) == 1 && eps[0].End != nil
	})
	if ep := eps[0]; ep.Peak != 45 || ep.Article != "Art. 23" {
		t.Errorf("episode %+v", ep)
	}
	type draft struct {
		ID         string
		EpisodeIDs []string `json:"episode_ids"`
		Integrity  string
	}
	var list struct{ Items []draft }
	testenv.WaitFor(t, "its draft", time.Minute, func() bool {
		m.client.get(t, "/api/v1/drafts?status=draft", &list)
		return len(list.Items) > 0
	})
	if len(list.Items) != 1 || list.Items[0].Integrity != "ok" || len(list.Items[0].EpisodeIDs) != 1 || list.Items[0].EpisodeIDs[0] != eps[0].ID {
		t.Fatalf("drafts: %+v", list.Items)
	}
	var sealed json.RawMessage
	m.client.get(t, "/api/v1/drafts/"+list.Items[0].ID+"/export", &sealed)
	file := filepath.Join(t.TempDir(), "auto.json")
	if err := os.WriteFile(file, sealed, 0o644); err != nil {
		t.Fatal(err)
	}
	if out, err := exec.Command(filepath.Join(bin, "monitor"), "verify", file).CombinedOutput(); err != nil || !strings.Contains(string(out), "íntegro") {
		t.Fatalf("monitor verify: %v\n%s", err, out)
	}

	// It is PostgreSQL that holds them.
	pg, err := sql.Open("pgx", url)
	if err != nil {
		t.Fatal(err)
	}
	defer pg.Close()
	var n int
	if err := pg.QueryRow(`SELECT count(*) FROM episodes WHERE vehicle = 'PG-001'`).Scan(&n); err != nil || n != 1 {
		t.Errorf("PostgreSQL holds %d episodes of PG-001 (%v), want 1", n, err)
	}

	// SIGKILL, then another monitor process on the same database.
	m.Kill()
	again := startMonitorAt(t, bin, broker.URL(), url, env...)
	if got := again.client.episodes(t, "vehicle=PG-001&rule=speed"); len(got) != 1 || got[0].ID != eps[0].ID {
		t.Errorf("after the restart, PG-001's episodes: %+v", got)
	}
	var after struct{ Items []draft }
	again.client.get(t, "/api/v1/drafts?status=draft", &after)
	if len(after.Items) != 1 || after.Items[0].ID != list.Items[0].ID || after.Items[0].Integrity != "ok" {
		t.Errorf("after the restart, the drafts: %+v", after.Items)
	}
}
