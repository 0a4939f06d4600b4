package geofences

import (
	"math"

	"github.com/paulmach/orb"
)

// gridMaxCells bounds the number of cells of a grid, and so its memory,
// whatever the number and spread of the features.
const gridMaxCells = 1 << 20

// A grid is a uniform grid over the bounds of a list of items: each cell
// lists the items whose bounds touch it, in compressed rows. Where an
// R-tree descends O(log n) levels through a recursive search, a grid query
// computes the range of cells that the query box covers and reads their
// lists, which at the density of a town's sensitive sites is a handful of
// cells holding a few items each (it replaced a packed R-tree, being 2–4×
// faster where hits are few: docs/benchmarks.md, "Geofences"). It is built
// once and then only read, so it is safe for concurrent queries.
//
// A query reports exactly the items whose bounds intersect the query box,
// as an R-tree search does, each once: an item listed in several cells is
// reported only from the cell that holds the lower-left corner of its
// intersection with the box, which is one of the cells the query reads.
type grid struct {
	bounds     []orb.Bound // of the items, by item index
	minX, minY float64     // lower-left corner of the grid, in degrees
	invW, invH float64     // cells per degree of longitude and latitude
	nx, ny     int
	start      []int32 // cell c lists items[start[c]:start[c+1]]
	items      []int32
}

// newGrid builds the grid of the given bounds, item i having bounds[i],
// with about as many cells as items, square in metres at the centre.
func newGrid(bounds []orb.Bound) grid {
	g := grid{bounds: bounds, nx: 1, ny: 1}
	if len(bounds) == 0 {
		return g
	}
	all := bounds[0]
	for _, b := range bounds[1:] {
		all = all.Union(b)
	}
	g.minX, g.minY = all.Min[0], all.Min[1]
	fr := newFrame(all.Center())
	wM := (all.Max[0] - all.Min[0]) * fr.kx // extent in metres
	hM := (all.Max[1] - all.Min[1]) * fr.ky
	cells := min(float64(len(bounds)), gridMaxCells)
	if side := math.Sqrt(wM * hM / cells); side > 0 {
		g.nx = int(math.Ceil(wM / side))
		g.ny = int(math.Ceil(hM / side))
	} else if wM > 0 { // all on one parallel
		g.nx = int(cells)
	} else if hM > 0 { // all on one meridian
		g.ny = int(cells)
	}
	g.nx = max(1, min(g.nx, int(cells)))
	g.ny = max(1, min(g.ny, int(cells), gridMaxCells/g.nx))
	if w := all.Max[0] - all.Min[0]; w > 0 {
		g.invW = float64(g.nx) / w
	}
	if h := all.Max[1] - all.Min[1]; h > 0 {
		g.invH = float64(g.ny) / h
	}

	// Two passes: count the items of each cell, then place them.
	g.start = make([]int32, g.nx*g.ny+1)
	for _, b := range bounds {
		x0, y0, x1, y1 := g.cells(b)
		for y := y0; y <= y1; y++ {
			for x := x0; x <= x1; x++ {
				g.start[y*g.nx+x+1]++
			}
		}
	}
	for c := 1; c < len(g.start); c++ {
		g.start[c] += g.start[c-1]
	}
	g.items = make([]int32, g.start[len(g.start)-1])
	next := append([]int32(nil), g.start[:len(g.start)-1]...)
	for i, b := range bounds {
		x0, y0, x1, y1 := g.cells(b)
		for y := y0; y <= y1; y++ {
			for x := x0; x <= x1; x++ {
				c := y*g.nx + x
				g.items[next[c]] = int32(i)
				next[c]++
			}
		}
	}
	return g
}

// cell returns the column or row of coordinate v, clamped to [0, n): the
// same monotonic function for building and querying, so that an item and a
// box that intersect share the cell of their intersection's corner. NaN
// maps to 0 (its box intersects nothing anyway).
func cell(v, min, inv float64, n int) int {
	f := (v - min) * inv
	switch {
	case !(f > 0):
		return 0
	case f >= float64(n):
		return n - 1
	}
	return int(f)
}

// cells returns the range of cells, inclusive, that b covers.
func (g *grid) cells(b orb.Bound) (x0, y0, x1, y1 int) {
	return cell(b.Min[0], g.minX, g.invW, g.nx), cell(b.Min[1], g.minY, g.invH, g.ny),
		cell(b.Max[0], g.minX, g.invW, g.nx), cell(b.Max[1], g.minY, g.invH, g.ny)
}

// search calls fn with the index of every item whose bound intersects b
// (touching counts), once each, in no particular order, until fn returns
// false.
func (g *grid) search(b orb.Bound, fn func(item int) bool) {
	if len(g.bounds) == 0 {
		return
	}
	x0, y0, x1, y1 := g.cells(b)
	for y := y0; y <= y1; y++ {
		for x := x0; x <= x1; x++ {
			c := y*g.nx + x
			for _, i := range g.items[g.start[c]:g.start[c+1]] {
				ib := &g.bounds[i]
				if !intersects(*ib, b) {
					continue
				}
				// Report i only from the cell of the intersection's
				// lower-left corner.
				if x != x0 && cell(max(ib.Min[0], b.Min[0]), g.minX, g.invW, g.nx) != x {
					continue
				}
				if y != y0 && cell(max(ib.Min[1], b.Min[1]), g.minY, g.invH, g.ny) != y {
					continue
				}
				if !fn(int(i)) {
					return
				}
			}
		}
	}
}

// intersects is orb.Bound.Intersects without its emptiness checks, which
// the valid bounds of the index do not need.
func intersects(a, b orb.Bound) bool {
	return a.Min[0] <= b.Max[0] && b.Min[0] <= a.Max[0] &&
		a.Min[1] <= b.Max[1] && b.Min[1] <= a.Max[1]
}
