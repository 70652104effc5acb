package dataset

import "scalegnn/spmm"

// symmetricAdj builds the simple undirected adjacency of an edge list: each
// (u, v) with u != v becomes the entries (u, v) and (v, u), duplicates are
// merged, self loops dropped (GCN normalisation adds them back uniformly)
// and every value is 1.
//
// us and vs are overwritten. When their capacity is at least twice their
// length the mirrored entries are appended in place, which keeps the peak
// memory of large generated graphs at the two COO arrays plus the CSR.
func symmetricAdj(n int, us, vs []int32) *spmm.CSR {
	if len(us) != len(vs) {
		panic(spmm.ShapeError("symmetricAdj: edge lists of different lengths"))
	}
	m := 0
	for k, u := range us {
		if u != vs[k] {
			us[m], vs[m] = u, vs[k]
			m++
		}
	}
	us, vs = us[:m], vs[:m]
	us = append(us, vs...)
	vs = append(vs, us[:m]...)
	a := spmm.FromCOO(n, n, us, vs, nil)
	// FromCOO sums duplicates; the adjacency is binary.
	for i := range a.Val {
		a.Val[i] = 1
	}
	return a
}
