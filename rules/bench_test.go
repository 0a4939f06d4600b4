package rules

import (
	"fmt"
	"math"
	"math/rand/v2"
	"testing"
	"time"

	"github.com/paulmach/orb"
	"github.com/paulmach/orb/geojson"

	"github.com/trenzinho/trenzinho/geofences"
	"github.com/trenzinho/trenzinho/profile"
	"github.com/trenzinho/trenzinho/wire"
)

// The benchmark town: a box of about 20 × 20 km around Piúma holding n sensitive sites (points
// and small polygons of every category, a quarter of them with opening hours), 200 NBR zones
// (overlapping star-shaped polygons of 0.4–1.5 km radius), and for each of 10 licensees a loop
// itinerary of 1.5–4 km radius, its garage and 5 boarding points on the loop.
const (
	benchZones      = 200
	benchLicensees  = 10
	benchVehicles   = 50
	benchBatchS     = 5   // seconds of readings per batch
	benchDrainEvery = 500 // batches between drains: the judge's FlushBatches under load
)

var (
	benchCentre = orb.Point{-40.73, -20.84}
	// Metres per degree near the centre (a plane is good enough to lay out the town).
	benchKX = 111320 * math.Cos(benchCentre[1]*math.Pi/180)
	benchKY = 110574.0
	// Friday 27 November 2026, 10:00 in Piúma: service hours, schools open.
	benchStart = time.Date(2026, 11, 27, 13, 0, 0, 0, time.UTC)
)

// benchPoint returns the point x metres east and y metres north of the centre.
func benchPoint(x, y float64) orb.Point {
	return orb.Point{benchCentre[0] + x/benchKX, benchCentre[1] + y/benchKY}
}

// benchStar returns a closed star-shaped ring of k vertices around (x, y) with radii in [r0, r1].
func benchStar(rnd *rand.Rand, x, y, r0, r1 float64, k int) orb.Ring {
	ring := make(orb.Ring, 0, k+1)
	a0 := 2 * math.Pi * rnd.Float64()
	for i := range k {
		a := a0 + 2*math.Pi*float64(i)/float64(k)
		r := r0 + (r1-r0)*rnd.Float64()
		ring = append(ring, benchPoint(x+r*math.Cos(a), y+r*math.Sin(a)))
	}
	return append(ring, ring[0])
}

var benchOpeningHours = []string{
	"Mo-Fr 07:00-18:00; PH off",
	"Mo-Fr 07:00-12:00,13:00-22:00; Sa 08:00-12:00; PH off",
	"Su 07:00-12:00,18:00-21:00; We 19:00-21:00",
	"24/7",
}

