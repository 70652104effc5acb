package permute

import (
	"math/rand/v2"
	"slices"
	"testing"

	"scalegnn/spmm"
)

func TestParseScheme(t *testing.T) {
	for _, s := range []Scheme{None, Single, Double} {
		got, err := ParseScheme(s.String())
		if err != nil || got != s {
			t.Errorf("ParseScheme(%q) = %v, %v", s.String(), got, err)
		}
	}
	if _, err := ParseScheme("triple"); err == nil {
		t.Error("ParseScheme accepted triple")
	}
	if s := Scheme(7).String(); s != "Scheme(7)" {
		t.Errorf("String of an invalid scheme: %q", s)
	}
}

func isPerm(p []int32) bool {
	q := slices.Clone(p)
	slices.Sort(q)
	for i, v := range q {
		if int(v) != i {
			return false
		}
	}
	return true
}

func TestNew(t *testing.T) {
	const n = 1000
	for _, tc := range []struct {
		s                Scheme
		identity, p2IsP1 bool
	}{
		{None, true, true},
		{Single, false, true},
		{Double, false, false},
	} {
		p := New(n, tc.s, 3)
		if p.Scheme != tc.s || len(p.P1) != n || len(p.P2) != n || !isPerm(p.P1) || !isPerm(p.P2) {
			t.Fatalf("%v: not permutations of %d", tc.s, n)
		}
		for i := range n {
			if p.P1[p.Inv1[i]] != int32(i) || p.Inv1[p.P1[i]] != int32(i) ||
				p.P2[p.Inv2[i]] != int32(i) || p.Inv2[p.P2[i]] != int32(i) {
				t.Fatalf("%v: inverse wrong at %d", tc.s, i)
			}
		}
		if slices.Equal(p.P1, identity(n)) != tc.identity {
			t.Errorf("%v: identity = %v", tc.s, !tc.identity)
		}
		if slices.Equal(p.P1, p.P2) != tc.p2IsP1 {
			t.Errorf("%v: P2 == P1 is %v", tc.s, !tc.p2IsP1)
		}
		again := New(n, tc.s, 3)
		if !slices.Equal(p.P1, again.P1) || !slices.Equal(p.P2, again.P2) {
			t.Errorf("%v: same seed, different permutations", tc.s)
		}
		if tc.s != None && slices.Equal(p.P1, New(n, tc.s, 4).P1) {
			t.Errorf("%v: different seeds, same permutation", tc.s)
		}
		r0, c0 := p.Layer(0)
		r1, c1 := p.Layer(3)
		if &r0[0] != &p.P1[0] || &c0[0] != &p.P2[0] || &r1[0] != &p.P2[0] || &c1[0] != &p.P1[0] {
			t.Errorf("%v: Layer returns the wrong permutations", tc.s)
		}
	}
	if !slices.Equal(New(50, Single, 9).P1, New(50, Double, 9).P1) {
		t.Error("Single and Double draw different P1 from one seed")
	}
	if p := New(0, Double, 1); len(p.P1) != 0 {
		t.Error("New(0) not empty")
	}
}

// randomCSR returns an r×c matrix with about density·r·c distinct entries.
func randomCSR(r, c int, density float64, seed uint64) (*spmm.CSR, [][]float32) {
	rng := rand.New(rand.NewPCG(seed, 0))
	dense := make([][]float32, r)
	var ri, ci []int32
	var v []float32
	for i := range r {
		dense[i] = make([]float32, c)
		for j := range c {
			if rng.Float64() < density {
				x := float32(rng.IntN(100) + 1)
				dense[i][j] = x
				ri, ci, v = append(ri, int32(i)), append(ci, int32(j)), append(v, x)
			}
		}
	}
	return spmm.FromCOO(r, c, ri, ci, v), dense
}

func randomPerm(n int, seed uint64) []int32 {
	return shuffled(n, seed, 99)
}

