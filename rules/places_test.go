package rules

import (
	"math"
	"strings"
	"testing"
	"time"

	"github.com/paulmach/orb"

	"github.com/trenzinho/trenzinho/geofences"
	"github.com/trenzinho/trenzinho/profile"
	"github.com/trenzinho/trenzinho/wire"
)

// The test town: a school (a point, open on weekdays), a hospital (a square polygon, always
// open), an NBR zone, an itinerary of licensee L1 along a parallel, its garage, and a boarding
// point — all around (-20.84, -40.73).
const testTown = `{"type":"FeatureCollection","features":[
{"type":"Feature","geometry":{"type":"Point","coordinates":[-40.7300,-20.8400]},
 "properties":{"id":"school","kind":"sensitive","category":"school","name":"EMEF Teste","opening_hours":"Mo-Fr 07:00-18:00; PH off","source":"survey","verified_by":"fiscal","verified_at":"2026-10-01"}},
{"type":"Feature","geometry":{"type":"Polygon","coordinates":[[[-40.7100,-20.8400],[-40.7090,-20.8400],[-40.7090,-20.8390],[-40.7100,-20.8390],[-40.7100,-20.8400]]]},
 "properties":{"id":"hospital","kind":"sensitive","category":"hospital","name":"Hospital Teste","source":"osm"}},
{"type":"Feature","geometry":{"type":"Polygon","coordinates":[[[-40.6600,-20.8600],[-40.6400,-20.8600],[-40.6400,-20.8400],[-40.6600,-20.8400],[-40.6600,-20.8600]]]},
 "properties":{"id":"zone-leisure","kind":"nbr_zone","area":"mixed_leisure","source":"sample"}},
{"type":"Feature","geometry":{"type":"LineString","coordinates":[[-40.6000,-20.8000],[-40.5800,-20.8000]]},
 "properties":{"id":"route-l1","kind":"itinerary","licensee":"L1","corridor_m":50,"days":"Mo-Su","hours":"09:00-23:00","source":"sample"}},
{"type":"Feature","geometry":{"type":"Polygon","coordinates":[[[-40.5500,-20.8000],[-40.5490,-20.8000],[-40.5490,-20.7990],[-40.5500,-20.7990],[-40.5500,-20.8000]]]},
 "properties":{"id":"garage-l1","kind":"garage","licensee":"L1","source":"sample"}},
{"type":"Feature","geometry":{"type":"Point","coordinates":[-40.5000,-20.8000]},
 "properties":{"id":"stop-1","kind":"boarding_point","radius_m":30,"source":"sample"}}
]}`

func testPlaces(t *testing.T) *geofences.Set {
	t.Helper()
	s, err := geofences.Read(strings.NewReader(testTown), "town.geojson")
	if err != nil {
		t.Fatal(err)
	}
	return s
}

// north returns the point at distance m (metres, to within a millimetre) north of the feature's
// nearest edge or point, searching along the meridian of lon.
func atDistance(t *testing.T, f *geofences.Feature, lat, lon, m float64) (float64, float64) {
	t.Helper()
	lo, hi := 0.0, 0.01 // degrees of latitude north of (lat, lon)
	for range 60 {
		mid := (lo + hi) / 2
		if f.Distance(orb.Point{lon, lat + mid}) < m {
			lo = mid
		} else {
			hi = mid
		}
	}
	got := f.Distance(orb.Point{lon, lat + lo})
	if math.Abs(got-m) > 0.001 {
		t.Fatalf("placed at %v m, want %v", got, m)
	}
	return lat + lo, lon
}

// standing builds batches of a vehicle standing still at (lat, lon) with a tachograph at
// speed kmh and a sound meter at db, one reading of each per second.
func standing(tr *trip, seconds int, kmh, db float64) []*wire.Batch {
	var out []*wire.Batch
	var b *wire.Batch
	for i := range seconds {
		if i%5 == 0 {
			tr.seq++
			b = &wire.Batch{V: 1, Vehicle: tr.vehicle, Epoch: tr.epoch, Seq: tr.seq, Clock: wire.ClockGPS}
			out = append(out, b)
		}
		t := wire.NewTime(tr.t)
		b.Tacho = append(b.Tacho, wire.Tacho{T: t, SpeedKmh: ptr(kmh)})
		b.GPS = append(b.GPS, wire.GPS{T: t, Lat: tr.lat, Lon: tr.lon, SpeedKmh: ptr(kmh), HDOP: ptr(0.8), Fix: wire.Fix3D})
		if db > 0 {
			b.Sound = append(b.Sound, wire.Sound{T: t, LAeqDB: ptr(db), DurS: ptr(1.0)})
		}
		b.SentAt = t
		tr.t = tr.t.Add(time.Second)
	}
	return out
}

