package gcn

import (
	"fmt"
	"math"
)

// CompareReference returns, over every parameter block this rank holds,
// the largest error of its weights and of its gradients against the full
// matrices of the serial reference, relative to the largest entry of each
// reference matrix. It lets a real MPI run check itself against the serial
// model rank by rank, without gathering anything.
func (m *Model) CompareReference(r *Reference) (weightErr, gradErr float64, err error) {
	if len(r.Params) != len(m.Params) {
		return 0, 0, fmt.Errorf("gcn: %d parameters, reference has %d", len(m.Params), len(r.Params))
	}
	for k, p := range m.Params {
		rp := r.Params[k]
		if rp.Name != p.Name || rp.Rows != p.Rows || rp.Cols != p.Cols {
			return 0, 0, fmt.Errorf("gcn: parameter %s %dx%d, reference has %s %dx%d", p.Name, p.Rows, p.Cols, rp.Name, rp.Rows, rp.Cols)
		}
		weightErr = math.Max(weightErr, blockRelErr(p, p.Weights(), rp.W))
		gradErr = math.Max(gradErr, blockRelErr(p, p.Grad(), rp.G))
	}
	return weightErr, gradErr, nil
}

func blockRelErr(p *Param, local []float32, full []float64) float64 {
	scale := 1e-6
	for _, v := range full {
		scale = math.Max(scale, math.Abs(v))
	}
	diff := 0.0
	w := p.C1 - p.C0
	for i := p.R0; i < p.R1; i++ {
		for j := p.C0; j < p.C1; j++ {
			diff = math.Max(diff, math.Abs(float64(local[(i-p.R0)*w+j-p.C0])-full[i*p.Cols+j]))
		}
	}
	return diff / scale
}
