package geofences

import (
	"math"

	"github.com/paulmach/orb"
)

// NearCacheReachM is how far, in metres, a NearCache's box reaches beyond the
// first search it serves: a caller moving less than that (about 14 s of a
// vehicle at 25 km/h) is answered from the cache.
const NearCacheReachM = 100

// A NearCache keeps, for one caller that searches around a moving point (a
// vehicle), the sensitive sites whose bounds meet a box around a past
// position, with copies of their bounds side by side. The rule engine asks
// for the sites within 200 m of a vehicle on every sound reading; the cache
// spares it the grid's cells and each site's record for the sites the box
// of the search does not meet. The zero value is empty; a NearCache is not
// safe for concurrent use, and a copy shares its lists with the original
// (the two refill them in place): keep one per caller, unshared.
//
// It answers exactly as AppendSensitiveWithin: the grid reports exactly the
// items whose bounds intersect a query box (see grid). The cache holds the
// items whose bounds intersect its box B. A search within r of p reads the
// grid with the box b of p's frame; the cache serves it only where b lies
// within B, and then every item whose bound intersects b also intersects
// B, so the items of the cache whose (copied, equal) bounds intersect b
// are exactly those the grid would report. Each of them goes through the
// same test (withinQuery.hit, with the same frame and radius), and the hits
// are sorted by distance then id, a total order since ids are unique in a
// Set: the result does not depend on the order the items came in.
type NearCache struct {
	set    *Set
	box    orb.Bound
	items  []*Feature
	bounds []orb.Bound
}

// AppendSensitiveWithinCached is AppendSensitiveWithin answered from c where
// p lies within the reach of c's last refill, refilling c otherwise. Its
// result is that of AppendSensitiveWithin to the last bit (see NearCache).
func (s *Set) AppendSensitiveWithinCached(dst []Hit, p orb.Point, radiusM float64, c *NearCache) []Hit {
	if !(radiusM >= 0) || radiusM > 1e6 || !finitePoint(p) {
		return s.AppendSensitiveWithin(dst, p, radiusM)
	}
	q := newWithinQuery(p, radiusM)
	b := q.fr.box(radiusM)
	if c.set != s || !boundWithin(b, c.box) {
		c.fill(s, q.fr.box(radiusM+NearCacheReachM))
		if !boundWithin(b, c.box) { // near a pole, where the box is clamped
			return s.AppendSensitiveWithin(dst, p, radiusM)
		}
	}
	n := len(dst)
	for k := range c.bounds {
		ib := &c.bounds[k]
		if !intersects(*ib, b) {
			continue
		}
		if d, ok := q.hit(c.items[k], ib); ok {
			dst = append(dst, Hit{Feature: c.items[k], DistanceM: d})
		}
	}
	sortHits(dst[n:])
	return dst
}

// fill makes c hold the sensitive sites of s whose bounds intersect box.
func (c *NearCache) fill(s *Set, box orb.Bound) {
	c.set, c.box = s, box
	c.items, c.bounds = c.items[:0], c.bounds[:0]
	l := &s.sensitive
	l.index.search(box, func(i int) bool {
		c.items = append(c.items, l.features[i])
		c.bounds = append(c.bounds, l.index.bounds[i])
		return true
	})
}

// boundWithin reports whether a lies within b (edges included).
func boundWithin(a, b orb.Bound) bool {
	return a.Min[0] >= b.Min[0] && a.Min[1] >= b.Min[1] &&
		a.Max[0] <= b.Max[0] && a.Max[1] <= b.Max[1]
}

func finitePoint(p orb.Point) bool {
	return !math.IsNaN(p[0]) && !math.IsInf(p[0], 0) && !math.IsNaN(p[1]) && !math.IsInf(p[1], 0)
}
