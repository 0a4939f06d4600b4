// Package sim simulates trenzinhos driving through Piúma: positions along a route, speeds and
// sound levels following a scenario, and the bytes their instruments would send — NMEA 0183
// from the GPS, D8 frames from the tachograph, frames from the sound-level meter — so that tests
// and the local demo drive the bridge through its real serial code.
package sim

import (
	"fmt"
	"math"
	"strings"
	"time"
)

// Point is a WGS84 position.
type Point struct{ Lat, Lon float64 }

// Route is a closed loop of waypoints.
type Route struct {
	Name   string
	Points []Point
	cum    []float64 // cumulative length at each point, metres
}

// NewRoute returns a closed loop through pts.
func NewRoute(name string, pts ...Point) *Route {
	r := &Route{Name: name, Points: pts}
	r.cum = make([]float64, len(pts)+1)
	for i := range pts {
		a, b := pts[i], pts[(i+1)%len(pts)]
		r.cum[i+1] = r.cum[i] + distance(a, b)
	}
	return r
}

// Length of the loop in metres.
func (r *Route) Length() float64 { return r.cum[len(r.cum)-1] }

// At returns the position and course (degrees from north) at a distance along the loop.
func (r *Route) At(d float64) (Point, float64) {
	d = math.Mod(d, r.Length())
	if d < 0 {
		d += r.Length()
	}
	i := 0
	for i < len(r.Points)-1 && r.cum[i+1] <= d {
		i++
	}
	a, b := r.Points[i], r.Points[(i+1)%len(r.Points)]
	seg := r.cum[i+1] - r.cum[i]
	f := 0.0
	if seg > 0 {
		f = (d - r.cum[i]) / seg
	}
	p := Point{a.Lat + (b.Lat-a.Lat)*f, a.Lon + (b.Lon-a.Lon)*f}
	return p, bearing(a, b)
}

const earthRadius = 6371008.8

func distance(a, b Point) float64 {
	p1, p2 := a.Lat*math.Pi/180, b.Lat*math.Pi/180
	dp, dl := p2-p1, (b.Lon-a.Lon)*math.Pi/180
	h := math.Sin(dp/2)*math.Sin(dp/2) + math.Cos(p1)*math.Cos(p2)*math.Sin(dl/2)*math.Sin(dl/2)
	return 2 * earthRadius * math.Asin(math.Min(1, math.Sqrt(h)))
}

func bearing(a, b Point) float64 {
	p1, p2 := a.Lat*math.Pi/180, b.Lat*math.Pi/180
	dl := (b.Lon - a.Lon) * math.Pi / 180
	y := math.Sin(dl) * math.Cos(p2)
	x := math.Cos(p1)*math.Sin(p2) - math.Sin(p1)*math.Cos(p2)*math.Cos(dl)
	deg := math.Atan2(y, x) * 180 / math.Pi
	return math.Mod(deg+360, 360)
}

// PiumaLoop is a plausible loop of the town centre and the beach avenue of Piúma-ES, about 4.1 km.
// Sample data: not a surveyed route.
func PiumaLoop() *Route {
	return NewRoute("orla-centro",
		Point{-20.8330, -40.7270}, Point{-20.8365, -40.7290}, Point{-20.8400, -40.7315},
		Point{-20.8440, -40.7345}, Point{-20.8470, -40.7370}, Point{-20.8455, -40.7395},
		Point{-20.8410, -40.7360}, Point{-20.8370, -40.7330}, Point{-20.8340, -40.7300},
	)
}

// Segment is a stretch of a scenario: a speed and a sound level held for a duration, with the
// driver's service switch on unless ServiceOff, and the passenger door closed unless DoorOpen.
type Segment struct {
	Duration   time.Duration
	SpeedKmh   float64
	LAeqDB     float64
	ServiceOff bool
	DoorOpen   bool
}

// Scenario is a list of segments, played in a loop.
type Scenario []Segment

// at returns the segment in force at elapsed time e.
func (s Scenario) at(e time.Duration) Segment {
	var total time.Duration
	for _, seg := range s {
		total += seg.Duration
	}
	if total <= 0 {
		return Segment{}
	}
	e %= total
	for _, seg := range s {
		if e < seg.Duration {
			return seg
		}
		e -= seg.Duration
	}
	return s[len(s)-1]
}

// Cruise is a law-abiding scenario: 20 km/h with music at 65 dB, a stop at a boarding point.
func Cruise() Scenario {
	return Scenario{
		{Duration: 3 * time.Minute, SpeedKmh: 20, LAeqDB: 65},
		{Duration: 60 * time.Second, SpeedKmh: 0, LAeqDB: 62},
		{Duration: 2 * time.Minute, SpeedKmh: 24, LAeqDB: 66},
	}
}

