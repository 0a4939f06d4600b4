package geofences

import (
	"math"

	"github.com/paulmach/orb"
)

// WGS 84 ellipsoid.
const (
	wgs84A  = 6378137.0
	wgs84F  = 1 / 298.257223563
	wgs84E2 = wgs84F * (2 - wgs84F)
)

// A frame is a local tangent-plane (equirectangular) projection centred on
// a query point: x metres east and y metres north of it. Its scales are the
// WGS 84 radii of curvature at the centre's latitude, so the distance from
// the centre to a point a few hundred metres away is within millimetres of
// the geodesic distance (the test checks it against Vincenty's formulae).
// The projection is affine in longitude and latitude, so segments and
// point-in-polygon tests in degrees keep their meaning in metres.
type frame struct {
	lon0, lat0 float64
	kx, ky     float64 // metres per degree of longitude and latitude
}

func newFrame(p orb.Point) frame {
	phi := p[1] * math.Pi / 180
	sin, cos := math.Sincos(phi)
	w := 1 - wgs84E2*sin*sin
	n := wgs84A / math.Sqrt(w)                       // prime vertical radius
	m := wgs84A * (1 - wgs84E2) / (w * math.Sqrt(w)) // meridional radius
	return frame{
		lon0: p[0], lat0: p[1],
		kx: n * cos * math.Pi / 180,
		ky: m * math.Pi / 180,
	}
}

func (f *frame) xy(q orb.Point) (x, y float64) {
	return (q[0] - f.lon0) * f.kx, (q[1] - f.lat0) * f.ky
}

// box returns the bound, in degrees, of the points within r metres of the
// frame's centre.
func (f *frame) box(r float64) orb.Bound {
	dx, dy := r/f.kx, r/f.ky
	if math.IsInf(dx, 0) || math.IsNaN(dx) || dx > 360 {
		dx = 360 // at a pole every longitude is near
	}
	return orb.Bound{
		Min: orb.Point{f.lon0 - dx, f.lat0 - dy},
		Max: orb.Point{f.lon0 + dx, f.lat0 + dy},
	}
}

// boundDist2 returns the squared distance in metres from the centre to
// the nearest point of b (0 inside it), a lower bound of the distance to
// any geometry within b.
func (f *frame) boundDist2(b orb.Bound) float64 {
	x := max(b.Min[0]-f.lon0, f.lon0-b.Max[0], 0) * f.kx
	y := max(b.Min[1]-f.lat0, f.lat0-b.Max[1], 0) * f.ky
	return x*x + y*y
}

// pointDist returns the distance in metres from the centre to q.
func (f *frame) pointDist(q orb.Point) float64 {
	x, y := f.xy(q)
	return math.Sqrt(x*x + y*y)
}

// segDist2 returns the squared distance from the origin to the segment
// from (ax, ay) to (bx, by).
func segDist2(ax, ay, bx, by float64) float64 {
	dx, dy := bx-ax, by-ay
	if l2 := dx*dx + dy*dy; l2 > 0 {
		// Project the origin onto the segment.
		t := -(ax*dx + ay*dy) / l2
		switch {
		case t >= 1:
			ax, ay = bx, by
		case t > 0:
			ax, ay = ax+t*dx, ay+t*dy
		}
	}
	return ax*ax + ay*ay
}

// lineDist returns the distance from the centre to the polyline ls.
func (f *frame) lineDist(ls []orb.Point) float64 {
	if len(ls) == 0 {
		return math.Inf(1)
	}
	ax, ay := f.xy(ls[0])
	d2 := ax*ax + ay*ay
	for _, q := range ls[1:] {
		bx, by := f.xy(q)
		d2 = min(d2, segDist2(ax, ay, bx, by))
		ax, ay = bx, by
	}
	return math.Sqrt(d2)
}

// lineDistWithin is lineDist for a caller that needs the distance only
// when it is at most r (at most 10⁷ m, with a finite centre): it returns
// lineDist(ls) when that is at most r, and otherwise some value above r.
// It skips the squared distance of every segment whose ends both lie
// beyond r + 1 µm (and a relative 10⁻⁹) on one side of an axis: the point
// segDist2 takes on such a segment lies beyond r there too, its rounding
// (relative 2⁻⁵³ of coordinates below 10⁸ m) far below the micrometre, so
// the segment's squared distance exceeds r² and cannot be the minimum when
// the minimum is at most r².
func (f *frame) lineDistWithin(ls []orb.Point, r float64) float64 {
	if len(ls) == 0 {
		return math.Inf(1)
	}
	far := r*(1+1e-9) + 1e-6
	ax, ay := f.xy(ls[0])
	d2 := ax*ax + ay*ay
	for _, q := range ls[1:] {
		bx, by := f.xy(q)
		if !(ax > far && bx > far || ax < -far && bx < -far || ay > far && by > far || ay < -far && by < -far) {
			d2 = min(d2, segDist2(ax, ay, bx, by))
		}
		ax, ay = bx, by
	}
	return math.Sqrt(d2)
}

// ringDist returns the distance from the centre to the ring's edges and
// whether the centre is inside the ring, by the parity of the crossings of
// a ray to +x. An open ring is closed implicitly.
func (f *frame) ringDist(r []orb.Point) (d float64, inside bool) {
	if len(r) == 0 {
		return math.Inf(1), false
	}
	ax, ay := f.xy(r[len(r)-1])
	d2 := math.Inf(1)
	for _, q := range r {
		bx, by := f.xy(q)
		d2 = min(d2, segDist2(ax, ay, bx, by))
		if (ay > 0) != (by > 0) && ax+(bx-ax)*(-ay)/(by-ay) > 0 {
			inside = !inside
		}
		ax, ay = bx, by
	}
	return math.Sqrt(d2), inside
}

