package gcn

import (
	"fmt"
	"math"

	"scalegnn/collectives"
)

// mismatches collects what one rank finds wrong in one case: the first
// mismatch in full and how many there were.
type mismatches struct {
	first error
	n     int
}

func (k *mismatches) add(format string, args ...any) {
	if k.first == nil {
		k.first = fmt.Errorf(format, args...)
	}
	k.n++
}

func (k *mismatches) err() error {
	if k.n > 1 {
		return fmt.Errorf("%w (and %d more mismatches)", k.first, k.n-1)
	}
	return k.first
}

// loss compares a loss with the reference's, relative to max(1, |want|).
func (k *mismatches) loss(step int, of string, got, want, tol float64) {
	if !(math.Abs(got-want) <= tol*math.Max(1, math.Abs(want))) {
		k.add("step %d: loss%s %.9g, serial reference %.9g (tolerance %g)", step, of, got, want, tol)
	}
}

// blocks compares this rank's blocks of every parameter's weights (what
// = "weight") or gradients with the reference's, relative to the largest
// entry of each reference matrix, or to scale[k] for parameter k where
// scale is not nil.
// attTol, when positive, replaces tol for GAT attention vectors.
func (k *mismatches) blocks(step int, what string, m *Model, ref *Reference, scale []float64, tol, attTol float64) error {
	if len(ref.Params) != len(m.Params) {
		return fmt.Errorf("gcn: %d parameters, reference has %d", len(m.Params), len(ref.Params))
	}
	worst, name, worstTol := 0.0, "", tol
	shapes := paramShapes(m.Cfg)
	for i, p := range m.Params {
		rp := ref.Params[i]
		if rp.Name != p.Name || rp.Rows != p.Rows || rp.Cols != p.Cols {
			return fmt.Errorf("gcn: parameter %s %dx%d, reference has %s %dx%d", p.Name, p.Rows, p.Cols, rp.Name, rp.Rows, rp.Cols)
		}
		local, full := p.Grad(), rp.G
		if what == "weight" {
			local, full = p.Weights(), rp.W
		}
		s := 1e-6
		if scale != nil {
			s = math.Max(s, scale[i])
		} else {
			for _, v := range full {
				s = math.Max(s, math.Abs(v))
			}
		}
		diff := 0.0
		each(p, func(r, c, lk int) { diff = math.Max(diff, math.Abs(float64(local[lk])-full[r*p.Cols+c])) })
		t := tol
		if kind := shapes[i].kind; attTol > 0 && (kind == kindAttSrc || kind == kindAttDst) {
			t = attTol
		}
		// The worst error relative to its own tolerance.
		if e := diff / s; !(e/t <= worst/worstTol) {
			worst, name, worstTol = e, p.Name, t
		}
	}
	if !(worst <= worstTol) {
		k.add("step %d: %s of %s: relative error %.3g > %g", step, what, name, worst, worstTol)
	}
	return nil
}

// replicas checks, collectively over world, that every entry of every
// parameter (weights and gradients) is held by some rank and that every
// rank holding it has the same bits: one all-reduce of the entries with
// Max and one with Min, unheld entries at −Inf and +Inf.
func (k *mismatches) replicas(step int, world collectives.Comm, m *Model) error {
	size := 0
	for _, p := range m.Params {
		size += 2 * p.Rows * p.Cols
	}
	hi, lo := make([]float32, size), make([]float32, size)
	for i := range hi {
		hi[i], lo[i] = float32(math.Inf(-1)), float32(math.Inf(1))
	}
	off := 0
	for _, p := range m.Params {
		w, g := p.Weights(), p.Grad()
		each(p, func(i, j, lk int) {
			for h, v := range [2]float32{w[lk], g[lk]} {
				at := off + h*p.Rows*p.Cols + i*p.Cols + j
				hi[at], lo[at] = v, v
			}
		})
		off += 2 * p.Rows * p.Cols
	}
	if err := world.AllReduceF32(hi, collectives.Max); err != nil {
		return err
	}
	if err := world.AllReduceF32(lo, collectives.Min); err != nil {
		return err
	}
	off = 0
	for _, p := range m.Params {
		for h, what := range [2]string{"weight", "gradient"} {
			base := off + h*p.Rows*p.Cols
			for at := base; at < base+p.Rows*p.Cols; at++ {
				i, j := (at-base)/p.Cols, (at-base)%p.Cols
				switch {
				case math.IsInf(float64(hi[at]), -1):
					k.add("step %d: no rank holds %s %s(%d,%d)", step, what, p.Name, i, j)
					return nil
				case math.Float32bits(hi[at]) != math.Float32bits(lo[at]):
					k.add("step %d: the ranks holding %s %s(%d,%d) disagree: %g to %g", step, what, p.Name, i, j, lo[at], hi[at])
					return nil
				}
			}
		}
		off += 2 * p.Rows * p.Cols
	}
	return nil
}

// each calls f for every entry (i, j) of this rank's block of p, with its
// index lk in the block.
func each(p *Param, f func(i, j, lk int)) {
	w := p.C1 - p.C0
	for i := p.R0; i < p.R1; i++ {
		for j := p.C0; j < p.C1; j++ {
			f(i, j, (i-p.R0)*w+j-p.C0)
		}
	}
}