// benchTown returns the town with n sensitive sites and the loops the vehicles follow.
func benchTown(tb testing.TB, n int) (*geofences.Set, [][]orb.Point) {
	tb.Helper()
	rnd := rand.New(rand.NewPCG(uint64(n), 5))
	uniform := func(half float64) float64 { return (2*rnd.Float64() - 1) * half }
	fc := geojson.NewFeatureCollection()
	add := func(g orb.Geometry, props geojson.Properties) {
		f := geojson.NewFeature(g)
		f.Properties = props
		fc.Append(f)
	}
	cats := geofences.Categories()
	for i := range n {
		x, y := uniform(10000), uniform(10000)
		var g orb.Geometry = benchPoint(x, y)
		if i%2 == 1 {
			g = orb.Polygon{benchStar(rnd, x, y, 5, 30, 4+rnd.IntN(5))}
		}
		props := geojson.Properties{"id": fmt.Sprintf("site-%d", i), "kind": "sensitive",
			"category": string(cats[i%len(cats)]), "name": fmt.Sprintf("Site %d", i), "source": "survey"}
		if i%4 == 1 {
			props["opening_hours"] = benchOpeningHours[(i/4)%len(benchOpeningHours)]
		}
		if i%3 == 0 {
			props["verified_by"], props["verified_at"] = "fiscal", "2026-10-01"
		}
		add(g, props)
	}
	areas := []string{"strict_residential", "mixed_residential", "mixed_commercial", "mixed_leisure", "industrial", "rural"}
	for i := range benchZones {
		add(orb.Polygon{benchStar(rnd, uniform(9000), uniform(9000), 400, 1500, 8+rnd.IntN(9))},
			geojson.Properties{"id": fmt.Sprintf("zone-%d", i), "kind": "nbr_zone", "area": areas[i%len(areas)], "source": "sample"})
	}
	loops := make([][]orb.Point, benchLicensees)
	for l := range benchLicensees {
		lic := fmt.Sprintf("L%d", l)
		x, y := uniform(5000), uniform(5000)
		loop := benchStar(rnd, x, y, 1500, 4000, 24)
		loops[l] = loop
		add(orb.LineString(loop), geojson.Properties{"id": "route-" + lic, "kind": "itinerary", "licensee": lic,
			"corridor_m": 50.0, "days": "Mo-Su,PH", "hours": "09:00-23:00", "source": "sample"})
		gx, gy := (loop[0][0]-benchCentre[0])*benchKX, (loop[0][1]-benchCentre[1])*benchKY
		add(orb.Polygon{benchStar(rnd, gx+150, gy+150, 30, 40, 4)},
			geojson.Properties{"id": "garage-" + lic, "kind": "garage", "licensee": lic, "source": "sample"})
		for k := range 5 {
			add(loop[1+k*4], geojson.Properties{"id": fmt.Sprintf("stop-%s-%d", lic, k), "kind": "boarding_point",
				"radius_m": 30.0, "source": "sample"})
		}
	}
	set, err := geofences.NewSet(geofences.File{Name: "bench", Collection: fc})
	if err != nil {
		tb.Fatal(err)
	}
	return set, loops
}

// benchFleet generates the readings of 50 vehicles, each following its licensee's loop with
// 1 Hz GPS, tachograph and sound meter, one batch per vehicle every 5 s. Each vehicle repeats
// an 8-minute cycle: stopped 90 s (boarding), then cruising at 20–28 km/h; one vehicle in five
// speeds at 44 km/h for 30 s of each cycle; the GPS jumps 300 m for one sample every 150 s;
// the music plays at the meter at 73 dB(A) (63 on one vehicle in four), ± 3 dB over the
// cycle, with 1-second levels scattered around that by 1.5 dB.
type benchFleet struct {
	t     time.Time
	seq   uint64
	loops []benchLoop
	vs    []benchVehicle
	rnd   *rand.Rand
}

type benchLoop struct {
	xy  [][2]float64 // vertices in metres from the centre
	cum []float64    // distance along the loop to each vertex
}

type benchVehicle struct {
	id    string
	loop  int
	s     float64 // metres along the loop
	kmh   float64 // speed at the last second
	phase int
}

func newBenchFleet(loops [][]orb.Point) *benchFleet {
	f := &benchFleet{t: benchStart, rnd: rand.New(rand.NewPCG(1, 2))}
	for _, l := range loops {
		var bl benchLoop
		for i, p := range l {
			x, y := (p[0]-benchCentre[0])*benchKX, (p[1]-benchCentre[1])*benchKY
			bl.xy = append(bl.xy, [2]float64{x, y})
			d := 0.0
			if i > 0 {
				d = bl.cum[i-1] + math.Hypot(x-bl.xy[i-1][0], y-bl.xy[i-1][1])
			}
			bl.cum = append(bl.cum, d)
		}
		f.loops = append(f.loops, bl)
	}
	for i := range benchVehicles {
		l := i % len(loops)
		f.vs = append(f.vs, benchVehicle{id: fmt.Sprintf("PIU-%03d", i), loop: l,
			s: f.loops[l].length() * float64(i/len(loops)) / 5, phase: i * 37})
	}
	return f
}

func (l *benchLoop) length() float64 { return l.cum[len(l.cum)-1] }