// Speeder is Cruise with 30 s at 45 km/h every few minutes.
func Speeder() Scenario {
	return Scenario{
		{Duration: 2 * time.Minute, SpeedKmh: 20, LAeqDB: 65},
		{Duration: 30 * time.Second, SpeedKmh: 45, LAeqDB: 72},
		{Duration: 90 * time.Second, SpeedKmh: 22, LAeqDB: 65},
		{Duration: 60 * time.Second, SpeedKmh: 0, LAeqDB: 62},
	}
}

// Vehicle is one simulated vehicle.
type Vehicle struct {
	ID       string
	Route    *Route
	Scenario Scenario
	// Offset is where on the route the vehicle starts, metres.
	Offset float64
	// Script, when set, drives the vehicle instead of Route and Scenario.
	Script *Script

	elapsed time.Duration
	dist    float64
}

// State is what the instruments measure at one instant.
type State struct {
	T        time.Time
	Lat, Lon float64
	Course   float64
	SpeedKmh float64
	LAeqDB   float64
	// OdometerKm is the distance driven since the start, km.
	OdometerKm float64
	// TachoSilent: the tachograph sends nothing.
	TachoSilent bool
	// ServiceOn is the driver's service switch; DoorOpen the passenger door.
	ServiceOn, DoorOpen bool
}

// Step advances the vehicle by dt and returns its state at device time t.
func (v *Vehicle) Step(t time.Time, dt time.Duration) State {
	if v.Script != nil {
		st := v.Script.at(v.elapsed)
		v.elapsed += dt
		v.dist += st.SpeedKmh / 3.6 * dt.Seconds()
		st.T, st.OdometerKm = t, 10000+v.dist/1000
		return st
	}
	seg := v.Scenario.at(v.elapsed)
	v.elapsed += dt
	v.dist += seg.SpeedKmh / 3.6 * dt.Seconds()
	p, course := v.Route.At(v.Offset + v.dist)
	return State{T: t, Lat: p.Lat, Lon: p.Lon, Course: course, SpeedKmh: seg.SpeedKmh, LAeqDB: seg.LAeqDB, OdometerKm: 10000 + v.dist/1000,
		ServiceOn: !seg.ServiceOff, DoorOpen: seg.DoorOpen}
}

// InputsAtStart are the service switch and the passenger door at the start, before any Step.
func (v *Vehicle) InputsAtStart() (serviceOn, doorOpen bool) {
	if v.Script != nil {
		st := v.Script.at(v.elapsed)
		return st.ServiceOn, st.DoorOpen
	}
	seg := v.Scenario.at(v.elapsed)
	return !seg.ServiceOff, seg.DoorOpen
}

// NMEA returns the RMC and GGA sentences of a state, CR LF terminated, with the GP talker.
func NMEA(s State) string {
	t := s.T.UTC()
	hms := fmt.Sprintf("%02d%02d%06.3f", t.Hour(), t.Minute(), float64(t.Second())+float64(t.Nanosecond())/1e9)
	lat, ns := coord(s.Lat, 2, "N", "S")
	lon, ew := coord(s.Lon, 3, "E", "W")
	knots := s.SpeedKmh / 1.852
	rmc := fmt.Sprintf("GPRMC,%s,A,%s,%s,%s,%s,%.4f,%.1f,%s,,,A", hms, lat, ns, lon, ew, knots, s.Course, t.Format("020106"))
	gga := fmt.Sprintf("GPGGA,%s,%s,%s,%s,%s,1,09,0.9,12.0,M,-6.0,M,,", hms, lat, ns, lon, ew)
	return sentence(rmc) + sentence(gga)
}

// coord formats a coordinate as NMEA ddmm.mmmmmm with the hemisphere.
func coord(v float64, degDigits int, pos, neg string) (string, string) {
	h := pos
	if v < 0 {
		h, v = neg, -v
	}
	deg := math.Floor(v)
	minutes := (v - deg) * 60
	return fmt.Sprintf("%0*d%09.6f", degDigits, int(deg), minutes), h
}

// sentence adds the $, the checksum and CR LF.
func sentence(body string) string {
	var cs byte
	for i := 0; i < len(body); i++ {
		cs ^= body[i]
	}
	var b strings.Builder
	b.WriteByte('$')
	b.WriteString(body)
	fmt.Fprintf(&b, "*%02X\r\n", cs)
	return b.String()
}
