package devicetest

import (
	"fmt"
	"math"
	"math/rand/v2"
	"testing"

	"scalegnn/device"
	"scalegnn/spmm"
)

// eps32 is float32's unit roundoff.
const eps32 = 1.0 / (1 << 24)

// testSpMM checks dst = A·B for random CSR matrices (empty rows included)
// against float64, element (i, j) within 2·nnz(i)·eps32·Σ|a·b| + tiny.
func testSpMM(t *testing.T, dev device.Device) {
	spmmCases(t, dev, func(c spmmCase) {
		b := newMat(dev, c.cols, c.width, c.pad, c.r, normal)
		dst := newMat(dev, c.rows, c.width, c.pad+1, c.r, normal)
		dev.SpMM(dst.m, c.da, b.m)
		want, bound := c.reference(b.want, 0)
		checkBound(t, "SpMM "+c.name, dst.get(t, dev, "SpMM"), want, bound)
	})
}

// spmmCase is one sparse product of the SpMM tests: a (rows×cols, on the
// host and uploaded as da) times a dense operand of width columns, the
// dense views padded by pad, drawn from r.
type spmmCase struct {
	name                   string
	rows, cols, width, pad int
	a                      *spmm.CSR
	da                     *device.CSR
	r                      *rand.Rand
}

// spmmCases runs f on random CSR matrices (none, one and many nonzeros,
// empty rows, odd widths, strided views), each with its own fixed seed.
func spmmCases(t *testing.T, dev device.Device, f func(spmmCase)) {
	cases := []struct{ rows, cols, nnz, width, pad int }{
		{0, 4, 0, 3, 0}, {3, 5, 0, 4, 1}, {1, 1, 1, 1, 0}, {17, 9, 40, 17, 2},
		{64, 80, 500, 16, 0}, {300, 250, 3000, 128, 3}, {200, 200, 2000, 65, 1},
	}
	for n, k := range cases {
		c := spmmCase{rows: k.rows, cols: k.cols, width: k.width, pad: k.pad, r: newRand(uint64(800 + n))}
		c.name = fmt.Sprintf("%dx%d nnz=%d width=%d", k.rows, k.cols, k.nnz, k.width)
		ri, ci := make([]int32, k.nnz), make([]int32, k.nnz)
		vals := make([]float32, k.nnz)
		for p := range ri {
			ri[p], ci[p], vals[p] = c.r.Int32N(int32(k.rows)), c.r.Int32N(int32(k.cols)), float32(c.r.NormFloat64())
		}
		c.a = spmm.FromCOO(k.rows, k.cols, ri, ci, vals)
		c.da = dev.UploadCSR(c.a)
		if c.da.Rows() != k.rows || c.da.Cols() != k.cols || c.da.NNZ() != c.a.NNZ() {
			t.Fatalf("UploadCSR %s: %d×%d nnz %d", c.name, c.da.Rows(), c.da.Cols(), c.da.NNZ())
		}
		f(c)
	}
}

// reference returns a·b in float64 from b's values (row-major) with the
// bound 2·(nnz(i)+1)·eps32·Σ|a·b|, Higham's bound for float32 sums in any
// order with a factor 2 to spare, plus rel·Σ|a·b| for a device that
// rounds a's values by up to rel/2 first.
func (c spmmCase) reference(b []float32, rel float64) (want, bound []float64) {
	w := c.width
	want, bound = make([]float64, c.rows*w), make([]float64, c.rows*w)
	for i := range c.rows {
		for p := c.a.RowPtr[i]; p < c.a.RowPtr[i+1]; p++ {
			for j := range w {
				x := float64(c.a.Val[p]) * float64(b[int(c.a.ColIdx[p])*w+j])
				want[i*w+j] += x
				bound[i*w+j] += math.Abs(x)
			}
		}
		k := float64(c.a.RowPtr[i+1] - c.a.RowPtr[i])
		for j := range w {
			bound[i*w+j] *= 2*(k+1)*eps32 + rel
		}
	}
	return want, bound
}

func checkBound(t *testing.T, name string, got []float32, want, bound []float64) {
	t.Helper()
	bad := 0
	for k := range got {
		if !(math.Abs(float64(got[k])-want[k]) <= bound[k]+1e-30) {
			if bad++; bad <= 5 {
				t.Errorf("%s: element %d = %g, want %g ± %.3g", name, k, got[k], want[k], bound[k])
			}
		}
	}
}

