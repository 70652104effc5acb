package infer

import (
	"fmt"
	"math"

	"scalegnn/collectives"
	"scalegnn/gcn"
)

// Evaluate returns the accuracies on the train, validation and test
// vertices and the mean cross-entropy over the validation vertices, as
// gcn.Model.Evaluate defines them, computing the last layer on the rows
// in a split only. Every rank of the engine's communicator must call it.
func (e *Engine) Evaluate(w Weights) (gcn.Accuracy, error) {
	t := make([]float64, 7) // hits and sizes of the three splits, the loss sum
	err := e.forward(w, len(e.specs)-1, false, false, func(ro rowsOut) error {
		c := ro.width
		for i, r := range ro.rows {
			row := ro.out[i*c : (i+1)*c]
			best, mx := 0, row[0]
			for j, v := range row {
				if v > mx {
					best, mx = j, v
				}
			}
			lab := int(ro.labels[r])
			for k, m := range ro.masks {
				if m[r] {
					t[3+k]++
					if best == lab {
						t[k]++
					}
				}
			}
			if ro.masks[1][r] {
				sum := 0.0
				for _, v := range row {
					sum += math.Exp(float64(v - mx))
				}
				t[6] += math.Log(sum) - float64(row[lab]-mx)
			}
		}
		return nil
	})
	if err != nil {
		return gcn.Accuracy{}, err
	}
	if err := e.comm.AllReduceF64(t, collectives.Sum); err != nil {
		return gcn.Accuracy{}, err
	}
	return gcn.SplitAccuracy([6]float64(t[:6]), t[6]), nil
}

// Logits returns this rank's rows of the logits (positions Rows of the
// vertex order, row-major, Classes wide).
func (e *Engine) Logits(w Weights) ([]float32, error) {
	return e.collect(w, len(e.specs)-1, false)
}

// Embeddings returns this rank's rows of hidden layer l's activation
// (ReLU's, GAT: ELU's, before a residual), as gcn.Model.Embeddings: 0 ≤ l
// ≤ gcn.LastHidden.
func (e *Engine) Embeddings(w Weights, l int) ([]float32, error) {
	if l < 0 || l > gcn.LastHidden(e.cfg) {
		return nil, fmt.Errorf("infer: embeddings of layer %d: the model's hidden layers are 0 to %d", l, gcn.LastHidden(e.cfg))
	}
	return e.collect(w, l, true)
}

func (e *Engine) collect(w Weights, l int, emb bool) ([]float32, error) {
	var out []float32
	err := e.forward(w, l, true, emb, func(ro rowsOut) error {
		out = append(out, ro.out...)
		return nil
	})
	return out, err
}

// Rows is this rank's rows of Logits' and Embeddings' blocks: positions
// [lo, hi) of the vertex order.
func (e *Engine) Rows() (lo, hi int) { return e.lo, e.hi }
