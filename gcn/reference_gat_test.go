package gcn

import (
	"fmt"
	"math"
	"strings"
	"testing"

	"scalegnn/internal/counter"
	"scalegnn/spmm"
)

// gatConfigs cover 1, 2 and 3 GAT layers, 1 and 3 heads, 1 and 2 output
// heads, input projection and output head on and off, with and without
// dropout (input and attention).
var gatConfigs = map[string]Config{
	"1layer":          {Features: 11, Classes: 5, Layers: 1, Layer: GATLayer, Seed: 11},
	"1layer-2out":     {Features: 11, Classes: 5, Layers: 1, OutputHeads: 2, Layer: GATLayer, Seed: 12},
	"1layer-proj":     {Features: 11, Hidden: 4, Classes: 5, Layers: 1, InputProjection: true, OutputHeads: 2, Dropout: 0.4, Layer: GATLayer, Seed: 13},
	"2layer-1head":    {Features: 11, Hidden: 4, Classes: 5, Layers: 2, Heads: 1, Layer: GATLayer, Seed: 14},
	"2layer-3heads":   {Features: 11, Hidden: 4, Classes: 5, Layers: 2, Heads: 3, OutputHeads: 2, Layer: GATLayer, Seed: 15},
	"2layer-drop":     {Features: 11, Hidden: 4, Classes: 5, Layers: 2, Heads: 3, Dropout: 0.5, Layer: GATLayer, Seed: 16},
	"2layer-head":     {Features: 11, Hidden: 4, Classes: 5, Layers: 2, Heads: 3, OutputHead: true, Dropout: 0.3, Layer: GATLayer, Seed: 17},
	"3layer-proj":     {Features: 11, Hidden: 3, Classes: 5, Layers: 3, Heads: 3, OutputHeads: 2, InputProjection: true, Layer: GATLayer, Seed: 18},
	"3layer-all":      {Features: 11, Hidden: 3, Classes: 5, Layers: 3, Heads: 3, OutputHeads: 2, InputProjection: true, OutputHead: true, Dropout: 0.4, Layer: GATLayer, Seed: 19},
	"3layer-1head-dr": {Features: 11, Hidden: 4, Classes: 5, Layers: 3, Heads: 1, OutputHeads: 1, Dropout: 0.3, Layer: GATLayer, Seed: 20},
}

// setGATBiases gives r's GAT biases, which start at 0, small values of
// both signs, so that the checks see them added.
func setGATBiases(r *Reference) {
	for _, q := range r.Params {
		if strings.HasSuffix(q.Name, ".bias") {
			for k := range q.W {
				q.W[k] = 0.05 * float64(k%3-1)
			}
		}
	}
}

// TestReferenceGATFiniteDifferences checks every entry of every GAT
// gradient (weight, att_src, att_dst, bias, and proj and head, which see the
// input gradient and the last layer's output) against central
// differences; the dropout masks, attention's included, are a function
// of the step, so the loss at a fixed step is a fixed function. Each
// model is checked at its initial weights and with every weight times 3,
// where the logits s+t are larger, the softmax sharper and rows mix both
// sides of the LeakyReLU (at the initial weights a head's logits can all
// be positive, where the softmax ignores s and att_src's gradient is 0).
func TestReferenceGATFiniteDifferences(t *testing.T) {
	p := newProblem(1, 23, 11, 5, 4)
	for name, cfg := range gatConfigs {
		for _, gain := range []float64{1, 3} {
			t.Run(fmt.Sprintf("%s/x%v", name, gain), func(t *testing.T) {
				if err := cfg.Validate(); err != nil {
					t.Fatal(err)
				}
				r := p.reference(cfg, DefaultOptimizer())
				want := paramShapes(cfg)
				if len(r.Params) != len(want) {
					t.Fatalf("%d parameters, paramShapes has %d", len(r.Params), len(want))
				}
				for i, s := range want {
					if q := r.Params[i]; q.Name != s.name || q.Rows != s.rows || q.Cols != s.cols {
						t.Fatalf("parameter %d: %s %dx%d, paramShapes has %s %dx%d", i, q.Name, q.Rows, q.Cols, s.name, s.rows, s.cols)
					}
				}
				for _, q := range r.Params {
					for k := range q.W {
						q.W[k] *= gain
					}
				}
				setGATBiases(r)
				fdCheck(t, r, 2, 1e-5)
			})
		}
	}
}

