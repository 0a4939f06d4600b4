package main

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/trenzinho/trenzinho/internal/testkit/harness"
	"github.com/trenzinho/trenzinho/internal/testkit/testenv"
)

// TestMain lets the test binary be the bare writer's or the sink's child process, as the
// loadtest binary is.
func TestMain(m *testing.M) {
	if os.Getenv(childEnv) != "" { // the bare writer or the sink
		os.Exit(run(context.Background(), os.Args[1:], os.Stdout, os.Stderr))
	}
	os.Exit(m.Run())
}

// smokeOptions is a tiny load: 5 vehicles × 4 batches of 3 + 2 + 3 readings.
func smokeOptions(t *testing.T, contenders ...string) benchOptions {
	t.Helper()
	root := testenv.RepoRoot(t)
	for _, name := range []string{"mosquitto", "influxd"} {
		if harness.LookBinary(root, "TRENZINHO_"+strings.ToUpper(name), name) == "" {
			testenv.Missing(t, "%s not found", name)
		}
	}
	return benchOptions{
		load:       load{vehicles: 5, batches: 4, gps: 3, tacho: 2, sound: 3},
		window:     100,
		contenders: contenders,
		rounds:     1,
		timeout:    2 * time.Minute,
		stall:      30 * time.Second,
		settle:     100 * time.Millisecond,
		dir:        t.TempDir(),
		env:        map[string][]string{},
		bins:       map[string]string{},
		telegraf:   telegrafTuning{batchSize: 5000, bufferLimit: 100000, maxUndelivered: 1000, flushInterval: time.Second},
	}
}

// runSmoke runs the benchmark and checks that every contender stored exactly the load.
func runSmoke(t *testing.T, o benchOptions) {
	t.Helper()
	if err := o.check(); err != nil {
		t.Fatal(err)
	}
	var progress bytes.Buffer
	rep, err := bench(context.Background(), o, &progress)
	var out bytes.Buffer
	if rep != nil {
		rep.write(&out)
	}
	if err != nil || testing.Verbose() {
		t.Logf("progress:\n%s\nreport:\n%s", progress.String(), out.String())
	}
	if err != nil {
		t.Fatal(err)
	}
	if len(rep.results) != len(o.contenders) {
		t.Fatalf("%d results for %d contenders", len(rep.results), len(o.contenders))
	}
	for _, r := range rep.results {
		wantBatches := 20
		if kind(r.contender) == contenderTelegraf {
			wantBatches = 0
		}
		if !r.complete || r.readings != 160 || r.wantReadings != 160 || r.batches != wantBatches || r.wantBatches != wantBatches {
			t.Errorf("%s: complete %v, %d/%d readings, %d/%d batches; want 160 readings and %d batches (%s)",
				r.contender, r.complete, r.readings, r.wantReadings, r.batches, r.wantBatches, wantBatches, strings.Join(r.notes, "; "))
		}
		if r.wall <= 0 || r.readingsPerSec() <= 0 {
			t.Errorf("%s: wall %s", r.contender, r.wall)
		}
		if !strings.Contains(out.String(), "| "+r.contender+" | 1 | ") {
			t.Errorf("report has no row for %s:\n%s", r.contender, out.String())
		}
	}
}

// TestBenchSmoke runs the benchmark runner itself on a tiny load through ingest (built from the
// repository) and the bare writer.
func TestBenchSmoke(t *testing.T) {
	runSmoke(t, smokeOptions(t, contenderIngest, contenderBare))
}

// TestBenchSmokeSink runs the sink (which writes nothing and counts what the broker delivers)
// and an ingest contender run from a binary given by --bin, beside the default build.
func TestBenchSmokeSink(t *testing.T) {
	o := smokeOptions(t, contenderIngest, "ingest-other", contenderSink)
	bin := filepath.Join(t.TempDir(), "ingest-other")
	if err := harness.Build(context.Background(), testenv.RepoRoot(t), filepath.Dir(bin), "./ingest"); err != nil {
		t.Fatal(err)
	}
	if err := os.Rename(filepath.Join(filepath.Dir(bin), "ingest"), bin); err != nil {
		t.Fatal(err)
	}
	o.bins["ingest-other"] = bin
	runSmoke(t, o)
}

// TestBenchSmokeTelegraf runs the Telegraf contender when Telegraf is installed. It is not
// installed in CI, so this test always skips without it.
func TestBenchSmokeTelegraf(t *testing.T) {
	o := smokeOptions(t, contenderTelegraf)
	if harness.LookBinary(testenv.RepoRoot(t), "TRENZINHO_TELEGRAF", "telegraf") == "" {
		t.Skip("telegraf not found (docs/benchmarks.md says how to build it into .tools/bin)")
	}
	runSmoke(t, o)
}

func TestTelegrafConfig(t *testing.T) {
	c := telegrafConfig("tcp://127.0.0.1:1883", "http://127.0.0.1:8086", "db", "bench-telegraf",
		telegrafTuning{batchSize: 5000, bufferLimit: 100000, maxUndelivered: 1000, flushInterval: time.Second}, false)
	for _, want := range []string{
		`qos = 1`, `persistent_session = true`, `client_id = "bench-telegraf"`,
		`topics = ["trenzinho/v1/+/telemetry"]`, `data_format = "json_v2"`,
		`path = "gps"`, `path = "tacho"`, `path = "sound"`, `timestamp_key = "t"`,
		`bucket = "db/autogen"`, `token = ""`, `organization = ""`, `content_encoding = "identity"`,
	} {
		if !strings.Contains(c, want) {
			t.Errorf("Telegraf configuration lacks %s:\n%s", want, c)
		}
	}
}
