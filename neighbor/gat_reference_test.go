package neighbor

import (
	"math"

	"scalegnn/dataset"
	"scalegnn/gcn"
	"scalegnn/internal/counter"
	"scalegnn/sampler"
)

// A serial float64 GAT (gcn.GAT's math) over a list of blocks, written
// from the definition with plain loops and no device operation, so that
// the neighbor model's GAT path is checked against something it shares
// no code with: on a step's sampled blocks (every rank's), and on the
// whole graph (every vertex a target of every layer).

// refBlock is one layer's attention pattern: target i (row, the global
// vertex verts[i]: targets are the first sources) attends over the
// sources cols[rowPtr[i]:rowPtr[i+1]] (local ids into verts).
type refBlock struct {
	nDst   int
	rowPtr []int
	cols   []int32
	verts  []int32
}

// mfgBlock is the pattern of a sampled layer: the sampled neighbours and
// the target itself, built from the sampler's MFG apart from the model's
// gatPattern.
func mfgBlock(m *sampler.MFG) refBlock {
	a := &m.A
	b := refBlock{nDst: a.Rows, rowPtr: []int{0}, verts: m.Src}
	for i := range a.Rows {
		b.cols = append(b.cols, int32(i))
		b.cols = append(b.cols, a.ColIdx[a.RowPtr[i]:a.RowPtr[i+1]]...)
		b.rowPtr = append(b.rowPtr, len(b.cols))
	}
	return b
}

// graphBlock is the whole graph's pattern, A + I, every vertex a target.
func graphBlock(g *dataset.Graph) refBlock {
	b := refBlock{nDst: g.N, rowPtr: []int{0}, verts: make([]int32, g.N)}
	for v := range g.N {
		b.verts[v] = int32(v)
		b.cols = append(b.cols, int32(v))
		for p := g.Adj.RowPtr[v]; p < g.Adj.RowPtr[v+1]; p++ {
			if c := g.Adj.ColIdx[p]; int(c) != v {
				b.cols = append(b.cols, c)
			}
		}
		b.rowPtr = append(b.rowPtr, len(b.cols))
	}
	return b
}

// gatRef is the model's parameters in float64, gcn's order (per layer
// W, att_src, att_dst, bias).
type gatRef struct {
	cfg   gcn.Config
	specs []gcn.LayerSpec
	W     [][]float64 // per parameter, row-major
	G     [][]float64
}

func newGATRef(cfg gcn.Config) *gatRef {
	r := &gatRef{cfg: cfg, specs: cfg.LayerSpecs()}
	for _, p := range gcn.InitialParams(cfg) {
		r.W = append(r.W, p.W)
		r.G = append(r.G, make([]float64, len(p.W)))
	}
	return r
}

func keepScale(seed uint64, step, site int, vertex int32, col int, p float64) float64 {
	if p == 0 {
		return 1
	}
	if counter.Keep01(counter.DropoutKey(seed, step, site, vertex), col, counter.DropoutThreshold(p)) == 1 {
		return 1 / (1 - p)
	}
	return 0
}

// gatLayerState is what one layer's backward pass needs.
type gatLayerState struct {
	h         [][]float64 // the input after dropout, sources × in
	y         [][]float64 // H·W, sources × P
	s, t      [][]float64 // per target / source and head
	alpha, ad [][]float64 // per entry and head: α, α after dropout
	pre       [][]float64 // the aggregation before ELU (hidden layers)
}

