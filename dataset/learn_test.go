package dataset

import (
	"math"
	"testing"

	"scalegnn/spmm"
)

// propagate returns Â·x for an n×f row-major x.
func propagate(a *spmm.CSR, x []float32, f int) []float32 {
	y := make([]float32, len(x))
	for i := range a.Rows {
		for p := a.RowPtr[i]; p < a.RowPtr[i+1]; p++ {
			j, w := int(a.ColIdx[p]), a.Val[p]
			for k := range f {
				y[i*f+k] += w * x[j*f+k]
			}
		}
	}
	return y
}

// logregAccuracy trains softmax regression on the training rows of x by
// full-batch gradient descent and returns its test accuracy.
func logregAccuracy(g *Graph, x []float32) float64 {
	f, C := g.F, g.Classes
	w := make([]float64, (f+1)*C) // last row: bias
	grad := make([]float64, len(w))
	p := make([]float64, C)
	scores := func(i int) {
		for c := range C {
			s := w[f*C+c]
			for k := range f {
				s += float64(x[i*f+k]) * w[k*C+c]
			}
			p[c] = s
		}
	}
	nTrain := float64(Count(g.Train))
	for range 300 {
		clear(grad)
		for i := range g.N {
			if !g.Train[i] {
				continue
			}
			scores(i)
			m := p[0]
			for _, s := range p {
				m = math.Max(m, s)
			}
			var z float64
			for c := range p {
				p[c] = math.Exp(p[c] - m)
				z += p[c]
			}
			for c := range p {
				d := p[c] / z
				if c == int(g.Labels[i]) {
					d--
				}
				for k := range f {
					grad[k*C+c] += d * float64(x[i*f+k])
				}
				grad[f*C+c] += d
			}
		}
		for k := range w {
			w[k] -= 0.5 * (grad[k]/nTrain + 1e-3*w[k])
		}
	}
	right, total := 0, 0
	for i := range g.N {
		if !g.Test[i] {
			continue
		}
		scores(i)
		best := 0
		for c := range p {
			if p[c] > p[best] {
				best = c
			}
		}
		if best == int(g.Labels[i]) {
			right++
		}
		total++
	}
	return float64(right) / float64(total)
}

// TestSBMNeedsTheGraph checks that the SBM defaults make the graph matter:
// a linear model on two rounds of GCN propagation (SGC, Wu et al. 2019,
// a GCN without the nonlinearity) clearly beats the same model on the raw
// features.
func TestSBMNeedsTheGraph(t *testing.T) {
	cfg := DefaultSBMConfig(2000)
	g, err := SBM(cfg)
	if err != nil {
		t.Fatal(err)
	}
	a := NormalizeGCN(g.Adj)
	raw := logregAccuracy(g, g.Features)
	agg := logregAccuracy(g, propagate(a, propagate(a, g.Features, g.F), g.F))
	t.Logf("test accuracy: features only %.3f, with 2-hop aggregation %.3f (chance %.3f)", raw, agg, 1/float64(g.Classes))
	if raw > 0.6 || agg < raw+0.25 {
		t.Errorf("features only %.3f, aggregated %.3f: want the graph to matter", raw, agg)
	}
}
