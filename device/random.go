package device

// The counter-based dropout draws, copied from gcn/random.go (mix, hash4,
// newDropMask, keep01) so that a device reproduces gcn's masks bit for
// bit; the C copy is in internal/ckern/kern.c. devicetest checks both
// against golden masks drawn with gcn's own functions.

const streamDropout = 2

func mix(z uint64) uint64 {
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

// rowKey is the hash of a row's coordinates; entry col is kept when
// keep01(key, col, threshold) is 1.
func rowKey(seed uint64, step, site int, vertex int32) uint64 {
	return hash4(seed, streamDropout<<32|uint64(site), uint64(step), uint64(vertex))
}

func dropThreshold(p float64) uint64 { return uint64(p * (1 << 53)) }

// keep01 is 1 when the 53-bit draw of (key, col) is >= threshold, without
// a branch: draw−threshold wraps to a number with the top bit set exactly
// when draw < threshold.
func keep01(key uint64, col int, threshold uint64) uint64 {
	draw := mix(key+uint64(col)*0x9e3779b97f4a7c15) >> 11
	return 1 - (draw-threshold)>>63
}

// dropScale is what a kept (index 1) or dropped (index 0) entry is
// multiplied by: float32(1/(1−p)), rounded once as gcn does.
func dropScale(p float64) [2]float32 { return [2]float32{0, float32(1 / (1 - p))} }
