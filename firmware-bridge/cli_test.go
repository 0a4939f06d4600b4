package main

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/trenzinho/trenzinho/config"
	"github.com/trenzinho/trenzinho/firmware-bridge/sim"
)

// captures plays a simulated vehicle for 20 s of device time into files, as a mechanic's
// `cat /dev/tty… > file` would capture its instruments: GPS (NMEA), tachograph (D8) and meter.
func captures(t *testing.T) (nmea, d8, slm string) {
	t.Helper()
	var g, tc, s bytes.Buffer
	v := &sim.Vehicle{ID: "PIU-001", Route: sim.PiumaLoop(), Scenario: sim.Cruise()}
	start := time.Date(2026, 11, 29, 15, 0, 0, 0, time.UTC)
	if _, err := sim.Play(context.Background(), v, sim.Outputs{GPS: &g, Tacho: &tc, SLM: &s},
		sim.PlayConfig{Start: start, SpeedUp: 1000, Duration: 20 * time.Second}); err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	write := func(name string, b []byte) string {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, b, 0o644); err != nil {
			t.Fatal(err)
		}
		return p
	}
	return write("gps.log", g.Bytes()), write("tacho.bin", tc.Bytes()), write("slm.bin", s.Bytes())
}

// runCLI runs firmware-bridge with args and returns its exit status and outputs.
func runCLI(args ...string) (int, string, string) {
	var out, errOut bytes.Buffer
	code := run(context.Background(), args, &out, &errOut)
	return code, out.String(), errOut.String()
}

func lines(s string) int { return strings.Count(s, "\n") }

func TestVersionAndHelp(t *testing.T) {
	for _, arg := range []string{"--version", "-version", "version"} {
		if code, out, _ := runCLI(arg); code != 0 || strings.TrimSpace(out) != version {
			t.Errorf("%s: exit %d, %q; want %q", arg, code, out, version)
		}
	}
	code, out, _ := runCLI("--help")
	for _, cmd := range []string{"run", "decode", "simulate", "probe", "version"} {
		if code != 0 || !strings.Contains(out, "firmware-bridge "+cmd) {
			t.Errorf("--help: exit %d, no line for %s:\n%s", code, cmd, out)
		}
	}
}

// TestDecodeExplainsItself: a capture of each kind decodes; a file that is not the format asked
// for fails and counts the undecodable bytes; a meter capture without --start says to pass it;
// flags after FILE work; a bad flag is named.
func TestDecodeExplainsItself(t *testing.T) {
	nmea, d8, slm := captures(t)
	size := func(p string) string {
		fi, err := os.Stat(p)
		if err != nil {
			t.Fatal(err)
		}
		return strconv.FormatInt(fi.Size(), 10)
	}

	if code, out, errOut := runCLI("decode", "nmea", nmea); code != 0 || lines(out) < 15 || !strings.Contains(out, `"type":"gps"`) {
		t.Errorf("decode nmea: exit %d, %d lines; stderr %s", code, lines(out), errOut)
	}
	if code, out, errOut := runCLI("decode", "d8", d8); code != 0 || lines(out) < 15 || !strings.Contains(out, `"type":"tacho"`) {
		t.Errorf("decode d8: exit %d, %d lines; stderr %s", code, lines(out), errOut)
	}

	// The wrong format: non-zero, and the count of undecodable bytes.
	for _, c := range []struct{ kind, file, want string }{
		{"d8", nmea, "not a D8 capture"},
		{"nmea", d8, "not an NMEA capture"},
		{"slm", nmea, "not a pce322a capture"},
	} {
		code, out, errOut := runCLI("decode", c.kind, c.file)
		if code == 0 || out != "" || !strings.Contains(errOut, c.want) || !strings.Contains(errOut, "bytes undecodable") {
			t.Errorf("decode %s on %s: exit %d, stdout %q, stderr %s", c.kind, filepath.Base(c.file), code, out, errOut)
		}
		if c.kind != "slm" && !strings.Contains(errOut, "("+size(c.file)+" bytes undecodable)") {
			t.Errorf("decode %s on %s: want every one of its %s bytes counted undecodable: %s", c.kind, filepath.Base(c.file), size(c.file), errOut)
		}
	}

	// The simulator's meter has no clock: without --start nothing is timed, and it says so.
	code, out, errOut := runCLI("decode", "slm", slm)
	if code == 0 || out != "" || !strings.Contains(errOut, "no frame is timed: pass --start") {
		t.Errorf("decode slm without --start: exit %d, stdout %q, stderr %s", code, out, errOut)
	}
	// With --start, before or after FILE.
	for _, args := range [][]string{
		{"decode", "slm", "--start", "2026-11-29T15:00:00Z", slm},
		{"decode", "slm", slm, "--start", "2026-11-29T15:00:00Z"},
	} {
		code, out, errOut := runCLI(args...)
		if code != 0 || lines(out) < 15 || !strings.Contains(out, `"t":"2026-11-29T15:00:0`) {
			t.Errorf("%s: exit %d, %d lines; stderr %s", strings.Join(args, " "), code, lines(out), errOut)
		}
	}

	// An NMEA capture from a receiver without a fix is what was asked for: exit 0, and a line
	// saying why nothing was printed.
	var nofix strings.Builder
	for i := range 5 {
		body := fmt.Sprintf("GPRMC,15000%d.00,V,,,,,,,291126,,,N", i)
		var sum byte
		for _, c := range []byte(body) {
			sum ^= c
		}
		fmt.Fprintf(&nofix, "$%s*%02X\r\n", body, sum)
	}
	nofixFile := filepath.Join(t.TempDir(), "nofix.log")
	if err := os.WriteFile(nofixFile, []byte(nofix.String()), 0o644); err != nil {
		t.Fatal(err)
	}
	if code, out, errOut := runCLI("decode", "nmea", nofixFile); code != 0 || out != "" || !strings.Contains(errOut, "no position: 5 sentences") {
		t.Errorf("decode nmea without a fix: exit %d, stdout %q, stderr %s", code, out, errOut)
	}

	// Bad command lines: exit 2 and named.
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"decode", "nmea", "--nope", nmea}, "-nope"},
		{[]string{"decode", "nmea", nmea, "--layout"}, "-layout"},
		{[]string{"decode", "nmea"}, "want one FILE, got 0"},
		{[]string{"decode", "nmea", nmea, nmea}, "want one FILE, got 2"},
		{[]string{"probe", "extra"}, `"extra"`},
	} {
		if code, _, errOut := runCLI(c.args...); code != 2 || !strings.Contains(errOut, c.want) {
			t.Errorf("%s: exit %d, want 2; stderr does not say %q: %s", strings.Join(c.args, " "), code, c.want, errOut)
		}
	}
}

