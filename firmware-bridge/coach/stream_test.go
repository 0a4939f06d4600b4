package coach

import (
	"crypto/ed25519"
	"crypto/rand"
	"encoding/json"
	"log/slog"
	"math"
	"testing"
	"time"

	"github.com/trenzinho/trenzinho/configbundle"
	"github.com/trenzinho/trenzinho/profile"
	"github.com/trenzinho/trenzinho/wire"
)

// The test town: a street running east along latitude lat0 from lon0, the licensee L1's
// itinerary along it, a hospital open 24/7 beside it 1,000 m east of the start, and a school
// 2,000 m east (closed on the test day's evening).
const (
	lat0 = -20.8367
	lon0 = -40.7292
	// metresPerDegLon at lat0.
	metresPerDegLon = 111320 * 0.93459
)

func lonAt(m float64) float64 { return lon0 + m/metresPerDegLon }

func testGeofences() json.RawMessage {
	fc := map[string]any{"type": "FeatureCollection", "features": []any{
		map[string]any{"type": "Feature",
			"properties": map[string]any{"id": "s-hospital", "kind": "sensitive", "category": "hospital",
				"name": "Hospital Municipal", "source": "survey", "opening_hours": "24/7", "verified_by": "Fiscal 1", "verified_at": "2026-10-01"},
			"geometry": map[string]any{"type": "Point", "coordinates": []float64{lonAt(1000), lat0 + 0.0003}}},
		map[string]any{"type": "Feature",
			"properties": map[string]any{"id": "s-escola", "kind": "sensitive", "category": "school",
				"name": "Escola do Centro", "source": "survey", "opening_hours": "Mo-Fr 07:00-12:00,13:00-17:00; PH off"},
			"geometry": map[string]any{"type": "Point", "coordinates": []float64{lonAt(2000), lat0 + 0.0003}}},
		map[string]any{"type": "Feature",
			"properties": map[string]any{"id": "it-l1", "kind": "itinerary", "licensee": "L1", "name": "Orla",
				"days": "Mo-Su", "hours": "09:00-23:00", "corridor_m": 50},
			"geometry": map[string]any{"type": "LineString", "coordinates": [][]float64{{lonAt(-500), lat0}, {lonAt(4000), lat0}}}},
	}}
	b, _ := json.Marshal(fc)
	return b
}

// testBundle is the bundle the monitor would send PIU-001 of licensee L1, with the Piúma
// profile.
func testBundle(version uint64, w configbundle.Warnings) *configbundle.Bundle {
	now := time.Date(2026, 11, 1, 0, 0, 0, 0, time.UTC)
	return &configbundle.Bundle{
		Format: configbundle.Format, Vehicle: "PIU-001", Licensee: "L1", Version: version,
		IssuedAt: now, ValidUntil: now.Add(365 * 24 * time.Hour),
		Profile:   configbundle.Profile{ID: "piuma", YAML: string(profile.PiumaYAML())},
		Geofences: testGeofences(),
		Settings:  configbundle.Settings{Warnings: w},
	}
}

// signedBundle signs b and opens it again as a bridge would, so that the coach is given what
// a bridge applies.
func signedBundle(t testing.TB, b *configbundle.Bundle) *configbundle.Bundle {
	t.Helper()
	pub, priv, err := ed25519.GenerateKey(rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	msg, err := configbundle.Sign(b, priv)
	if err != nil {
		t.Fatal(err)
	}
	cb, err := configbundle.Open(msg, pub, b.Vehicle, b.IssuedAt.Add(time.Hour))
	if err != nil {
		t.Fatal(err)
	}
	return cb
}

// step is one second of a stream: the speed, the sound level at the meter (NaN: no meter
// reading) and, when off, the lateral offset from the street in metres.
type step struct {
	kmh, db, offM float64
}

// stream is a recorded drive: one GPS, tachograph and sound reading per second, one batch per
// second (as the coach sees them; the monitor judges the same readings in 5 s batches).
type stream struct {
	start   time.Time
	steps   []step
	service *bool // a service switch reading at the start, when wired
}

// steps builds n seconds at kmh and db.
func steps(n int, kmh, db float64) []step {
	s := make([]step, n)
	for i := range s {
		s[i] = step{kmh: kmh, db: db}
	}
	return s
}

func join(ss ...[]step) []step {
	var out []step
	for _, s := range ss {
		out = append(out, s...)
	}
	return out
}

// batches renders the stream as per-second batches of vehicle PIU-001, with the position at
// each second (metres east of the start).
func (s stream) batches() (bs []*wire.Batch, east []float64) {
	x := 0.0
	for i, st := range s.steps {
		t := wire.NewTime(s.start.Add(time.Duration(i) * time.Second))
		x += st.kmh / 3.6
		b := &wire.Batch{V: wire.Version, Vehicle: "PIU-001", Epoch: "rec", Seq: uint64(i + 1), Clock: wire.ClockGPS, SentAt: t}
		if i == 0 && s.service != nil {
			b.Service = []wire.Service{{T: t, On: *s.service}}
		}
		lat := lat0 + st.offM/111320
		b.GPS = []wire.GPS{{T: t, Lat: lat, Lon: lonAt(x), SpeedKmh: ptr(st.kmh), HDOP: ptr(0.8), Fix: wire.Fix3D}}
		b.Tacho = []wire.Tacho{{T: t, SpeedKmh: ptr(st.kmh)}}
		if !math.IsNaN(st.db) {
			b.Sound = []wire.Sound{{T: t, LAeqDB: ptr(st.db)}}
		}
		bs = append(bs, b)
		east = append(east, x)
	}
	return bs, east
}

var quiet = slog.New(slog.DiscardHandler)

func ptr[T any](v T) *T { return &v }

// eveningFriday is 20:00 in Piúma on a Friday (the school is closed, the hospital open).
var eveningFriday = time.Date(2026, 11, 27, 23, 0, 0, 0, time.UTC)

// collect runs a coach configured with cb over bs and returns its warnings.
func collect(t testing.TB, cb *configbundle.Bundle, bs []*wire.Batch) ([]Warning, *Coach) {
	t.Helper()
	var ws []Warning
	c := New(Options{Vehicle: "PIU-001", Emit: func(w Warning) { ws = append(ws, w) }, Logger: quiet})
	if err := c.Configure(cb); err != nil {
		t.Fatal(err)
	}
	for _, b := range bs {
		c.Apply(b)
	}
	return ws, c
}

func ofKind(ws []Warning, k Kind) []Warning {
	var out []Warning
	for _, w := range ws {
		if w.Kind == k {
			out = append(out, w)
		}
	}
	return out
}
