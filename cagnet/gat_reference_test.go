package cagnet

import (
	"math"
	"testing"

	"scalegnn/dataset"
	"scalegnn/gcn"
	"scalegnn/internal/counter"
	"scalegnn/spmm"
)

// A serial float64 GAT reference, the math of gcn.GATLayer written out
// plainly (dense row-major arrays, loops) and independently of
// gcn.Reference, which the conformance checks use:
// TestGATReferencesAgree holds the two to each other.

type gatRef struct {
	cfg    gcn.Config
	opt    gcn.Optimizer
	adj    *spmm.CSR // only the pattern (A + I) is read
	x      []float64
	labels []int32
	train  []bool
	n      int
	params []*gcn.RefParam
	m, v   [][]float64
	decay  []bool
	t      int
	verts  []int32
}

func newGATRef(cfg gcn.Config, opt gcn.Optimizer, adj *spmm.CSR, features []float32, labels []int32, train []bool) serialModel {
	r := &gatRef{cfg: cfg, opt: opt, adj: adj, labels: labels, train: train, n: adj.Rows, x: make([]float64, len(features))}
	for i, f := range features {
		r.x[i] = float64(f)
	}
	for _, p := range gcn.InitialParams(cfg) {
		r.params = append(r.params, &gcn.RefParam{Name: p.Name, Rows: p.Rows, Cols: p.Cols, W: p.W, G: make([]float64, len(p.W))})
		r.m, r.v = append(r.m, make([]float64, len(p.W))), append(r.v, make([]float64, len(p.W)))
		r.decay = append(r.decay, p.Decay)
	}
	return r
}

func (r *gatRef) Parameters() []*gcn.RefParam { return r.params }
func (r *gatRef) SetVerts(verts []int32)      { r.verts = verts }

func (r *gatRef) vert(i int) int32 {
	if r.verts != nil {
		return r.verts[i]
	}
	return int32(i)
}

// keep is the dropout scale of entry (row i, column col) at site: 0 or
// 1/(1−p).
func (r *gatRef) keep(step, site, i, col int) float64 {
	p := r.cfg.Dropout
	key := counter.DropoutKey(r.cfg.Seed, step, site, r.vert(i))
	if counter.Keep01(key, col, counter.DropoutThreshold(p)) == 1 {
		return 1 / (1 - p)
	}
	return 0
}

// dropout returns h (n × w) with site's mask applied (also the backward
// pass's rule: the same mask and scale).
func (r *gatRef) dropout(h []float64, w, step, site int) []float64 {
	if r.cfg.Dropout == 0 {
		return h
	}
	out := make([]float64, len(h))
	for i := range r.n {
		for j := range w {
			out[i*w+j] = h[i*w+j] * r.keep(step, site, i, j)
		}
	}
	return out
}

type gatRefLayer struct {
	in       []float64 // after dropout
	y        []float64 // n × C
	s, t     []float64 // n × K
	z        []float64 // per entry and head: s + t
	alpha    []float64 // softmax, per entry and head
	drop     []float64 // alpha with attention dropout
	o, out   []float64
	heads, f int // K, F'
}