func TestPermuteMatchesDense(t *testing.T) {
	for _, tc := range []struct {
		name       string
		r, c       int
		rowP, colP bool
	}{
		{"both", 37, 37, true, true},
		{"rows only", 20, 31, true, false},
		{"cols only", 31, 20, false, true},
		{"none", 10, 10, false, false},
		// Enough rows for several goroutine tasks.
		{"tall", 3*rowsPerTask + 5, 9, true, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			a, dense := randomCSR(tc.r, tc.c, 0.2, 5)
			var rp, cp []int32
			if tc.rowP {
				rp = randomPerm(tc.r, 1)
			}
			if tc.colP {
				cp = randomPerm(tc.c, 2)
			}
			b := Permute(a, rp, cp)
			if err := b.Validate(); err != nil {
				t.Fatal(err)
			}
			if b.NNZ() != a.NNZ() {
				t.Fatalf("nnz %d, want %d", b.NNZ(), a.NNZ())
			}
			got := make([][]float32, tc.r)
			for i := range tc.r {
				got[i] = make([]float32, tc.c)
				for p := b.RowPtr[i]; p < b.RowPtr[i+1]; p++ {
					got[i][b.ColIdx[p]] = b.Val[p]
				}
			}
			for i := range tc.r {
				for j := range tc.c {
					oi, oj := i, j
					if rp != nil {
						oi = int(rp[i])
					}
					if cp != nil {
						oj = int(cp[j])
					}
					if got[i][j] != dense[oi][oj] {
						t.Fatalf("B[%d][%d] = %g, want A[%d][%d] = %g", i, j, got[i][j], oi, oj, dense[oi][oj])
					}
				}
			}
			// Undoing the permutation restores a.
			var ri, ci []int32
			if rp != nil {
				ri = Inverse(rp)
			}
			if cp != nil {
				ci = Inverse(cp)
			}
			back := Permute(b, ri, ci)
			if !slices.Equal(back.RowPtr, a.RowPtr) || !slices.Equal(back.ColIdx, a.ColIdx) || !slices.Equal(back.Val, a.Val) {
				t.Error("permuting by the inverses does not restore a")
			}
		})
	}
}

func TestApplyDouble(t *testing.T) {
	a, _ := randomCSR(40, 40, 0.1, 8)
	a = spmm.FromCOO(40, 40, append(rowsOf(a), colsOf(a)...), append(colsOf(a), rowsOf(a)...), nil) // symmetric
	p := New(40, Double, 11)
	even, odd := p.Apply(a, 0), p.Apply(a, 1)
	// For symmetric A, A[p2][:, p1] = (A[p1][:, p2])ᵀ.
	tr := spmm.Transpose(even)
	if !slices.Equal(odd.RowPtr, tr.RowPtr) || !slices.Equal(odd.ColIdx, tr.ColIdx) || !slices.Equal(odd.Val, tr.Val) {
		t.Error("odd-layer shard is not the transpose of the even one")
	}
}

func rowsOf(a *spmm.CSR) []int32 {
	var r []int32
	for i := range a.Rows {
		for p := a.RowPtr[i]; p < a.RowPtr[i+1]; p++ {
			r = append(r, int32(i))
		}
	}
	return r
}

func colsOf(a *spmm.CSR) []int32 { return slices.Clone(a.ColIdx[:a.NNZ()]) }

func TestGather(t *testing.T) {
	perm := []int32{2, 0, 1}
	if got := Gather([]string{"a", "b", "c"}, perm); !slices.Equal(got, []string{"c", "a", "b"}) {
		t.Errorf("Gather = %v", got)
	}
	if got := GatherRows([]float32{1, 2, 3, 4, 5, 6}, 2, perm); !slices.Equal(got, []float32{5, 6, 1, 2, 3, 4}) {
		t.Errorf("GatherRows = %v", got)
	}
}

func TestMisusePanics(t *testing.T) {
	a, _ := randomCSR(4, 4, 0.5, 1)
	for _, tc := range []struct {
		name string
		f    func()
	}{
		{"short perm", func() { Permute(a, []int32{0, 1, 2}, nil) }},
		{"repeated entry", func() { Permute(a, nil, []int32{0, 1, 1, 3}) }},
		{"out of range", func() { Inverse([]int32{0, 4, 1, 2}) }},
		{"negative n", func() { New(-1, None, 0) }},
		{"bad scheme", func() { New(3, Scheme(5), 0) }},
		{"zero blocks", func() { Balance(a, 0, 2) }},
		{"negative layer", func() { New(3, Double, 0).Layer(-1) }},
	} {
		func() {
			defer func() {
				if _, ok := recover().(UsageError); !ok {
					t.Errorf("%s: want a UsageError panic", tc.name)
				}
			}()
			tc.f()
		}()
	}
}

func TestSchemeText(t *testing.T) {
	for _, s := range []Scheme{None, Single, Double} {
		b, err := s.MarshalText()
		var got Scheme
		if err != nil || got.UnmarshalText(b) != nil || got != s {
			t.Errorf("%v: MarshalText %q, UnmarshalText back %v", s, b, got)
		}
	}
	got := Double
	err := got.UnmarshalText([]byte("triple"))
	if err == nil || err.Error() != `permute scheme "triple": expected one of "none", "single", "double"` || got != Double {
		t.Errorf("UnmarshalText(triple) = %v, left %v", err, got)
	}
}
