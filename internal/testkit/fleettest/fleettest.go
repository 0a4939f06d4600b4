// Package fleettest makes the trips of a simulated fleet as the batches a bridge publishes, and
// plays them through the monitor's live path as monitor/judge does: rules.Engine.Apply, Drain,
// store.DB.Commit. The tests of the drafts and of the notices use it to make real episodes,
// evidence and drafts; like Telegraf's testutil, it is imported by tests only.
package fleettest

import (
	"context"
	"crypto/ed25519"
	"os"
	"path/filepath"
	"slices"
	"testing"
	"time"

	"github.com/trenzinho/trenzinho/internal/testkit/testenv"
	"github.com/trenzinho/trenzinho/monitor/store"
	"github.com/trenzinho/trenzinho/profile"
	"github.com/trenzinho/trenzinho/registry"
	"github.com/trenzinho/trenzinho/rules"
	"github.com/trenzinho/trenzinho/wire"
)

// Second is one second of a vehicle's readings: where it is, how fast it goes (tachograph and
// GPS agree) and what its sound meter measures.
type Second struct {
	Lat, Lon float64
	Kmh      float64
	DB       float64 // LAeq of the second; 0: no sound reading
	// ServiceOff: the service switch is off this second (when the trip has one).
	ServiceOff bool
}

// metresPerDegreeEast is the length of a degree of longitude at Piúma's latitude (about 20.8° S).
const metresPerDegreeEast = 111320 * 0.9346

// Drive moves east along a street from (lat, lon) at the given speeds, one a second; the first
// second is already one step east.
func Drive(lat, lon float64, speeds ...float64) []Second {
	out := make([]Second, 0, len(speeds))
	for _, kmh := range speeds {
		lon += kmh / 3.6 / metresPerDegreeEast
		out = append(out, Second{Lat: lat, Lon: lon, Kmh: kmh})
	}
	return out
}

// Stand is n seconds at (lat, lon), creeping at kmh, with the meter at db.
func Stand(lat, lon, kmh, db float64, n int) []Second {
	return slices.Repeat([]Second{{Lat: lat, Lon: lon, Kmh: kmh, DB: db}}, n)
}

// OffWhenStopped turns the service switch off on the seconds the vehicle stands still (below
// 3 km/h): the driver ends the service when the trip ends. It changes secs and returns it.
func OffWhenStopped(secs []Second) []Second {
	for i := range secs {
		secs[i].ServiceOff = secs[i].Kmh < 3
	}
	return secs
}

// WithCalendars fills the calendars Piúma's profile ships empty, as an operator would once they
// are confirmed (rules: an episode that depends on an empty calendar grounds no auto): the school
// recess of 2026/2027 and one municipal holiday, on none of the days the tests play.
func WithCalendars(p *profile.Profile) *profile.Profile {
	p.Calendars.SchoolRecess = []profile.DateRange{{From: "2026-07-13", To: "2026-07-31"}, {From: "2026-12-21", To: "2027-02-05"}}
	p.Holidays.Dates = append(p.Holidays.Dates, profile.DateHoliday{Date: "2026-12-24", Name: "Aniversário do município", Scope: "municipal"})
	return p
}

// Repeat returns n times v.
func Repeat(v float64, n int) []float64 { return slices.Repeat([]float64{v}, n) }

// Speeding is a train speeding once in Piúma (limit 30 km/h, tolerance 7): a minute at 20 km/h,
// 20 s at 45 km/h, then 200 s at 20 km/h, which close the episode and hold two minutes of
// evidence after it.
func Speeding() []float64 { return slices.Concat(Repeat(20, 60), Repeat(45, 20), Repeat(20, 200)) }

// Trip is what a vehicle sends, one Second a second from Start.
type Trip struct {
	Vehicle string
	Epoch   string // "e-1" when empty
	Card    string // the driver card the tachograph reports; "": none
	Start   time.Time
	Seconds []Second
	Key     ed25519.PrivateKey // signs the batches under Kid when set
	Kid     string
	// NoServiceSwitch: the bridge has no service switch wired. Otherwise every second reports
	// the switch on: the train is in service, observed (rules: "em serviço" grounds an auto only
	// when observed).
	NoServiceSwitch bool
}

