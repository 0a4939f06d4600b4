package geofences

import (
	"fmt"
	"math"
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/paulmach/orb"
	"github.com/paulmach/orb/geo"
	"github.com/paulmach/orb/geojson"
	"github.com/paulmach/orb/planar"
)

// feature returns a GeoJSON feature with the given properties.
func feature(g orb.Geometry, props ...any) *geojson.Feature {
	f := geojson.NewFeature(g)
	for i := 0; i < len(props); i += 2 {
		f.Properties[props[i].(string)] = props[i+1]
	}
	return f
}

func collection(fs ...*geojson.Feature) *geojson.FeatureCollection {
	fc := geojson.NewFeatureCollection()
	fc.Features = fs
	return fc
}

// randomPolygon returns a star-shaped polygon around c with radii in
// [minR, maxR] metres, sometimes with a hole.
func randomPolygon(r *rand.Rand, c orb.Point, minR, maxR float64) orb.Polygon {
	n := 3 + r.IntN(6)
	ring := make(orb.Ring, 0, n+1)
	start := 360 * r.Float64()
	radii := make([]float64, n)
	for i := range n {
		radii[i] = minR + (maxR-minR)*r.Float64()
		ring = append(ring, geo.PointAtBearingAndDistance(c, start+float64(i)*360/float64(n), radii[i]))
	}
	ring = append(ring, ring[0])
	poly := orb.Polygon{ring}
	if r.IntN(4) == 0 {
		// A small square hole around the centre, inside every radius.
		h := slices.Min(radii) / 3
		var hole orb.Ring
		for _, b := range []float64{45, 135, 225, 315, 45} {
			hole = append(hole, geo.PointAtBearingAndDistance(c, b, h))
		}
		poly = append(poly, hole)
	}
	return poly
}

// randomSet builds a set of random features in a box of about 6 km around
// Piúma and returns it with its features.
func randomSet(t testing.TB, r *rand.Rand, nSensitive int) *Set {
	t.Helper()
	var fs []*geojson.Feature
	box := func() orb.Point { return orb.Point{-40.76 + 0.06*r.Float64(), -20.87 + 0.06*r.Float64()} }
	for i := range nSensitive {
		var g orb.Geometry
		switch r.IntN(3) {
		case 0:
			g = box()
		case 1:
			g = randomPolygon(r, box(), 5, 150)
		default:
			g = orb.MultiPolygon{randomPolygon(r, box(), 5, 60), randomPolygon(r, box(), 5, 60)}
		}
		fs = append(fs, feature(g, "id", fmt.Sprintf("s%d", i), "kind", "sensitive",
			"category", string(Categories()[r.IntN(6)]), "name", "x", "source", "test"))
	}
	areas := []string{"rural", "strict_residential", "mixed_residential", "mixed_commercial", "mixed_leisure", "industrial"}
	for i := range nSensitive / 5 {
		fs = append(fs, feature(randomPolygon(r, box(), 50, 1500), "id", fmt.Sprintf("z%d", i),
			"kind", "nbr_zone", "area", areas[r.IntN(len(areas))]))
	}
	for i := range nSensitive / 10 {
		fs = append(fs, feature(box(), "id", fmt.Sprintf("b%d", i), "kind", "boarding_point",
			"radius_m", 5+100*r.Float64()))
	}
	for i := range nSensitive / 10 {
		fs = append(fs, feature(randomPolygon(r, box(), 10, 300), "id", fmt.Sprintf("g%d", i),
			"kind", "garage", "licensee", fmt.Sprintf("L%d", r.IntN(5))))
	}
	for i := range nSensitive / 20 {
		ls := orb.LineString{box()}
		for range 1 + r.IntN(20) {
			ls = append(ls, geo.PointAtBearingAndDistance(ls[len(ls)-1], 360*r.Float64(), 300*r.Float64()))
		}
		fs = append(fs, feature(ls, "id", fmt.Sprintf("i%d", i), "kind", "itinerary",
			"licensee", fmt.Sprintf("L%d", r.IntN(5)), "corridor_m", 10+60*r.Float64()))
	}
	s, err := NewSet(File{Name: "random", Collection: collection(fs...)})
	if err != nil {
		t.Fatal(err)
	}
	return s
}

