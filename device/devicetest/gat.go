package devicetest

import (
	"fmt"
	"math"
	"math/rand/v2"
	"slices"
	"testing"

	"scalegnn/device"
	"scalegnn/spmm"
)

// The graph attention operations (device/gat.go), each checked against a
// float64 reference on the float32 inputs the device actually holds: the
// chain runs as the layer runs it (HeadDot, GATScores, GATExpSum,
// GATNormalize, SpMMHeads; SDDMMHeads, GATRowDot, GATLogitGrad,
// EdgeSums, HeadDot's gradients), and each step's reference starts from
// the previous step's downloaded output, so that an error is reported by
// the operation that made it. Sums are bounded by 2(n+1)·eps32·Σ|terms|
// (any summation order passes, a wrong term does not); divisions, the
// dropout scaling and the masks are single roundings and are checked bit
// for bit; exp and expm1 within a float32 ulp or so of float64's, since a
// GPU's need not be Go's. Every output is embedded in sentinel padding,
// and the sums are computed twice, which must give the same bits
// (reproducible reductions: no atomics in an order-dependent sum).

// gatCase is one pattern and head layout. The pattern's rows cycle
// through empty, one entry and up to maxDeg distinct sorted columns.
type gatCase struct {
	rows, cols, maxDeg int
	heads, f           int // K and F' (the width per head)
	pad                int
}

var gatCases = []gatCase{
	{0, 3, 2, 1, 1, 0},
	{3, 0, 0, 2, 3, 1},
	{1, 1, 1, 1, 1, 0},
	{5, 7, 4, 2, 3, 1},
	{17, 13, 6, 8, 1, 2},
	{40, 40, 9, 3, 5, 0},
	{64, 50, 20, 1, 17, 3},
	// One head as wide as a layer: how the layers add their bias
	// (HeadDotBackward) and sum its gradient (HeadDotGrad).
	{300, 300, 6, 1, 64, 2},
	// Large enough for the CPU device to split every operation.
	{600, 500, 24, 8, 4, 1},
}

// gatPattern draws the case's CSR pattern (values 1, never read).
func gatPattern(r *rand.Rand, c gatCase) *spmm.CSR {
	a := &spmm.CSR{Rows: c.rows, Cols: c.cols, RowPtr: make([]int64, c.rows+1)}
	for i := range c.rows {
		deg := 0
		switch i % 5 {
		case 0:
		case 1:
			deg = 1
		default:
			deg = r.IntN(c.maxDeg + 1)
		}
		deg = min(deg, c.cols)
		cols := r.Perm(c.cols)[:deg]
		slices.Sort(cols)
		for _, j := range cols {
			a.ColIdx = append(a.ColIdx, int32(j))
			a.Val = append(a.Val, 1)
		}
		a.RowPtr[i+1] = int64(len(a.ColIdx))
	}
	return a
}

// hvec is a device vector embedded in sentinel padding, and its values as
// uploaded.
type hvec struct {
	pad   int
	whole device.Buffer[float32]
	v     device.Buffer[float32]
	want  []float32
}

const vecPad = 3

func newVec(dev device.Device, n int, r *rand.Rand, gen func(*rand.Rand) float32) *hvec {
	whole := make([]float32, n+2*vecPad)
	for k := range whole {
		whole[k] = sentinel
	}
	h := &hvec{pad: vecPad, want: make([]float32, n)}
	for k := range n {
		if gen != nil {
			h.want[k] = gen(r)
		}
		whole[vecPad+k] = h.want[k]
	}
	h.whole = upload(dev, whole)
	h.v = h.whole.Slice(vecPad, vecPad+n)
	return h
}

// get downloads the vector and fails t if its padding changed.
func (h *hvec) get(t *testing.T, dev device.Device, name string) []float32 {
	t.Helper()
	whole := download(dev, h.whole)
	n := len(whole) - 2*h.pad
	for k, v := range whole {
		if (k < h.pad || k >= h.pad+n) && v != sentinel {
			t.Fatalf("%s: wrote outside the vector at element %d (%d before it)", name, k, h.pad)
		}
	}
	return whole[h.pad : h.pad+n]
}