// naiveGAT is an independent dense forward pass of a GAT model: per head
// slices of W, the pattern of adj as a dense matrix, softmax without the
// max shift, dropout straight from the counter draws (α's only with
// attDrop). verts are the rows' vertex ids (nil: 0, 1, ...).
func naiveGAT(cfg Config, adj *spmm.CSR, x []float32, params map[string]*RefParam, verts []int32, training, attDrop bool, step int) []float64 {
	n := adj.Rows
	vert := func(i int) int32 {
		if verts != nil {
			return verts[i]
		}
		return int32(i)
	}
	pat := make([][]bool, n)
	for i := range pat {
		pat[i] = make([]bool, n)
		for q := adj.RowPtr[i]; q < adj.RowPtr[i+1]; q++ {
			pat[i][adj.ColIdx[q]] = true
		}
	}
	p := cfg.Dropout
	kept := func(site int, i int32, col int) float64 {
		if !training || p == 0 {
			return 1
		}
		if counter.Keep01(counter.DropoutKey(cfg.Seed, step, site, i), col, counter.DropoutThreshold(p)) == 1 {
			return 1 / (1 - p)
		}
		return 0
	}
	dense := func(h [][]float64, w *RefParam, c0, c1 int) [][]float64 {
		out := make([][]float64, len(h))
		for i, row := range h {
			out[i] = make([]float64, c1-c0)
			for c := c0; c < c1; c++ {
				for r, v := range row {
					out[i][c-c0] += v * w.W[r*w.Cols+c]
				}
			}
		}
		return out
	}
	dropRows := func(h [][]float64, site int) [][]float64 {
		out := make([][]float64, len(h))
		for i, row := range h {
			out[i] = make([]float64, len(row))
			for c, v := range row {
				out[i][c] = v * kept(site, vert(i), c)
			}
		}
		return out
	}
	h := make([][]float64, n)
	for i := range h {
		for c := 0; c < cfg.Features; c++ {
			h[i] = append(h[i], float64(x[i*cfg.Features+c]))
		}
	}
	if cfg.InputProjection {
		h = dense(h, params["proj"], 0, cfg.Hidden)
	}
	for l, s := range cfg.LayerSpecs() {
		h = dropRows(h, l)
		K, F := s.Heads, s.ProjWidth/s.Heads
		W, as, ad, b := params[weightName(l)], params[attSrcName(l)], params[attDstName(l)], params[biasName(l)]
		heads := make([][][]float64, K) // head k: n × F
		for k := range heads {
			y := dense(h, W, k*F, (k+1)*F)
			dot := func(i int, a *RefParam) float64 {
				v := 0.0
				for c := range F {
					v += y[i][c] * a.W[k*F+c]
				}
				return v
			}
			heads[k] = make([][]float64, n)
			for i := range n {
				heads[k][i] = make([]float64, F)
				sum := 0.0
				for j := range n {
					if pat[i][j] {
						sum += math.Exp(leakyRelu(dot(i, as) + dot(j, ad)))
					}
				}
				for j := range n {
					if !pat[i][j] {
						continue
					}
					a := math.Exp(leakyRelu(dot(i, as)+dot(j, ad))) / sum
					if attDrop {
						a *= kept(cfg.AttentionSite(l), vert(i), int(vert(j))*K+k)
					}
					for c := range F {
						heads[k][i][c] += a * y[j][c]
					}
				}
				for c := range F {
					heads[k][i][c] += b.W[k*F+c]
				}
			}
		}
		out := make([][]float64, n)
		for i := range n {
			if s.Hidden {
				for k := range K {
					for _, v := range heads[k][i] {
						if v <= 0 {
							v = math.Exp(v) - 1
						}
						out[i] = append(out[i], v)
					}
				}
				continue
			}
			out[i] = make([]float64, F)
			for k := range K {
				for c, v := range heads[k][i] {
					out[i][c] += v / float64(K)
				}
			}
		}
		h = out
	}
	if cfg.OutputHead {
		h = dense(dropRows(h, cfg.headSite()), params["head"], 0, cfg.Classes)
	}
	var logits []float64
	for _, row := range h {
		logits = append(logits, row...)
	}
	return logits
}

func paramsByName(r *Reference) map[string]*RefParam {
	m := map[string]*RefParam{}
	for _, p := range r.Params {
		m[p.Name] = p
	}
	return m
}