// polygonDist returns the distance from the centre to the polygon, 0 inside
// or on an edge.
func (f *frame) polygonDist(p orb.Polygon) float64 {
	d := math.Inf(1)
	inside := false
	for i, r := range p {
		rd, in := f.ringDist(r)
		if rd == 0 {
			return 0
		}
		d = min(d, rd)
		switch {
		case i == 0:
			inside = in
		case in:
			inside = false // in a hole
		}
	}
	if inside {
		return 0
	}
	return d
}

// dist returns the distance in metres from the frame's centre to g: to the
// nearest vertex or edge, and 0 inside a polygon or on its edge (a point
// in a hole is outside, at the distance to the hole's edge).
func (f *frame) dist(g orb.Geometry) float64 {
	switch g := g.(type) {
	case orb.Point:
		return f.pointDist(g)
	case orb.MultiPoint:
		d := math.Inf(1)
		for _, q := range g {
			d = min(d, f.pointDist(q))
		}
		return d
	case orb.LineString:
		return f.lineDist(g)
	case orb.MultiLineString:
		d := math.Inf(1)
		for _, ls := range g {
			d = min(d, f.lineDist(ls))
		}
		return d
	case orb.Ring:
		return f.polygonDist(orb.Polygon{g})
	case orb.Polygon:
		return f.polygonDist(g)
	case orb.MultiPolygon:
		d := math.Inf(1)
		for _, poly := range g {
			if d = min(d, f.polygonDist(poly)); d == 0 {
				break
			}
		}
		return d
	case orb.Bound:
		return f.polygonDist(g.ToPolygon())
	case orb.Collection:
		d := math.Inf(1)
		for _, h := range g {
			d = min(d, f.dist(h))
		}
		return d
	}
	return math.Inf(1)
}

// contains reports whether the polygon or multipolygon g contains the
// frame's centre, edges included: whether f.dist(g) == 0.
func (f *frame) contains(g orb.Geometry) bool {
	switch g := g.(type) {
	case orb.Polygon:
		if f.finite() {
			return f.polygonContains(g)
		}
		return f.dist(g) == 0
	case orb.MultiPolygon:
		if f.finite() {
			for _, p := range g {
				if f.polygonContains(p) {
					return true
				}
			}
			return false
		}
		return f.dist(g) == 0
	case orb.Ring, orb.Bound:
		return f.dist(g) == 0
	}
	return false
}

// finite reports whether the frame's centre has finite coordinates. The
// vertices of a Set's geometries are finite (checkGeometry), so then every
// projected coordinate is finite too and no distance is NaN.
func (f *frame) finite() bool {
	return !math.IsNaN(f.lon0) && !math.IsInf(f.lon0, 0) && !math.IsNaN(f.lat0) && !math.IsInf(f.lat0, 0)
}

// polygonContains is f.polygonDist(p) == 0 computed with fewer squared
// distances, for a finite centre and finite vertices: the centre is on an
// edge when some edge's squared distance is 0, which no edge can give whose
// ends both lie well on one side of an axis through the centre
// (mayTouch), and otherwise inside when the crossings of ringDist say so.
// polygonDist returns 0 exactly then (its NaN cases need a coordinate that
// is not finite).
func (f *frame) polygonContains(p orb.Polygon) bool {
	inside := false
	for i, r := range p {
		if len(r) == 0 {
			if i == 0 {
				inside = false
			}
			continue
		}
		ax, ay := f.xy(r[len(r)-1])
		in := false
		for _, q := range r {
			bx, by := f.xy(q)
			if mayTouch(ax, bx) && mayTouch(ay, by) && segDist2(ax, ay, bx, by) == 0 {
				return true // on an edge
			}
			if (ay > 0) != (by > 0) && ax+(bx-ax)*(-ay)/(by-ay) > 0 {
				in = !in
			}
			ax, ay = bx, by
		}
		switch {
		case i == 0:
			inside = in
		case in:
			inside = false // in a hole
		}
	}
	return inside
}

// mayTouch reports whether a segment whose ends have the coordinates a and
// b along one axis may pass through 0 there as segDist2 computes it. When
// both lie beyond a micrometre on one side (and within 10⁹ m), the
// coordinate segDist2 takes — an end, or a + t·(b − a) with 0 < t < 1 — is,
// with its rounding errors (relative 2⁻⁵³ of at most 10⁹ m), still beyond
// half a micrometre, and its square does not underflow: the squared
// distance is positive.
func mayTouch(a, b float64) bool {
	const near, far = 1e-6, 1e9
	if a >= near && b >= near && a <= far && b <= far {
		return false
	}
	if a <= -near && b <= -near && a >= -far && b >= -far {
		return false
	}
	return true
}

// Distance returns the distance in metres from p to g, measured on the
// WGS 84 ellipsoid in a tangent plane at p: to the nearest vertex or edge
// of g, and 0 when p is inside a polygon. Within a few hundred metres it
// agrees with the geodesic distance to about a millimetre; the error grows
// with the square of the distance (about 0.05 m at 2 km and 5 m at 20 km
// near Piúma). Geometries must not cross the antimeridian. An
// empty geometry is at +Inf.
func Distance(p orb.Point, g orb.Geometry) float64 {
	f := newFrame(p)
	return f.dist(g)
}