// set uploads v into the vector (for inputs taken from an earlier output).
func (h *hvec) set(dev device.Device, v []float32) {
	device.Upload(dev, h.v, 0, v)
	h.want = append(h.want[:0], v...)
}

// sumBound turns Σ|terms| and the number of terms into the bound of a
// float32 sum in any order.
func sumBound(abs float64, n int) float64 { return 2 * float64(n+1) * eps32 * abs }

// again runs op a second time and checks that it reproduces got bit for
// bit: a device's sums must not depend on scheduling.
func again(t *testing.T, name string, got []float32, op func() []float32) {
	t.Helper()
	exact(t, name+" (repeated)", op(), got)
}

func leaky64(x, slope float64) float64 {
	if x > 0 {
		return x
	}
	return slope * x
}

func testGAT(t *testing.T, dev device.Device) {
	for n, c := range gatCases {
		for _, p := range []float64{0, 0.5} {
			name := fmt.Sprintf("%dx%d K=%d F'=%d pad=%d p=%g", c.rows, c.cols, c.heads, c.f, c.pad, p)
			t.Run(name, func(t *testing.T) { testGATCase(t, dev, c, p, uint64(1000+n)) })
		}
	}
	testELU(t, dev)
	testHeadMean(t, dev)
}

func testGATCase(t *testing.T, dev device.Device, c gatCase, p float64, seed uint64) {
	r := newRand(seed)
	K, F := c.heads, c.f
	W := K * F
	a := gatPattern(r, c)
	at, perm := spmm.TransposePerm(a)
	da, dat := dev.UploadCSR(a), dev.UploadCSR(at)
	nnz := int(a.NNZ())
	permBuf := upload(dev, perm)
	none := device.Buffer[int32]{}

	rowVerts, colVerts := make([]int32, c.rows), make([]int32, c.cols)
	for i := range rowVerts {
		rowVerts[i] = r.Int32N(1 << 20)
	}
	for j := range colVerts {
		colVerts[j] = r.Int32N(1 << 20)
	}
	g := device.GAT{Heads: K, Slope: 0.2, Seed: 4242, Step: 11, Site: 5, P: p}
	if p > 0 {
		g.RowVerts, g.ColVerts = upload(dev, rowVerts), upload(dev, colVerts)
	}
	scale := [2]float64{0, float64(float32(1 / (1 - p)))}
	kept := func(i, j, k int) bool {
		return p == 0 || dropKeep(g.Seed, g.Step, g.Site, rowVerts[i], int(colVerts[j])*K+k, p)
	}
	// rowOf[p] is the row of entry p.
	rowOf := make([]int, nnz)
	for i := range c.rows {
		for q := a.RowPtr[i]; q < a.RowPtr[i+1]; q++ {
			rowOf[q] = i
		}
	}
	slope := float64(g.Slope)

	// HeadDot: s from the rows' projections, t from the columns'.
	yr := newMat(dev, c.rows, W, c.pad, r, normal)
	yc := newMat(dev, c.cols, W, c.pad+1, r, normal)
	attS, attD := newVec(dev, W, r, normal), newVec(dev, W, r, normal)
	s := newVec(dev, c.rows*K, r, normal)
	tt := newVec(dev, c.cols*K, r, normal)
	headDot := func(name string, out *hvec, y *hmat, att *hvec) []float32 {
		dev.HeadDot(out.v, y.m, att.v, K)
		got := out.get(t, dev, name)
		want, bound := make([]float64, y.rows*K), make([]float64, y.rows*K)
		for i := range y.rows {
			for k := range K {
				var sum, abs float64
				for cc := k * F; cc < (k+1)*F; cc++ {
					x := float64(y.want[i*W+cc]) * float64(att.want[cc])
					sum, abs = sum+x, abs+math.Abs(x)
				}
				want[i*K+k], bound[i*K+k] = sum, sumBound(abs, F)
			}
		}
		checkBound(t, name, got, want, bound)
		return got
	}
	s.want = headDot("HeadDot s", s, yr, attS)
	tt.want = headDot("HeadDot t", tt, yc, attD)

	// GATScores: e and the row maxima, over garbage.
	e := newVec(dev, nnz*K, r, normal)
	mx := newVec(dev, c.rows*K, r, normal)
	dev.GATScores(e.v, mx.v, da, s.v, tt.v, g)
	gotE, gotMx := e.get(t, dev, "GATScores e"), mx.get(t, dev, "GATScores mx")
	{
		want, bound := make([]float64, nnz*K), make([]float64, nnz*K)
		wantMx := make([]float32, c.rows*K)
		for i := range c.rows {
			for k := range K {
				wantMx[i*K+k] = float32(math.Inf(-1))
			}
			for q := a.RowPtr[i]; q < a.RowPtr[i+1]; q++ {
				j := int(a.ColIdx[q])
				for k := range K {
					si, tj := float64(s.want[i*K+k]), float64(tt.want[j*K+k])
					// The float32 sum s+t is 0 only when the exact sum is
					// (no flush to zero), so the sign test is float64's.
					want[int(q)*K+k] = leaky64(si+tj, slope)
					bound[int(q)*K+k] = 2 * eps32 * (math.Abs(si) + math.Abs(tj))
					wantMx[i*K+k] = max(wantMx[i*K+k], gotE[int(q)*K+k])
				}
			}
		}
		checkBound(t, "GATScores e", gotE, want, bound)
		// The maximum is exact: the largest of the device's own scores.
		exact(t, "GATScores mx", gotMx, wantMx)
	}

	// GATExpSum: exp(e − mx) in place, and the row sums.
	sums := newVec(dev, c.rows*K, r, normal)
	dev.GATExpSum(e.v, sums.v, da, mx.v, g)
	gotX, gotSums := e.get(t, dev, "GATExpSum e"), sums.get(t, dev, "GATExpSum sums")
	{
		want, bound := make([]float64, nnz*K), make([]float64, nnz*K)
		wantS, boundS := make([]float64, c.rows*K), make([]float64, c.rows*K)
		for q := range nnz {
			i := rowOf[q]
			for k := range K {
				x := float64(gotE[q*K+k]) - float64(gotMx[i*K+k])
				w := math.Exp(x)
				// float32(e − mx) is off by eps32·|x|, which moves exp by
				// that relative amount; then exp's and the final rounding.
				want[q*K+k], bound[q*K+k] = w, w*eps32*(2+math.Abs(x))
				wantS[i*K+k] += float64(gotX[q*K+k])
				boundS[i*K+k] += float64(gotX[q*K+k])
			}
		}
		for i := range c.rows {
			n := int(a.RowPtr[i+1] - a.RowPtr[i])
			for k := range K {
				boundS[i*K+k] = sumBound(boundS[i*K+k], n)
			}
		}
		checkBound(t, "GATExpSum e", gotX, want, bound)
		checkBound(t, "GATExpSum sums", gotSums, wantS, boundS)
		again(t, "GATExpSum sums", gotSums, func() []float32 {
			e.set(dev, gotE)
			dev.GATExpSum(e.v, sums.v, da, mx.v, g)
			return sums.get(t, dev, "GATExpSum sums")
		})
	}

	// GATNormalize, out of place and then in place (alpha == e); drop is
	// written only with dropout and is otherwise left alone.
	alpha := newVec(dev, nnz*K, r, normal)
	drop := newVec(dev, nnz*K, r, normal)
	dropBefore := slices.Clone(drop.want)
	wantAlpha, wantDrop := make([]float32, nnz*K), make([]float32, nnz*K)
	for q := range nnz {
		i, j := rowOf[q], int(a.ColIdx[q])
		for k := range K {
			// One division rounded once: float64's quotient rounded to
			// float32 is the float32 quotient (no double rounding).
			v := float32(float64(gotX[q*K+k]) / float64(gotSums[i*K+k]))
			wantAlpha[q*K+k] = v
			keep := 0
			if kept(i, j, k) {
				keep = 1
			}
			wantDrop[q*K+k] = float32(float64(v) * scale[keep])
		}
	}
	if p == 0 {
		wantDrop = dropBefore
	}
	dev.GATNormalize(alpha.v, drop.v, da, e.v, sums.v, g)
	exact(t, "GATNormalize alpha", alpha.get(t, dev, "GATNormalize alpha"), wantAlpha)
	exact(t, "GATNormalize drop", drop.get(t, dev, "GATNormalize drop"), wantDrop)
	if p > 0 && nnz*K >= 1000 {
		var n int
		for _, v := range wantDrop {
			if v == 0 {
				n++
			}
		}
		if f := float64(n) / float64(nnz*K); math.Abs(f-p) > 0.1 {
			t.Errorf("the reference drops %.3f of the coefficients at p = %g", f, p)
		}
	}
	drop.set(dev, dropBefore)
	dev.GATNormalize(e.v, drop.v, da, e.v, sums.v, g)
	exact(t, "GATNormalize alpha == e", e.get(t, dev, "GATNormalize alpha == e"), wantAlpha)
	exact(t, "GATNormalize alpha == e drop", drop.get(t, dev, "GATNormalize alpha == e drop"), wantDrop)
	alpha.want = wantAlpha
	// What the product aggregates: the dropped coefficients, or α.
	coef := drop
	if p == 0 {
		coef = alpha
	}

	// SpMMHeads over a (perm empty), and over its transpose through perm,
	// whose reference scatters a's entries instead.
	spmmHeads := func(name string, pat *device.CSR, pm device.Buffer[int32], transposed bool) {
		outRows, inRows := c.rows, c.cols
		if transposed {
			outRows, inRows = c.cols, c.rows
		}
		b := newMat(dev, inRows, W, c.pad+2, r, normal)
		dst := newMat(dev, outRows, W, c.pad, r, normal)
		dev.SpMMHeads(dst.m, pat, coef.v, pm, b.m, K)
		got := dst.get(t, dev, name)
		want, abs := make([]float64, outRows*W), make([]float64, outRows*W)
		deg := make([]int, outRows)
		for q := range nnz {
			o, in := rowOf[q], int(a.ColIdx[q])
			if transposed {
				o, in = in, o
			}
			deg[o]++
			for k := range K {
				w := float64(coef.want[q*K+k])
				for cc := k * F; cc < (k+1)*F; cc++ {
					x := w * float64(b.want[in*W+cc])
					want[o*W+cc] += x
					abs[o*W+cc] += math.Abs(x)
				}
			}
		}
		for o := range outRows {
			for cc := range W {
				abs[o*W+cc] = sumBound(abs[o*W+cc], deg[o])
			}
		}
		checkBound(t, name, got, want, abs)
		again(t, name, got, func() []float32 {
			dev.SpMMHeads(dst.m, pat, coef.v, pm, b.m, K)
			return dst.get(t, dev, name)
		})
	}
	coef.want = download(dev, coef.v)
	spmmHeads("SpMMHeads", da, none, false)
	spmmHeads("SpMMHeads transposed", dat, permBuf, true)

	// SDDMMHeads: the gradient of the coefficients.
	dOut := newMat(dev, c.rows, W, c.pad+1, r, normal)
	yIn := newMat(dev, c.cols, W, c.pad, r, normal)
	dalpha := newVec(dev, nnz*K, r, normal)
	dev.SDDMMHeads(dalpha.v, da, dOut.m, yIn.m, K)
	gotD := dalpha.get(t, dev, "SDDMMHeads")
	{
		want, bound := make([]float64, nnz*K), make([]float64, nnz*K)
		for q := range nnz {
			i, j := rowOf[q], int(a.ColIdx[q])
			for k := range K {
				var sum, abs float64
				for cc := k * F; cc < (k+1)*F; cc++ {
					x := float64(dOut.want[i*W+cc]) * float64(yIn.want[j*W+cc])
					sum, abs = sum+x, abs+math.Abs(x)
				}
				want[q*K+k], bound[q*K+k] = sum, sumBound(abs, F)
			}
		}
		checkBound(t, "SDDMMHeads", gotD, want, bound)
	}

	// GATRowDot: dalpha unmasked in place (bit for bit), then the row dots.
	rr := newVec(dev, c.rows*K, r, normal)
	dev.GATRowDot(rr.v, dalpha.v, da, alpha.v, g)
	gotDA, gotR := dalpha.get(t, dev, "GATRowDot dalpha"), rr.get(t, dev, "GATRowDot r")
	{
		wantDA := make([]float32, nnz*K)
		wantR, boundR := make([]float64, c.rows*K), make([]float64, c.rows*K)
		for q := range nnz {
			i, j := rowOf[q], int(a.ColIdx[q])
			for k := range K {
				v := gotD[q*K+k]
				if p > 0 {
					keep := 0
					if kept(i, j, k) {
						keep = 1
					}
					v = float32(float64(v) * scale[keep])
				}
				wantDA[q*K+k] = v
				x := float64(alpha.want[q*K+k]) * float64(v)
				wantR[i*K+k] += x
				boundR[i*K+k] += math.Abs(x)
			}
		}
		for i := range c.rows {
			n := int(a.RowPtr[i+1] - a.RowPtr[i])
			for k := range K {
				boundR[i*K+k] = sumBound(boundR[i*K+k], n)
			}
		}
		exact(t, "GATRowDot dalpha", gotDA, wantDA)
		checkBound(t, "GATRowDot r", gotR, wantR, boundR)
		again(t, "GATRowDot r", gotR, func() []float32 {
			dalpha.set(dev, gotD)
			dev.GATRowDot(rr.v, dalpha.v, da, alpha.v, g)
			return rr.get(t, dev, "GATRowDot r")
		})
	}

	// GATLogitGrad, out of place and with dz == dalpha.
	dz := newVec(dev, nnz*K, r, normal)
	ds := newVec(dev, c.rows*K, r, normal)
	dev.GATLogitGrad(dz.v, ds.v, da, alpha.v, dalpha.v, rr.v, s.v, tt.v, g)
	gotDZ, gotDS := dz.get(t, dev, "GATLogitGrad dz"), ds.get(t, dev, "GATLogitGrad ds")
	{
		want, bound := make([]float64, nnz*K), make([]float64, nnz*K)
		wantS, boundS := make([]float64, c.rows*K), make([]float64, c.rows*K)
		for q := range nnz {
			i, j := rowOf[q], int(a.ColIdx[q])
			for k := range K {
				al, d, ri := float64(alpha.want[q*K+k]), float64(gotDA[q*K+k]), float64(gotR[i*K+k])
				m := 1.0
				if !(float64(s.want[i*K+k])+float64(tt.want[j*K+k]) > 0) {
					m = slope
				}
				want[q*K+k] = al * (d - ri) * m
				bound[q*K+k] = 3 * eps32 * math.Abs(al) * (math.Abs(d) + math.Abs(ri)) * m
				wantS[i*K+k] += float64(gotDZ[q*K+k])
				boundS[i*K+k] += math.Abs(float64(gotDZ[q*K+k]))
			}
		}
		for i := range c.rows {
			n := int(a.RowPtr[i+1] - a.RowPtr[i])
			for k := range K {
				boundS[i*K+k] = sumBound(boundS[i*K+k], n)
			}
		}
		checkBound(t, "GATLogitGrad dz", gotDZ, want, bound)
		checkBound(t, "GATLogitGrad ds", gotDS, wantS, boundS)
		dev.GATLogitGrad(dalpha.v, ds.v, da, alpha.v, dalpha.v, rr.v, s.v, tt.v, g)
		exact(t, "GATLogitGrad dz == dalpha", dalpha.get(t, dev, "GATLogitGrad dz == dalpha"), gotDZ)
		exact(t, "GATLogitGrad ds (dz == dalpha)", ds.get(t, dev, "GATLogitGrad ds"), gotDS)
		dz.want = gotDZ
	}

	// EdgeSums: the row sums of dz over a, and its column sums over the
	// transpose through perm (the gradient of t).
	edgeSums := func(name string, pat *device.CSR, pm device.Buffer[int32], transposed bool) {
		outRows := c.rows
		if transposed {
			outRows = c.cols
		}
		dst := newVec(dev, outRows*K, r, normal)
		dev.EdgeSums(dst.v, pat, dz.v, pm, K)
		got := dst.get(t, dev, name)
		want, abs := make([]float64, outRows*K), make([]float64, outRows*K)
		deg := make([]int, outRows)
		for q := range nnz {
			o := rowOf[q]
			if transposed {
				o = int(a.ColIdx[q])
			}
			deg[o]++
			for k := range K {
				want[o*K+k] += float64(dz.want[q*K+k])
				abs[o*K+k] += math.Abs(float64(dz.want[q*K+k]))
			}
		}
		for o := range outRows {
			for k := range K {
				abs[o*K+k] = sumBound(abs[o*K+k], deg[o])
			}
		}
		checkBound(t, name, got, want, abs)
		again(t, name, got, func() []float32 {
			dev.EdgeSums(dst.v, pat, dz.v, pm, K)
			return dst.get(t, dev, name)
		})
	}
	edgeSums("EdgeSums", da, none, false)
	edgeSums("EdgeSums transposed", dat, permBuf, true)

	// HeadDotBackward accumulates into a strided dy; HeadDotGrad
	// overwrites datt (garbage before) with a sum over every row.
	dy := newMat(dev, c.rows, W, c.pad+2, r, normal)
	dev.HeadDotBackward(dy.m, ds.v, attS.v, K)
	{
		got := dy.get(t, dev, "HeadDotBackward")
		want, bound := make([]float64, c.rows*W), make([]float64, c.rows*W)
		for i := range c.rows {
			for cc := range W {
				x := float64(gotDS[i*K+cc/F]) * float64(attS.want[cc])
				y0 := float64(dy.want[i*W+cc])
				want[i*W+cc], bound[i*W+cc] = y0+x, 2*eps32*(math.Abs(y0)+math.Abs(x))
			}
		}
		checkBound(t, "HeadDotBackward", got, want, bound)
	}
	datt := newVec(dev, W, r, normal)
	dev.HeadDotGrad(datt.v, ds.v, yr.m, K)
	{
		got := datt.get(t, dev, "HeadDotGrad")
		want, bound := make([]float64, W), make([]float64, W)
		for i := range c.rows {
			for cc := range W {
				x := float64(gotDS[i*K+cc/F]) * float64(yr.want[i*W+cc])
				want[cc] += x
				bound[cc] += math.Abs(x)
			}
		}
		for cc := range W {
			bound[cc] = sumBound(bound[cc], c.rows)
		}
		checkBound(t, "HeadDotGrad", got, want, bound)
		again(t, "HeadDotGrad", got, func() []float32 {
			dev.HeadDotGrad(datt.v, ds.v, yr.m, K)
			return datt.get(t, dev, "HeadDotGrad")
		})
	}
}

