package geofences

import (
	"math"
	"math/rand/v2"
	"testing"

	"github.com/paulmach/orb"
	"github.com/paulmach/orb/geo"
	"github.com/paulmach/orb/planar"
)

// vincentyInverse returns the geodesic distance in metres between p and q
// on the WGS 84 ellipsoid by Vincenty's inverse formula (1975), iterated to
// 1e-12 rad: the reference the tangent-plane distances are checked
// against.
func vincentyInverse(p, q orb.Point) float64 {
	const (
		a = wgs84A
		f = wgs84F
		b = a * (1 - f)
	)
	rad := math.Pi / 180
	l := (q[0] - p[0]) * rad
	u1 := math.Atan((1 - f) * math.Tan(p[1]*rad))
	u2 := math.Atan((1 - f) * math.Tan(q[1]*rad))
	sinU1, cosU1 := math.Sincos(u1)
	sinU2, cosU2 := math.Sincos(u2)

	lambda := l
	var sinSigma, cosSigma, sigma, cos2Alpha, cos2SigmaM float64
	for range 200 {
		sinL, cosL := math.Sincos(lambda)
		sinSigma = math.Hypot(cosU2*sinL, cosU1*sinU2-sinU1*cosU2*cosL)
		if sinSigma == 0 {
			return 0 // coincident points
		}
		cosSigma = sinU1*sinU2 + cosU1*cosU2*cosL
		sigma = math.Atan2(sinSigma, cosSigma)
		sinAlpha := cosU1 * cosU2 * sinL / sinSigma
		cos2Alpha = 1 - sinAlpha*sinAlpha
		cos2SigmaM = 0 // equatorial line
		if cos2Alpha != 0 {
			cos2SigmaM = cosSigma - 2*sinU1*sinU2/cos2Alpha
		}
		c := f / 16 * cos2Alpha * (4 + f*(4-3*cos2Alpha))
		prev := lambda
		lambda = l + (1-c)*f*sinAlpha*(sigma+c*sinSigma*(cos2SigmaM+c*cosSigma*(-1+2*cos2SigmaM*cos2SigmaM)))
		if math.Abs(lambda-prev) < 1e-12 {
			break
		}
	}
	uSq := cos2Alpha * (a*a - b*b) / (b * b)
	bigA := 1 + uSq/16384*(4096+uSq*(-768+uSq*(320-175*uSq)))
	bigB := uSq / 1024 * (256 + uSq*(-128+uSq*(74-47*uSq)))
	deltaSigma := bigB * sinSigma * (cos2SigmaM + bigB/4*(cosSigma*(-1+2*cos2SigmaM*cos2SigmaM)-
		bigB/6*cos2SigmaM*(-3+4*sinSigma*sinSigma)*(-3+4*cos2SigmaM*cos2SigmaM)))
	return b * bigA * (sigma - deltaSigma)
}

// vincentySegment returns the geodesic distance from p to the nearest point
// of the segment ab, parametrised linearly in degrees as the package does,
// by golden-section search (the distance is unimodal along a short
// segment).
func vincentySegment(p, a, b orb.Point) float64 {
	at := func(t float64) float64 {
		return vincentyInverse(p, orb.Point{a[0] + t*(b[0]-a[0]), a[1] + t*(b[1]-a[1])})
	}
	lo, hi := 0.0, 1.0
	g := (math.Sqrt(5) - 1) / 2
	x1, x2 := hi-g*(hi-lo), lo+g*(hi-lo)
	f1, f2 := at(x1), at(x2)
	for range 80 {
		if f1 < f2 {
			hi, x2, f2 = x2, x1, f1
			x1 = hi - g*(hi-lo)
			f1 = at(x1)
		} else {
			lo, x1, f1 = x1, x2, f2
			x2 = lo + g*(hi-lo)
			f2 = at(x2)
		}
	}
	return min(f1, f2, at(0), at(1))
}

func TestVincentyReference(t *testing.T) {
	// Vincenty's own test line, Flinders Peak to Buninyong: 54 972.271 m.
	d := vincentyInverse(
		orb.Point{144 + 25/60.0 + 29.52440/3600, -(37 + 57/60.0 + 3.72030/3600)},
		orb.Point{143 + 55/60.0 + 35.38390/3600, -(37 + 39/60.0 + 10.15610/3600)})
	if math.Abs(d-54972.271) > 0.001 {
		t.Errorf("Flinders Peak to Buninyong = %.4f m, want 54972.271", d)
	}
	// A degree of latitude at the equator, 110 574.389 m (WGS 84).
	if d := vincentyInverse(orb.Point{0, 0}, orb.Point{0, 1}); math.Abs(d-110574.389) > 0.01 {
		t.Errorf("one degree of latitude at the equator = %.4f m", d)
	}
}