func newPlacesRun(t *testing.T, licensee string) *run {
	r := &run{e: New(profile.Piuma(), testPlaces(t)), episodes: map[string]Episode{}, evidence: map[string]int{}}
	if licensee != "" {
		r.e.vehicle("PIU-001").Licensee = licensee
	}
	return r
}

func localTime(t *testing.T, s string) time.Time {
	t.Helper()
	tm, err := time.ParseInLocation("2006-01-02 15:04:05", s, profile.Piuma().Location())
	if err != nil {
		t.Fatal(err)
	}
	return tm
}

func TestSensitiveZoneSound(t *testing.T) {
	places := testPlaces(t)
	school, _ := places.Feature("school")
	hospital, _ := places.Feature("hospital")
	cases := []struct {
		name string
		site *geofences.Feature
		lat  float64
		lon  float64
		dist float64
		when string
		db   float64
		want int
	}{
		// HDOP 0.8: a margin of 4 m in the accused's favour.
		{"196 m from a school's point, open", school, -20.8400, -40.7300, 196, "2026-11-27 10:00:00", 75, 1},
		{"197 m from a school's point", school, -20.8400, -40.7300, 197, "2026-11-27 10:00:00", 75, 0},
		{"196 m from a hospital's edge", hospital, -20.8390, -40.7095, 196, "2026-11-29 03:00:00", 75, 1},
		{"197 m from a hospital's edge", hospital, -20.8390, -40.7095, 197, "2026-11-29 03:00:00", 75, 0},
		{"a school closed on Sunday", school, -20.8400, -40.7300, 50, "2026-11-29 10:00:00", 75, 0},
		{"a school closed on a holiday", school, -20.8400, -40.7300, 50, "2026-11-20 10:00:00", 75, 0},
		{"below the emission threshold", school, -20.8400, -40.7300, 50, "2026-11-27 10:00:00", 69.9, 0},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			r := newPlacesRun(t, "")
			tr := newTrip(localTime(t, c.when))
			tr.lat, tr.lon = atDistance(t, c.site, c.lat, c.lon, c.dist)
			r.apply(t, standing(tr, 30, 8, c.db), time.Second)
			r.apply(t, standing(tr, 30, 8, 50), time.Second)
			eps := r.rule("sensitive_zone_sound")
			if len(eps) != c.want {
				t.Fatalf("%d episodes, want %d", len(eps), c.want)
			}
			if c.want == 1 {
				ep := eps[0]
				if ep.Site == nil || ep.Site.ID != c.site.ID || math.Abs(ep.Site.DistanceM-c.dist) > 0.01 || math.Abs(ep.Site.MaxDistanceM-c.dist-4) > 0.01 {
					t.Errorf("site %+v", ep.Site)
				}
				if ep.Article != "Art. 28" || ep.Penalty != "Art. 45, VII" || ep.Site.Verified != (c.site.ID == "school") {
					t.Errorf("episode %+v", ep)
				}
				// 5 s emission window: the first full window ends 4 s after the music starts.
				if ep.Peak != c.db || ep.Start.Before(tr.t.Add(-60*time.Second)) {
					t.Errorf("peak %v start %v", ep.Peak, ep.Start)
				}
			}
		})
	}
}

func TestNightPeriods(t *testing.T) {
	p := profile.Piuma()
	cases := []struct {
		when  string
		night bool
	}{
		{"2026-11-26 08:00:00", false}, // Thursday
		{"2026-11-26 06:59:00", true},
		{"2026-11-26 22:00:00", true},
		{"2026-11-26 21:59:00", false},
		{"2026-11-20 08:00:00", true},  // the night before a holiday (Consciência Negra) ends at 09:00
		{"2026-11-20 09:00:00", false}, //
		{"2026-11-29 08:59:00", true},  // Sunday
		{"2026-11-28 08:00:00", false}, // Saturday
	}
	for _, c := range cases {
		if got := Night(p, localTime(t, c.when)); got != c.night {
			t.Errorf("%s: night %v, want %v", c.when, got, c.night)
		}
	}
}