// testGemm checks the NN, NT and TN forms with alpha and beta (beta 0 on a
// NaN-filled dst must not read it) on strided operands against float64.
func testGemm(t *testing.T, dev device.Device) {
	gemmCases(gemmForms[:3], func(c gemmCase) {
		a := newMat(dev, c.ar, c.ac, 1, c.r, normal)
		b := newMat(dev, c.br, c.bc, 2, c.r, normal)
		dst := c.dst(dev)
		want, bound := c.reference(a.want, b.want, dst.want)
		dev.Gemm(c.tA, c.tB, c.alpha, a.m, b.m, c.beta, dst.m)
		checkBound(t, "Gemm "+c.name, dst.get(t, dev, "Gemm"), want, bound)
	})
}

// gemmForms are the transpose forms, the three training uses first.
var gemmForms = []gemmForm{{"NN", spmm.NoTrans, spmm.NoTrans}, {"NT", spmm.NoTrans, spmm.Trans}, {"TN", spmm.Trans, spmm.NoTrans}, {"TT", spmm.Trans, spmm.Trans}}

type gemmForm struct {
	name   string
	tA, tB spmm.Op
}

// gemmCase is one product of the GEMM tests: dst (m×n) = alpha·op(a)·op(b)
// + beta·dst with a ar×ac and b br×bc, operands drawn from r.
type gemmCase struct {
	name           string
	m, n, k        int
	ar, ac, br, bc int
	tA, tB         spmm.Op
	alpha, beta    float32
	r              *rand.Rand
}

// gemmCases runs f on every shape (empty ones included), form and
// (alpha, beta), each with its own fixed seed.
func gemmCases(forms []gemmForm, f func(gemmCase)) {
	dims := [][3]int{{0, 3, 4}, {3, 0, 2}, {2, 3, 0}, {1, 1, 1}, {5, 17, 3}, {33, 16, 65}, {130, 40, 70}}
	for n, mnk := range dims {
		for _, fm := range forms {
			for _, ab := range [][2]float32{{1, 0}, {-0.5, 1}, {2, 0.25}} {
				c := gemmCase{m: mnk[0], n: mnk[1], k: mnk[2], tA: fm.tA, tB: fm.tB, alpha: ab[0], beta: ab[1], r: newRand(uint64(900 + n))}
				c.name = fmt.Sprintf("%s m=%d n=%d k=%d alpha=%g beta=%g", fm.name, c.m, c.n, c.k, c.alpha, c.beta)
				c.ar, c.ac, c.br, c.bc = c.m, c.k, c.k, c.n
				if c.tA {
					c.ar, c.ac = c.k, c.m
				}
				if c.tB {
					c.br, c.bc = c.n, c.k
				}
				f(c)
			}
		}
	}
}

// dst is the case's destination, filled with NaN when beta is 0 (which
// must not read it).
func (c gemmCase) dst(dev device.Device) *hmat {
	dst := newMat(dev, c.m, c.n, 3, c.r, normal)
	if c.beta == 0 {
		nan := float32(math.NaN())
		for i := range dst.want {
			dst.want[i] = nan
		}
		for i := range c.m {
			dev.Fill(dst.m.Slice(i, i+1, 0, c.n), nan)
		}
	}
	return dst
}

// reference returns the product in float64 from the operands' values
// (row-major, untransposed) and dst's, with the bound
// 2·(k+2)·eps32·Σ|terms|: float32 sums in any order (γ(k+1) per term,
// with room for alpha's and beta's roundings), and twice that for a sum
// whose additions truncate rather than round (tensor cores).
func (c gemmCase) reference(a, b, dst []float32) (want, bound []float64) {
	at := func(v []float32, cols int, tr spmm.Op, i, j int) float64 {
		if tr {
			i, j = j, i
		}
		return float64(v[i*cols+j])
	}
	want, bound = make([]float64, c.m*c.n), make([]float64, c.m*c.n)
	for i := range c.m {
		for j := range c.n {
			var s, sa float64
			for p := range c.k {
				x := at(a, c.ac, c.tA, i, p) * at(b, c.bc, c.tB, p, j)
				s += x
				sa += math.Abs(x)
			}
			w, wa := float64(c.alpha)*s, math.Abs(float64(c.alpha))*sa
			if c.beta != 0 {
				d := float64(c.beta) * float64(dst[i*c.n+j])
				w, wa = w+d, wa+math.Abs(d)
			}
			bound[i*c.n+j] = 2 * float64(c.k+2) * eps32 * wa
			want[i*c.n+j] = w
		}
	}
	return want, bound
}
