package geofences

import (
	"math"
	"slices"

	"github.com/paulmach/orb"
)

// rtreeNodeSize is the number of entries per node of an rtree.
const rtreeNodeSize = 16

// An rtree is a static R-tree over the bounds of a list of items, packed
// with the Sort-Tile-Recursive algorithm (Leutenegger, Lopez and Edgington,
// 1997). It is built once and then only read, so it is safe for concurrent
// searches. A search visits O(log n) nodes plus those that hold results.
type rtree struct {
	// levels[0] holds one entry per item; the entries of levels[k+1]
	// cover consecutive runs of levels[k]. The last level is the root's
	// children.
	levels [][]rnode
}

// An rnode is an entry of an rtree level: in level 0 first is the item's
// index; above, [first, end) is the run of children in the level below.
type rnode struct {
	b          orb.Bound
	first, end int32
}

// newRTree builds the tree of the given bounds, item i having bounds[i].
func newRTree(bounds []orb.Bound) rtree {
	if len(bounds) == 0 {
		return rtree{}
	}
	level := make([]rnode, len(bounds))
	for i, b := range bounds {
		level[i] = rnode{b: b, first: int32(i), end: int32(i + 1)}
	}
	t := rtree{}
	for {
		strSort(level)
		t.levels = append(t.levels, level)
		if len(level) <= rtreeNodeSize {
			return t
		}
		parents := make([]rnode, 0, (len(level)+rtreeNodeSize-1)/rtreeNodeSize)
		for i := 0; i < len(level); i += rtreeNodeSize {
			j := min(i+rtreeNodeSize, len(level))
			b := level[i].b
			for _, n := range level[i+1 : j] {
				b = b.Union(n.b)
			}
			parents = append(parents, rnode{b: b, first: int32(i), end: int32(j)})
		}
		level = parents
	}
}

// strSort orders entries so that consecutive runs of rtreeNodeSize form
// compact tiles: vertical slabs by x, then by y within each slab.
func strSort(level []rnode) {
	n := len(level)
	leaves := (n + rtreeNodeSize - 1) / rtreeNodeSize
	slabs := int(math.Ceil(math.Sqrt(float64(leaves))))
	slabSize := slabs * rtreeNodeSize
	centre := func(n rnode, axis int) float64 { return n.b.Min[axis] + n.b.Max[axis] }
	byAxis := func(axis int) func(a, b rnode) int {
		return func(a, b rnode) int {
			ca, cb := centre(a, axis), centre(b, axis)
			switch {
			case ca < cb:
				return -1
			case ca > cb:
				return 1
			}
			return int(a.first) - int(b.first) // deterministic
		}
	}
	slices.SortFunc(level, byAxis(0))
	for i := 0; i < n; i += slabSize {
		slices.SortFunc(level[i:min(i+slabSize, n)], byAxis(1))
	}
}

// search calls fn with the index of every item whose bound intersects b
// (touching counts), until fn returns false.
func (t *rtree) search(b orb.Bound, fn func(item int) bool) {
	if len(t.levels) == 0 {
		return
	}
	top := len(t.levels) - 1
	for i := range t.levels[top] {
		if !t.visit(top, i, b, fn) {
			return
		}
	}
}

func (t *rtree) visit(level, i int, b orb.Bound, fn func(int) bool) bool {
	n := &t.levels[level][i]
	if !intersects(n.b, b) {
		return true
	}
	if level == 0 {
		return fn(int(n.first))
	}
	for j := n.first; j < n.end; j++ {
		if !t.visit(level-1, int(j), b, fn) {
			return false
		}
	}
	return true
}

// intersects is orb.Bound.Intersects without its emptiness checks, which
// the valid bounds of the tree do not need.
func intersects(a, b orb.Bound) bool {
	return a.Min[0] <= b.Max[0] && b.Min[0] <= a.Max[0] &&
		a.Min[1] <= b.Max[1] && b.Min[1] <= a.Max[1]
}
