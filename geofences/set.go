package geofences

import (
	"cmp"
	"math"
	"slices"

	"github.com/paulmach/orb"
)

// A Set is a validated collection of geofences with a spatial index per
// kind (a uniform grid). Lookups read the few grid cells around the point
// and the features listed there. A Set is immutable and safe for concurrent use.
type Set struct {
	features []*Feature // in load order
	byID     map[string]*Feature

	sensitive, zones, itineraries, boarding, garages, roads layer
	streets, landmarks                                      layer

	byLicensee map[string][]*Feature // itineraries, sorted by id
	garagesOf  map[string][]*Feature // garages, sorted by id
}

// A layer is the features of one kind with their index.
type layer struct {
	features []*Feature
	index    grid
	maxPadM  float64 // largest radius_m of the boarding points
}

func newLayer(features []*Feature) layer {
	l := layer{features: features}
	bounds := make([]orb.Bound, len(features))
	for i, f := range features {
		bounds[i] = f.bound
		l.maxPadM = max(l.maxPadM, f.RadiusM)
	}
	l.index = newGrid(bounds)
	return l
}

func newSet(features []*Feature) *Set {
	s := &Set{
		features:   features,
		byID:       make(map[string]*Feature, len(features)),
		byLicensee: make(map[string][]*Feature),
		garagesOf:  make(map[string][]*Feature),
	}
	byKind := make(map[Kind][]*Feature)
	for _, f := range features {
		s.byID[f.ID] = f
		byKind[f.Kind] = append(byKind[f.Kind], f)
		switch f.Kind {
		case KindItinerary:
			s.byLicensee[f.Licensee] = append(s.byLicensee[f.Licensee], f)
		case KindGarage:
			s.garagesOf[f.Licensee] = append(s.garagesOf[f.Licensee], f)
		}
	}
	for _, m := range []map[string][]*Feature{s.byLicensee, s.garagesOf} {
		for _, fs := range m {
			slices.SortFunc(fs, byID)
		}
	}
	s.sensitive = newLayer(byKind[KindSensitive])
	s.zones = newLayer(byKind[KindNBRZone])
	s.itineraries = newLayer(byKind[KindItinerary])
	s.boarding = newLayer(byKind[KindBoardingPoint])
	s.garages = newLayer(byKind[KindGarage])
	s.roads = newLayer(byKind[KindPublicRoad])
	s.streets = newLayer(byKind[KindStreet])
	s.landmarks = newLayer(byKind[KindLandmark])
	return s
}

func byID(a, b *Feature) int { return cmp.Compare(a.ID, b.ID) }

// Len returns the number of features in the set.
func (s *Set) Len() int { return len(s.features) }

// Features returns the features of the set in load order: files in the
// order given, features in file order.
func (s *Set) Features() []*Feature { return slices.Clone(s.features) }

// Feature returns the feature with the given id.
func (s *Set) Feature(id string) (*Feature, bool) {
	f, ok := s.byID[id]
	return f, ok
}

// OfKind returns the features of one kind in load order.
func (s *Set) OfKind(k Kind) []*Feature {
	var l *layer
	switch k {
	case KindSensitive:
		l = &s.sensitive
	case KindNBRZone:
		l = &s.zones
	case KindItinerary:
		l = &s.itineraries
	case KindBoardingPoint:
		l = &s.boarding
	case KindGarage:
		l = &s.garages
	case KindPublicRoad:
		l = &s.roads
	case KindStreet:
		l = &s.streets
	case KindLandmark:
		l = &s.landmarks
	default:
		return nil
	}
	return slices.Clone(l.features)
}

// Areas returns the distinct area type ids of the nbr_zone features,
// sorted, for the caller to check against its legal profile.
func (s *Set) Areas() []string {
	var areas []string
	for _, f := range s.zones.features {
		areas = append(areas, f.Area)
	}
	slices.Sort(areas)
	return slices.Compact(areas)
}

// Licensees returns the distinct licensees of the itineraries and garages,
// sorted.
func (s *Set) Licensees() []string {
	var ls []string
	for l := range s.byLicensee {
		ls = append(ls, l)
	}
	for l := range s.garagesOf {
		ls = append(ls, l)
	}
	slices.Sort(ls)
	return slices.Compact(ls)
}

// hitsWithin returns the features of l within r metres of p, nearest
// first.
func (l *layer) hitsWithin(p orb.Point, r float64) []Hit {
	return l.appendHitsWithin(nil, p, r)
}

