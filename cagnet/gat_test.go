package cagnet

import (
	"fmt"
	"math"
	"testing"

	"scalegnn/collectives"
	"scalegnn/device"
	"scalegnn/gcn"
)

// TestGATMatchesReference holds full-graph 1.5D GAT training to the
// serial float64 GAT reference (CheckCase: losses, gradients and weights
// of 3 steps, then accuracies) on 1, 2, 3, 4 and 6 in-process ranks with
// every replication c dividing P (c > P/c included: replicas without a
// stage): one and four heads, one and two output heads, both
// permutations, dropout 0 and 0.5, and bfloat16 (first step, looser).
func TestGATMatchesReference(t *testing.T) {
	for _, p := range []int{1, 2, 3, 4, 6} {
		for c := 1; c <= p; c++ {
			if p%c != 0 {
				continue
			}
			t.Run(fmt.Sprintf("P=%d,c=%d", p, c), func(t *testing.T) {
				errs := collectives.RunLocal(p, func(w collectives.Comm) error {
					for _, k := range gatCases(c) {
						if err := CheckCase(w, device.Host(1), k); err != nil {
							return err
						}
					}
					return nil
				})
				for _, err := range errs {
					if err != nil {
						t.Error(err)
					}
				}
			})
		}
	}
}

// TestGATCasesAreListed: Cases (what scalegnn selftest and the tests
// above run) lists the GAT cases while a GAT reference exists.
func TestGATCasesAreListed(t *testing.T) {
	n := 0
	for _, k := range Cases(4) {
		if k.Layer == gcn.GATLayer {
			n++
		}
	}
	if want := 3 * len(gatCases(1)); n != want {
		t.Fatalf("Cases(4) lists %d GAT cases, want %d (c = 1, 2, 4)", n, want)
	}
}

// TestGATReferenceGradient checks the test's serial GAT reference itself:
// its gradient against central finite differences of its loss (dropout
// 0.5 with the step's fixed masks, four heads, two output heads), for
// every parameter's entries at a stride.
func TestGATReferenceGradient(t *testing.T) {
	cfg, opt, g := conformanceModel(Case{Dropout: 0.5, Layer: gcn.GATLayer, Heads: 4, OutputHeads: 2})
	r := newGATRef(cfg, opt, g.Adj, g.Features, g.Labels, g.Train)
	const step, h = 1, 1e-6
	r.LossAndGrad(step)
	var grads [][]float64
	for _, p := range r.Parameters() {
		grads = append(grads, append([]float64(nil), p.G...))
	}
	checked := 0
	for i, p := range r.Parameters() {
		for e := 0; e < len(p.W); e += 7 {
			w := p.W[e]
			p.W[e] = w + h
			up := r.LossAndGrad(step)
			p.W[e] = w - h
			down := r.LossAndGrad(step)
			p.W[e] = w
			fd := (up - down) / (2 * h)
			if d := math.Abs(fd - grads[i][e]); d > 1e-6*(1+math.Abs(fd)) {
				t.Errorf("%s entry %d: gradient %v, finite difference %v", p.Name, e, grads[i][e], fd)
			}
			checked++
		}
	}
	if checked < 30 {
		t.Fatalf("checked %d entries", checked)
	}
}