// at returns the position s metres along the loop and the course there.
func (l *benchLoop) at(s float64) (orb.Point, float64) {
	s = math.Mod(s, l.length())
	i := 1
	for i < len(l.cum)-1 && l.cum[i] < s {
		i++
	}
	a, b := l.xy[i-1], l.xy[i]
	u := (s - l.cum[i-1]) / (l.cum[i] - l.cum[i-1])
	course := math.Mod(math.Atan2(b[0]-a[0], b[1]-a[1])*180/math.Pi+360, 360)
	return benchPoint(a[0]+u*(b[0]-a[0]), a[1]+u*(b[1]-a[1])), course
}

// speed returns vehicle i's speed u seconds into its cycle.
func benchSpeed(i, u int) float64 {
	switch {
	case u < 90:
		return 0
	case u < 100:
		return float64(u-90) * 2.5
	case i%5 == 0 && u >= 300 && u < 330:
		return 44
	}
	return 24 + 4*math.Sin(2*math.Pi*float64(u)/97)
}

// round returns the next batch of every vehicle (5 s).
func (f *benchFleet) round() []*wire.Batch {
	f.seq++
	out := make([]*wire.Batch, len(f.vs))
	for i := range f.vs {
		v := &f.vs[i]
		l := &f.loops[v.loop]
		b := &wire.Batch{V: wire.Version, Vehicle: v.id, Epoch: "e-bench", Seq: f.seq, Clock: wire.ClockGPS,
			GPS: make([]wire.GPS, 0, benchBatchS), Tacho: make([]wire.Tacho, 0, benchBatchS), Sound: make([]wire.Sound, 0, benchBatchS)}
		for k := range benchBatchS {
			t := f.t.Add(time.Duration(k) * time.Second)
			sec := int(t.Sub(benchStart) / time.Second)
			u := (sec + v.phase) % 480
			kmh := benchSpeed(i, u)
			v.s += (kmh + v.kmh) / 2 / 3.6 // the distance the mean speed covers in one second
			v.kmh = kmh
			p, course := l.at(v.s)
			if u%150 == 77 {
				p[1] += 300 / benchKY // a GPS jump
			}
			wt := wire.NewTime(t)
			gpsKmh := max(0, kmh+0.3*f.rnd.NormFloat64())
			b.GPS = append(b.GPS, wire.GPS{T: wt, Lat: p[1], Lon: p[0], SpeedKmh: ptr(gpsKmh), CourseDeg: ptr(course),
				HDOP: ptr(0.8 + 0.5*f.rnd.Float64()), Sats: ptr(9), Fix: wire.Fix3D})
			b.Tacho = append(b.Tacho, wire.Tacho{T: wt, SpeedKmh: ptr(kmh), OdometerKm: ptr(10000 + v.s/1000), Card: "0000000086H101"})
			base := 73.0
			if i%4 == 3 {
				base = 63
			}
			db := base + 3*math.Sin(2*math.Pi*float64(u)/300) + 1.5*f.rnd.NormFloat64()
			b.Sound = append(b.Sound, wire.Sound{T: wt, LAeqDB: ptr(db), LAmaxDB: ptr(db + 6), DurS: ptr(1.0)})
		}
		b.SentAt = wire.NewTime(f.t.Add(benchBatchS * time.Second))
		out[i] = b
	}
	f.t = f.t.Add(benchBatchS * time.Second)
	return out
}

// newBenchEngine returns an engine over the town whose vehicles belong to the licensees.
func newBenchEngine(set *geofences.Set, f *benchFleet) *Engine {
	e := New(profile.Piuma(), set)
	for i, v := range f.vs {
		e.vehicle(v.id).Licensee = fmt.Sprintf("L%d", i%benchLicensees)
	}
	return e
}

