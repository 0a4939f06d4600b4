package coach

import (
	"encoding/json"
	"math"
	"testing"
	"time"

	"github.com/trenzinho/trenzinho/configbundle"
	"github.com/trenzinho/trenzinho/wire"
)

// garageSouthM is how far south of the test street (the itinerary it-l1) L1's garage lies.
const garageSouthM = 433

// garageBundle is testBundle with L1's garage, a 40 m square garageSouthM south of the
// street's start.
func garageBundle(t *testing.T) *configbundle.Bundle {
	t.Helper()
	var fc map[string]any
	if err := json.Unmarshal(testGeofences(), &fc); err != nil {
		t.Fatal(err)
	}
	lat := lat0 - garageSouthM/111320.0
	d, e := 20/111320.0, 20/metresPerDegLon
	x := lonAt(0)
	fc["features"] = append(fc["features"].([]any), map[string]any{"type": "Feature",
		"properties": map[string]any{"id": "g-l1", "kind": "garage", "licensee": "L1", "name": "Garagem L1"},
		"geometry": map[string]any{"type": "Polygon", "coordinates": [][][]float64{{
			{x - e, lat - d}, {x + e, lat - d}, {x + e, lat + d}, {x - e, lat + d}, {x - e, lat - d}}}}})
	gf, err := json.Marshal(fc)
	if err != nil {
		t.Fatal(err)
	}
	b := testBundle(3, configbundle.Warnings{})
	b.Geofences = gf
	return signedBundle(t, b)
}

// fix is one second of a drive: a position in metres (east of the street's start, north of the
// street) and the speed.
type fix struct{ eastM, northM, kmh float64 }

// drive goes in a straight line from a to b at kmh, one fix a second (b included).
func drive(a, b fix, kmh float64) []fix {
	n := int(math.Ceil(math.Hypot(b.eastM-a.eastM, b.northM-a.northM) / (kmh / 3.6)))
	out := make([]fix, 0, n)
	for i := 1; i <= n; i++ {
		f := float64(i) / float64(n)
		out = append(out, fix{a.eastM + f*(b.eastM-a.eastM), a.northM + f*(b.northM-a.northM), kmh})
	}
	return out
}

// wait stays at p for n seconds.
func wait(p fix, n int) []fix {
	out := make([]fix, n)
	for i := range out {
		out[i] = fix{p.eastM, p.northM, 0}
	}
	return out
}

func joinFixes(fs ...[]fix) []fix {
	var out []fix
	for _, f := range fs {
		out = append(out, f...)
	}
	return out
}

// fixBatches renders the fixes as per-second batches of PIU-001 with its service switch on.
func fixBatches(start time.Time, fs []fix) []*wire.Batch {
	var bs []*wire.Batch
	for i, f := range fs {
		t := wire.NewTime(start.Add(time.Duration(i) * time.Second))
		b := &wire.Batch{V: wire.Version, Vehicle: "PIU-001", Epoch: "rec", Seq: uint64(i + 1), Clock: wire.ClockGPS, SentAt: t}
		if i == 0 {
			b.Service = []wire.Service{{T: t, On: true}}
		}
		b.GPS = []wire.GPS{{T: t, Lat: lat0 + f.northM/111320, Lon: lonAt(f.eastM), SpeedKmh: ptr(f.kmh), HDOP: ptr(0.8), Fix: wire.Fix3D}}
		b.Tacho = []wire.Tacho{{T: t, SpeedKmh: ptr(f.kmh)}}
		bs = append(bs, b)
	}
	return bs
}

// TestGarageExitIsNotADeviation: the drive from the licensee's garage to its itinerary, and
// back at the end, is no deviation for the coach — the driver cannot serve the itinerary
// without it — while leaving the itinerary elsewhere, or driving away from it on leaving the
// garage, is still warned.
func TestGarageExitIsNotADeviation(t *testing.T) {
	cb := garageBundle(t)
	garage := fix{0, -garageSouthM, 0}
	joinAt := fix{200, 0, 0}
	for _, c := range []struct {
		name  string
		fixes []fix
		warn  bool // an itinerary warning is due
	}{
		{"garage to the itinerary, a lap, back to the garage", joinFixes(
			wait(garage, 30), // switch on, waiting in the garage
			drive(garage, joinAt, 20),
			drive(joinAt, fix{1500, 0, 0}, 25),
			drive(fix{1500, 0, 0}, garage, 20),
			wait(garage, 30)), false},
		{"off the itinerary away from the garage", joinFixes(
			wait(garage, 5),
			drive(garage, joinAt, 20),
			drive(joinAt, fix{800, 0, 0}, 25),
			drive(fix{800, 0, 0}, fix{800, 200, 0}, 20), // north, away from the garage
			drive(fix{800, 200, 0}, fix{1200, 200, 0}, 20)), true},
		{"out of the garage and away from the itinerary", joinFixes(
			wait(garage, 5),
			drive(garage, fix{0, -garageSouthM - 400, 0}, 20)), true},
	} {
		t.Run(c.name, func(t *testing.T) {
			ws, _ := collect(t, cb, fixBatches(eveningFriday, c.fixes))
			it := ofKind(ws, KindItinerary)
			if c.warn && len(it) == 0 {
				t.Errorf("no itinerary warning; warnings %+v", ws)
			}
			if !c.warn && len(it) > 0 {
				t.Errorf("itinerary warnings on the way between the garage and the itinerary: %+v", it)
			}
		})
	}
}