// planarContains is orb's point-in-polygon test, independent of the
// package's.
func planarContains(g orb.Geometry, p orb.Point) bool {
	switch g := g.(type) {
	case orb.Polygon:
		return planar.PolygonContains(g, p)
	case orb.MultiPolygon:
		return planar.MultiPolygonContains(g, p)
	}
	return false
}

// TestIndexMatchesBruteForce checks every indexed lookup against a scan of
// all features on thousands of random points.
func TestIndexMatchesBruteForce(t *testing.T) {
	r := rand.New(rand.NewPCG(11, 12))
	s := randomSet(t, r, 3000)
	all := s.Features()
	ofKind := func(k Kind) []*Feature {
		var fs []*Feature
		for _, f := range all {
			if f.Kind == k {
				fs = append(fs, f)
			}
		}
		return fs
	}
	sensitive, zones, boarding, garages, itineraries :=
		ofKind(KindSensitive), ofKind(KindNBRZone), ofKind(KindBoardingPoint), ofKind(KindGarage), ofKind(KindItinerary)

	hitsEqual := func(a, b []Hit) bool {
		return slices.EqualFunc(a, b, func(x, y Hit) bool { return x.Feature == y.Feature && x.DistanceM == y.DistanceM })
	}
	var nHits, nZones, nBoarding, nGarages, nNear int
	for i := range 2000 {
		p := orb.Point{-40.77 + 0.08*r.Float64(), -20.88 + 0.08*r.Float64()}
		radius := 400 * r.Float64()
		if i%10 == 0 {
			radius = 0 // only polygons containing p
		}

		var want []Hit
		for _, f := range sensitive {
			if d := Distance(p, f.Geometry); d <= radius {
				want = append(want, Hit{f, d})
			}
		}
		sortHits(want)
		got := s.SensitiveWithin(p, radius)
		if !hitsEqual(got, want) {
			t.Fatalf("SensitiveWithin(%v, %v): %d hits, brute force %d", p, radius, len(got), len(want))
		}
		nHits += len(got)
		prefix := []Hit{{DistanceM: -1}} // AppendSensitiveWithin keeps what dst holds
		if got := s.AppendSensitiveWithin(prefix, p, radius); len(got) == 0 || got[0] != prefix[0] || !hitsEqual(got[1:], want) {
			t.Fatalf("AppendSensitiveWithin(%v, %v): %d hits, brute force %d", p, radius, len(got)-1, len(want))
		}

		var wantNear []Hit
		for _, f := range itineraries {
			if d := Distance(p, f.Geometry); d <= radius {
				wantNear = append(wantNear, Hit{f, d})
			}
		}
		sortHits(wantNear)
		if got := s.ItinerariesNear(p, radius); !hitsEqual(got, wantNear) {
			t.Fatalf("ItinerariesNear(%v, %v): %d hits, brute force %d", p, radius, len(got), len(wantNear))
		}
		nNear += len(wantNear)

		var wantZones []*Feature
		for _, f := range zones {
			if planarContains(f.Geometry, p) {
				wantZones = append(wantZones, f)
			}
		}
		slices.SortFunc(wantZones, func(a, b *Feature) int {
			if a.areaM2 != b.areaM2 {
				return int(math.Copysign(1, a.areaM2-b.areaM2))
			}
			return byID(a, b)
		})
		if got := s.ZonesAt(p); !slices.Equal(got, wantZones) {
			t.Fatalf("ZonesAt(%v): %d zones, brute force %d", p, len(got), len(wantZones))
		}
		z, ok := s.ZoneAt(p)
		if ok != (len(wantZones) > 0) || (ok && z != wantZones[0]) {
			t.Fatalf("ZoneAt(%v) = %v, %v", p, z, ok)
		}
		nZones += len(wantZones)

		var wantBP *Feature
		var wantBPd float64
		for _, f := range boarding {
			d := Distance(p, f.Geometry)
			if d <= f.RadiusM && (wantBP == nil || d < wantBPd || (d == wantBPd && f.ID < wantBP.ID)) {
				wantBP, wantBPd = f, d
			}
		}
		bp, ok := s.BoardingPointAt(p)
		if ok != (wantBP != nil) || (ok && (bp.Feature != wantBP || bp.DistanceM != wantBPd)) {
			t.Fatalf("BoardingPointAt(%v) = %v, %v; brute force %v", p, bp, ok, wantBP)
		}
		if ok {
			nBoarding++
		}

		lic := fmt.Sprintf("L%d", r.IntN(6)) // L5 has none
		wantIn := false
		for _, f := range garages {
			if f.Licensee == lic && planarContains(f.Geometry, p) {
				wantIn = true
			}
		}
		if got := s.InGarage(p, lic); got != wantIn {
			t.Fatalf("InGarage(%v, %s) = %v, brute force %v", p, lic, got, wantIn)
		}
		if wantIn {
			nGarages++
		}
	}
	t.Logf("%d sensitive hits, %d itinerary hits, %d zones, %d boarding points, %d garages",
		nHits, nNear, nZones, nBoarding, nGarages)
	if nHits == 0 || nZones == 0 || nBoarding == 0 || nGarages == 0 || nNear == 0 {
		t.Error("a lookup never found anything: the test does not exercise it")
	}
}