func maxRelErr64(got, want []float64) float64 {
	scale, diff := 1e-300, 0.0
	for i, w := range want {
		scale = math.Max(scale, math.Abs(w))
		diff = math.Max(diff, math.Abs(got[i]-w))
	}
	return diff / scale
}

// TestReferenceGATMatchesNaive checks the reference's forward pass (the
// finite differences check only that the gradients are those of whatever
// it computes) against naiveGAT, in evaluation and training (both
// dropouts), on the full graph and on a mini-batch with its vertex ids.
func TestReferenceGATMatchesNaive(t *testing.T) {
	p := newProblem(2, 29, 11, 5, 5)
	verts, sub := SerialBatch(p.g, 7, 1, 3, 17)
	for name, cfg := range gatConfigs {
		for _, training := range []bool{false, true} {
			t.Run(fmt.Sprintf("%s/training=%v", name, training), func(t *testing.T) {
				const step = 5
				r := p.reference(cfg, DefaultOptimizer())
				setGATBiases(r)
				want := naiveGAT(cfg, p.g.Adj, p.g.Features, paramsByName(r), nil, training, true, step)
				if e := maxRelErr64(r.Forward(training, step), want); !(e <= 1e-12) {
					t.Errorf("full graph: relative error %.3g against the dense GAT", e)
				}
				b := NewReference(cfg, DefaultOptimizer(), sub.Adj, sub.Features, sub.Labels, sub.Train)
				b.Verts = verts
				setGATBiases(b)
				want = naiveGAT(cfg, sub.Adj, sub.Features, paramsByName(b), verts, training, true, step)
				if e := maxRelErr64(b.Forward(training, step), want); !(e <= 1e-12) {
					t.Errorf("batch: relative error %.3g against the dense GAT", e)
				}
			})
		}
	}
}

// TestReferenceGATAttentionDropout: in training with dropout p, every
// layer's α is zero exactly where the direct counter draw of (seed, step,
// AttentionSite(l), vertex i, column j·K+k) drops it and α/(1−p)
// elsewhere, the rows of α (before dropout) sum to 1 per head, about a
// fraction p is dropped, another step drops other coefficients, and the
// loss moves with the attention dropout alone (input dropout the same).
func TestReferenceGATAttentionDropout(t *testing.T) {
	p := newProblem(3, 31, 11, 5, 6)
	cfg := gatConfigs["3layer-all"]
	cfg.Dropout = 0.5
	verts, sub := SerialBatch(p.g, 5, 0, 1, 19)
	full := p.reference(cfg, DefaultOptimizer())
	batch := NewReference(cfg, DefaultOptimizer(), sub.Adj, sub.Features, sub.Labels, sub.Train)
	batch.Verts = verts
	for name, r := range map[string]*Reference{"full": full, "batch": batch} {
		t.Run(name, func(t *testing.T) {
			masks := map[int][]bool{}
			for _, step := range []int{4, 5} {
				_, tp := r.forward(true, step)
				var all []bool
				dropped, total := 0, 0
				for l, lt := range tp.layers {
					g := lt.gat
					K := g.heads
					for i := 0; i < r.n; i++ {
						rowSum := make([]float64, K)
						for q := r.adj.RowPtr[i]; q < r.adj.RowPtr[i+1]; q++ {
							j := r.adj.ColIdx[q]
							for k := range K {
								a, kv := g.alpha[int(q)*K+k], g.kept[int(q)*K+k]
								rowSum[k] += a
								keep := counter.Keep01(counter.DropoutKey(cfg.Seed, step, cfg.AttentionSite(l), r.vertex(i)),
									int(r.vertex(int(j)))*K+k, counter.DropoutThreshold(cfg.Dropout)) == 1
								all = append(all, keep)
								total++
								want := a / (1 - cfg.Dropout)
								if !keep {
									dropped++
									want = 0
								}
								if kv != want {
									t.Fatalf("step %d, layer %d, edge (%d, %d), head %d: α after dropout %v, want %v (kept %v)", step, l, i, j, k, kv, want, keep)
								}
							}
						}
						for k, s := range rowSum {
							if math.Abs(s-1) > 1e-12 {
								t.Fatalf("layer %d, row %d, head %d: α sums to %v", l, i, k, s)
							}
						}
					}
				}
				if f := float64(dropped) / float64(total); math.Abs(f-cfg.Dropout) > 0.1 {
					t.Errorf("step %d: dropped %d of %d attention coefficients, want about %v", step, dropped, total, cfg.Dropout)
				}
				masks[step] = all
			}
			same := true
			for i := range masks[4] {
				same = same && masks[4][i] == masks[5][i]
			}
			if same {
				t.Errorf("steps 4 and 5 drop the same attention coefficients")
			}
		})
	}
	// The reference against the dense pass with input dropout but α kept
	// whole: a reference that ignored attention dropout would match it
	// (TestReferenceGATMatchesNaive matches it to the pass with α's
	// dropout to 1e-12).
	const step = 4
	r := p.reference(cfg, DefaultOptimizer())
	noAtt := naiveGAT(cfg, p.g.Adj, p.g.Features, paramsByName(r), nil, true, false, step)
	if e := maxRelErr64(r.Forward(true, step), noAtt); !(e > 1e-3) {
		t.Errorf("logits with attention dropout equal those without it (relative difference %.3g)", e)
	}
}

