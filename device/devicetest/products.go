package devicetest

import (
	"fmt"
	"math"
	"testing"

	"scalegnn/device"
	"scalegnn/spmm"
)

// eps32 is float32's unit roundoff.
const eps32 = 1.0 / (1 << 24)

// testSpMM checks dst = A·B for random CSR matrices (empty rows included)
// against float64, element (i, j) within 2·nnz(i)·eps32·Σ|a·b| + tiny.
func testSpMM(t *testing.T, dev device.Device) {
	cases := []struct{ rows, cols, nnz, width, pad int }{
		{0, 4, 0, 3, 0}, {3, 5, 0, 4, 1}, {1, 1, 1, 1, 0}, {17, 9, 40, 17, 2},
		{64, 80, 500, 16, 0}, {300, 250, 3000, 128, 3}, {200, 200, 2000, 65, 1},
	}
	for n, c := range cases {
		r := newRand(uint64(800 + n))
		name := fmt.Sprintf("%dx%d nnz=%d width=%d", c.rows, c.cols, c.nnz, c.width)
		ri, ci := make([]int32, c.nnz), make([]int32, c.nnz)
		vals := make([]float32, c.nnz)
		for k := range ri {
			ri[k], ci[k], vals[k] = r.Int32N(int32(c.rows)), r.Int32N(int32(c.cols)), float32(r.NormFloat64())
		}
		a := spmm.FromCOO(c.rows, c.cols, ri, ci, vals)
		da := dev.UploadCSR(a)
		if da.Rows() != c.rows || da.Cols() != c.cols || da.NNZ() != a.NNZ() {
			t.Fatalf("UploadCSR %s: %d×%d nnz %d", name, da.Rows(), da.Cols(), da.NNZ())
		}
		b := newMat(dev, c.cols, c.width, c.pad, r, normal)
		dst := newMat(dev, c.rows, c.width, c.pad+1, r, normal)
		dev.SpMM(dst.m, da, b.m)
		want, bound := make([]float64, c.rows*c.width), make([]float64, c.rows*c.width)
		for i := range c.rows {
			for p := a.RowPtr[i]; p < a.RowPtr[i+1]; p++ {
				for j := range c.width {
					x := float64(a.Val[p]) * float64(b.want[int(a.ColIdx[p])*c.width+j])
					want[i*c.width+j] += x
					bound[i*c.width+j] += math.Abs(x)
				}
			}
			k := float64(a.RowPtr[i+1] - a.RowPtr[i])
			for j := range c.width {
				bound[i*c.width+j] *= 2 * (k + 1) * eps32
			}
		}
		checkBound(t, "SpMM "+name, dst.get(t, dev, "SpMM"), want, bound)
	}
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
	dims := [][3]int{{0, 3, 4}, {3, 0, 2}, {2, 3, 0}, {1, 1, 1}, {5, 17, 3}, {33, 16, 65}, {130, 40, 70}}
	forms := []struct {
		name   string
		tA, tB spmm.Op
	}{{"NN", spmm.NoTrans, spmm.NoTrans}, {"NT", spmm.NoTrans, spmm.Trans}, {"TN", spmm.Trans, spmm.NoTrans}}
	for n, mnk := range dims {
		m, nn, k := mnk[0], mnk[1], mnk[2]
		for _, f := range forms {
			for _, ab := range [][2]float32{{1, 0}, {-0.5, 1}, {2, 0.25}} {
				r := newRand(uint64(900 + n))
				name := fmt.Sprintf("%s m=%d n=%d k=%d alpha=%g beta=%g", f.name, m, nn, k, ab[0], ab[1])
				ar, ac := m, k
				if f.tA {
					ar, ac = k, m
				}
				br, bc := k, nn
				if f.tB {
					br, bc = nn, k
				}
				a := newMat(dev, ar, ac, 1, r, normal)
				b := newMat(dev, br, bc, 2, r, normal)
				dst := newMat(dev, m, nn, 3, r, normal)
				if ab[1] == 0 {
					for i := range dst.want {
						dst.want[i] = float32(math.NaN())
					}
					nan := float32(math.NaN())
					for i := range m {
						dev.Fill(dst.m.Slice(i, i+1, 0, nn), nan)
					}
				}
				at := func(h *hmat, tr spmm.Op, i, j int) float64 {
					if tr {
						i, j = j, i
					}
					return float64(h.want[i*h.cols+j])
				}
				want, bound := make([]float64, m*nn), make([]float64, m*nn)
				for i := range m {
					for j := range nn {
						var s, sa float64
						for p := range k {
							x := at(a, f.tA, i, p) * at(b, f.tB, p, j)
							s += x
							sa += math.Abs(x)
						}
						w, wa := float64(ab[0])*s, math.Abs(float64(ab[0]))*sa
						if ab[1] != 0 {
							c := float64(ab[1]) * float64(dst.want[i*nn+j])
							w, wa = w+c, wa+math.Abs(c)
						}
						bound[i*nn+j] = 2 * float64(k+2) * eps32 * wa
						want[i*nn+j] = w
					}
				}
				dev.Gemm(f.tA, f.tB, ab[0], a.m, b.m, ab[1], dst.m)
				checkBound(t, "Gemm "+name, dst.get(t, dev, "Gemm"), want, bound)
			}
		}
	}
}
