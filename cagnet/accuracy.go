package cagnet

import (
	"math"

	"scalegnn/collectives"
	"scalegnn/device"
)

// Accuracy runs an evaluation forward pass (no dropout) and returns the
// fraction of the vertices of each mask (train, val, test) whose argmax
// logit (lowest class on ties, as gcn.Reference.Accuracy) is the label:
// AccuracyAndValLoss without the validation loss.
func (m *Model) Accuracy() ([3]float64, error) {
	acc, _, err := m.AccuracyAndValLoss()
	return acc, err
}

// AccuracyAndValLoss runs an evaluation forward pass (no dropout) and returns the
// accuracy of each mask (train, val, test; Accuracy) and the mean softmax
// cross-entropy over the validation vertices: LossAndGrad's formula (in
// float64 on the host, log-sum-exp with the row max) over the validation
// mask, 0 without validation vertices. The argmax and the loss are taken
// on the host from the downloaded logits; the hits, the mask sizes and
// the loss sum are summed over the process column in one all-reduce (each
// replica holds the same rows).
func (m *Model) AccuracyAndValLoss() (acc [3]float64, valLoss float64, err error) {
	logits, err := m.Forward(false)
	if err != nil {
		return acc, 0, err
	}
	c, rows := m.cfg.Classes, m.hi-m.lo
	lg := make([]float32, rows*c)
	device.DownloadMat(m.dev, lg, logits)
	masks := [3][]bool{m.train, m.val, m.test}
	// hits (3), mask sizes (3), the validation loss sum; counts below
	// 2^53 are exact in float64.
	sums := make([]float64, 7)
	for i := 0; i < rows; i++ {
		v := m.lo + i
		row := lg[i*c : (i+1)*c]
		best := 0
		for j := 1; j < c; j++ {
			if row[j] > row[best] {
				best = j
			}
		}
		for k, mk := range masks {
			if mk[v] {
				sums[3+k]++
				if int32(best) == m.labels[v] {
					sums[k]++
				}
			}
		}
		if m.val[v] {
			sums[6] += evalRowLoss(row, m.labels[v])
		}
	}
	if m.col.Size() > 1 {
		if err := m.col.AllReduceF64(sums, collectives.Sum); err != nil {
			return acc, 0, err
		}
	}
	for k := range acc {
		if sums[3+k] > 0 {
			acc[k] = sums[k] / sums[3+k]
		}
	}
	if sums[4] > 0 {
		valLoss = sums[6] / sums[4]
	}
	return acc, valLoss, nil
}

// evalRowLoss is one row's softmax cross-entropy for label, in float64
// as LossAndGrad computes it.
func evalRowLoss(row []float32, label int32) float64 {
	mx := math.Inf(-1)
	for _, x := range row {
		mx = math.Max(mx, float64(x))
	}
	se := 0.0
	for _, x := range row {
		se += math.Exp(float64(x) - mx)
	}
	return math.Log(se) + mx - float64(row[label])
}