// forward runs the layers on blocks from x (the first block's sources'
// features) and returns every layer's state and the logits of the last
// block's targets. With outputs set, it returns each layer's output
// (ELU's for hidden layers) in outs.
func (r *gatRef) forward(blocks []refBlock, x [][]float64, step int, training bool) ([]gatLayerState, [][]float64, [][][]float64) {
	cfg := r.cfg
	p := 0.0
	if training {
		p = cfg.Dropout
	}
	h := x
	states := make([]gatLayerState, len(blocks))
	var outs [][][]float64
	for l, b := range blocks {
		sp := r.specs[l]
		K, P := sp.Heads, sp.ProjWidth
		F := P / K
		W, as, ad, bias := r.W[4*l], r.W[4*l+1], r.W[4*l+2], r.W[4*l+3]
		st := &states[l]
		nSrc := len(b.verts)
		st.h = make([][]float64, nSrc)
		st.y = make([][]float64, nSrc)
		for i := range nSrc {
			st.h[i] = make([]float64, sp.In)
			for c := range sp.In {
				st.h[i][c] = h[i][c] * keepScale(cfg.Seed, step, l, b.verts[i], c, p)
			}
			st.y[i] = make([]float64, P)
			for o := range P {
				for c := range sp.In {
					st.y[i][o] += st.h[i][c] * W[c*P+o]
				}
			}
		}
		st.s, st.t = make([][]float64, b.nDst), make([][]float64, nSrc)
		for i := range nSrc {
			st.t[i] = make([]float64, K)
			if i < b.nDst {
				st.s[i] = make([]float64, K)
			}
			for k := range K {
				for c := range F {
					st.t[i][k] += st.y[i][k*F+c] * ad[k*F+c]
					if i < b.nDst {
						st.s[i][k] += st.y[i][k*F+c] * as[k*F+c]
					}
				}
			}
		}
		st.alpha, st.ad = make([][]float64, len(b.cols)), make([][]float64, len(b.cols))
		out := make([][]float64, b.nDst)
		for i := range b.nDst {
			lo, hi := b.rowPtr[i], b.rowPtr[i+1]
			for q := lo; q < hi; q++ {
				st.alpha[q], st.ad[q] = make([]float64, K), make([]float64, K)
			}
			out[i] = append([]float64(nil), bias...)
			for k := range K {
				mx := math.Inf(-1)
				for q := lo; q < hi; q++ {
					z := st.s[i][k] + st.t[b.cols[q]][k]
					if z <= 0 {
						z *= gcn.GATSlope
					}
					st.alpha[q][k] = z
					mx = math.Max(mx, z)
				}
				sum := 0.0
				for q := lo; q < hi; q++ {
					st.alpha[q][k] = math.Exp(st.alpha[q][k] - mx)
					sum += st.alpha[q][k]
				}
				for q := lo; q < hi; q++ {
					j := b.cols[q]
					st.alpha[q][k] /= sum
					st.ad[q][k] = st.alpha[q][k] * keepScale(cfg.Seed, step, cfg.AttentionSite(l), b.verts[i], int(b.verts[j])*K+k, p)
					for c := range F {
						out[i][k*F+c] += st.ad[q][k] * st.y[j][k*F+c]
					}
				}
			}
		}
		if sp.Hidden {
			st.pre = out
			h = make([][]float64, b.nDst)
			for i := range out {
				h[i] = make([]float64, P)
				for c, v := range out[i] {
					if v > 0 {
						h[i][c] = v
					} else {
						h[i][c] = math.Expm1(v)
					}
				}
			}
		} else {
			h = make([][]float64, b.nDst)
			for i := range out {
				h[i] = make([]float64, cfg.Classes)
				for c := range cfg.Classes {
					for k := range K {
						h[i][c] += out[i][k*F+c] / float64(K)
					}
				}
			}
		}
		outs = append(outs, h)
	}
	return states, h, outs
}

