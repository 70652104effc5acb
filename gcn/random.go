package gcn

import (
	"math"

	"scalegnn/internal/counter"
)

// Counter-based random numbers: a value is a pure function of its
// coordinates, so any rank can draw exactly the entries of its own block,
// and the serial reference draws the same ones, whatever the grid and the
// vertex order.

// glorot returns entry (i, j) of parameter matrix param (rows×cols), drawn
// from the Glorot/Xavier uniform distribution U(-a, a), a = sqrt(6/(rows+cols)).
func glorot(seed uint64, param, rows, cols, i, j int) float64 {
	a := math.Sqrt(6 / float64(rows+cols))
	u := counter.Uniform01(counter.Hash4(seed, counter.StreamInit<<32|uint64(param), uint64(i), uint64(j)))
	return (2*u - 1) * a
}

// dropMask draws the dropout decisions of one row: keep(col) is a function
// of (seed, step, site, vertex, col) only. The row's key is hashed once and
// each column costs one mix, because dropout touches every activation of
// every layer every step.
type dropMask struct {
	key       uint64
	threshold uint64 // keep when the 53-bit draw is >= threshold
}

func newDropMask(seed uint64, step, site int, vertex int32, p float64) dropMask {
	return dropMask{
		key:       counter.DropoutKey(seed, step, site, vertex),
		threshold: counter.DropoutThreshold(p),
	}
}

func (d dropMask) keep(col int) bool { return d.keep01(col) == 1 }

// keep01 is keep as 0 or 1 without a branch: a 50% random mask defeats
// branch prediction, and this loop runs over every activation.
func (d dropMask) keep01(col int) uint64 { return counter.Keep01(d.key, col, d.threshold) }

// dropKeep reports whether entry (vertex, col) survives dropout at the given
// site and step.
func dropKeep(seed uint64, step, site int, vertex int32, col int, p float64) bool {
	return newDropMask(seed, step, site, vertex, p).keep(col)
}
