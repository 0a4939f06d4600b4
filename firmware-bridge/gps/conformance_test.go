package gps

import (
	"bufio"
	"encoding/json"
	"math"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/trenzinho/trenzinho/wire"
)

// Conformance thresholds over all captures together.
const (
	minAgreement = 0.99 // of the times both report, share of readings that match gpsd's
	minCoverage  = 0.90 // of the times gpsd reports a 2D/3D fix, share we decode
)

// Tolerances of a match.
const (
	tolDeg = 1e-6 // latitude and longitude, degrees
	tolMps = 0.01 // speed, m/s
)

// gpsdDir is the gpsd project's regression captures, kept in testdata/gpsd (see its
// README.md for their origin and licence).
func gpsdDir(t testing.TB) string {
	t.Helper()
	dir := filepath.Join("testdata", "gpsd")
	if fi, err := os.Stat(dir); err != nil || !fi.IsDir() {
		t.Fatalf("gpsd captures: %v", err)
	}
	return dir
}

// tpv is the part of a gpsd TPV report the test compares.
type tpv struct {
	Class string   `json:"class"`
	Mode  int      `json:"mode"`
	Time  string   `json:"time"`
	Lat   *float64 `json:"lat"`
	Lon   *float64 `json:"lon"`
	Speed *float64 `json:"speed"`
}

// gpsdFixes reads a .chk file and returns, for each time at which gpsd reported a 2D or
// 3D fix, its last report at that time (gpsd reports after every sentence; the last one
// holds everything the epoch's sentences said).
func gpsdFixes(t *testing.T, path string) map[int64]tpv {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	fixes := make(map[int64]tpv)
	sc := bufio.NewScanner(f)
	sc.Buffer(nil, 1<<20)
	for sc.Scan() {
		line := sc.Bytes()
		if len(line) == 0 || line[0] != '{' {
			continue
		}
		var r tpv
		if json.Unmarshal(line, &r) != nil || r.Class != "TPV" || r.Time == "" || r.Mode < 2 ||
			r.Lat == nil || r.Lon == nil {
			continue
		}
		ts, err := time.Parse(time.RFC3339Nano, r.Time)
		if err != nil {
			t.Fatalf("%s: time %q: %v", path, r.Time, err)
		}
		fixes[ts.UnixMilli()] = r
	}
	if err := sc.Err(); err != nil {
		t.Fatal(err)
	}
	return fixes
}

func TestConformanceGpsd(t *testing.T) {
	dir := gpsdDir(t)
	logs, err := filepath.Glob(filepath.Join(dir, "*.log"))
	if err != nil {
		t.Fatal(err)
	}
	sort.Strings(logs)
	if len(logs) == 0 {
		t.Fatalf("no *.log in %s", dir)
	}
	var fixes, both, agree, extra int
	for _, path := range logs {
		name := filepath.Base(path)
		want := gpsdFixes(t, path+".chk")
		f, err := os.Open(path)
		if err != nil {
			t.Fatal(err)
		}
		got, stats, err := DecodeFile(f)
		f.Close()
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		seen := make(map[int64]bool)
		var fBoth, fAgree, fExtra int
		for _, g := range got {
			checkReading(t, name, g)
			ms := g.T.UnixMilli()
			if seen[ms] {
				t.Errorf("%s: two readings at %s", name, g.T)
			}
			seen[ms] = true
			w, ok := want[ms]
			if !ok {
				fExtra++
				continue
			}
			fBoth++
			if why := mismatch(g, w); why != "" {
				t.Logf("%s %s: %s", name, g.T, why)
				continue
			}
			fAgree++
		}
		t.Logf("%-28s gpsd fixes %4d, readings %4d, at gpsd's times %4d, agreeing %4d, elsewhere %3d; %+v",
			name, len(want), len(got), fBoth, fAgree, fExtra, stats)
		fixes += len(want)
		both += fBoth
		agree += fAgree
		extra += fExtra
	}
	agreement := ratio(agree, both)
	coverage := ratio(both, fixes)
	t.Logf("agreement %.2f%% (%d of %d readings at gpsd's fix times), coverage %.2f%% (%d of %d gpsd fix times), %d readings where gpsd has no fix",
		100*agreement, agree, both, 100*coverage, both, fixes, extra)
	if agreement < minAgreement {
		t.Errorf("agreement %.2f%% < %.0f%%", 100*agreement, 100*minAgreement)
	}
	if coverage < minCoverage {
		t.Errorf("coverage %.2f%% < %.0f%%", 100*coverage, 100*minCoverage)
	}
}

func ratio(n, d int) float64 {
	if d == 0 {
		return 0
	}
	return float64(n) / float64(d)
}

// mismatch describes how a reading differs from gpsd's report, or returns "".
func mismatch(g wire.GPS, w tpv) string {
	var why []string
	if math.Abs(g.Lat-*w.Lat) > tolDeg || math.Abs(g.Lon-*w.Lon) > tolDeg {
		why = append(why, "position")
	}
	if w.Speed != nil {
		if g.SpeedKmh == nil {
			why = append(why, "no speed")
		} else if math.Abs(*g.SpeedKmh/3.6-*w.Speed) > tolMps {
			why = append(why, "speed")
		}
	}
	if why == nil {
		return ""
	}
	b, _ := json.Marshal(g)
	return strings.Join(why, ", ") + ": " + string(b) + " vs gpsd " + fmtTPV(w)
}

func fmtTPV(w tpv) string {
	b, _ := json.Marshal(w)
	return string(b)
}

// checkReading verifies what must hold for every reading.
func checkReading(t *testing.T, name string, g wire.GPS) {
	t.Helper()
	if _, err := json.Marshal(g); err != nil {
		t.Errorf("%s: %v", name, err)
	}
	if g.T.Location() != time.UTC {
		t.Errorf("%s: time %v not UTC", name, g.T)
	}
	if !(math.Abs(g.Lat) <= 90 && math.Abs(g.Lon) <= 180) {
		t.Errorf("%s: position %v %v", name, g.Lat, g.Lon)
	}
	if g.HDOP != nil && *g.HDOP <= 0 || g.Sats != nil && *g.Sats <= 0 {
		t.Errorf("%s: zero for unknown: %+v", name, g)
	}
	if g.Fix != "" && !g.Fix.Valid() {
		t.Errorf("%s: fix %q", name, g.Fix)
	}
}