// TestLookupsDoNotAllocate: the lookups the rules engine makes on every reading allocate
// nothing (AppendSensitiveWithin once its slice has grown).
func TestLookupsDoNotAllocate(t *testing.T) {
	r := rand.New(rand.NewPCG(13, 14))
	s := randomSet(t, r, 3000)
	points := make([]orb.Point, 64)
	for i := range points {
		points[i] = orb.Point{-40.77 + 0.08*r.Float64(), -20.88 + 0.08*r.Float64()}
	}
	buf := make([]Hit, 0, 1024)
	i := 0
	allocs := testing.AllocsPerRun(200, func() {
		p := points[i%len(points)]
		i++
		buf = s.AppendSensitiveWithin(buf[:0], p, 400)
		s.ZoneAt(p)
		s.BoardingPointAt(p)
		s.InGarage(p, "L1")
		s.GarageAt(p, "")
	})
	if allocs != 0 {
		t.Errorf("%v allocations per lookup", allocs)
	}
}

func TestGridSmall(t *testing.T) {
	var empty grid
	empty.search(orb.Bound{Max: orb.Point{1, 1}}, func(int) bool { t.Fatal("found in empty tree"); return true })

	r := rand.New(rand.NewPCG(13, 14))
	for _, n := range []int{1, 2, 3, 15, 16, 17, 255, 256, 257, 5000} {
		bounds := make([]orb.Bound, n)
		for i := range bounds {
			p := orb.Point{r.Float64(), r.Float64()}
			bounds[i] = orb.Bound{Min: p, Max: orb.Point{p[0] + 0.05*r.Float64(), p[1] + 0.05*r.Float64()}}
		}
		tree := newGrid(bounds)
		for range 400 {
			// Some boxes straddle or lie outside the grid's extent.
			p := orb.Point{1.4*r.Float64() - 0.2, 1.4*r.Float64() - 0.2}
			q := orb.Bound{Min: p, Max: orb.Point{p[0] + 0.1*r.Float64(), p[1] + 0.1*r.Float64()}}
			var got, want []int
			tree.search(q, func(i int) bool { got = append(got, i); return true })
			for i, b := range bounds {
				if b.Intersects(q) {
					want = append(want, i)
				}
			}
			slices.Sort(got)
			if !slices.Equal(got, want) {
				t.Fatalf("n=%d: search %v = %v, want %v", n, q, got, want)
			}
		}
		// Stopping early.
		count := 0
		tree.search(orb.Bound{Min: orb.Point{-1, -1}, Max: orb.Point{2, 2}}, func(int) bool { count++; return count < 3 })
		if want := min(n, 3); count != want {
			t.Errorf("n=%d: early stop after %d calls, want %d", n, count, want)
		}
	}
}

