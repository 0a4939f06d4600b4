package geofences

import (
	"fmt"
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/paulmach/orb"
)

// TestIndexMatchesBruteForceAtEdges compares the grid's lookups with a
// scan of every feature (as TestIndexMatchesBruteForce does) at the
// density of the engine's benchmark, on random points, on points at exactly the radius of a
// site and a hair inside and outside it, and on points on, next to and
// at the vertices of polygon edges: they must agree exactly, distances
// included.
func TestIndexMatchesBruteForceAtEdges(t *testing.T) {
	r := rand.New(rand.NewPCG(20, 26))
	box := func() orb.Point { return orb.Point{-40.83 + 0.19*r.Float64(), -20.93 + 0.18*r.Float64()} }
	fc := collection()
	var polys []orb.Polygon
	for i := range 3000 {
		var g orb.Geometry = box()
		if i%2 == 1 {
			p := randomPolygon(r, box(), 5, 60)
			polys = append(polys, p)
			g = p
		}
		fc.Append(feature(g, "id", fmt.Sprintf("s%04d", i), "kind", "sensitive",
			"category", "school", "name", "x", "source", "test"))
	}
	for i := range 300 { // overlapping zones, from blocks to districts
		p := randomPolygon(r, box(), 50, 50+3000*r.Float64())
		polys = append(polys, p)
		fc.Append(feature(p, "id", fmt.Sprintf("z%03d", i), "kind", "nbr_zone", "area", "mixed_commercial"))
	}
	s, err := NewSet(File{Name: "diff", Collection: fc})
	if err != nil {
		t.Fatal(err)
	}
	sites := s.OfKind(KindSensitive)
	zones := s.OfKind(KindNBRZone)

	bruteWithin := func(p orb.Point, radius float64) []Hit {
		fr := newFrame(p)
		var hits []Hit
		for _, f := range sites {
			if d := fr.dist(f.Geometry); d <= radius {
				hits = append(hits, Hit{f, d})
			}
		}
		sortHits(hits)
		return hits
	}
	bruteZones := func(p orb.Point) []*Feature {
		fr := newFrame(p)
		var zs []*Feature
		for _, f := range zones {
			if fr.contains(f.Geometry) {
				zs = append(zs, f)
			}
		}
		slices.SortFunc(zs, bySmallestArea)
		return zs
	}
	var buf []Hit
	check := func(p orb.Point, radius float64) {
		t.Helper()
		want := bruteWithin(p, radius)
		if got := s.SensitiveWithin(p, radius); !slices.Equal(got, want) {
			t.Fatalf("SensitiveWithin(%v, %v) = %v, want %v", p, radius, got, want)
		}
		buf = s.AppendSensitiveWithin(buf[:0], p, radius)
		if !slices.Equal(buf, want) {
			t.Fatalf("AppendSensitiveWithin(%v, %v) = %v, want %v", p, radius, buf, want)
		}
		wantZ := bruteZones(p)
		if got := s.ZonesAt(p); !slices.Equal(got, wantZ) {
			t.Fatalf("ZonesAt(%v) = %v, want %v", p, got, wantZ)
		}
		z, ok := s.ZoneAt(p)
		if ok != (len(wantZ) > 0) || ok && z != wantZ[0] {
			t.Fatalf("ZoneAt(%v) = %v, %v, want %v", p, z, ok, wantZ)
		}
	}
	nudge := func(p orb.Point, m float64) orb.Point {
		fr := newFrame(p)
		return orb.Point{p[0] + m*(2*r.Float64()-1)/fr.kx, p[1] + m*(2*r.Float64()-1)/fr.ky}
	}
	radii := []float64{0, 20, 200, 1000}
	for range 600 {
		p := box()
		check(p, radii[r.IntN(len(radii))])

		// At exactly the distance of a random site, and a hair either side.
		f := sites[r.IntN(len(sites))]
		q := nudge(f.Geometry.Bound().Center(), 300)
		d := Distance(q, f.Geometry)
		for _, radius := range []float64{d, d * (1 - 1e-12), d * (1 + 1e-12)} {
			check(q, radius)
		}

		// On a polygon's edge, at a vertex, and a millimetre to either side.
		poly := polys[r.IntN(len(polys))]
		ring := poly[r.IntN(len(poly))]
		j := r.IntN(len(ring) - 1)
		a, b := ring[j], ring[j+1]
		u := r.Float64()
		onEdge := orb.Point{a[0] + u*(b[0]-a[0]), a[1] + u*(b[1]-a[1])}
		for _, q := range []orb.Point{onEdge, a, nudge(onEdge, 0.001), nudge(a, 0.001)} {
			check(q, radii[r.IntN(len(radii))])
		}
	}
}
