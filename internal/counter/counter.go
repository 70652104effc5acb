package counter

// Streams keep the draws of different purposes apart.
const (
	StreamInit    = 1
	StreamDropout = 2
	// StreamNeighbor keys package sampler's neighbor draws.
	StreamNeighbor = 3
	// StreamSeeds keys package neighbor's per-epoch seed permutation.
	StreamSeeds = 4
)

// Mix is the splitmix64 finaliser.
func Mix(z uint64) uint64 {
	z ^= z >> 30
	z *= 0xbf58476d1ce4e5b9
	z ^= z >> 27
	z *= 0x94d049bb133111eb
	z ^= z >> 31
	return z
}

// Hash4 hashes four coordinates.
func Hash4(a, b, c, d uint64) uint64 {
	h := Mix(a + 0x9e3779b97f4a7c15)
	h = Mix(h ^ (b + 0x632be59bd9b4e019))
	h = Mix(h ^ (c + 0x85ebca77c2b2ae63))
	return Mix(h ^ (d + 0xc2b2ae3d27d4eb4f))
}

// Uniform01 maps a hash to [0, 1) with 53 bits.
func Uniform01(h uint64) float64 { return float64(h>>11) / (1 << 53) }

// DropoutKey is the hash of a row's coordinates at a dropout site: entry
// col of the row is kept when Keep01(key, col, DropoutThreshold(p)) is 1.
// The row is hashed once and each column costs one Mix, because dropout
// touches every activation of every layer every step.
func DropoutKey(seed uint64, step, site int, vertex int32) uint64 {
	return Hash4(seed, StreamDropout<<32|uint64(site), uint64(step), uint64(vertex))
}

// DropoutThreshold is the 53-bit draw below which an entry is dropped
// with probability p.
func DropoutThreshold(p float64) uint64 { return uint64(p * (1 << 53)) }

// Keep01 is 1 when the 53-bit draw of (key, col) is >= threshold, without
// a branch (a 50% mask defeats branch prediction): draw−threshold wraps to
// a number with the top bit set exactly when draw < threshold, since both
// are below 2^53.
func Keep01(key uint64, col int, threshold uint64) uint64 {
	draw := Mix(key+uint64(col)*0x9e3779b97f4a7c15) >> 11
	return 1 - (draw-threshold)>>63
}