// piumaPoint returns a random point in a box around Piúma.
func piumaPoint(r *rand.Rand) orb.Point {
	return orb.Point{-40.78 + 0.1*r.Float64(), -20.88 + 0.08*r.Float64()}
}

// TestDistancePointGeodesic compares point-to-point distances of 150-250 m
// at random bearings with Vincenty's.
func TestDistancePointGeodesic(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 2))
	worst := 0.0
	for range 5000 {
		p := piumaPoint(r)
		q := geo.PointAtBearingAndDistance(p, 360*r.Float64(), 150+100*r.Float64())
		got, want := Distance(p, q), vincentyInverse(p, q)
		worst = max(worst, math.Abs(got-want))
		if math.Abs(got-want) > 1 {
			t.Fatalf("Distance(%v, %v) = %.4f m, geodesic %.4f m", p, q, got, want)
		}
	}
	t.Logf("point to point, 150-250 m: worst error %.4f m", worst)
	if worst > 0.05 {
		t.Errorf("worst error %.4f m, expected millimetres", worst)
	}
}

// TestDistanceOtherLatitudes checks the same at other latitudes, where the
// ellipsoid's radii of curvature differ more.
func TestDistanceOtherLatitudes(t *testing.T) {
	r := rand.New(rand.NewPCG(3, 4))
	for _, lat := range []float64{-60, -33.9, 0, 23.4, 45, 70} {
		worst := 0.0
		for range 500 {
			p := orb.Point{-50 + r.Float64(), lat + r.Float64()*0.1}
			q := geo.PointAtBearingAndDistance(p, 360*r.Float64(), 150+100*r.Float64())
			worst = max(worst, math.Abs(Distance(p, q)-vincentyInverse(p, q)))
		}
		if worst > 0.05 {
			t.Errorf("latitude %v: worst error %.4f m", lat, worst)
		}
	}
}

// TestDistanceLongRange measures the error growth with distance, which the
// documentation of Distance states.
func TestDistanceLongRange(t *testing.T) {
	r := rand.New(rand.NewPCG(5, 6))
	for _, tt := range []struct{ dist, maxErr float64 }{{1000, 0.05}, {2000, 0.2}, {20000, 10}} {
		worst := 0.0
		for range 1000 {
			p := piumaPoint(r)
			q := geo.PointAtBearingAndDistance(p, 360*r.Float64(), tt.dist)
			worst = max(worst, math.Abs(Distance(p, q)-vincentyInverse(p, q)))
		}
		t.Logf("%6.0f m: worst error %.4f m", tt.dist, worst)
		if worst > tt.maxErr {
			t.Errorf("%.0f m: worst error %.4f m, documented below %.2f m", tt.dist, worst, tt.maxErr)
		}
	}
}

// TestDistanceSegmentGeodesic compares distances to segments and polygons
// whose nearest edge is 150-250 m away, at random bearings.
func TestDistanceSegmentGeodesic(t *testing.T) {
	r := rand.New(rand.NewPCG(7, 8))
	worst := 0.0
	for range 1000 {
		p := piumaPoint(r)
		// The foot of the perpendicular, 150-250 m away at a random
		// bearing, and a segment through it at a random angle whose
		// ends may lie beyond the foot (then the nearest point is an end).
		bearing := 360 * r.Float64()
		foot := geo.PointAtBearingAndDistance(p, bearing, 150+100*r.Float64())
		dir := bearing + 90 + (r.Float64()-0.5)*60
		a := geo.PointAtBearingAndDistance(foot, dir, -300*r.Float64()+100)
		b := geo.PointAtBearingAndDistance(foot, dir, 300*r.Float64()+20)
		got := Distance(p, orb.LineString{a, b})
		want := vincentySegment(p, a, b)
		worst = max(worst, math.Abs(got-want))
		if math.Abs(got-want) > 1 {
			t.Fatalf("Distance(%v, segment %v-%v) = %.4f m, geodesic %.4f m", p, a, b, got, want)
		}
	}
	t.Logf("point to segment: worst error %.4f m", worst)
}

