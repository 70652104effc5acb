package dataset

import (
	"math"
	"testing"

	"scalegnn/spmm"
)

// denseGCN is the float64 reference: Â = D^-1/2 (A+I) D^-1/2.
func denseGCN(n int, a [][]float64) [][]float64 {
	out := make([][]float64, n)
	deg := make([]float64, n)
	for i := range n {
		out[i] = make([]float64, n)
		for j := range n {
			out[i][j] = a[i][j]
			if i == j {
				out[i][j]++
			}
			deg[i] += out[i][j]
		}
	}
	for i := range n {
		for j := range n {
			if out[i][j] != 0 {
				out[i][j] /= math.Sqrt(deg[i] * deg[j])
			}
		}
	}
	return out
}

func toDense(c *spmm.CSR) [][]float64 {
	d := make([][]float64, c.Rows)
	for i := range c.Rows {
		d[i] = make([]float64, c.Cols)
		for p := c.RowPtr[i]; p < c.RowPtr[i+1]; p++ {
			d[i][c.ColIdx[p]] = float64(c.Val[p])
		}
	}
	return d
}

func TestNormalizeGCN(t *testing.T) {
	for _, tc := range []struct {
		name  string
		n     int
		edges [][2]int32
		w     []float32 // nil: binary
	}{
		{"path with isolated vertex", 5, [][2]int32{{0, 1}, {1, 2}, {2, 3}}, nil},
		{"star", 6, [][2]int32{{0, 1}, {0, 2}, {0, 3}, {0, 4}, {0, 5}}, nil},
		{"existing diagonal, weighted", 4, [][2]int32{{0, 0}, {0, 1}, {1, 3}, {2, 2}, {3, 3}}, []float32{2, 0.5, 3, 1, 4}},
		{"empty", 3, nil, nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var ri, ci []int32
			var vals []float32
			a := make([][]float64, tc.n)
			for i := range a {
				a[i] = make([]float64, tc.n)
			}
			for k, e := range tc.edges {
				w := float32(1)
				if tc.w != nil {
					w = tc.w[k]
				}
				ri, ci, vals = append(ri, e[0]), append(ci, e[1]), append(vals, w)
				a[e[0]][e[1]] = float64(w)
				if e[0] != e[1] {
					ri, ci, vals = append(ri, e[1]), append(ci, e[0]), append(vals, w)
					a[e[1]][e[0]] = float64(w)
				}
			}
			got := NormalizeGCN(spmm.FromCOO(tc.n, tc.n, ri, ci, vals))
			if err := got.Validate(); err != nil {
				t.Fatal(err)
			}
			want := denseGCN(tc.n, a)
			gd := toDense(got)
			for i := range tc.n {
				for j := range tc.n {
					if math.Abs(gd[i][j]-want[i][j]) > 1e-6 {
						t.Errorf("Â[%d][%d] = %g, want %g", i, j, gd[i][j], want[i][j])
					}
					if gd[i][j] != gd[j][i] {
						t.Errorf("Â not symmetric at (%d, %d)", i, j)
					}
				}
			}
		})
	}
}

func TestNormalizeGCNCora(t *testing.T) {
	g, err := Builtin("cora")
	if err != nil {
		t.Fatal(err)
	}
	a := NormalizeGCN(g.Adj)
	if a.NNZ() != g.Adj.NNZ()+g.N {
		t.Errorf("nnz %d, want %d + %d self loops", a.NNZ(), g.Adj.NNZ(), g.N)
	}
	at := spmm.Transpose(a)
	for p := range a.NNZ() {
		if a.ColIdx[p] != at.ColIdx[p] || a.Val[p] != at.Val[p] {
			t.Fatalf("Â of Cora not symmetric at entry %d", p)
		}
	}
	// Row i of Â sums to Σ_j 1/sqrt(d_i d_j) over N(i) ∪ {i}.
	deg := make([]float64, g.N)
	for i := range g.N {
		deg[i] = float64(g.Adj.RowPtr[i+1]-g.Adj.RowPtr[i]) + 1
	}
	for i := range g.N {
		want := 1 / deg[i]
		for p := g.Adj.RowPtr[i]; p < g.Adj.RowPtr[i+1]; p++ {
			want += 1 / math.Sqrt(deg[i]*deg[g.Adj.ColIdx[p]])
		}
		var got float64
		for p := a.RowPtr[i]; p < a.RowPtr[i+1]; p++ {
			got += float64(a.Val[p])
		}
		if math.Abs(got-want) > 1e-5 {
			t.Fatalf("row %d sums to %g, want %g", i, got, want)
		}
	}
}

func TestNormalizeGCNPanicsOnNonSquare(t *testing.T) {
	defer func() {
		if _, ok := recover().(spmm.ShapeError); !ok {
			t.Error("want a spmm.ShapeError panic")
		}
	}()
	NormalizeGCN(spmm.FromCOO(2, 3, nil, nil, nil))
}

func TestRowNormalize(t *testing.T) {
	g := &Graph{N: 3, F: 3, Features: []float32{1, 1, 2, 0, 0, 0, 0, 3, 0}}
	RowNormalize(g)
	want := []float32{0.25, 0.25, 0.5, 0, 0, 0, 0, 1, 0}
	for k := range want {
		if math.Abs(float64(g.Features[k]-want[k])) > 1e-7 {
			t.Errorf("feature %d = %g, want %g", k, g.Features[k], want[k])
		}
	}
}
