package geofences

import (
	"math"
	"math/rand/v2"
	"testing"

	"github.com/paulmach/orb"
	"github.com/paulmach/orb/geo"
)

// sameHits reports whether two hit lists are equal to the last bit.
func sameHits(a, b []Hit) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i].Feature != b[i].Feature || math.Float64bits(a[i].DistanceM) != math.Float64bits(b[i].DistanceM) {
			return false
		}
	}
	return true
}

// TestNearCacheMatchesIndex walks cached searchers through two random sets (small steps,
// jumps, repeated positions, radii that change between searches) and compares every cached
// answer with AppendSensitiveWithin's to the last bit, on boundaries too: sites exactly on
// the search's circle or a rounding step inside or outside it, points on polygon edges and
// vertices with radius 0, a search box equal to the cache's box, points away from the
// sets, NaN and infinite input.
func TestNearCacheMatchesIndex(t *testing.T) {
	r := rand.New(rand.NewPCG(21, 22))
	sets := []*Set{randomSet(t, r, 3000), randomSet(t, r, 300)}
	sites := [][]*Feature{sets[0].sensitive.features, sets[1].sensitive.features}
	randomIn := func() orb.Point { return orb.Point{-40.77 + 0.08*r.Float64(), -20.88 + 0.08*r.Float64()} }

	var caches [8]NearCache
	var (
		n, served, hits, onCircle int
		got, want                 []Hit
	)
	check := func(si int, c *NearCache, p orb.Point, radius float64, what string) {
		t.Helper()
		s := sets[si]
		before, beforeSet := c.box, c.set
		got = s.AppendSensitiveWithinCached(got[:0], p, radius, c)
		want = s.AppendSensitiveWithin(want[:0], p, radius)
		if !sameHits(got, want) {
			t.Fatalf("%s: set %d, %v within %v: cached %v, index %v", what, si, p, radius, got, want)
		}
		n++
		hits += len(got)
		if beforeSet == s && c.box == before && radius >= 0 {
			served++
		}
	}

	pos := make([]orb.Point, len(caches))
	for i := range pos {
		pos[i] = randomIn()
	}
	for step := range 20000 {
		k := step % len(caches)
		c := &caches[k]
		si := 0
		if step%97 == 0 {
			si = 1 // another set: the cache must not answer from the first's sites
		}
		switch x := r.IntN(100); {
		case x < 3:
			pos[k] = randomIn() // a jump, or a GPS glitch
		case x < 8:
			// stays put
		default:
			pos[k] = geo.PointAtBearingAndDistance(pos[k], 360*r.Float64(), 25*r.Float64())
		}
		p := pos[k]
		radius := 200 - 60*r.Float64() // the profile's radius less an HDOP margin
		switch r.IntN(20) {
		case 0:
			radius = 0
		case 1:
			radius = 400 * r.Float64()
		case 2:
			radius = 200
		}
		check(si, c, p, radius, "walk")

		switch r.IntN(10) {
		case 0:
			// A site exactly on the circle, and one rounding step either side of it.
			f := sites[si][r.IntN(len(sites[si]))]
			q := geo.PointAtBearingAndDistance(vertexOf(r, f.Geometry), 360*r.Float64(), 250*r.Float64())
			d := Distance(q, f.Geometry)
			for _, rad := range []float64{d, math.Nextafter(d, 0), math.Nextafter(d, math.Inf(1))} {
				check(si, c, q, rad, "on the circle")
			}
			onCircle++
		case 1:
			// On a polygon's edge or vertex, radius 0 and tiny.
			f := sites[si][r.IntN(len(sites[si]))]
			a := vertexOf(r, f.Geometry)
			b := vertexOf(r, f.Geometry)
			u := float64(r.IntN(3)) / 2 // a vertex or the middle of a chord
			q := orb.Point{a[0] + u*(b[0]-a[0]), a[1] + u*(b[1]-a[1])}
			check(si, c, q, 0, "on an edge")
			check(si, c, q, 1e-9, "on an edge")
		case 2:
			// The search's box equal to the cache's: refill at p, then search with the
			// radius the cache was filled for.
			c.set = nil
			check(si, c, p, 150, "refill")
			check(si, c, p, 150+NearCacheReachM, "box of the cache")
			check(si, c, p, math.Nextafter(150+NearCacheReachM, 1e9), "beyond the box of the cache")
		}
	}
	// Input the cache leaves to the index.
	var c NearCache
	for _, p := range []orb.Point{{math.NaN(), -20.8}, {-40.7, math.Inf(1)}, {0, 89.9999999}, {-40.7, -20.8}} {
		for _, radius := range []float64{math.NaN(), -1, math.Inf(1), 2e6, 0, 200} {
			check(0, &c, p, radius, "edge input")
		}
	}
	if served < n/2 {
		t.Errorf("the cache served %d of %d searches: it would not spare the index anything", served, n)
	}
	t.Logf("%d searches, %d served from the cache, %d hits, %d sites placed on the circle", n, served, hits, onCircle)
}

// vertexOf returns a random vertex of g (g itself for a point).
func vertexOf(r *rand.Rand, g orb.Geometry) orb.Point {
	var pts []orb.Point
	switch g := g.(type) {
	case orb.Point:
		return g
	case orb.Polygon:
		for _, ring := range g {
			pts = append(pts, ring...)
		}
	case orb.MultiPolygon:
		for _, poly := range g {
			for _, ring := range poly {
				pts = append(pts, ring...)
			}
		}
	case orb.LineString:
		pts = g
	}
	return pts[r.IntN(len(pts))]
}

// BenchmarkNearCache compares the sensitive-site search of a vehicle moving 7 m between
// searches (25 km/h, one sound reading a second) with and without a NearCache, in a town of
// 1,000 sites in 36 km² (the engine benchmark's density: 10,000 in 400 km²).
func BenchmarkNearCache(b *testing.B) {
	r := rand.New(rand.NewPCG(31, 32))
	s := randomSet(b, r, 1000)
	walk := make([]orb.Point, 4096)
	walk[0] = orb.Point{-40.73, -20.84}
	for i := 1; i < len(walk); i++ {
		walk[i] = geo.PointAtBearingAndDistance(walk[i-1], 360*r.Float64(), 7)
	}
	var hits []Hit
	b.Run("index", func(b *testing.B) {
		for i := range b.N {
			hits = s.AppendSensitiveWithin(hits[:0], walk[i%len(walk)], 190)
		}
	})
	b.Run("cached", func(b *testing.B) {
		var c NearCache
		for i := range b.N {
			hits = s.AppendSensitiveWithinCached(hits[:0], walk[i%len(walk)], 190, &c)
		}
	})
}