func TestReceptorLevel(t *testing.T) {
	// 80 dB(A) at 2 m → 80 − 20·log10(7.5/2) = 68.5194… at 7.5 m.
	if got := ReceptorLevel(80, 2, 7.5); math.Abs(got-68.51937) > 1e-5 {
		t.Fatal(got)
	}
}

func TestNoiseLimit(t *testing.T) {
	// The town's places lie outside every NBR zone but the leisure one: these cases run with a
	// default area, which Piúma's profile does not name (TestNoiseLimitNoDefaultArea).
	// At the meter, the level that puts the receptor exactly at limit + tolerance in a
	// mixed_residential area by day (55 + 1): 56 + 20·log10(7.5/2).
	edge := 56 + 20*math.Log10(7.5/2)
	cases := []struct {
		name string
		when string
		lat  float64
		lon  float64
		db   float64
		want int
		area string
	}{
		{"just under, by day", "2026-11-26 15:00:00", -20.90, -40.80, edge - 0.05, 0, ""},
		{"just over, by day", "2026-11-26 15:00:00", -20.90, -40.80, edge + 0.05, 1, "mixed_residential"},
		{"5 dB quieter is over the night limit", "2026-11-26 23:00:00", -20.90, -40.80, edge - 4.5, 1, "mixed_residential"},
		{"6 dB quieter is not", "2026-11-26 23:00:00", -20.90, -40.80, edge - 5.5, 0, ""},
		{"in a leisure zone", "2026-11-26 15:00:00", -20.85, -40.65, edge + 5, 0, ""},
		{"Sunday 08:00 is still night", "2026-11-29 08:00:00", -20.90, -40.80, edge - 4.5, 1, "mixed_residential"},
		{"Saturday 08:00 is day", "2026-11-28 08:00:00", -20.90, -40.80, edge - 4.5, 0, ""},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			r := newPlacesRun(t, "")
			r.e.profile.Noise.DefaultArea = "mixed_residential"
			tr := newTrip(localTime(t, c.when))
			tr.lat, tr.lon = c.lat, c.lon
			r.apply(t, standing(tr, 150, 10, c.db), time.Second)
			r.apply(t, standing(tr, 90, 10, 40), time.Second)
			eps := r.rule("noise_limit")
			if len(eps) != c.want {
				t.Fatalf("%d noise episodes, want %d: %+v", len(eps), c.want, eps)
			}
			if c.want == 1 {
				ep := eps[0]
				if ep.Area == nil || *ep.Area != c.area || !ep.Estimate || ep.Article != "Art. 27" {
					t.Errorf("episode %+v", ep)
				}
				if want := ReceptorLevel(c.db, 2, 7.5); math.Abs(ep.Peak-want) > 1e-9 {
					t.Errorf("peak %v, want %v (a steady level's L_Aeq is the level)", ep.Peak, want)
				}
			}
		})
	}
}

func TestBoardingSound(t *testing.T) {
	cases := []struct {
		name    string
		lat     float64
		lon     float64
		seconds int
		want    int
	}{
		{"stopped at a boarding point", -20.8000, -40.5000, 30, 1},
		{"stopped elsewhere for 30 s", -20.9000, -40.9000, 30, 0},
		// A long stop is no observed boarding (Art. 36 §4: "nos pontos demarcados").
		{"stopped elsewhere for 120 s", -20.9000, -40.9000, 120, 0},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			r := newPlacesRun(t, "")
			tr := newTrip(localTime(t, "2026-11-26 15:00:00"))
			tr.lat, tr.lon = c.lat, c.lon
			r.apply(t, standing(tr, c.seconds, 0, 75), time.Second)
			r.apply(t, standing(tr, 30, 20, 50), time.Second)
			if got := len(r.rule("boarding_sound")); got != c.want {
				t.Fatalf("%d boarding episodes, want %d", got, c.want)
			}
		})
	}
}