// lossAndGrad returns the mean softmax cross-entropy over the last
// block's targets rows (with labels) and adds its gradient, scaled by
// scale, to r.G.
func (r *gatRef) lossAndGrad(blocks []refBlock, x [][]float64, rows []int32, labels []int32, step int, training bool, scale float64) float64 {
	cfg := r.cfg
	p := 0.0
	if training {
		p = cfg.Dropout
	}
	states, logits, _ := r.forward(blocks, x, step, training)
	L := len(blocks)
	last := blocks[L-1]
	// dh is the gradient of the current layer's output.
	dh := make([][]float64, last.nDst)
	for i := range dh {
		dh[i] = make([]float64, cfg.Classes)
	}
	loss := 0.0
	for n, i := range rows {
		z := logits[i]
		mx := math.Inf(-1)
		for _, v := range z {
			mx = math.Max(mx, v)
		}
		sum := 0.0
		for _, v := range z {
			sum += math.Exp(v - mx)
		}
		loss += mx + math.Log(sum) - z[labels[n]]
		for c, v := range z {
			dh[i][c] += math.Exp(v-mx) / sum / float64(len(rows))
		}
		dh[i][labels[n]] -= 1 / float64(len(rows))
	}
	for l := L - 1; l >= 0; l-- {
		b, st, sp := blocks[l], &states[l], r.specs[l]
		K, P := sp.Heads, sp.ProjWidth
		F := P / K
		W, as, ad := r.W[4*l], r.W[4*l+1], r.W[4*l+2]
		gW, gas, gad, gb := r.G[4*l], r.G[4*l+1], r.G[4*l+2], r.G[4*l+3]
		nSrc := len(b.verts)
		dout := make([][]float64, b.nDst)
		for i := range dout {
			dout[i] = make([]float64, P)
			for k := range K {
				for c := range F {
					if sp.Hidden {
						v := st.pre[i][k*F+c]
						d := 1.0
						if v <= 0 {
							d = math.Exp(v)
						}
						dout[i][k*F+c] = dh[i][k*F+c] * d
					} else {
						dout[i][k*F+c] = dh[i][c] / float64(K)
					}
					gb[k*F+c] += scale * dout[i][k*F+c]
				}
			}
		}
		dy := make([][]float64, nSrc)
		dt := make([][]float64, nSrc)
		for j := range nSrc {
			dy[j], dt[j] = make([]float64, P), make([]float64, K)
		}
		ds := make([][]float64, b.nDst)
		for i := range b.nDst {
			ds[i] = make([]float64, K)
			lo, hi := b.rowPtr[i], b.rowPtr[i+1]
			for k := range K {
				// ∂α per entry, then the softmax's and LeakyReLU's.
				da := make([]float64, hi-lo)
				dot := 0.0
				for q := lo; q < hi; q++ {
					j := b.cols[q]
					g := 0.0
					for c := range F {
						g += dout[i][k*F+c] * st.y[j][k*F+c]
						dy[j][k*F+c] += st.ad[q][k] * dout[i][k*F+c]
					}
					g *= keepScale(cfg.Seed, step, cfg.AttentionSite(l), b.verts[i], int(b.verts[j])*K+k, p)
					da[q-lo] = g
					dot += st.alpha[q][k] * g
				}
				for q := lo; q < hi; q++ {
					j := b.cols[q]
					dz := st.alpha[q][k] * (da[q-lo] - dot)
					if st.s[i][k]+st.t[j][k] <= 0 {
						dz *= gcn.GATSlope
					}
					ds[i][k] += dz
					dt[j][k] += dz
				}
			}
		}
		for j := range nSrc {
			for k := range K {
				for c := range F {
					o := k*F + c
					gad[o] += scale * dt[j][k] * st.y[j][o]
					dy[j][o] += dt[j][k] * ad[o]
					if j < b.nDst {
						gas[o] += scale * ds[j][k] * st.y[j][o]
						dy[j][o] += ds[j][k] * as[o]
					}
				}
			}
		}
		dh = make([][]float64, nSrc)
		for j := range nSrc {
			dh[j] = make([]float64, sp.In)
			for c := range sp.In {
				for o := range P {
					gW[c*P+o] += scale * st.h[j][c] * dy[j][o]
					dh[j][c] += dy[j][o] * W[c*P+o]
				}
				dh[j][c] *= keepScale(cfg.Seed, step, l, b.verts[j], c, p)
			}
		}
	}
	return loss / float64(len(rows))
}

// features returns the rows of g's features for verts, in float64.
func features(g *dataset.Graph, verts []int32) [][]float64 {
	x := make([][]float64, len(verts))
	for i, v := range verts {
		x[i] = make([]float64, g.F)
		for c := range g.F {
			x[i][c] = float64(g.Features[int(v)*g.F+c])
		}
	}
	return x
}