func (r *gatRef) forward(training bool, step int) ([]float64, []gatRefLayer) {
	h, width := r.x, r.cfg.Features
	var tape []gatRefLayer
	a := r.adj
	for l, s := range r.cfg.LayerSpecs() {
		W, as, ad, b := r.params[4*l], r.params[4*l+1], r.params[4*l+2], r.params[4*l+3]
		K, C := s.Heads, s.ProjWidth
		F := C / K
		lt := gatRefLayer{heads: K, f: F, in: h}
		if training {
			lt.in = r.dropout(h, width, step, l)
		}
		lt.y = make([]float64, r.n*C)
		for i := range r.n {
			for p := range width {
				for c := range C {
					lt.y[i*C+c] += lt.in[i*width+p] * W.W[p*C+c]
				}
			}
		}
		lt.s, lt.t = make([]float64, r.n*K), make([]float64, r.n*K)
		for i := range r.n {
			for k := range K {
				for c := range F {
					lt.s[i*K+k] += lt.y[i*C+k*F+c] * as.W[k*F+c]
					lt.t[i*K+k] += lt.y[i*C+k*F+c] * ad.W[k*F+c]
				}
			}
		}
		nnz := a.NNZ()
		lt.z, lt.alpha, lt.drop = make([]float64, nnz*K), make([]float64, nnz*K), make([]float64, nnz*K)
		lt.o = make([]float64, r.n*C)
		for i := range r.n {
			copy(lt.o[i*C:(i+1)*C], b.W)
			for k := range K {
				mx := math.Inf(-1)
				for p := a.RowPtr[i]; p < a.RowPtr[i+1]; p++ {
					z := lt.s[i*K+k] + lt.t[int(a.ColIdx[p])*K+k]
					lt.z[int(p)*K+k] = z
					mx = math.Max(mx, leaky(z))
				}
				sum := 0.0
				for p := a.RowPtr[i]; p < a.RowPtr[i+1]; p++ {
					sum += math.Exp(leaky(lt.z[int(p)*K+k]) - mx)
				}
				for p := a.RowPtr[i]; p < a.RowPtr[i+1]; p++ {
					q := int(p)*K + k
					j := int(a.ColIdx[p])
					lt.alpha[q] = math.Exp(leaky(lt.z[q])-mx) / sum
					lt.drop[q] = lt.alpha[q]
					if training && r.cfg.Dropout > 0 {
						lt.drop[q] *= r.keep(step, r.cfg.AttentionSite(l), i, int(r.vert(j))*K+k)
					}
					for c := range F {
						lt.o[i*C+k*F+c] += lt.drop[q] * lt.y[j*C+k*F+c]
					}
				}
			}
		}
		if s.Hidden {
			lt.out = make([]float64, len(lt.o))
			for e, v := range lt.o {
				lt.out[e] = v
				if v <= 0 {
					lt.out[e] = math.Expm1(v)
				}
			}
		} else {
			lt.out = make([]float64, r.n*F)
			for i := range r.n {
				for c := range F {
					for k := range K {
						lt.out[i*F+c] += lt.o[i*C+k*F+c] / float64(K)
					}
				}
			}
		}
		tape = append(tape, lt)
		h, width = lt.out, s.Out
	}
	return h, tape
}

func leaky(z float64) float64 {
	if z > 0 {
		return z
	}
	return gcn.GATSlope * z
}

func (r *gatRef) Forward(training bool, step int) []float64 {
	out, _ := r.forward(training, step)
	return out
}

func (r *gatRef) LossAndGrad(step int) float64 {
	logits, tape := r.forward(true, step)
	c := r.cfg.Classes
	nTrain := 0
	for _, t := range r.train {
		if t {
			nTrain++
		}
	}
	loss, d := 0.0, make([]float64, len(logits))
	for i := range r.n {
		if !r.train[i] {
			continue
		}
		row := logits[i*c : (i+1)*c]
		mx := math.Inf(-1)
		for _, v := range row {
			mx = math.Max(mx, v)
		}
		se := 0.0
		for _, v := range row {
			se += math.Exp(v - mx)
		}
		loss += math.Log(se) + mx - row[r.labels[i]]
		for j, v := range row {
			d[i*c+j] = math.Exp(v-mx) / se / float64(nTrain)
		}
		d[i*c+int(r.labels[i])] -= 1 / float64(nTrain)
	}
	for _, p := range r.params {
		clear(p.G)
	}
	a := r.adj
	specs := r.cfg.LayerSpecs()
	for l := len(specs) - 1; l >= 0; l-- {
		s, lt := specs[l], tape[l]
		W, as, ad, b := r.params[4*l], r.params[4*l+1], r.params[4*l+2], r.params[4*l+3]
		K, F, C := lt.heads, lt.f, s.ProjWidth
		dO := make([]float64, r.n*C)
		if s.Hidden {
			for e, v := range lt.o {
				dO[e] = d[e]
				if v <= 0 {
					dO[e] = d[e] * math.Exp(v)
				}
			}
		} else {
			for i := range r.n {
				for k := range K {
					for cc := range F {
						dO[i*C+k*F+cc] = d[i*F+cc] / float64(K)
					}
				}
			}
		}
		for e, v := range dO {
			b.G[e%C] += v
		}
		dY := make([]float64, r.n*C)
		ds, dt := make([]float64, r.n*K), make([]float64, r.n*K)
		for i := range r.n {
			for k := range K {
				// dα (through the dropout mask) and the softmax's row dot.
				row := a.RowPtr[i+1] - a.RowPtr[i]
				dal := make([]float64, row)
				dot := 0.0
				for p := a.RowPtr[i]; p < a.RowPtr[i+1]; p++ {
					q, j := int(p)*K+k, int(a.ColIdx[p])
					g := 0.0
					for cc := range F {
						g += dO[i*C+k*F+cc] * lt.y[j*C+k*F+cc]
						dY[j*C+k*F+cc] += lt.drop[q] * dO[i*C+k*F+cc]
					}
					if r.cfg.Dropout > 0 {
						g *= r.keep(step, r.cfg.AttentionSite(l), i, int(r.vert(j))*K+k)
					}
					dal[p-a.RowPtr[i]] = g
					dot += lt.alpha[q] * g
				}
				for p := a.RowPtr[i]; p < a.RowPtr[i+1]; p++ {
					q, j := int(p)*K+k, int(a.ColIdx[p])
					dz := lt.alpha[q] * (dal[p-a.RowPtr[i]] - dot)
					if !(lt.z[q] > 0) {
						dz *= gcn.GATSlope
					}
					ds[i*K+k] += dz
					dt[j*K+k] += dz
				}
			}
		}
		for i := range r.n {
			for k := range K {
				for cc := range F {
					e := i*C + k*F + cc
					dY[e] += ds[i*K+k]*as.W[k*F+cc] + dt[i*K+k]*ad.W[k*F+cc]
					as.G[k*F+cc] += ds[i*K+k] * lt.y[e]
					ad.G[k*F+cc] += dt[i*K+k] * lt.y[e]
				}
			}
		}
		in := s.In
		for i := range r.n {
			for p := range in {
				for cc := range C {
					W.G[p*C+cc] += lt.in[i*in+p] * dY[i*C+cc]
				}
			}
		}
		if !s.NeedInputGrad {
			break
		}
		dIn := make([]float64, r.n*in)
		for i := range r.n {
			for p := range in {
				for cc := range C {
					dIn[i*in+p] += dY[i*C+cc] * W.W[p*C+cc]
				}
			}
		}
		d = r.dropout(dIn, in, step, l)
	}
	return loss / float64(nTrain)
}