func TestDistancePolygonGeodesic(t *testing.T) {
	r := rand.New(rand.NewPCG(9, 10))
	worst := 0.0
	inside := 0
	for range 300 {
		p := piumaPoint(r)
		// A random star-shaped polygon around a centre 100-400 m away.
		c := geo.PointAtBearingAndDistance(p, 360*r.Float64(), 100+300*r.Float64())
		n := 3 + r.IntN(8)
		ring := make(orb.Ring, 0, n+1)
		start := 360 * r.Float64()
		for i := range n {
			ring = append(ring, geo.PointAtBearingAndDistance(c, start+float64(i)*360/float64(n), 30+200*r.Float64()))
		}
		ring = append(ring, ring[0])
		poly := orb.Polygon{ring}

		got := Distance(p, poly)
		want := math.Inf(1)
		for i := 1; i < len(ring); i++ {
			want = min(want, vincentySegment(p, ring[i-1], ring[i]))
		}
		if (got == 0) != planar.PolygonContains(poly, p) {
			t.Fatalf("Distance(%v, polygon) = %v, but planar.PolygonContains = %v", p, got, !(got == 0))
		}
		if got == 0 {
			inside++
			continue
		}
		worst = max(worst, math.Abs(got-want))
		if math.Abs(got-want) > 1 {
			t.Fatalf("Distance(%v, polygon) = %.4f m, geodesic %.4f m", p, got, want)
		}
		if mp := (orb.MultiPolygon{poly}); Distance(p, mp) != got {
			t.Fatalf("MultiPolygon distance %v != Polygon distance %v", Distance(p, mp), got)
		}
	}
	t.Logf("point to polygon: worst error %.4f m (%d points inside)", worst, inside)
}

func TestDistanceInsideAndHoles(t *testing.T) {
	c := orb.Point{-40.7292, -20.8367}
	outer, hole := square(c, 100)[0], square(c, 20)[0]
	if d := Distance(c, orb.Polygon{outer}); d != 0 {
		t.Errorf("inside: %v, want 0", d)
	}
	// In the hole: 20 m to the hole's edge.
	if d := Distance(c, orb.Polygon{outer, hole}); math.Abs(d-20) > 0.01 {
		t.Errorf("in a hole: %v, want 20", d)
	}
	// Between the hole and the outer ring: inside.
	q := geo.PointAtBearingAndDistance(c, 0, 50)
	if d := Distance(q, orb.Polygon{outer, hole}); d != 0 {
		t.Errorf("between hole and outer ring: %v, want 0", d)
	}
	// On the edge.
	fr := newFrame(c)
	e := orb.Point{c[0] + 100/fr.kx, c[1]}
	if d := Distance(e, orb.Polygon{outer}); d != 0 {
		t.Errorf("on the edge: %v, want 0", d)
	}
	// Outside, 50 m east of the east edge.
	o := orb.Point{c[0] + 150/fr.kx, c[1]}
	if d := Distance(o, orb.Polygon{outer}); math.Abs(d-50) > 0.01 {
		t.Errorf("50 m east: %v", d)
	}
	if d := Distance(c, orb.LineString{}); !math.IsInf(d, 1) {
		t.Errorf("empty line: %v, want +Inf", d)
	}
	if d := Distance(c, c); d != 0 {
		t.Errorf("same point: %v", d)
	}
}