// Batch is one batch of a trip as the bridge publishes it and the monitor receives it.
type Batch struct {
	*wire.Batch
	Payload  []byte    // encoded, signed when the trip has a key
	Received time.Time // when its last second ended
}

// Stored is the batch as the monitor logs it.
func (b Batch) Stored() store.Batch {
	return store.Batch{Vehicle: b.Vehicle, Epoch: b.Epoch, Seq: b.Seq, ReceivedAt: b.Received,
		TMin: b.GPS[0].T.Time, TMax: b.GPS[len(b.GPS)-1].T.Time, Payload: b.Payload}
}

// Batches cuts the trip into batches of five seconds (the last may be shorter), numbered on from
// *seq, which it advances: one counter may number a whole fleet's batches.
func (tr Trip) Batches(t testing.TB, seq *uint64) []Batch {
	t.Helper()
	epoch := tr.Epoch
	if epoch == "" {
		epoch = "e-1"
	}
	var out []Batch
	at := tr.Start
	for i := 0; i < len(tr.Seconds); i += 5 {
		*seq++
		b := &wire.Batch{V: 1, Vehicle: tr.Vehicle, Epoch: epoch, Seq: *seq, Clock: wire.ClockGPS}
		if tr.Key != nil {
			b.Kid = tr.Kid
		}
		for _, s := range tr.Seconds[i:min(i+5, len(tr.Seconds))] {
			wt := wire.NewTime(at)
			kmh, hdop, dur, level := s.Kmh, 0.8, 1.0, s.DB
			b.Tacho = append(b.Tacho, wire.Tacho{T: wt, SpeedKmh: &kmh, Card: tr.Card})
			b.GPS = append(b.GPS, wire.GPS{T: wt, Lat: s.Lat, Lon: s.Lon, SpeedKmh: &kmh, HDOP: &hdop, Fix: wire.Fix3D})
			if s.DB > 0 {
				b.Sound = append(b.Sound, wire.Sound{T: wt, LAeqDB: &level, DurS: &dur})
			}
			if !tr.NoServiceSwitch {
				b.Service = append(b.Service, wire.Service{T: wt, On: !s.ServiceOff})
			}
			b.SentAt = wt
			at = at.Add(time.Second)
		}
		payload, err := wire.Encode(b, tr.Key)
		if err != nil {
			t.Fatal(err)
		}
		out = append(out, Batch{Batch: b, Payload: payload, Received: at})
	}
	return out
}

// Play sends the trip's batches (numbered on from *seq) through the engine and commits each to
// the store as monitor/judge does, each received when its last second ends. It returns the end
// of the trip.
func Play(t testing.TB, e *rules.Engine, db *store.DB, seq *uint64, tr Trip) time.Time {
	t.Helper()
	for _, b := range tr.Batches(t, seq) {
		e.Apply(b.Batch, b.Received)
		c, err := e.Drain()
		if err != nil {
			t.Fatal(err)
		}
		if err := db.Commit(context.Background(), &c, []store.Batch{b.Stored()}); err != nil {
			t.Fatal(err)
		}
	}
	return tr.Start.Add(time.Duration(len(tr.Seconds)) * time.Second)
}

// Registry opens, in dir, a copy of the example registry of Piúma
// (registry/testdata/piuma-example.yaml) with vehicle PIU-002 assigned to driver D2 and
// then changed by edit when it is not nil, as an operator would through the dashboard.
func Registry(t testing.TB, dir string, edit func(*registry.Vehicle)) *registry.Store {
	t.Helper()
	example, err := os.ReadFile(filepath.Join(testenv.RepoRoot(t), "registry", "testdata", "piuma-example.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(dir, "registry.yaml")
	if err := os.WriteFile(path, example, 0o600); err != nil {
		t.Fatal(err)
	}
	reg, err := registry.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	v, _ := reg.Vehicle("PIU-002")
	v.Driver = "D2"
	if edit != nil {
		edit(&v)
	}
	if _, err := reg.PutVehicle(v); err != nil {
		t.Fatal(err)
	}
	return reg
}