// testELU checks ELU and its gradient on every shape, out of place and
// in place, on strided views (among them a column block cut by Slice).
func testELU(t *testing.T, dev device.Device) {
	for n, sh := range shapes {
		r := newRand(uint64(1100 + n))
		name := fmt.Sprintf("%dx%d/pad%d", sh.rows, sh.cols, sh.pad)
		x := newMat(dev, sh.rows, sh.cols, sh.pad, r, func(r *rand.Rand) float32 { return 3 * normal(r) })
		dst := newMat(dev, sh.rows, sh.cols, sh.pad+1, r, normal)
		want, bound := make([]float64, len(x.want)), make([]float64, len(x.want))
		for k, v := range x.want {
			if v > 0 {
				want[k] = float64(v)
			} else {
				want[k] = math.Expm1(float64(v))
				// A float32 ulp: expm1 need not be Go's on every device.
				bound[k] = 2 * eps32 * math.Abs(want[k])
			}
		}
		dev.ELU(dst.m, x.m)
		out := dst.get(t, dev, "ELU")
		checkBound(t, "ELU "+name, out, want, bound)
		for k, v := range out {
			if x.want[k] > 0 && v != x.want[k] || x.want[k] == 0 && math.Float32bits(v) != math.Float32bits(x.want[k]) {
				t.Fatalf("ELU %s: element %d = %g from %g, want the input itself", name, k, v, x.want[k])
			}
		}

		// ELUBackward from ELU's output, out of place and with dst == grad.
		grad := newMat(dev, sh.rows, sh.cols, sh.pad+2, r, normal)
		wantG, boundG := make([]float64, len(out)), make([]float64, len(out))
		for k, o := range out {
			gv := float64(grad.want[k])
			if o > 0 {
				wantG[k] = gv
			} else {
				wantG[k] = gv * (float64(o) + 1)
				boundG[k] = 3 * eps32 * math.Abs(wantG[k])
			}
		}
		res := newMat(dev, sh.rows, sh.cols, sh.pad, r, normal)
		dev.ELUBackward(res.m, grad.m, dst.m)
		gotG := res.get(t, dev, "ELUBackward")
		checkBound(t, "ELUBackward "+name, gotG, wantG, boundG)
		dev.ELUBackward(grad.m, grad.m, dst.m)
		exact(t, "ELUBackward dst == grad "+name, grad.get(t, dev, "ELUBackward dst == grad"), gotG)

		// In place on a column block of x: the columns outside it keep
		// their values.
		if sh.cols >= 3 {
			c0, c1 := 1, sh.cols-1
			dev.ELU(x.m.Slice(0, sh.rows, c0, c1), x.m.Slice(0, sh.rows, c0, c1))
			got := x.get(t, dev, "ELU in place")
			wantIn := slices.Clone(x.want)
			for i := range sh.rows {
				for j := c0; j < c1; j++ {
					wantIn[i*sh.cols+j] = out[i*sh.cols+j]
				}
			}
			exact(t, "ELU in place on a column block "+name, got, wantIn)
		}
	}
}

