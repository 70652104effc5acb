package main

import (
	"fmt"
	"io"

	"scalegnn/device"
	"scalegnn/perfmodel"
	"scalegnn/plan"
)

// The capacity line of perfmodel predict: how much larger a graph the
// recommended grid holds in each precision. Memory grows with the graph
// about linearly, but not exactly (per-rank constants, the arena's
// growth, rounding of blocks), so the factor is searched for: the job's
// own widths and model, its vertex and nonzero counts both scaled by s,
// predicted on the same grid with the same algorithm.

// capacity is the recommended grid's memory per rank for this graph in
// each precision and, with a limit per rank, the largest graph it fits
// in each, as a multiple of this one (vertices and nonzeros alike).
type capacity struct {
	Limit      int64   `json:"mem_per_rank,omitempty"`
	MemFloat32 int64   `json:"memory_float32"`
	MemBF16    int64   `json:"memory_bf16"`
	Float32    float64 `json:"graph_scale_float32,omitempty"`
	BF16       float64 `json:"graph_scale_bf16,omitempty"`
}

// capacityOf is best's capacity for r's job on pf's ranks.
func capacityOf(r *predicted, pf *predictFlags, best perfmodel.Prediction) (capacity, error) {
	c := capacity{Limit: r.mem}
	at := func(prec device.Precision, s float64) (int64, error) {
		return r.memoryAt(pf, prec, s, best)
	}
	var err error
	if c.MemFloat32, err = at(device.Float32, 1); err != nil {
		return c, err
	}
	if c.MemBF16, err = at(device.BF16, 1); err != nil {
		return c, err
	}
	if r.mem <= 0 {
		return c, nil
	}
	if c.Float32, err = largestScale(r.mem, func(s float64) (int64, error) { return at(device.Float32, s) }); err != nil {
		return c, err
	}
	c.BF16, err = largestScale(r.mem, func(s float64) (int64, error) { return at(device.BF16, s) })
	return c, err
}

// memoryAt predicts the memory per rank of r's job in precision prec on
// best's grid and algorithm, its graph scaled by s.
func (r *predicted) memoryAt(pf *predictFlags, prec device.Precision, s float64, best perfmodel.Prediction) (int64, error) {
	cfg := *r.cfg
	cfg.Train.Precision = prec
	gs := r.gs
	gs.N, gs.NNZ = max(1, int(float64(gs.N)*s)), max(1, int64(float64(gs.NNZ)*s))
	j := plan.PerfJob(&cfg, gs)
	j.Imbalance = pf.imbalance
	preds, err := perfmodel.PredictAll(j, r.machine, perfmodel.Options{Ranks: pf.ranks, RanksPerNode: pf.perNode, D: pf.d}, plan.PerfChoices(&cfg))
	if err != nil {
		return 0, err
	}
	for _, p := range preds {
		if p.Algorithm == best.Algorithm && p.Grid == best.Grid {
			return p.MemTotal, nil
		}
	}
	return 0, fmt.Errorf("the recommended %s grid %s has no prediction at %.3g times the graph", best.Algorithm, best.Grid, s)
}

// largestScale is the largest s (to 0.1%) for which mem(s) is at most
// limit, searched between 1/1024 and 1024 (0 below, 1024 above).
func largestScale(limit int64, mem func(float64) (int64, error)) (float64, error) {
	fits := func(s float64) (bool, error) {
		m, err := mem(s)
		return m <= limit, err
	}
	lo, hi := 1.0, 1.0
	for {
		ok, err := fits(hi)
		if err != nil || !ok {
			if err != nil {
				return 0, err
			}
			break
		}
		if lo = hi; hi >= 1024 {
			return hi, nil
		}
		hi *= 2
	}
	if lo == hi { // 1 does not fit: go down
		for lo = hi / 2; ; lo /= 2 {
			ok, err := fits(lo)
			if err != nil {
				return 0, err
			}
			if ok {
				break
			}
			if lo < 1.0/1024 {
				return 0, nil
			}
			hi = lo
		}
	}
	for hi-lo > lo/1000 {
		mid := (lo + hi) / 2
		ok, err := fits(mid)
		if err != nil {
			return 0, err
		}
		if ok {
			lo = mid
		} else {
			hi = mid
		}
	}
	return lo, nil
}

// writeCapacity prints c, a line.
func writeCapacity(w io.Writer, c capacity) {
	ratio := float64(c.MemBF16) / float64(max(c.MemFloat32, 1))
	fmt.Fprintf(w, "memory per rank on it: float32 %s, bf16 %s (%.2fx)", perfmodel.FormatBytes(c.MemFloat32), perfmodel.FormatBytes(c.MemBF16), ratio)
	if c.Limit > 0 {
		fmt.Fprintf(w, "; within %s it fits a graph up to %.2fx this one in float32 and %.2fx in bf16", perfmodel.FormatBytes(c.Limit), c.Float32, c.BF16)
	}
	fmt.Fprintln(w)
}
