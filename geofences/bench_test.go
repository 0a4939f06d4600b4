package geofences

import (
	"fmt"
	"math/rand/v2"
	"testing"

	"github.com/paulmach/orb"
)

// benchSet returns n sensitive sites, half points and half small polygons
// (5-60 m across), spread over a box of about 20 km around Piúma, and
// query points in the same box.
func benchSet(b *testing.B, n int) (*Set, []orb.Point) {
	b.Helper()
	r := rand.New(rand.NewPCG(uint64(n), 99))
	box := func() orb.Point { return orb.Point{-40.83 + 0.19*r.Float64(), -20.93 + 0.18*r.Float64()} }
	fc := collection()
	for i := range n {
		var g orb.Geometry = box()
		if i%2 == 1 {
			g = randomPolygon(r, box(), 5, 30)
		}
		fc.Append(feature(g, "id", fmt.Sprintf("s%d", i), "kind", "sensitive",
			"category", "school", "name", "x", "source", "bench"))
	}
	s, err := NewSet(File{Name: "bench", Collection: fc})
	if err != nil {
		b.Fatal(err)
	}
	queries := make([]orb.Point, 4096)
	for i := range queries {
		queries[i] = box()
	}
	return s, queries
}

// BenchmarkSensitiveWithin measures lookups at 1k, 10k and 100k sites in
// the same 20 km box. Within 200 m the number of hits grows with the
// density (about 0.35, 3.4 and 34 per query), and so does the cost of
// computing their distances; within 20 m there are few hits at any n, and
// what remains is the descent of the index, which grows as log n.
func BenchmarkSensitiveWithin(b *testing.B) {
	for _, n := range []int{1000, 10000, 100000} {
		s, queries := benchSet(b, n)
		for _, r := range []float64{200, 20} {
			b.Run(fmt.Sprintf("n=%d/r=%.0fm", n, r), func(b *testing.B) {
				hits := 0
				for i := 0; b.Loop(); i++ {
					hits += len(s.SensitiveWithin(queries[i%len(queries)], r))
				}
				b.ReportMetric(float64(hits)/float64(b.N), "hits/op")
			})
		}
	}
}

// BenchmarkSensitiveWithinBruteForce is the same lookup without the
// index, for comparison.
func BenchmarkSensitiveWithinBruteForce(b *testing.B) {
	for _, n := range []int{1000, 10000, 100000} {
		b.Run(fmt.Sprintf("n=%d", n), func(b *testing.B) {
			s, queries := benchSet(b, n)
			features := s.OfKind(KindSensitive)
			b.ResetTimer()
			for i := 0; b.Loop(); i++ {
				p := queries[i%len(queries)]
				fr := newFrame(p)
				var hits []Hit
				for _, f := range features {
					if d := fr.dist(f.Geometry); d <= 200 {
						hits = append(hits, Hit{f, d})
					}
				}
				sortHits(hits)
			}
		})
	}
}

// BenchmarkZoneAt measures the zone lookup in the sample set.
func BenchmarkZoneAt(b *testing.B) {
	s, err := Sample()
	if err != nil {
		b.Fatal(err)
	}
	p := orb.Point{-40.7292, -20.8367}
	for b.Loop() {
		s.ZoneAt(p)
	}
}

func BenchmarkParseOpeningHours(b *testing.B) {
	for b.Loop() {
		if _, err := ParseOpeningHours("Mo-Fr 07:00-12:00,13:00-22:00; Sa 08:00-12:00; PH off"); err != nil {
			b.Fatal(err)
		}
	}
}