func TestRouteDeviation(t *testing.T) {
	on := func(tr *trip) { tr.lat, tr.lon = -20.8000, -40.5950 }
	off := func(tr *trip) { tr.lat, tr.lon = -20.8010, -40.5950 } // ~111 m south of the route
	cases := []struct {
		name     string
		licensee string
		when     string
		place    func(*trip)
		want     int
	}{
		{"on the route", "L1", "2026-11-26 15:00:00", on, 0},
		{"off the route", "L1", "2026-11-26 15:00:00", off, 1},
		{"on the route outside its hours", "L1", "2026-11-26 08:00:00", on, 1},
		{"no registry: not evaluated", "", "2026-11-26 15:00:00", off, 0},
		{"a licensee without itineraries: not evaluated", "L9", "2026-11-26 15:00:00", off, 0},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			r := newPlacesRun(t, c.licensee)
			tr := newTrip(localTime(t, c.when))
			c.place(tr)
			r.apply(t, standing(tr, 90, 15, 0), time.Second)
			r.apply(t, standing(tr, 20, 0, 0), time.Second)
			eps := r.rule("route_deviation")
			if len(eps) != c.want {
				t.Fatalf("%d route episodes, want %d", len(eps), c.want)
			}
		})
	}
}

func TestParkedPublicRoad(t *testing.T) {
	cases := []struct {
		name  string
		when  string
		lat   float64
		lon   float64
		want  int
		start string
	}{
		{"parked on the street at night, then silent", "2026-11-26 23:30:00", -20.8100, -40.5600, 1, "2026-11-27 00:00:30"},
		{"parked in the garage", "2026-11-26 23:30:00", -20.79950, -40.54950, 0, ""},
		{"parked on the street in authorised hours", "2026-11-26 14:00:00", -20.8100, -40.5600, 0, ""},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			r := newPlacesRun(t, "L1")
			tr := newTrip(localTime(t, c.when))
			tr.lat, tr.lon = c.lat, c.lon
			bs := standing(tr, 30, 0, 0)
			r.apply(t, bs, time.Second)
			// The engine stops, the Pi goes silent; the receive clock runs for 40 minutes.
			last := bs[len(bs)-1].SentAt.Time
			for m := 1; m <= 40; m++ {
				r.e.Tick(last.Add(time.Duration(m) * time.Minute))
				r.drain(t)
			}
			eps := r.rule("parked_public_road")
			if len(eps) != c.want {
				t.Fatalf("%d parked episodes, want %d", len(eps), c.want)
			}
			if c.want == 1 {
				if eps[0].End != nil {
					t.Errorf("a silent parked vehicle's episode closed: %+v", eps[0])
				}
				if d := eps[0].Start.Sub(localTime(t, c.start)); d < -2*time.Second || d > 62*time.Second {
					t.Errorf("starts %v, want about %s (30 min after the stop)", eps[0].Start.In(profile.Piuma().Location()), c.start)
				}
				// Observed by 30 s of readings and 40 min of silence: shown, never fined.
				if ep := eps[0]; ep.GroundsAuto || ep.ObservedS > 30 || !strings.Contains(ep.GroundsNote, "período sem dados") || ep.Draftable() {
					t.Errorf("a parked episode observed by silence: grounds %v observed %v s note %q", ep.GroundsAuto, ep.ObservedS, ep.GroundsNote)
				}
			}
		})
	}
}

// A vehicle parked on a public road outside the hours that goes silent for 2 h: no part of the
// silent span grounds an auto, however long it lasts (the agent's observation at the place
// would). 40 minutes of readings parked there do.
func TestParkedPublicRoadObservedByReadings(t *testing.T) {
	town := strings.Replace(testTown, "\n]}", `,
{"type":"Feature","geometry":{"type":"Polygon","coordinates":[[[-40.5610,-20.8110],[-40.5590,-20.8110],[-40.5590,-20.8090],[-40.5610,-20.8090],[-40.5610,-20.8110]]]},
 "properties":{"id":"rua-1","kind":"public_road","name":"Rua Um","source":"survey"}}
]}`, 1)
	set, err := geofences.Read(strings.NewReader(town), "town.geojson")
	if err != nil {
		t.Fatal(err)
	}
	newRun := func() *run {
		r := &run{e: New(profile.Piuma(), set), episodes: map[string]Episode{}, evidence: map[string]int{}}
		r.e.vehicle("PIU-001").Licensee = "L1"
		return r
	}
	r := newRun()
	tr := newTrip(localTime(t, "2026-11-26 23:30:00"))
	tr.lat, tr.lon = -20.8100, -40.5600 // on the street
	bs := standing(tr, 60, 0, 0)
	r.apply(t, bs, time.Second)
	last := bs[len(bs)-1].SentAt.Time
	for m := 1; m <= 120; m++ {
		r.e.Tick(last.Add(time.Duration(m) * time.Minute))
		r.drain(t)
	}
	eps := r.rule(RuleParkedPublicRoad)
	if len(eps) != 1 || eps[0].GroundsAuto || eps[0].Needs != VerifyField || eps[0].ObservedS > 60 || eps[0].Peak < 100 {
		t.Fatalf("2 h silent: %+v", eps)
	}
	ep := eps[0]
	ep.Verification = &Verification{Kind: VerifyField, Note: "veículo estacionado na via, sem condutor"}
	if !ep.Draftable() {
		t.Error("the agent's observation at the place does not ground the parked episode")
	}

	if eps[0].Site == nil || eps[0].Site.Kind != "public_road" {
		t.Fatalf("site %+v", eps[0].Site)
	}

	r = newRun()
	tr = newTrip(localTime(t, "2026-11-26 23:30:00"))
	tr.lat, tr.lon = -20.8100, -40.5600
	r.apply(t, standing(tr, 40*60, 0, 0), time.Second)
	eps = r.rule(RuleParkedPublicRoad)
	if len(eps) != 1 || !eps[0].GroundsAuto || eps[0].ObservedS < 39*60 || eps[0].Site == nil || eps[0].Site.Kind != "public_road" {
		t.Fatalf("40 min of readings: %+v", eps)
	}
}