func (r *gatRef) Step() {
	r.t++
	for k, p := range r.params {
		for e := range p.W {
			p.W[e], r.m[k][e], r.v[k][e] = r.opt.Update(r.t, p.W[e], p.G[e], r.m[k][e], r.v[k][e], r.decay[k])
		}
	}
}

func (r *gatRef) Accuracy(logits []float64, mask []bool) float64 {
	c := r.cfg.Classes
	right, total := 0, 0
	for i := range r.n {
		if !mask[i] {
			continue
		}
		best := 0
		for j := 1; j < c; j++ {
			if logits[i*c+j] > logits[i*c+best] {
				best = j
			}
		}
		total++
		if int32(best) == r.labels[i] {
			right++
		}
	}
	if total == 0 {
		return 0
	}
	return float64(right) / float64(total)
}

// TestGATReferencesAgree: gcn.Reference's GAT layers and this package's
// plain one give the same loss and gradients (1e-10 relative) over three
// steps, with dropout of the inputs and of α, one and several heads.
func TestGATReferencesAgree(t *testing.T) {
	for _, c := range []Case{{Layer: gcn.GATLayer, Heads: 1, OutputHeads: 1}, {Layer: gcn.GATLayer, Heads: 4, OutputHeads: 2, Dropout: 0.5}} {
		cfg, opt, g := conformanceModel(c)
		adj := dataset.NormalizeGCN(g.Adj)
		a := newGATRef(cfg, opt, adj, g.Features, g.Labels, g.Train)
		b := gcnSerial{gcn.NewReference(cfg, opt, adj, g.Features, g.Labels, g.Train)}
		for step := range 3 {
			la, lb := a.LossAndGrad(step), b.LossAndGrad(step)
			if math.Abs(la-lb) > 1e-10*math.Max(1, math.Abs(lb)) {
				t.Fatalf("heads %d, step %d: loss %v and gcn.Reference's %v", c.Heads, step, la, lb)
			}
			for k, pa := range a.Parameters() {
				pb := b.Parameters()[k]
				scale := 0.0
				for _, v := range pb.G {
					scale = math.Max(scale, math.Abs(v))
				}
				for i := range pa.G {
					if math.Abs(pa.G[i]-pb.G[i]) > 1e-10*scale {
						t.Fatalf("heads %d, step %d: %s gradient [%d] %v and gcn.Reference's %v", c.Heads, step, pa.Name, i, pa.G[i], pb.G[i])
					}
				}
			}
			a.Step()
			b.Step()
		}
	}
}