// TestProbeVerdict: probe ends with a verdict — FALHA and a non-zero exit when the port does not
// open, when nothing decodes or when no device is configured; OK when the GPS (a real
// pseudo-terminal fed by the simulator) sends sentences that decode.
func TestProbeVerdict(t *testing.T) {
	for _, env := range []string{"TRENZINHO_GPS_PORT", "TRENZINHO_TACHO_PORT", "TRENZINHO_SLM_PORT"} {
		t.Setenv(env, "")
	}
	last := func(out string) string {
		ls := strings.Split(strings.TrimSpace(out), "\n")
		return ls[len(ls)-1]
	}
	missing := filepath.Join(t.TempDir(), "ttyNOPE")
	code, out, _ := runCLI("probe", "--gps-port", missing, "--for", "200ms")
	if code == 0 || !strings.HasPrefix(last(out), "FALHA: ") || !strings.Contains(last(out), missing) {
		t.Errorf("probe of a missing port: exit %d, last line %q", code, last(out))
	}
	code, out, _ = runCLI("probe")
	if code == 0 || !strings.HasPrefix(last(out), "FALHA: ") {
		t.Errorf("probe without devices: exit %d, last line %q", code, last(out))
	}

	p, err := sim.OpenPTY(filepath.Join(t.TempDir(), "gps"))
	if err != nil {
		t.Skipf("no pseudo-terminals: %v", err)
	}
	defer p.Close()
	// Silent: the port opens but nothing decodes.
	code, out, _ = runCLI("probe", "--gps-port", p.Path, "--for", "500ms")
	if code == 0 || !strings.HasPrefix(last(out), "FALHA: GPS em "+p.Path+": nada decodificado") {
		t.Errorf("probe of a silent port: exit %d, last line %q", code, last(out))
	}
	// A receiver talking.
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() {
		defer close(done)
		v := &sim.Vehicle{ID: "PIU-001", Route: sim.PiumaLoop(), Scenario: sim.Cruise()}
		_, _ = sim.Play(ctx, v, sim.Outputs{GPS: p.Master}, sim.PlayConfig{Start: time.Now().UTC(), SpeedUp: 10})
	}()
	code, out, _ = runCLI("probe", "--gps-port", p.Path, "--for", "1500ms")
	cancel()
	<-done
	if code != 0 || last(out) != "OK" {
		t.Errorf("probe of a talking GPS: exit %d, output:\n%s", code, out)
	}
}

// A scenario's fourth field sets the inputs of a segment: the service switch off, the door open.
func TestParseScenarioInputs(t *testing.T) {
	sc, err := parseScenario("20:10,45:30:72:off,0:40:65:door,0:5:60:off+door")
	if err != nil {
		t.Fatal(err)
	}
	want := []struct{ off, door bool }{{false, false}, {true, false}, {false, true}, {true, true}}
	if len(sc) != len(want) {
		t.Fatalf("%d segments", len(sc))
	}
	for i, w := range want {
		if sc[i].ServiceOff != w.off || sc[i].DoorOpen != w.door {
			t.Errorf("segment %d: %+v, want off %v door %v", i, sc[i], w.off, w.door)
		}
	}
	if sc[1].LAeqDB != 72 || sc[1].SpeedKmh != 45 {
		t.Errorf("segment 1: %+v", sc[1])
	}
	for _, bad := range []string{"20:10:65:on", "20:10:65:off:x", "20:10:65:"} {
		if _, err := parseScenario(bad); err == nil {
			t.Errorf("parseScenario(%q) accepted", bad)
		}
	}
}

// TestBadTLSFailsAtStart: a CA file that cannot be read stops run at start with config's
// message (config's TestTLSConfig has every kind of bad file), as it stops ingest and the
// monitor, before the state directory is created.
func TestBadTLSFailsAtStart(t *testing.T) {
	dir := t.TempDir()
	ca, state := filepath.Join(dir, "missing-ca.pem"), filepath.Join(dir, "state")
	_, want := config.MQTT{CAFile: ca}.TLSConfig()
	// Bounded: a program that does not fail at start runs until ctx ends.
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	err := cmdRun(ctx, []string{"--vehicle", "PIU-001", "--state-dir", state, "--mqtt-ca", ca})
	if want == nil || err == nil || err.Error() != want.Error() {
		t.Errorf("run with a missing CA: %v, want %v", err, want)
	}
	if _, err := os.Stat(state); !os.IsNotExist(err) {
		t.Errorf("run created its state directory before failing (%v)", err)
	}
}