func TestTelemetryFault(t *testing.T) {
	t.Run("tachograph falls silent while moving", func(t *testing.T) {
		r := newRun(t)
		tr := newTrip(noon)
		r.apply(t, tr.batches(repeat(20, 20)...), time.Second)
		tr.tacho = false
		r.apply(t, tr.batches(repeat(20, 90)...), time.Second)
		eps := r.rule("telemetry_fault")
		if len(eps) != 1 || eps[0].Detail != "silent" {
			t.Fatalf("%+v", eps)
		}
	})
	t.Run("tachograph contradicts the GPS", func(t *testing.T) {
		r := newRun(t)
		tr := newTrip(noon)
		bs := tr.batches(repeat(25, 60)...)
		for _, b := range bs {
			for i := range b.Tacho {
				b.Tacho[i].SpeedKmh = ptr(0.0)
			}
		}
		r.apply(t, bs, time.Second)
		eps := r.rule("telemetry_fault")
		if len(eps) != 1 || eps[0].Detail != "contradicts_gps" {
			t.Fatalf("%+v", eps)
		}
	})
	t.Run("no tachograph fitted: not evaluated", func(t *testing.T) {
		r := newRun(t)
		tr := newTrip(noon)
		tr.tacho = false
		r.apply(t, tr.batches(repeat(25, 90)...), time.Second)
		if eps := r.rule("telemetry_fault"); len(eps) != 0 {
			t.Fatalf("%+v", eps)
		}
	})
}

// The registry gives the vehicle its licensee (and so the rules that need one) and its r₁.
func TestRegistryLookup(t *testing.T) {
	r := &run{e: New(profile.Piuma(), testPlaces(t)), episodes: map[string]Episode{}, evidence: map[string]int{}}
	r.e.SetRegistry(func(id string) (Registration, bool) {
		if id == "PIU-001" {
			return Registration{Licensee: "L1", MeterDistanceM: 4}, true
		}
		return Registration{}, false
	})
	tr := newTrip(localTime(t, "2026-11-26 15:00:00"))
	tr.lat, tr.lon = -20.8010, -40.5950 // off L1's route
	r.apply(t, standing(tr, 90, 15, 0), time.Second)
	eps := r.rule("route_deviation")
	if len(eps) != 1 || eps[0].Unregistered {
		t.Fatalf("registered vehicle off its route: %+v", eps)
	}
	if v := r.e.vehicles["PIU-001"]; v.R1M != 4 {
		t.Errorf("r1 %v, want the registry's 4 m", v.R1M)
	}
	// A vehicle the registry does not know: judged, marked, route not evaluated.
	r2 := &run{e: New(profile.Piuma(), testPlaces(t)), episodes: map[string]Episode{}, evidence: map[string]int{}}
	r2.e.SetRegistry(func(string) (Registration, bool) { return Registration{}, false })
	tr2 := newTrip(localTime(t, "2026-11-26 15:00:00"))
	tr2.lat, tr2.lon = -20.8010, -40.5950
	r2.apply(t, standing(tr2, 90, 15, 0), time.Second)
	if n := len(r2.rule("route_deviation")); n != 0 {
		t.Fatalf("unregistered vehicle: %d route episodes", n)
	}
}
