package device

import (
	"math"

	"scalegnn/spmm"
)

// The GAT kernels of the host devices, each over a range of rows [r0, r1)
// so that the CPU device can split them over threads (by the CSR's
// nonzero-balanced bounds) and Native run them whole. Every row's work is
// independent and in a fixed order, so the results do not depend on the
// split.

func hostHeadDot(s []float32, y Mat, att []float32, heads, r0, r1 int) {
	f := y.cols / heads
	for i := r0; i < r1; i++ {
		row := y.row(i)
		for k := range heads {
			var acc float32
			for c := k * f; c < (k+1)*f; c++ {
				acc += row[c] * att[c]
			}
			s[i*heads+k] = acc
		}
	}
}

func hostHeadDotBackward(dy Mat, ds, att []float32, heads, r0, r1 int) {
	f := dy.cols / heads
	for i := r0; i < r1; i++ {
		row := dy.row(i)
		for k := range heads {
			g := ds[i*heads+k]
			for c := k * f; c < (k+1)*f; c++ {
				row[c] += g * att[c]
			}
		}
	}
}

// hostHeadDotGrad runs over every row (its sums are over rows, in order).
func hostHeadDotGrad(datt, ds []float32, y Mat, heads int) {
	f := y.cols / heads
	clear(datt)
	for i := range y.rows {
		row := y.row(i)
		for k := range heads {
			g := ds[i*heads+k]
			for c := k * f; c < (k+1)*f; c++ {
				datt[c] += g * row[c]
			}
		}
	}
}

func leaky(x, slope float32) float32 {
	if x > 0 {
		return x
	}
	return slope * x
}

// b2i is 1 for true and 0 for false, compiled without a branch.
func b2i(b bool) int {
	var i int
	if b {
		i = 1
	}
	return i
}

func hostGATScores(e, mx []float32, a *spmm.CSR, s, t []float32, g *GAT, r0, r1 int) {
	K := g.Heads
	// max(x, slope·x) is LeakyReLU(x) for 0 < slope < 1, NaN and signed
	// zeros included, without leaky's branch, which s + t's random signs
	// mispredict half the time (a third of the kernel's time at 8 heads).
	branchless := g.Slope > 0 && g.Slope < 1
	for i := r0; i < r1; i++ {
		m := mx[i*K : (i+1)*K]
		for k := range m {
			m[k] = float32(math.Inf(-1))
		}
		si := s[i*K : (i+1)*K]
		for p := a.RowPtr[i]; p < a.RowPtr[i+1]; p++ {
			j := int(a.ColIdx[p])
			tj := t[j*K : (j+1)*K]
			ep := e[int(p)*K : int(p+1)*K]
			for k := range K {
				x := si[k] + tj[k]
				var v float32
				if branchless {
					v = max(x, g.Slope*x)
				} else {
					v = leaky(x, g.Slope)
				}
				ep[k] = v
				if v > m[k] {
					m[k] = v
				}
			}
		}
	}
}

func hostGATExpSum(e, sums []float32, a *spmm.CSR, mx []float32, g *GAT, r0, r1 int) {
	K := g.Heads
	for i := r0; i < r1; i++ {
		sm := sums[i*K : (i+1)*K]
		clear(sm)
		m := mx[i*K : (i+1)*K]
		for p := a.RowPtr[i]; p < a.RowPtr[i+1]; p++ {
			ep := e[int(p)*K : int(p+1)*K]
			for k := range K {
				v := float32(math.Exp(float64(ep[k] - m[k])))
				ep[k] = v
				sm[k] += v
			}
		}
	}
}

func hostGATNormalize(alpha, drop []float32, a *spmm.CSR, e, sums []float32, g *GAT, r0, r1 int) {
	K := g.Heads
	d := newGATDrop(g)
	for i := r0; i < r1; i++ {
		sm := sums[i*K : (i+1)*K]
		key := d.rowKey(g, i)
		for p := a.RowPtr[i]; p < a.RowPtr[i+1]; p++ {
			q := int(p) * K
			for k := range K {
				alpha[q+k] = e[q+k] / sm[k]
			}
			if g.P > 0 {
				col := int(d.colVerts[a.ColIdx[p]]) * K
				for k := range K {
					drop[q+k] = alpha[q+k] * d.scale[keep01(key, col+k, d.th)]
				}
			}
		}
	}
}

func edgeIndex(perm []int32, p int64) int {
	if perm == nil {
		return int(p)
	}
	return int(perm[p])
}

func hostSpMMHeads(dst Mat, a *spmm.CSR, alpha []float32, perm []int32, b Mat, heads, r0, r1 int) {
	f := b.cols / heads
	if f%8 == 0 {
		hostSpMMHeads8(dst, a, alpha, perm, b, heads, r0, r1)
		return
	}
	for i := r0; i < r1; i++ {
		out := dst.row(i)
		clear(out)
		for p := a.RowPtr[i]; p < a.RowPtr[i+1]; p++ {
			src := b.row(int(a.ColIdx[p]))
			q := edgeIndex(perm, p) * heads
			for k := range heads {
				w := alpha[q+k]
				o, x := out[k*f:(k+1)*f], src[k*f:(k+1)*f]
				for c := range o {
					o[c] += w * x[c]
				}
			}
		}
	}
}

