package gcn

import "scalegnn/device"

// scaleGrads multiplies this worker's gradient by GradScale, before the
// data-parallel average (Grappa eq. 10), when GradScale is neither 0 nor 1.
//
// The factor scales the gradient of the worker's whole objective: its loss
// and the L2 term that an optimizer with coupled weight decay (adam, sgd)
// adds to the gradient. Were the decay added after the scale, in Step, a
// factor c would weigh the decay 1/c times more against the data; under
// Adam, which is invariant to a common scale of the gradient, that change
// of balance would be all a factor does, and eq. 18's factors of about 0.01
// on Cora's induced partitions let the decay win. So the decay is folded into the gradient here, the
// sum is scaled, and Step leaves the decay out for this step. AdamW's
// decoupled decay is not a gradient and stays in Step, unscaled.
//
// With the decay folded, SGD with factor c is SGD with learning rate c·lr,
// and Adam with one factor on every worker is Adam without it (up to ε).
func (m *Model) scaleGrads() {
	m.decayFolded = false
	if m.GradScale == 0 || m.GradScale == 1 {
		return
	}
	if wd := float32(m.Opt.WeightDecay); wd != 0 && m.Opt.Name != "adamw" {
		if m.decayTmp.Len() == 0 {
			// Once, on the first scaled step: the largest block.
			n := 0
			for _, p := range m.Params {
				n = max(n, p.Len())
			}
			m.decayTmp = device.Alloc[float32](m.dev, n)
		}
		for _, p := range m.Params {
			if !p.decay {
				continue
			}
			tmp := device.Matrix(m.decayTmp.Slice(0, p.Len()), p.R1-p.R0, p.C1-p.C0)
			m.dev.Scale(tmp, wd, p.mat(p.W))
			m.dev.Add(p.mat(p.G), p.mat(p.G), tmp)
		}
		m.decayFolded = true
	}
	all := device.Matrix(m.grads, 1, m.grads.Len())
	m.dev.Scale(all, m.GradScale, all)
}