func TestZoneOverlapRule(t *testing.T) {
	c := orb.Point{-40.7292, -20.8367}
	big := square(c, 500)
	small := square(c, 100)
	s, err := NewSet(File{Name: "zones", Collection: collection(
		feature(big, "id", "a-big", "kind", "nbr_zone", "area", "mixed_commercial"),
		feature(small, "id", "z-small", "kind", "nbr_zone", "area", "strict_residential"),
		feature(small, "id", "b-small-twin", "kind", "nbr_zone", "area", "mixed_leisure"),
	)})
	if err != nil {
		t.Fatal(err)
	}
	z, ok := s.ZoneAt(c)
	if !ok || z.ID != "b-small-twin" {
		t.Errorf("ZoneAt(centre) = %v, want b-small-twin (smallest area, then smallest id)", z)
	}
	if zs := s.ZonesAt(c); len(zs) != 3 || zs[2].ID != "a-big" {
		t.Errorf("ZonesAt(centre) = %v", zs)
	}
	far := geo.PointAtBearingAndDistance(c, 45, 300) // inside big only
	if z, ok := s.ZoneAt(far); !ok || z.ID != "a-big" {
		t.Errorf("ZoneAt(300 m NE) = %v", z)
	}
	if _, ok := s.ZoneAt(geo.PointAtBearingAndDistance(c, 0, 600)); ok {
		t.Error("ZoneAt outside every zone reported a zone")
	}
	if got := s.Areas(); !slices.Equal(got, []string{"mixed_commercial", "mixed_leisure", "strict_residential"}) {
		t.Errorf("Areas = %v", got)
	}
}

// square returns an axis-aligned square of half-side halfM metres.
func square(c orb.Point, halfM float64) orb.Polygon {
	fr := newFrame(c)
	dx, dy := halfM/fr.kx, halfM/fr.ky
	return orb.Polygon{{{c[0] - dx, c[1] - dy}, {c[0] + dx, c[1] - dy}, {c[0] + dx, c[1] + dy}, {c[0] - dx, c[1] + dy}, {c[0] - dx, c[1] - dy}}}
}

