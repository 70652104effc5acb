package dataset

import (
	"fmt"
	"math"
)

// NumEdges is the number of undirected edges: half the adjacency entries,
// since Adj is symmetric without self loops.
func (g *Graph) NumEdges() int { return g.Adj.NNZ() / 2 }

// Count returns the number of vertices in a mask.
func Count(mask []bool) int {
	n := 0
	for _, b := range mask {
		if b {
			n++
		}
	}
	return n
}

// Validate checks every invariant documented on Graph: sizes, a
// structurally valid symmetric binary adjacency without self loops, finite
// features, labels in range, and disjoint masks that select only labeled
// vertices. Loaders and generators establish these; Validate is for data
// assembled elsewhere and for tests. It costs O(N·F + nnz).
func (g *Graph) Validate() error {
	name := g.Name
	if name == "" {
		name = "graph"
	}
	fail := func(format string, args ...any) error {
		return fmt.Errorf("dataset: %s: %s", name, fmt.Sprintf(format, args...))
	}
	if g.N < 0 || g.F < 0 || g.Classes < 0 {
		return fail("negative size N=%d F=%d Classes=%d", g.N, g.F, g.Classes)
	}
	a := g.Adj
	if a == nil {
		return fail("no adjacency")
	}
	if a.Rows != g.N || a.Cols != g.N {
		return fail("adjacency is %d×%d, expected %d×%d", a.Rows, a.Cols, g.N, g.N)
	}
	if err := a.Validate(); err != nil {
		return fail("adjacency: %v", err)
	}
	// Symmetry: count, for every entry (i, j), a matching (j, i), by a
	// binary search in row j (columns are sorted).
	for i := 0; i < g.N; i++ {
		for p := a.RowPtr[i]; p < a.RowPtr[i+1]; p++ {
			j := int(a.ColIdx[p])
			if j == i {
				return fail("adjacency has a self loop at vertex %d", i)
			}
			if a.Val[p] != 1 {
				return fail("adjacency entry (%d, %d) is %g, expected 1", i, j, a.Val[p])
			}
			if !hasEntry(a.ColIdx[a.RowPtr[j]:a.RowPtr[j+1]], int32(i)) {
				return fail("adjacency is not symmetric: (%d, %d) without (%d, %d)", i, j, j, i)
			}
		}
	}
	if len(g.Features) != g.N*g.F {
		return fail("%d feature values, expected N·F = %d·%d", len(g.Features), g.N, g.F)
	}
	for k, x := range g.Features {
		if math.IsNaN(float64(x)) || math.IsInf(float64(x), 0) {
			return fail("feature (%d, %d) is %g", k/g.F, k%g.F, x)
		}
	}
	if len(g.Labels) != g.N {
		return fail("%d labels, expected N = %d", len(g.Labels), g.N)
	}
	for i, l := range g.Labels {
		if l < -1 || int(l) >= g.Classes {
			return fail("label of vertex %d is %d, expected -1 or in [0, %d)", i, l, g.Classes)
		}
	}
	if g.ClassNames != nil && len(g.ClassNames) != g.Classes {
		return fail("%d class names for %d classes", len(g.ClassNames), g.Classes)
	}
	masks := []struct {
		name string
		m    []bool
	}{{"train", g.Train}, {"val", g.Val}, {"test", g.Test}}
	for _, m := range masks {
		if len(m.m) != g.N {
			return fail("%s mask has length %d, expected N = %d", m.name, len(m.m), g.N)
		}
	}
	for i := 0; i < g.N; i++ {
		in := 0
		for _, m := range masks {
			if m.m[i] {
				in++
			}
		}
		if in > 1 {
			return fail("vertex %d is in more than one of train/val/test", i)
		}
		if in == 1 && g.Labels[i] < 0 {
			return fail("unlabeled vertex %d is in a split", i)
		}
	}
	return nil
}

// hasEntry reports whether the sorted column list cols contains c.
func hasEntry(cols []int32, c int32) bool {
	lo, hi := 0, len(cols)
	for lo < hi {
		m := int(uint(lo+hi) >> 1)
		if cols[m] < c {
			lo = m + 1
		} else {
			hi = m
		}
	}
	return lo < len(cols) && cols[lo] == c
}