// testHeadMean checks the last layer's head average and its gradient.
func testHeadMean(t *testing.T, dev device.Device) {
	for n, c := range []struct{ rows, f, heads, pad int }{
		{0, 3, 2, 0}, {1, 1, 1, 0}, {5, 7, 2, 1}, {9, 1, 8, 2}, {33, 5, 3, 0}, {600, 16, 8, 1},
	} {
		r := newRand(uint64(1200 + n))
		name := fmt.Sprintf("%d rows F'=%d K=%d pad=%d", c.rows, c.f, c.heads, c.pad)
		W := c.f * c.heads
		src := newMat(dev, c.rows, W, c.pad, r, normal)
		dst := newMat(dev, c.rows, c.f, c.pad+1, r, normal)
		dev.HeadMean(dst.m, src.m, c.heads)
		want, bound := make([]float64, c.rows*c.f), make([]float64, c.rows*c.f)
		for i := range c.rows {
			for cc := range c.f {
				var sum, abs float64
				for k := range c.heads {
					x := float64(src.want[i*W+k*c.f+cc])
					sum, abs = sum+x, abs+math.Abs(x)
				}
				want[i*c.f+cc] = sum / float64(c.heads)
				bound[i*c.f+cc] = sumBound(abs, c.heads+1) / float64(c.heads)
			}
		}
		checkBound(t, "HeadMean "+name, dst.get(t, dev, "HeadMean"), want, bound)

		grad := newMat(dev, c.rows, c.f, c.pad+2, r, normal)
		back := newMat(dev, c.rows, W, c.pad, r, normal)
		dev.HeadMeanBackward(back.m, grad.m, c.heads)
		wantB, boundB := make([]float64, c.rows*W), make([]float64, c.rows*W)
		for i := range c.rows {
			for k := range c.heads {
				for cc := range c.f {
					x := float64(grad.want[i*c.f+cc]) / float64(c.heads)
					wantB[i*W+k*c.f+cc], boundB[i*W+k*c.f+cc] = x, 3*eps32*math.Abs(x)
				}
			}
		}
		checkBound(t, "HeadMeanBackward "+name, back.get(t, dev, "HeadMeanBackward"), wantB, boundB)
	}
}