// appendHitsWithin appends the features of l within r metres of p to dst,
// nearest first, and returns the extended slice.
func (l *layer) appendHitsWithin(dst []Hit, p orb.Point, r float64) []Hit {
	n := len(dst)
	l.eachWithin(p, r, func(h Hit) { dst = append(dst, h) })
	sortHits(dst[n:])
	return dst
}

// eachWithin calls fn with every feature of l within r metres of p, in no
// particular order.
func (l *layer) eachWithin(p orb.Point, r float64, fn func(Hit)) {
	if !(r >= 0) {
		return
	}
	q := newWithinQuery(p, r)
	l.index.search(q.fr.box(r), func(i int) bool {
		f := l.features[i]
		if d, ok := q.hit(f, &f.bound); ok {
			fn(Hit{Feature: f, DistanceM: d})
		}
		return true
	})
}

// A withinQuery is the test of one feature against a search within r
// metres of a point: eachWithin and appendHitsWithinCached share it, so
// both give every feature the same answer.
type withinQuery struct {
	fr     frame
	r      float64
	far    float64 // squared bound distance beyond which nothing is within r
	finite bool    // lineDistWithin's bound holds
}

func newWithinQuery(p orb.Point, r float64) withinQuery {
	q := withinQuery{fr: newFrame(p), r: r}
	// A feature whose bound lies farther than r (plus a micrometre and a
	// relative 1e-9, far above the rounding of the distances) cannot be
	// within r: skip its exact distance. The box of the search lets through
	// the corners beyond the circle.
	far := r*(1+1e-9) + 1e-6
	q.finite = q.fr.finite() && far <= 1e7
	q.far = far * far
	return q
}

// hit returns f's distance and whether it is within the query's radius;
// b is f's bound (or a copy of it).
func (q *withinQuery) hit(f *Feature, b *orb.Bound) (float64, bool) {
	if q.fr.boundDist2(*b) > q.far {
		return 0, false
	}
	var d float64
	if ls, ok := f.Geometry.(orb.LineString); ok && q.finite {
		d = q.fr.lineDistWithin(ls, q.r) // an itinerary: most of its segments are far
	} else {
		d = q.fr.dist(f.Geometry)
	}
	return d, d <= q.r
}

// sortHits orders hits by distance, then id.
func sortHits(hits []Hit) {
	slices.SortFunc(hits, compareHits)
}

// compareHits orders hits by distance, then id.
func compareHits(a, b Hit) int {
	if c := cmp.Compare(a.DistanceM, b.DistanceM); c != 0 {
		return c
	}
	return cmp.Compare(a.Feature.ID, b.Feature.ID)
}

// containing returns the features of l whose polygons contain p.
func (l *layer) containing(p orb.Point) []*Feature {
	var fs []*Feature
	l.eachContaining(p, func(f *Feature) { fs = append(fs, f) })
	return fs
}

// eachContaining calls fn with every feature of l whose polygons contain
// p, in index order.
func (l *layer) eachContaining(p orb.Point, fn func(*Feature)) {
	fr := newFrame(p)
	l.index.search(orb.Bound{Min: p, Max: p}, func(i int) bool {
		f := l.features[i]
		if fr.contains(f.Geometry) {
			fn(f)
		}
		return true
	})
}

// SensitiveWithin returns the sensitive sites within radiusM metres of p
// (to the nearest edge of a polygon; 0 inside), nearest first, ties by id.
// It does not look at opening hours or categories; the caller does.
func (s *Set) SensitiveWithin(p orb.Point, radiusM float64) []Hit {
	return s.sensitive.hitsWithin(p, radiusM)
}

// AppendSensitiveWithin is SensitiveWithin appending to dst: it appends the
// sensitive sites within radiusM metres of p to dst, nearest first, ties by
// id, and returns the extended slice. A caller that looks up on every
// reading reuses its slice and allocates nothing.
func (s *Set) AppendSensitiveWithin(dst []Hit, p orb.Point, radiusM float64) []Hit {
	return s.sensitive.appendHitsWithin(dst, p, radiusM)
}

// ZonesAt returns the nbr_zone features that contain p (their boundary
// included), in the order ZoneAt chooses from: smallest area first, ties
// by id.
func (s *Set) ZonesAt(p orb.Point) []*Feature {
	zs := s.zones.containing(p)
	slices.SortFunc(zs, bySmallestArea)
	return zs
}

