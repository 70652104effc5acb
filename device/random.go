package device

import "scalegnn/internal/counter"

// The dropout draws are package counter's, which gcn's reference uses too,
// so a device reproduces gcn's masks bit for bit; the C kernels in
// internal/ckern carry a copy, checked against golden masks drawn with
// gcn's own functions by devicetest.
func rowKey(seed uint64, step, site int, vertex int32) uint64 {
	return counter.DropoutKey(seed, step, site, vertex)
}

func dropThreshold(p float64) uint64 { return counter.DropoutThreshold(p) }

func keep01(key uint64, col int, threshold uint64) uint64 { return counter.Keep01(key, col, threshold) }

// dropScale is what a kept (index 1) or dropped (index 0) entry is
// multiplied by: float32(1/(1−p)), rounded once as gcn does.
func dropScale(p float64) [2]float32 { return [2]float32{0, float32(1 / (1 - p))} }
