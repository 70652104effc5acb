package gcn

import "math"

// Counter-based random numbers: a value is a pure function of its
// coordinates, so any rank can draw exactly the entries of its own block,
// and the serial reference draws the same ones, whatever the grid and the
// vertex order.

func mix(z uint64) uint64 {
	// splitmix64 finaliser.
	z ^= z >> 30
	z *= 0xbf58476d1ce4e5b9
	z ^= z >> 27
	z *= 0x94d049bb133111eb
	z ^= z >> 31
	return z
}

func hash4(a, b, c, d uint64) uint64 {
	h := mix(a + 0x9e3779b97f4a7c15)
	h = mix(h ^ (b + 0x632be59bd9b4e019))
	h = mix(h ^ (c + 0x85ebca77c2b2ae63))
	return mix(h ^ (d + 0xc2b2ae3d27d4eb4f))
}

// uniform01 maps a hash to [0, 1) with 53 bits.
func uniform01(h uint64) float64 { return float64(h>>11) / (1 << 53) }

const (
	streamInit    = 1
	streamDropout = 2
)

// glorot returns entry (i, j) of parameter matrix param (rows×cols), drawn
// from the Glorot/Xavier uniform distribution U(-a, a), a = sqrt(6/(rows+cols)).
func glorot(seed uint64, param, rows, cols, i, j int) float64 {
	a := math.Sqrt(6 / float64(rows+cols))
	u := uniform01(hash4(seed, streamInit<<32|uint64(param), uint64(i), uint64(j)))
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
		key:       hash4(seed, streamDropout<<32|uint64(site), uint64(step), uint64(vertex)),
		threshold: uint64(p * (1 << 53)),
	}
}

func (d dropMask) keep(col int) bool { return d.keep01(col) == 1 }

// keep01 is keep as 0 or 1 without a branch: a 50% random mask defeats
// branch prediction, and this loop runs over every activation.
func (d dropMask) keep01(col int) uint64 {
	draw := mix(d.key+uint64(col)*0x9e3779b97f4a7c15) >> 11
	// draw and threshold are below 2^53, so draw-threshold wraps to a
	// number with the top bit set exactly when draw < threshold.
	return 1 - (draw-d.threshold)>>63
}

// dropKeep reports whether entry (vertex, col) survives dropout at the given
// site and step.
func dropKeep(seed uint64, step, site int, vertex int32, col int, p float64) bool {
	return newDropMask(seed, step, site, vertex, p).keep(col)
}