// hostSpMMHeads8 is hostSpMMHeads for heads of a multiple of 8 columns:
// each 8 columns of a head are summed over the row's entries in 8
// registers, where the plain loop loads and stores the output row per
// entry and head. The entries go in chunks of spmmHeadsChunk, each chunk
// once per head, so that its rows of b, read again for every head, are
// still in the L1 cache (a hub's whole row of entries is not), and the
// sums carry over from chunk to chunk through the output row. Every
// element is still 0 + the products of the row's entries in order, so
// the result is the plain loop's bit for bit.
func hostSpMMHeads8(dst Mat, a *spmm.CSR, alpha []float32, perm []int32, b Mat, heads, r0, r1 int) {
	f, bs, bd := b.cols/heads, b.strid, b.buf.host[b.off:]
	for i := r0; i < r1; i++ {
		out := dst.row(i)
		clear(out)
		for e0 := a.RowPtr[i]; e0 < a.RowPtr[i+1]; e0 += spmmHeadsChunk {
			p0 := int(e0)
			cols := a.ColIdx[p0:min(a.RowPtr[i+1], e0+spmmHeadsChunk)]
			var idx []int32
			if perm != nil {
				idx = perm[p0 : p0+len(cols)]
			}
			for k := range heads {
				for c := k * f; c < (k+1)*f; c += 8 {
					o := (*[8]float32)(out[c:])
					s0, s1, s2, s3, s4, s5, s6, s7 := o[0], o[1], o[2], o[3], o[4], o[5], o[6], o[7]
					for e, j := range cols {
						q := p0 + e
						if idx != nil {
							q = int(idx[e])
						}
						w := alpha[q*heads+k]
						x := (*[8]float32)(bd[int(j)*bs+c:])
						s0 += w * x[0]
						s1 += w * x[1]
						s2 += w * x[2]
						s3 += w * x[3]
						s4 += w * x[4]
						s5 += w * x[5]
						s6 += w * x[6]
						s7 += w * x[7]
					}
					o[0], o[1], o[2], o[3], o[4], o[5], o[6], o[7] = s0, s1, s2, s3, s4, s5, s6, s7
				}
			}
		}
	}
}

// spmmHeadsChunk entries of 8 heads × 8 columns are 16 KiB of b's rows,
// half an L1 data cache.
const spmmHeadsChunk = 64

func hostSDDMMHeads(d []float32, a *spmm.CSR, x, y Mat, heads, r0, r1 int) {
	f := x.cols / heads
	if f%8 == 0 {
		hostSDDMMHeads8(d, a, x, y, heads, r0, r1)
		return
	}
	for i := r0; i < r1; i++ {
		xi := x.row(i)
		for p := a.RowPtr[i]; p < a.RowPtr[i+1]; p++ {
			yj := y.row(int(a.ColIdx[p]))
			for k := range heads {
				var acc float32
				for c := k * f; c < (k+1)*f; c++ {
					acc += xi[c] * yj[c]
				}
				d[int(p)*heads+k] = acc
			}
		}
	}
}

// hostSDDMMHeads8 is hostSDDMMHeads for heads of a multiple of 8 columns.
// A head's dot product is one chain of dependent additions, as long as
// the head is wide, which the plain loop waits out entry by entry; here
// four entries' chains advance together (and 8 columns a step through
// array pointers, one bounds check per step). Each chain adds the same
// products in the same order, so the result is the plain loop's bit for
// bit.
func hostSDDMMHeads8(d []float32, a *spmm.CSR, x, y Mat, heads, r0, r1 int) {
	f, ys, yd, w := x.cols/heads, y.strid, y.buf.host[y.off:], x.cols
	for i := r0; i < r1; i++ {
		xi := x.row(i)
		p, p1 := int(a.RowPtr[i]), int(a.RowPtr[i+1])
		for ; p+4 <= p1; p += 4 {
			c4 := (*[4]int32)(a.ColIdx[p:])
			y0, y1 := yd[int(c4[0])*ys:][:w], yd[int(c4[1])*ys:][:w]
			y2, y3 := yd[int(c4[2])*ys:][:w], yd[int(c4[3])*ys:][:w]
			dp := d[p*heads:][:4*heads]
			for k := range heads {
				var s0, s1, s2, s3 float32
				for c := k * f; c < (k+1)*f; c += 8 {
					u := (*[8]float32)(xi[c:])
					v0, v1, v2, v3 := (*[8]float32)(y0[c:]), (*[8]float32)(y1[c:]), (*[8]float32)(y2[c:]), (*[8]float32)(y3[c:])
					for z := range 8 {
						s0 += u[z] * v0[z]
						s1 += u[z] * v1[z]
						s2 += u[z] * v2[z]
						s3 += u[z] * v3[z]
					}
				}
				dp[k], dp[heads+k], dp[2*heads+k], dp[3*heads+k] = s0, s1, s2, s3
			}
		}
		for ; p < p1; p++ {
			yj := yd[int(a.ColIdx[p])*ys:][:w]
			for k := range heads {
				var acc float32
				for c := k * f; c < (k+1)*f; c++ {
					acc += xi[c] * yj[c]
				}
				d[p*heads+k] = acc
			}
		}
	}
}

