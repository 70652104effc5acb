package gcn

import (
	"time"

	"scalegnn/collectives"
	"scalegnn/device"
)

// loss returns the mean softmax cross-entropy over the training vertices of
// the local logits block and ∂loss/∂logits for that block (softmaxCE over
// the training mask).
func (m *Model) loss(logits device.Mat) (float64, device.Mat, error) {
	return m.softmaxCE(logits, m.cur.masks[0], true)
}

// valLoss returns the mean softmax cross-entropy over the validation
// vertices of the local logits block: the training loss's formula and
// collectives over the validation mask (0 without validation vertices).
func (m *Model) valLoss(logits device.Mat) (float64, error) {
	loss, _, err := m.softmaxCE(logits, m.cur.masks[1], false)
	return loss, err
}

// softmaxCE returns the mean softmax cross-entropy over the vertices of
// mask and, when scale is set, ∂loss/∂logits scaled by 1/count (else the
// gradient is left unscaled: evaluation does not use it). Rows are split
// over the logits' row axis and classes over its column axis: the row max
// and the sum of exponentials are all-reduced over the class axis, the loss
// sum over the row axis.
func (m *Model) softmaxCE(logits device.Mat, mask device.Buffer[uint8], scale bool) (float64, device.Mat, error) {
	b := m.cur
	rowAxis, colAxis := logitsAxes(m.Cfg)
	rowComm, colComm := m.g.Comm(rowAxis), m.g.Comm(colAxis)
	c0, _ := m.g.Range(m.Cfg.Classes, colAxis)
	rows := b.labels.Len()

	mx := b.ar.vec(rows)
	m.dev.RowMax(mx, logits, mask)
	if err := m.allReduceOp(colComm, mx, collectives.Max); err != nil {
		return 0, device.Mat{}, err
	}
	// Sum of exponentials and the label's logit, one all-reduce for both.
	sums := b.ar.vec(2 * rows)
	m.dev.SoftmaxSums(sums, logits, mx, b.labels, mask, c0)
	if err := m.allReduce(colComm, sums); err != nil {
		return 0, device.Mat{}, err
	}
	// The loss sum and the number of masked rows, summed over the row
	// axis in one call; the gradient is scaled by 1/count afterwards so
	// that a mini-batch needs no count of its training vertices up front.
	d := b.ar.mat(logits.Rows(), logits.Cols())
	m.total[0], m.total[1] = m.dev.SoftmaxGrad(d, logits, mx, sums, b.labels, mask, c0)
	if rowComm.Size() > 1 {
		t0 := time.Now()
		err := rowComm.AllReduceF64(m.total[:], collectives.Sum)
		m.Times.Comm += time.Since(t0)
		if err != nil {
			return 0, device.Mat{}, err
		}
	}
	if m.total[1] == 0 {
		// A mini-batch without training vertices contributes nothing.
		return 0, d, nil
	}
	if scale {
		m.dev.Scale(d, float32(1/m.total[1]), d)
	}
	return m.total[0] / m.total[1], d, nil
}

// Accuracy is the fraction of correctly classified vertices per split,
// and ValLoss the mean softmax cross-entropy over the validation vertices
// (the training loss's formula, without dropout; 0 without validation
// vertices), as an evaluation measures them.
type Accuracy struct{ Train, Val, Test, ValLoss float64 }

// accuracy computes the distributed argmax of every local row (lowest class
// index on ties, as the reference does) and counts hits per split.
func (m *Model) accuracy(logits device.Mat) (Accuracy, error) {
	b := m.cur
	rowAxis, colAxis := logitsAxes(m.Cfg)
	rowComm, colComm := m.g.Comm(rowAxis), m.g.Comm(colAxis)
	c0, _ := m.g.Range(m.Cfg.Classes, colAxis)
	rows := b.labels.Len()
	best := b.ar.vec(rows)
	arg := b.ar.i64.take(m.dev, rows)
	m.dev.ArgMax(best, arg, logits, c0)
	mx := b.ar.vec(rows)
	m.dev.Copy(device.Matrix(mx, 1, rows), device.Matrix(best, 1, rows))
	if err := m.allReduceOp(colComm, mx, collectives.Max); err != nil {
		return Accuracy{}, err
	}
	m.dev.ArgMaxSettle(arg, best, mx)
	if colComm.Size() > 1 {
		t0 := time.Now()
		err := device.AllReduceI64(m.dev, colComm, arg, collectives.Min)
		m.Times.Comm += time.Since(t0)
		if err != nil {
			return Accuracy{}, err
		}
	}
	// Hits per split, then the split sizes, summed over the row axis.
	*m.hits = m.dev.CountHits(arg, b.labels, b.masks)
	hits := m.hits
	if rowComm.Size() > 1 {
		t0 := time.Now()
		err := rowComm.AllReduceI64(hits[:], collectives.Sum)
		m.Times.Comm += time.Since(t0)
		if err != nil {
			return Accuracy{}, err
		}
	}
	var t [6]float64
	for k, h := range hits {
		t[k] = float64(h)
	}
	return SplitAccuracy(t, 0), nil
}

// SplitAccuracy is the accuracy of each split from t, the hits of the
// train, validation and test vertices then the splits' sizes (CountHits'
// order; counts below 2^53 are exact in float64), 0 for an empty split,
// and the validation loss's mean from its sum: the one formula of every
// evaluation (the model's, neighbor mode's, layer-wise inference's).
func SplitAccuracy(t [6]float64, valLossSum float64) Accuracy {
	frac := func(h, n float64) float64 {
		if n == 0 {
			return 0
		}
		return h / n
	}
	return Accuracy{Train: frac(t[0], t[3]), Val: frac(t[1], t[4]), Test: frac(t[2], t[5]), ValLoss: frac(valLossSum, t[4])}
}