// bySmallestArea orders zones by area, then id.
func bySmallestArea(a, b *Feature) int {
	if c := cmp.Compare(a.areaM2, b.areaM2); c != 0 {
		return c
	}
	return byID(a, b)
}

// ZoneAt returns the nbr_zone that contains p. Where zones overlap, the one
// with the smallest area wins (the most specific zone, such as a hospital's
// strict residential block inside a commercial centre), then the smallest
// id; ZonesAt lists them all. It reports false outside every zone, where
// the profile's default area applies.
func (s *Set) ZoneAt(p orb.Point) (*Feature, bool) {
	// The first of ZonesAt's order, without building the list.
	var best *Feature
	s.zones.eachContaining(p, func(f *Feature) {
		if best == nil || bySmallestArea(f, best) < 0 {
			best = f
		}
	})
	return best, best != nil
}

// BoardingPointAt returns the nearest boarding point within whose radius_m
// p lies (ties by id).
func (s *Set) BoardingPointAt(p orb.Point) (Hit, bool) {
	// The first hit, in the order of BoardingPointsWithin, that lies within
	// its point's radius, without building the list.
	var best Hit
	found := false
	s.boarding.eachWithin(p, s.boarding.maxPadM, func(h Hit) {
		if h.DistanceM <= h.Feature.RadiusM && (!found || compareHits(h, best) < 0) {
			best, found = h, true
		}
	})
	return best, found
}

// BoardingPointsWithin returns the boarding points within radiusM metres
// of p, nearest first, whatever their own radius_m.
func (s *Set) BoardingPointsWithin(p orb.Point, radiusM float64) []Hit {
	return s.boarding.hitsWithin(p, radiusM)
}

// InGarage reports whether p is inside a garage of the licensee, or of any
// licensee when licensee is "".
func (s *Set) InGarage(p orb.Point, licensee string) bool {
	_, ok := s.GarageAt(p, licensee)
	return ok
}

// GarageAt returns the garage of the licensee (of any licensee when
// licensee is "") that contains p, the smallest id first.
func (s *Set) GarageAt(p orb.Point, licensee string) (*Feature, bool) {
	var best *Feature
	s.garages.eachContaining(p, func(f *Feature) {
		if (licensee == "" || f.Licensee == licensee) && (best == nil || f.ID < best.ID) {
			best = f
		}
	})
	return best, best != nil
}

// PublicRoadAt returns the public_road geofence that contains p, the smallest id first.
func (s *Set) PublicRoadAt(p orb.Point) (*Feature, bool) {
	var best *Feature
	s.roads.eachContaining(p, func(f *Feature) {
		if best == nil || f.ID < best.ID {
			best = f
		}
	})
	return best, best != nil
}

// Garages returns the garages of the licensee, sorted by id. An empty
// result means that the rules needing a garage cannot be evaluated.
func (s *Set) Garages(licensee string) []*Feature {
	return slices.Clone(s.garagesOf[licensee])
}

// Itineraries returns the itineraries of the licensee, sorted by id,
// whatever their days, hours and validity (see Feature.ActiveAt).
func (s *Set) Itineraries(licensee string) []*Feature {
	return slices.Clone(s.byLicensee[licensee])
}

// ItinerariesNear returns the itineraries of every licensee within radiusM
// metres of p, nearest first.
func (s *Set) ItinerariesNear(p orb.Point, radiusM float64) []Hit {
	return s.itineraries.hitsWithin(p, radiusM)
}

// AppendItinerariesNear is ItinerariesNear appending to dst, for a caller
// that looks up on every reading and reuses its slice.
func (s *Set) AppendItinerariesNear(dst []Hit, p orb.Point, radiusM float64) []Hit {
	return s.itineraries.appendHitsWithin(dst, p, radiusM)
}

// InCorridor reports whether p lies within the corridor (corridor_m of the
// route) of at least one of the itineraries, and returns the distance in
// metres from p to the nearest of their routes. It returns false and +Inf
// when there are no itineraries. Features of other kinds are ignored. The
// caller chooses the itineraries, typically those of the vehicle's
// licensee that are active at the time (Feature.ActiveAt).
func (s *Set) InCorridor(p orb.Point, itineraries []*Feature) (in bool, distanceM float64) {
	fr := newFrame(p)
	distanceM = math.Inf(1)
	for _, f := range itineraries {
		if f == nil || f.Kind != KindItinerary {
			continue
		}
		d := fr.dist(f.Geometry)
		in = in || d <= f.CorridorM
		distanceM = min(distanceM, d)
	}
	return in, distanceM
}