// TestContainsMatchesDist checks the containment test against its definition, f.dist(g) == 0,
// on random polygons with holes and multipolygons, at random points near them and at points on
// their vertices and edges (where rounding decides), including tiny and degenerate rings.
func TestContainsMatchesDist(t *testing.T) {
	rnd := rand.New(rand.NewPCG(7, 11))
	centre := orb.Point{-40.73, -20.84}
	ring := func(cx, cy, r float64, k int) orb.Ring {
		rg := make(orb.Ring, 0, k+1)
		for i := range k {
			a := 2 * math.Pi * (float64(i) + 0.3*rnd.Float64()) / float64(k)
			rr := r * (0.3 + 0.7*rnd.Float64())
			rg = append(rg, orb.Point{cx + rr*math.Cos(a), cy + rr*math.Sin(a)})
		}
		if rnd.IntN(10) == 0 {
			rg = append(rg, rg[len(rg)-1]) // a repeated vertex: a degenerate edge
		}
		return append(rg, rg[0])
	}
	checked, inside, onEdge := 0, 0, 0
	for range 3000 {
		r := []float64{1e-7, 1e-4, 1e-3, 1e-2}[rnd.IntN(4)] // degrees: from a centimetre to a kilometre
		cx, cy := centre[0]+0.05*rnd.NormFloat64(), centre[1]+0.05*rnd.NormFloat64()
		poly := orb.Polygon{ring(cx, cy, r, 3+rnd.IntN(12))}
		if rnd.IntN(3) == 0 {
			poly = append(poly, ring(cx, cy, r/3, 3+rnd.IntN(5))) // a hole
		}
		var g orb.Geometry = poly
		if rnd.IntN(4) == 0 {
			g = orb.MultiPolygon{poly, {ring(cx+2*r, cy, r, 4)}}
		}
		var pts []orb.Point
		for range 10 {
			pts = append(pts, orb.Point{cx + 1.5*r*(2*rnd.Float64()-1), cy + 1.5*r*(2*rnd.Float64()-1)})
		}
		for _, rg := range poly {
			for i := 0; i+1 < len(rg); i++ {
				a, b := rg[i], rg[i+1]
				u := rnd.Float64()
				pts = append(pts, a, orb.Point{a[0] + u*(b[0]-a[0]), a[1] + u*(b[1]-a[1])},
					orb.Point{(a[0] + b[0]) / 2, (a[1] + b[1]) / 2}, orb.Point{a[0], b[1]})
			}
		}
		for _, p := range pts {
			fr := newFrame(p)
			want := fr.dist(g) == 0
			if got := fr.contains(g); got != want {
				t.Fatalf("%v in %v: contains %v, dist %v", p, g, got, fr.dist(g))
			}
			checked++
			if want {
				inside++
				if fr.polygonDist(poly) == 0 && func() bool {
					for _, rg := range poly {
						if d, _ := fr.ringDist(rg); d == 0 {
							return true
						}
					}
					return false
				}() {
					onEdge++
				}
			}
		}
	}
	t.Logf("%d points, %d contained, %d of them on an edge", checked, inside, onEdge)
	if onEdge == 0 || inside == checked {
		t.Errorf("the points do not exercise the edges (%d on an edge, %d of %d inside)", onEdge, inside, checked)
	}
}

// TestLineDistWithinMatchesLineDist checks lineDistWithin against its definition on random
// polylines (long loops and short streets, with repeated vertices) and radii: the same bits as
// lineDist when that is within the radius, a value beyond the radius otherwise.
func TestLineDistWithinMatchesLineDist(t *testing.T) {
	rnd := rand.New(rand.NewPCG(13, 17))
	within, beyond := 0, 0
	for range 20000 {
		scale := []float64{1e-6, 1e-4, 1e-2, 0.05}[rnd.IntN(4)] // degrees
		cx, cy := -40.73+0.05*rnd.NormFloat64(), -20.84+0.05*rnd.NormFloat64()
		ls := make([]orb.Point, 2+rnd.IntN(30))
		for i := range ls {
			ls[i] = orb.Point{cx + scale*rnd.NormFloat64(), cy + scale*rnd.NormFloat64()}
			if i > 0 && rnd.IntN(10) == 0 {
				ls[i] = ls[i-1]
			}
		}
		p := orb.Point{cx + scale*rnd.NormFloat64(), cy + scale*rnd.NormFloat64()}
		if rnd.IntN(5) == 0 {
			a := ls[rnd.IntN(len(ls)-1)]
			p = a // on a vertex
		}
		fr := newFrame(p)
		want := fr.lineDist(ls)
		r := want * []float64{0, 0.5, 0.999999, 1, 1, 1.000001, 2}[rnd.IntN(7)]
		if rnd.IntN(10) == 0 {
			r = 500
		}
		got := fr.lineDistWithin(ls, r)
		switch {
		case want <= r:
			within++
			if math.Float64bits(got) != math.Float64bits(want) {
				t.Fatalf("%v to %v within %v: %v, lineDist %v", p, ls, r, got, want)
			}
		default:
			beyond++
			if !(got > r) {
				t.Fatalf("%v to %v beyond %v: %v, lineDist %v", p, ls, r, got, want)
			}
		}
	}
	t.Logf("%d within the radius, %d beyond", within, beyond)
}