// TestReferenceGATBatch: a mini-batch's reference (SerialBatch, Verts =
// S) attends over the induced subgraph's edges, each batch vertex's self
// loop included, and ignores Â's values (the batch rescales them); its
// gradients pass the finite differences with dropout at a fixed step; and
// the batch of every vertex is the full graph, loss and gradients.
func TestReferenceGATBatch(t *testing.T) {
	p := newProblem(4, 37, 11, 5, 5)
	const seed, step = 3, 2
	for _, name := range []string{"2layer-drop", "3layer-all"} {
		cfg := gatConfigs[name]
		t.Run(name, func(t *testing.T) {
			verts, sub := SerialBatch(p.g, seed, 1, step, 15)
			for i := range verts {
				self := false
				for q := sub.Adj.RowPtr[i]; q < sub.Adj.RowPtr[i+1]; q++ {
					self = self || int(sub.Adj.ColIdx[q]) == i
				}
				if !self {
					t.Fatalf("batch vertex %d (vertex %d) has no self loop", i, verts[i])
				}
			}
			batchRef := func(adj *spmm.CSR) *Reference {
				r := NewReference(cfg, DefaultOptimizer(), adj, sub.Features, sub.Labels, sub.Train)
				r.Verts = verts
				return r
			}
			r := batchRef(sub.Adj)
			ones := *sub.Adj
			ones.Val = make([]float32, len(sub.Adj.Val))
			for i := range ones.Val {
				ones.Val[i] = 1
			}
			if a, b := r.LossAndGrad(step), batchRef(&ones).LossAndGrad(step); a != b {
				t.Errorf("loss %v over the rescaled Â, %v over its pattern: GAT must read only the pattern", a, b)
			}
			fdCheck(t, r, step, 1e-5)

			all, whole := SerialBatch(p.g, seed, 1, step, p.n)
			b := NewReference(cfg, DefaultOptimizer(), whole.Adj, whole.Features, whole.Labels, whole.Train)
			b.Verts = all
			full := p.reference(cfg, DefaultOptimizer())
			if lb, lf := b.LossAndGrad(step), full.LossAndGrad(step); math.Abs(lb-lf) > 1e-12*math.Abs(lf) {
				t.Errorf("batch of every vertex: loss %v, full graph %v", lb, lf)
			}
			for i, q := range b.Params {
				if e := maxRelErr64(q.G, full.Params[i].G); !(e <= 1e-12) {
					t.Errorf("batch of every vertex: %s's gradient off the full graph's by %.3g", q.Name, e)
				}
			}
		})
	}
}

// TestReferenceGATLearns: a two-layer GAT (3 heads) fits a small problem
// without dropout: the training loss at least halves in 100 Adam steps.
func TestReferenceGATLearns(t *testing.T) {
	p := newProblem(2, 40, 11, 3, 5)
	cfg := Config{Features: 11, Hidden: 8, Classes: 3, Layers: 2, Heads: 3, Layer: GATLayer, Seed: 5}
	r := p.reference(cfg, DefaultOptimizer())
	first := r.LossAndGrad(0)
	var last float64
	for s := 0; s < 100; s++ {
		last = r.LossAndGrad(s)
		r.Step()
	}
	if !(last < 0.5*first) {
		t.Fatalf("training loss went from %v to %v in 100 steps; want it at least halved", first, last)
	}
}
