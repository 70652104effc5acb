package cagnet

import (
	"scalegnn/collectives"
	"scalegnn/device"
)

// Accuracy runs an evaluation forward pass (no dropout) and returns the
// fraction of the vertices of each mask (train, val, test) whose argmax
// logit (lowest class on ties, as gcn.Reference.Accuracy) is the label.
// The argmax is taken on the host from the downloaded logits; hits are
// summed over the process column (each replica holds the same rows).
func (m *Model) Accuracy() ([3]float64, error) {
	logits, err := m.Forward(false)
	if err != nil {
		return [3]float64{}, err
	}
	c, rows := m.cfg.Classes, m.hi-m.lo
	lg := make([]float32, rows*c)
	device.DownloadMat(m.dev, lg, logits)
	masks := [3][]bool{m.train, m.val, m.test}
	counts := make([]int64, 6)
	for i := 0; i < rows; i++ {
		v := m.lo + i
		best := 0
		for j := 1; j < c; j++ {
			if lg[i*c+j] > lg[i*c+best] {
				best = j
			}
		}
		for k, mk := range masks {
			if mk[v] {
				counts[3+k]++
				if int32(best) == m.labels[v] {
					counts[k]++
				}
			}
		}
	}
	if m.col.Size() > 1 {
		if err := m.col.AllReduceI64(counts, collectives.Sum); err != nil {
			return [3]float64{}, err
		}
	}
	var acc [3]float64
	for k := range acc {
		if counts[3+k] > 0 {
			acc[k] = float64(counts[k]) / float64(counts[3+k])
		}
	}
	return acc, nil
}