func hostGATRowDot(r, dalpha []float32, a *spmm.CSR, alpha []float32, g *GAT, r0, r1 int) {
	K := g.Heads
	d := newGATDrop(g)
	for i := r0; i < r1; i++ {
		ri := r[i*K : (i+1)*K]
		clear(ri)
		key := d.rowKey(g, i)
		for p := a.RowPtr[i]; p < a.RowPtr[i+1]; p++ {
			q := int(p) * K
			if g.P > 0 {
				col := int(d.colVerts[a.ColIdx[p]]) * K
				for k := range K {
					dalpha[q+k] *= d.scale[keep01(key, col+k, d.th)]
				}
			}
			for k := range K {
				ri[k] += alpha[q+k] * dalpha[q+k]
			}
		}
	}
}

func hostGATLogitGrad(dz, ds []float32, a *spmm.CSR, alpha, dalpha, r, s, t []float32, g *GAT, r0, r1 int) {
	K := g.Heads
	// The LeakyReLU's slope picked by index, not by a branch that the
	// signs of s + t mispredict (v·1 is v exactly).
	slope := [2]float32{g.Slope, 1}
	for i := r0; i < r1; i++ {
		dsi := ds[i*K : (i+1)*K]
		clear(dsi)
		ri, si := r[i*K:(i+1)*K], s[i*K:(i+1)*K]
		for p := a.RowPtr[i]; p < a.RowPtr[i+1]; p++ {
			j := int(a.ColIdx[p])
			tj := t[j*K : (j+1)*K]
			q := int(p) * K
			for k := range K {
				v := alpha[q+k] * (dalpha[q+k] - ri[k])
				v *= slope[b2i(si[k]+tj[k] > 0)]
				dz[q+k] = v
				dsi[k] += v
			}
		}
	}
}

func hostEdgeSums(dst []float32, a *spmm.CSR, vals []float32, perm []int32, heads, r0, r1 int) {
	for i := r0; i < r1; i++ {
		di := dst[i*heads : (i+1)*heads]
		clear(di)
		for p := a.RowPtr[i]; p < a.RowPtr[i+1]; p++ {
			q := edgeIndex(perm, p) * heads
			for k := range heads {
				di[k] += vals[q+k]
			}
		}
	}
}

func hostELU(dst, a Mat, r0, r1 int) {
	for i := r0; i < r1; i++ {
		o, x := dst.row(i), a.row(i)
		for j, v := range x {
			if v > 0 {
				o[j] = v
			} else {
				o[j] = float32(math.Expm1(float64(v)))
			}
		}
	}
}

func hostELUBackward(dst, grad, out Mat, r0, r1 int) {
	for i := r0; i < r1; i++ {
		o, g, y := dst.row(i), grad.row(i), out.row(i)
		for j, v := range y {
			if v > 0 {
				o[j] = g[j]
			} else {
				o[j] = g[j] * (v + 1)
			}
		}
	}
}

func hostHeadMean(dst, src Mat, heads, r0, r1 int) {
	f := dst.cols
	inv := 1 / float32(heads)
	for i := r0; i < r1; i++ {
		o, x := dst.row(i), src.row(i)
		for c := range o {
			var acc float32
			for k := range heads {
				acc += x[k*f+c]
			}
			o[c] = acc * inv
		}
	}
}

func hostHeadMeanBackward(dst, grad Mat, heads, r0, r1 int) {
	f := grad.cols
	inv := 1 / float32(heads)
	for i := r0; i < r1; i++ {
		o, g := dst.row(i), grad.row(i)
		for k := range heads {
			for c := range f {
				o[k*f+c] = g[c] * inv
			}
		}
	}
}

func permHost(perm Buffer[int32]) []int32 {
	if perm.Len() == 0 {
		return nil
	}
	return perm.host
}

// gatDrop is attention dropout's per-call constants (nothing when g.P is
// 0): the vertex ids that key the draws, the kept entries' scale and the
// draw's threshold.
type gatDrop struct {
	rowVerts, colVerts []int32
	scale              [2]float32
	th                 uint64
}

func newGATDrop(g *GAT) gatDrop {
	if g.P <= 0 {
		return gatDrop{}
	}
	return gatDrop{rowVerts: g.RowVerts.host, colVerts: g.ColVerts.host, scale: dropScale(g.P), th: dropThreshold(g.P)}
}

// rowKey is row i's key of the draws (0 without dropout).
func (d gatDrop) rowKey(g *GAT, i int) uint64 {
	if g.P <= 0 {
		return 0
	}
	return rowKey(g.Seed, g.Step, g.Site, d.rowVerts[i])
}
