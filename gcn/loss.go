package gcn

import (
	"math"

	"scalegnn/collectives"
)

// loss returns the mean softmax cross-entropy over the training vertices of
// the local logits block and ∂loss/∂logits for that block. Rows are split
// over the logits' row axis and classes over its column axis: the row max
// and the sum of exponentials are all-reduced over the class axis, the loss
// sum over the row axis.
func (m *Model) loss(logits []float32) (float64, []float32, error) {
	sh := m.sh
	rowAxis, colAxis := logitsAxes(m.Cfg)
	rowComm, colComm := m.g.Comm(rowAxis), m.g.Comm(colAxis)
	c0, c1 := m.g.Range(m.Cfg.Classes, colAxis)
	w := c1 - c0
	rows := len(sh.Labels)

	mx := make([]float32, rows)
	for i := range mx {
		mx[i] = float32(math.Inf(-1))
		for _, v := range logits[i*w : (i+1)*w] {
			mx[i] = max(mx[i], v)
		}
	}
	if err := m.allReduceOp(colComm, mx, collectives.Max); err != nil {
		return 0, nil, err
	}
	// Sum of exponentials and the label's logit, one all-reduce for both.
	sums := make([]float32, 2*rows)
	for i := 0; i < rows; i++ {
		var se float32
		for _, v := range logits[i*w : (i+1)*w] {
			se += float32(math.Exp(float64(v - mx[i])))
		}
		sums[i] = se
		if lab := int(sh.Labels[i]); lab >= c0 && lab < c1 {
			sums[rows+i] = logits[i*w+lab-c0]
		}
	}
	if err := m.allReduce(colComm, sums); err != nil {
		return 0, nil, err
	}
	// The loss sum and the number of training rows, summed over the row
	// axis in one call; the gradient is scaled by 1/count afterwards so
	// that a mini-batch needs no count of its training vertices up front.
	total := []float64{0, 0}
	d := make([]float32, len(logits))
	for i := 0; i < rows; i++ {
		if !sh.Train[i] {
			continue
		}
		se := sums[i]
		total[0] += math.Log(float64(se)) + float64(mx[i]) - float64(sums[rows+i])
		total[1]++
		for j := 0; j < w; j++ {
			d[i*w+j] = float32(math.Exp(float64(logits[i*w+j]-mx[i]))) / se
		}
		if lab := int(sh.Labels[i]); lab >= c0 && lab < c1 {
			d[i*w+lab-c0]--
		}
	}
	if rowComm.Size() > 1 {
		if err := m.timed(func() error { return rowComm.AllReduceF64(total, collectives.Sum) }); err != nil {
			return 0, nil, err
		}
	}
	if total[1] == 0 {
		// A mini-batch without training vertices contributes nothing.
		return 0, d, nil
	}
	inv := float32(1 / total[1])
	for k := range d {
		d[k] *= inv
	}
	return total[0] / total[1], d, nil
}

// Accuracy is the fraction of correctly classified vertices per split.
type Accuracy struct{ Train, Val, Test float64 }

// accuracy computes the distributed argmax of every local row (lowest class
// index on ties, as the reference does) and counts hits per split.
func (m *Model) accuracy(logits []float32) (Accuracy, error) {
	sh := m.sh
	rowAxis, colAxis := logitsAxes(m.Cfg)
	rowComm, colComm := m.g.Comm(rowAxis), m.g.Comm(colAxis)
	c0, c1 := m.g.Range(m.Cfg.Classes, colAxis)
	w := c1 - c0
	rows := len(sh.Labels)
	best := make([]float32, rows)
	arg := make([]int64, rows)
	for i := range best {
		best[i] = float32(math.Inf(-1))
		arg[i] = math.MaxInt64
		for j, v := range logits[i*w : (i+1)*w] {
			if v > best[i] {
				best[i], arg[i] = v, int64(c0+j)
			}
		}
	}
	mx := append([]float32(nil), best...)
	if err := m.allReduceOp(colComm, mx, collectives.Max); err != nil {
		return Accuracy{}, err
	}
	for i := range arg {
		if best[i] != mx[i] {
			arg[i] = math.MaxInt64
		}
	}
	if colComm.Size() > 1 {
		if err := m.timed(func() error { return colComm.AllReduceI64(arg, collectives.Min) }); err != nil {
			return Accuracy{}, err
		}
	}
	// Hits per split, then the split sizes, summed over the row axis.
	var hits [6]int64
	for i := 0; i < rows; i++ {
		for k, mask := range [3][]bool{sh.Train, sh.Val, sh.Test} {
			if mask[i] {
				hits[3+k]++
				if arg[i] == int64(sh.Labels[i]) {
					hits[k]++
				}
			}
		}
	}
	if rowComm.Size() > 1 {
		if err := m.timed(func() error { return rowComm.AllReduceI64(hits[:], collectives.Sum) }); err != nil {
			return Accuracy{}, err
		}
	}
	frac := func(h, n int64) float64 {
		if n == 0 {
			return 0
		}
		return float64(h) / float64(n)
	}
	return Accuracy{frac(hits[0], hits[3]), frac(hits[1], hits[4]), frac(hits[2], hits[5])}, nil
}