// BenchmarkEngine measures rule evaluation (Engine.Apply, Tick and Drain as the judge calls
// them under load) of the benchmark fleet's readings in the benchmark town with 1k, 10k and
// 100k sensitive sites (and with none, for the cost of the other rules). One op is one round:
// one 5 s batch of each of the 50 vehicles, 750 readings. Batches are generated beforehand, in
// pools of 10 minutes, with the timer stopped. Besides the wall-clock rate (readings/s) it
// reports the rate per second of CPU time the process used (readings/cpu-s, GC included), which
// a machine shared with other work disturbs less; run it with -cpu 1.
func BenchmarkEngine(b *testing.B) {
	for _, n := range []int{0, 1000, 10000, 100000} {
		b.Run(fmt.Sprintf("sites=%d", n), func(b *testing.B) {
			set, loops := benchTown(b, n)
			fleet := newBenchFleet(loops)
			e := newBenchEngine(set, fleet)
			const poolRounds = 120
			var pool [][]*wire.Batch
			refill := func() {
				pool = pool[:0]
				for range poolRounds {
					pool = append(pool, fleet.round())
				}
			}
			refill()
			readings, batches, opened := 0, 0, 0
			drain := func() {
				c, err := e.Drain()
				if err != nil {
					b.Fatal(err)
				}
				for _, ev := range c.Events {
					if ev.Kind == EventOpen {
						opened++
					}
				}
			}
			var cpu time.Duration
			cpu0 := cpuTime()
			for i := 0; b.Loop(); i++ {
				if i%poolRounds == 0 && i > 0 {
					b.StopTimer()
					cpu += cpuTime() - cpu0
					refill()
					cpu0 = cpuTime()
					b.StartTimer()
				}
				round := pool[i%poolRounds]
				recv := round[0].SentAt.Add(300 * time.Millisecond)
				e.Tick(recv)
				for _, bt := range round {
					res := e.Apply(bt, recv)
					readings += res.Judged + res.Skipped
					if batches++; batches%benchDrainEvery == 0 {
						drain()
					}
				}
			}
			drain()
			cpu += cpuTime() - cpu0
			b.ReportMetric(float64(readings)/b.Elapsed().Seconds(), "readings/s")
			if cpu > 0 {
				b.ReportMetric(float64(readings)/cpu.Seconds(), "readings/cpu-s")
			}
			b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(readings), "ns/reading")
			b.ReportMetric(float64(opened)*1000/float64(readings), "opens/kreading")
		})
	}
}

// TestBenchmarkFleet checks that the benchmark's stream exercises the rules it is meant to:
// ten minutes of the fleet in the town with 1,000 sites open episodes of speed, sensitive-zone
// sound, boarding sound and noise, and no route deviation (the vehicles follow their routes;
// the GPS jumps are not evidence).
func TestBenchmarkFleet(t *testing.T) {
	set, loops := benchTown(t, 1000)
	fleet := newBenchFleet(loops)
	e := newBenchEngine(set, fleet)
	opened := map[string]int{}
	for range 120 {
		round := fleet.round()
		recv := round[0].SentAt.Add(300 * time.Millisecond)
		e.Tick(recv)
		for _, bt := range round {
			if res := e.Apply(bt, recv); res.Judged != 3*benchBatchS || res.Duplicate {
				t.Fatalf("%s seq %d: %+v", bt.Vehicle, bt.Seq, res)
			}
		}
		c, err := e.Drain()
		if err != nil {
			t.Fatal(err)
		}
		for _, ev := range c.Events {
			if ev.Kind == EventOpen {
				opened[ev.Episode.Rule]++
			}
		}
	}
	t.Logf("episodes opened in 10 min: %v", opened)
	for _, rule := range []string{"speed", "sensitive_zone_sound", "boarding_sound", "noise_limit"} {
		if opened[rule] == 0 {
			t.Errorf("no %s episode", rule)
		}
	}
	for _, rule := range []string{"route_deviation", "hours", "parked_public_road", "telemetry_fault"} {
		if opened[rule] != 0 {
			t.Errorf("%d %s episodes", opened[rule], rule)
		}
	}
	// 10 of the 50 vehicles speed for 30 s in each 8-minute cycle: at least one episode each.
	if opened["speed"] < 10 {
		t.Errorf("%d speed episodes, want ≥ 10", opened["speed"])
	}
}
