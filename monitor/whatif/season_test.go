package whatif_test

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"runtime/debug"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/trenzinho/trenzinho/geofences"
	"github.com/trenzinho/trenzinho/internal/testkit/testenv"
	"github.com/trenzinho/trenzinho/monitor/whatif"
	"github.com/trenzinho/trenzinho/monitor/whatif/fleetweek"
	"github.com/trenzinho/trenzinho/profile"
)

// TestSeasonBenchmark measures a replay at the readings' real rates: TRENZINHO_BENCH_VEHICLES
// vehicles (10) × TRENZINHO_BENCH_DAYS days (2) × 14 h of service × 3 readings a second,
// archived in a real InfluxDB as ingest writes it, replayed under Piúma's profile and a 25 km/h
// one. It logs the wall time, the readings per second end to end, InfluxDB's read rate and the
// engines' rate (per worker), the peak memory of the replay and the machine's load, for
// docs/benchmarks.md. Run with TRENZINHO_BENCH=1 (minutes: not part of the ordinary tests).
func TestSeasonBenchmark(t *testing.T) {
	if os.Getenv("TRENZINHO_BENCH") != "1" {
		t.Skip("TRENZINHO_BENCH=1 runs the season benchmark")
	}
	vehicles, days := envInt("TRENZINHO_BENCH_VEHICLES", 10), envInt("TRENZINHO_BENCH_DAYS", 2)
	influx := testenv.StartInflux(t)
	p := profile.Piuma()
	loc := p.Location()
	first := time.Date(2026, 1, 5, 0, 0, 0, 0, loc) // a Monday of the summer season
	t0 := time.Now()
	readings := 0
	for v := range vehicles {
		id := fmt.Sprintf("PIU-%03d", v+1)
		var seq uint64
		for d := range days {
			bs, err := fleetweek.Day(id, &seq, first.AddDate(0, 0, d).Add(9*time.Hour), 14)
			if err != nil {
				t.Fatal(err)
			}
			for _, b := range bs {
				readings += b.Readings()
			}
			writeArchive(t, influx, bs, func(b fleetweek.Batch) time.Time { return b.SentAt.Add(400 * time.Millisecond) })
		}
	}
	t.Logf("archived %d readings of %d vehicles × %d days in %s", readings, vehicles, days, time.Since(t0).Round(time.Second))
	// Influx compacts what it was given before the replay reads it (as a season's archive is).
	if _, err := influx.InfluxQL("POST", influx.Database, "SELECT count(\"lat\") FROM \"gps\""); err != nil {
		t.Fatal(err)
	}
	runtime.GC()
	debug.FreeOSMemory()
	// The peak memory of the replay alone: reset the process's high-water mark.
	_ = os.WriteFile("/proc/self/clear_refs", []byte("5"), 0)

	set, err := geofences.Sample()
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	path, prop := proposed25(t, dir)
	src, err := whatif.NewInflux(whatif.InfluxConfig{URL: fmt.Sprintf("http://127.0.0.1:%d", influx.Port), Bucket: influx.Database})
	if err != nil {
		t.Fatal(err)
	}
	load0 := loadavg()
	influxCPU0, selfCPU0 := procCPU(influx.Pid()), selfCPU()
	res, err := whatif.Run(context.Background(), whatif.Config{
		Archive: src, From: first, To: first.AddDate(0, 0, days),
		InForce:  whatif.Side{Label: "vigente", Profile: p, ProfileYAML: profile.PiumaYAML(), Places: set},
		Proposed: whatif.Side{Label: "proposto", Path: path, Profile: prop, ProfileYAML: []byte("proposed"), Places: set},
		Dir:      filepath.Join(dir, "stores"),
	})
	if err != nil {
		t.Fatal(err)
	}
	st := res.Stats
	influxCPU, replayCPU := procCPU(influx.Pid())-influxCPU0, selfCPU()-selfCPU0
	if int(st.Readings) != readings || res.Coverage.Totals().Missing != 0 {
		t.Fatalf("replayed %d readings of %d (missing %d)", st.Readings, readings, res.Coverage.Totals().Missing)
	}
	// Every hour of driving holds a moderate burst; every third hour a hard one.
	if len(res.Appear) == 0 || len(res.InForce.Episodes) == 0 || len(res.InForce.Drafts) != len(res.InForce.Episodes) {
		t.Fatalf("appear %d, in force %d episodes, %d drafts", len(res.Appear), len(res.InForce.Episodes), len(res.InForce.Drafts))
	}
	season := 10 * 90 * 14 * 3600 * 3.0
	perReading := st.Wall.Seconds() / float64(st.Readings)
	t.Logf("replay: %d readings (%d batches) of %d vehicle-days in %s: %.0f readings/s; workers %d; peak RSS %d MiB",
		st.Readings, st.Batches, vehicles*days, st.Wall.Round(time.Millisecond), float64(st.Readings)/st.Wall.Seconds(), st.Workers, st.PeakRSS>>20)
	t.Logf("per worker: InfluxDB read+parse %.0f readings/s (%s), engines (both profiles) %.0f readings/s (%s), stores %s; drafts and comparison %s",
		st.ArchiveRate(), st.ArchiveTime.Round(time.Millisecond), st.EngineRate(), st.EngineTime.Round(time.Millisecond),
		st.StoreTime.Round(time.Millisecond), st.DraftTime.Round(time.Millisecond))
	t.Logf("episodes: in force %d, proposed %d (appear %d); drafts %d/%d", len(res.InForce.Episodes), len(res.Proposed.Episodes),
		len(res.Appear), len(res.InForce.Drafts), len(res.Proposed.Drafts))
	t.Logf("CPU during the replay: influxd %s (%.0f%% of the wall time), the replay's process %s (%.0f%%)",
		influxCPU.Round(time.Millisecond), 100*influxCPU.Seconds()/st.Wall.Seconds(), replayCPU.Round(time.Millisecond), 100*replayCPU.Seconds()/st.Wall.Seconds())
	t.Logf("load average before %s, after %s; %d CPUs", load0, loadavg(), runtime.NumCPU())
	t.Logf("season (10 vehicles × 90 days × 14 h × 3/s = %.0f readings) extrapolated at this rate: %s",
		season, (time.Duration(season * perReading * float64(time.Second))).Round(time.Second))
}

func envInt(name string, def int) int {
	if n, err := strconv.Atoi(os.Getenv(name)); err == nil && n > 0 {
		return n
	}
	return def
}

func loadavg() string {
	b, err := os.ReadFile("/proc/loadavg")
	if err != nil {
		return "?"
	}
	f := strings.Fields(string(b))
	if len(f) < 3 {
		return "?"
	}
	return strings.Join(f[:3], " ")
}

// procCPU is the user and system CPU time of a process so far (/proc/PID/stat), 0 when unknown.
func procCPU(pid int) time.Duration {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return 0
	}
	// The fields after the command name (in parentheses, which may hold spaces).
	s := string(b)
	f := strings.Fields(s[strings.LastIndexByte(s, ')')+1:])
	if len(f) < 13 {
		return 0
	}
	ut, _ := strconv.ParseInt(f[11], 10, 64)
	st, _ := strconv.ParseInt(f[12], 10, 64)
	return time.Duration(ut+st) * time.Second / 100 // USER_HZ
}

func selfCPU() time.Duration { return procCPU(os.Getpid()) }
