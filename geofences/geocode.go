package geofences

import (
	"math"
	"slices"
	"strings"
	"unicode"

	"github.com/paulmach/orb"
)

// A GeocodeHit is a feature whose name matches a typed address, with the point that stands for
// it: the point of the line or polygon nearest to its bounding box's centre (on the street
// itself, never beside it), or the feature's own point.
type GeocodeHit struct {
	Feature *Feature
	Point   orb.Point
}

// MaxGeocodeQuery bounds the query Geocode reads, in bytes.
const MaxGeocodeQuery = 200

// Geocode is the forward lookup of the citizens' complaint form: the named streets, landmarks,
// sensitive sites and boarding points whose name has a word starting with each word of query (case, accents and
// punctuation ignored; words of digits, such as a house number, are skipped: the extract has no
// house numbers), streets first, then by name, at most limit. Offline, from the set's features.
func (s *Set) Geocode(query string, limit int) []GeocodeHit {
	if len(query) > MaxGeocodeQuery {
		query = query[:MaxGeocodeQuery]
	}
	var words []string
	for _, w := range strings.Fields(Fold(query)) {
		if strings.IndexFunc(w, func(r rune) bool { return !unicode.IsDigit(r) }) >= 0 {
			words = append(words, w)
		}
	}
	if len(words) == 0 || limit <= 0 {
		return nil
	}
	var hits []GeocodeHit
	for _, l := range []*layer{&s.streets, &s.landmarks, &s.sensitive, &s.boarding} {
		for _, f := range l.features {
			if f.Name == "" {
				continue
			}
			name := Fold(f.Name)
			if !containsAll(name, words) {
				continue
			}
			hits = append(hits, GeocodeHit{Feature: f, Point: representative(f)})
		}
	}
	rank := func(k Kind) int {
		if k == KindStreet {
			return 0
		}
		return 1
	}
	slices.SortStableFunc(hits, func(a, b GeocodeHit) int {
		if c := rank(a.Feature.Kind) - rank(b.Feature.Kind); c != 0 {
			return c
		}
		if c := strings.Compare(a.Feature.Name, b.Feature.Name); c != 0 {
			return c
		}
		return strings.Compare(a.Feature.ID, b.Feature.ID)
	})
	// One hit per name and kind: a street is often several ways.
	out := hits[:0]
	for i, h := range hits {
		if i > 0 && h.Feature.Kind == hits[i-1].Feature.Kind && h.Feature.Name == hits[i-1].Feature.Name {
			continue
		}
		out = append(out, h)
	}
	return out[:min(len(out), limit)]
}

func containsAll(name string, words []string) bool {
	padded := " " + name + " "
	for _, w := range words {
		if !strings.Contains(padded, " "+w) {
			return false
		}
	}
	return true
}

// Fold lowers s, strips the accents of Portuguese letters and turns punctuation into spaces,
// for comparing names as people type them.
func Fold(s string) string {
	var b strings.Builder
	for _, r := range strings.ToLower(s) {
		switch {
		case strings.ContainsRune("áàâãä", r):
			r = 'a'
		case strings.ContainsRune("éèêë", r):
			r = 'e'
		case strings.ContainsRune("íìîï", r):
			r = 'i'
		case strings.ContainsRune("óòôõö", r):
			r = 'o'
		case strings.ContainsRune("úùûü", r):
			r = 'u'
		case r == 'ç':
			r = 'c'
		case !unicode.IsLetter(r) && !unicode.IsDigit(r):
			r = ' '
		}
		b.WriteRune(r)
	}
	return strings.Join(strings.Fields(b.String()), " ")
}

// representative is the point of f nearest to the centre of its bounding box: on a line, the
// nearest point of its segments; a polygon's centre when inside it, else the nearest point of
// its outer ring.
func representative(f *Feature) orb.Point {
	if p, ok := f.Geometry.(orb.Point); ok {
		return p
	}
	c := f.bound.Center()
	if f.Kind != KindStreet && Distance(c, f.Geometry) == 0 { // inside the polygon
		return c
	}
	best, bestD := c, -1.0
	visit := func(pts []orb.Point) {
		for i := range pts {
			q := pts[i]
			if i > 0 {
				q = nearestOnSegment(c, pts[i-1], pts[i])
			}
			if d := Distance(c, q); bestD < 0 || d < bestD {
				best, bestD = q, d
			}
		}
	}
	switch g := f.Geometry.(type) {
	case orb.LineString:
		visit(g)
	case orb.MultiLineString:
		for _, l := range g {
			visit(l)
		}
	case orb.Polygon:
		visit(g[0])
	case orb.MultiPolygon:
		for _, p := range g {
			visit(p[0])
		}
	}
	return best
}

// nearestOnSegment is the point of segment ab nearest to c, in a plane where a degree of
// longitude is cos(latitude) of a degree of latitude (exact enough over a street's length).
func nearestOnSegment(c, a, b orb.Point) orb.Point {
	k := math.Cos(c.Lat() * math.Pi / 180)
	ax, ay := (a.Lon()-c.Lon())*k, a.Lat()-c.Lat()
	bx, by := (b.Lon()-c.Lon())*k, b.Lat()-c.Lat()
	dx, dy := bx-ax, by-ay
	l2 := dx*dx + dy*dy
	if l2 == 0 {
		return a
	}
	t := max(0, min(1, -(ax*dx+ay*dy)/l2))
	return orb.Point{a.Lon() + t*(b.Lon()-a.Lon()), a.Lat() + t*(b.Lat()-a.Lat())}
}
