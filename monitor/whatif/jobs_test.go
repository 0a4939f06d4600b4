package whatif_test

import (
	"encoding/json"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/trenzinho/trenzinho/monitor/whatif"
)

// TestJobsAfterRestart: a monitor started again lists the runs its predecessor kept, newest
// first, and fails as interrupted the one that was still running; a directory that is not a
// run's is left alone.
func TestJobsAfterRestart(t *testing.T) {
	dir := t.TempDir()
	t0 := time.Date(2026, 12, 1, 10, 0, 0, 0, time.UTC)
	for _, st := range []whatif.JobStatus{
		{ID: "aaaa", State: whatif.JobDone, Started: t0, Finished: t0.Add(time.Minute)},
		{ID: "bbbb", State: whatif.JobRunning, Started: t0.Add(time.Hour)},
	} {
		if err := os.MkdirAll(filepath.Join(dir, st.ID), 0o750); err != nil {
			t.Fatal(err)
		}
		b, _ := json.Marshal(st)
		if err := os.WriteFile(filepath.Join(dir, st.ID, "job.json"), b, 0o640); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.MkdirAll(filepath.Join(dir, "outra-coisa"), 0o750); err != nil {
		t.Fatal(err)
	}
	js, err := whatif.NewJobs(whatif.JobsConfig{Dir: dir})
	if err != nil {
		t.Fatal(err)
	}
	defer js.Close()
	list := js.List()
	if len(list) != 2 || list[0].Status().ID != "bbbb" || list[1].Status().ID != "aaaa" {
		t.Fatalf("runs after the restart: %d", len(list))
	}
	if st := list[0].Status(); st.State != whatif.JobFailed || st.Error == "" {
		t.Errorf("the run in progress at the stop: %+v", st)
	}
	if err := list[0].Cancel(); err == nil {
		t.Error("an interrupted run cancelled")
	}
	if _, ok := list[1].File("resumo.csv"); !ok {
		t.Error("the finished run's files are not offered")
	}
	if _, ok := list[1].File("job.json"); ok {
		t.Error("a file outside the report is offered")
	}
	b, err := os.ReadFile(filepath.Join(dir, "bbbb", "job.json"))
	var st whatif.JobStatus
	if err != nil || json.Unmarshal(b, &st) != nil || st.State != whatif.JobFailed {
		t.Errorf("the interrupted run's record: %s %v", b, err)
	}
	if _, err := os.Stat(filepath.Join(dir, "outra-coisa")); err != nil {
		t.Error(err)
	}
}
