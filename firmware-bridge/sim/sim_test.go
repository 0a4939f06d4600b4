package sim

import (
	"math"
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