func TestCorridorAndGarages(t *testing.T) {
	c := orb.Point{-40.7292, -20.8367}
	east := geo.PointAtBearingAndDistance(c, 90, 1000)
	route := orb.LineString{c, east}
	s, err := NewSet(File{Name: "x", Collection: collection(
		feature(route, "id", "it-a", "kind", "itinerary", "licensee", "L1", "days", "Mo-Fr", "hours", "09:00-18:00"),
		feature(route, "id", "it-b", "kind", "itinerary", "licensee", "L1", "corridor_m", 80.0, "valid_from", "2026-12-01", "valid_to", "2026-12-31"),
		feature(square(c, 20), "id", "g1", "kind", "garage", "licensee", "L1"),
		feature(square(east, 20), "id", "g2", "kind", "garage", "licensee", "L2"),
		feature(c, "id", "bp", "kind", "boarding_point"),
	)})
	if err != nil {
		t.Fatal(err)
	}
	its := s.Itineraries("L1")
	if len(its) != 2 || its[0].ID != "it-a" || its[0].CorridorM != DefaultCorridorM || its[1].CorridorM != 80 {
		t.Fatalf("Itineraries(L1) = %v", its)
	}
	if len(s.Itineraries("L9")) != 0 {
		t.Error("Itineraries(L9) not empty")
	}
	north := func(m float64) orb.Point {
		return geo.PointAtBearingAndDistance(geo.PointAtBearingAndDistance(c, 90, 500), 0, m)
	}
	if in, d := s.InCorridor(north(49), its[:1]); !in || math.Abs(d-49) > 0.5 {
		t.Errorf("49 m off route a: in=%v d=%v", in, d)
	}
	if in, d := s.InCorridor(north(60), its[:1]); in || math.Abs(d-60) > 0.5 {
		t.Errorf("60 m off route a: in=%v d=%v", in, d)
	}
	if in, _ := s.InCorridor(north(60), its); !in {
		t.Error("60 m off route b (corridor 80 m): out")
	}
	if in, d := s.InCorridor(north(60), nil); in || !math.IsInf(d, 1) {
		t.Errorf("no itineraries: in=%v d=%v", in, d)
	}

	// Schedules and validity.
	if !its[0].ActiveAt(at(t, "2026-11-23 10:00"), false) || its[0].ActiveAt(at(t, "2026-11-28 10:00"), false) {
		t.Error("it-a: Monday 10:00 should be active and Saturday not")
	}
	if its[1].ActiveAt(at(t, "2026-11-30 23:59"), false) || !its[1].ActiveAt(at(t, "2026-12-01 00:00"), false) ||
		!its[1].ActiveAt(at(t, "2026-12-31 23:59"), false) || its[1].ActiveAt(at(t, "2027-01-01 00:00"), false) {
		t.Error("it-b: validity dates not inclusive of both ends")
	}

	if !s.InGarage(c, "L1") || s.InGarage(c, "L2") || !s.InGarage(c, "") || s.InGarage(north(60), "") {
		t.Error("InGarage wrong")
	}
	if g, ok := s.GarageAt(east, ""); !ok || g.ID != "g2" {
		t.Errorf("GarageAt(east) = %v", g)
	}
	if got := s.Garages("L2"); len(got) != 1 || got[0].ID != "g2" {
		t.Errorf("Garages(L2) = %v", got)
	}
	if got := s.Licensees(); !slices.Equal(got, []string{"L1", "L2"}) {
		t.Errorf("Licensees = %v", got)
	}
	if _, ok := s.BoardingPointAt(north(0)); ok {
		t.Error("500 m away: at the boarding point")
	}
	if _, ok := s.BoardingPointAt(geo.PointAtBearingAndDistance(c, 200, 29.5)); !ok {
		t.Error("29.5 m from a 30 m boarding point: not at it")
	}
	if _, ok := s.BoardingPointAt(geo.PointAtBearingAndDistance(c, 200, 30.5)); ok {
		t.Error("30.5 m from a 30 m boarding point: at it")
	}
	if got := s.BoardingPointsWithin(geo.PointAtBearingAndDistance(c, 200, 35), 40); len(got) != 1 {
		t.Errorf("BoardingPointsWithin = %v", got)
	}
	if s.Len() != 5 || len(s.OfKind(KindGarage)) != 2 || s.OfKind("nope") != nil {
		t.Error("Len or OfKind wrong")
	}
	if f, ok := s.Feature("g1"); !ok || f.File != "x" || f.Index != 2 {
		t.Errorf("Feature(g1) = %+v", f)
	}
}

// TestConcurrentLookups runs lookups from several goroutines; run it with
// -race.
func TestConcurrentLookups(t *testing.T) {
	s, err := Sample()
	if err != nil {
		t.Fatal(err)
	}
	done := make(chan int)
	for g := range 4 {
		go func() {
			r := rand.New(rand.NewPCG(uint64(g), 1))
			n := 0
			for range 500 {
				p := orb.Point{-40.745 + 0.03*r.Float64(), -20.85 + 0.03*r.Float64()}
				n += len(s.SensitiveWithin(p, 200))
				s.ZoneAt(p)
				s.BoardingPointAt(p)
				s.InGarage(p, "L1")
			}
			done <- n
		}()
	}
	for range 4 {
		<-done
	}
}
