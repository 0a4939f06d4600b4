package sim

import (
	"context"
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

func TestRouteLoop(t *testing.T) {
	r := PiumaLoop()
	if l := r.Length(); l < 2000 || l > 5000 {
		t.Fatalf("loop length %v m", l)
	}
	a, _ := r.At(0)
	b, _ := r.At(r.Length())
	if distance(a, b) > 0.01 {
		t.Fatal("the loop does not close")
	}
}

func TestVehicleMovesAtItsSpeed(t *testing.T) {
	v := &Vehicle{ID: "X", Route: PiumaLoop(), Scenario: Scenario{{Duration: time.Hour, SpeedKmh: 36}}}
	t0 := time.Date(2026, 11, 29, 15, 0, 0, 0, time.UTC)
	s0 := v.Step(t0, time.Second)
	s1 := v.Step(t0.Add(time.Second), time.Second)
	if d := distance(Point{s0.Lat, s0.Lon}, Point{s1.Lat, s1.Lon}); math.Abs(d-10) > 0.5 {
		t.Fatalf("moved %v m in 1 s at 36 km/h", d)
	}
}

func TestNMEAChecksum(t *testing.T) {
	s := NMEA(State{T: time.Date(2026, 11, 29, 15, 0, 0, 250e6, time.UTC), Lat: -20.8367, Lon: -40.7292, SpeedKmh: 45})
	lines := strings.Split(strings.TrimSpace(s), "\r\n")
	if len(lines) != 2 || !strings.HasPrefix(lines[0], "$GPRMC,150000.250,A,2050.202000,S,04043.752000,W,") {
		t.Fatalf("%q", s)
	}
	for _, l := range lines {
		body, cs, _ := strings.Cut(l[1:], "*")
		var x byte
		for i := 0; i < len(body); i++ {
			x ^= body[i]
		}
		if got := strings.ToUpper(cs); got != strings.ToUpper(string("0123456789ABCDEF"[x>>4])+string("0123456789ABCDEF"[x&15])) {
			t.Errorf("%s: checksum %s", l, cs)
		}
	}
}

// The service switch is on in every leg but those marked SwitchOff, and off once the script is
// over; the door is open only in the legs marked Door.
func TestScriptInputs(t *testing.T) {
	a := Point{-20.8410, -40.7353}
	s := &Script{Start: a, IdleDB: 40, Legs: []Leg{
		{Until: 10 * time.Second, DB: 40, SwitchOff: true},
		{To: along(a, Point{-20.8329, -40.7238}, 100), Kmh: 36, DB: 54},
		{Stop: 5 * time.Second, DB: 54, Door: true},
	}}
	v := &Vehicle{ID: "X", Script: s}
	if on, open := v.InputsAtStart(); on || open {
		t.Fatalf("at the start: service %v door %v, want off and closed", on, open)
	}
	t0 := time.Date(2026, 11, 30, 15, 0, 0, 0, time.UTC)
	for i := range 30 {
		st := v.Step(t0.Add(time.Duration(i)*time.Second), time.Second)
		wantOn, wantOpen := i >= 10 && i < 25, i >= 20 && i < 25
		if st.ServiceOn != wantOn || st.DoorOpen != wantOpen {
			t.Fatalf("%d s: service %v door %v, want %v %v", i, st.ServiceOn, st.DoorOpen, wantOn, wantOpen)
		}
	}
}

// Play writes the service switch and the door into their value files as a GPIO shows them, on
// every change.
func TestPlayWritesInputs(t *testing.T) {
	dir := t.TempDir()
	out := Outputs{Service: filepath.Join(dir, "service"), Door: filepath.Join(dir, "door")}
	v := &Vehicle{ID: "X", Route: PiumaLoop(), Scenario: Scenario{
		{Duration: 2 * time.Second, SpeedKmh: 20, LAeqDB: 60, ServiceOff: true},
		{Duration: 2 * time.Second, SpeedKmh: 0, LAeqDB: 60, DoorOpen: true},
	}}
	read := func(path string) string {
		b, err := os.ReadFile(path)
		if err != nil {
			t.Fatal(err)
		}
		return string(b)
	}
	if _, err := Play(context.Background(), v, out, PlayConfig{Start: time.Now(), SpeedUp: 100, Duration: 2 * time.Second}); err != nil {
		t.Fatal(err)
	}
	if s, d := read(out.Service), read(out.Door); s != "0\n" || d != "0\n" {
		t.Fatalf("after the first segment: service %q door %q", s, d)
	}
	if _, err := Play(context.Background(), v, out, PlayConfig{Start: time.Now(), SpeedUp: 100, Duration: 2 * time.Second}); err != nil {
		t.Fatal(err)
	}
	if s, d := read(out.Service), read(out.Door); s != "1\n" || d != "1\n" {
		t.Fatalf("after the second segment: service %q door %q", s, d)
	}
}
