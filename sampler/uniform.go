package sampler

import (
	"fmt"
	"math"
	"math/rand/v2"
	"slices"
)

// BatchSize turns a job's batch setting into a vertex count: a count ≥ 1 is
// taken as it is, a ratio in (0, 1) as that fraction of n (rounded, at least
// 1). It returns an error unless the result is in [1, n].
func BatchSize(n int, count int, ratio float64) (int, error) {
	switch {
	case count != 0 && ratio != 0:
		return 0, fmt.Errorf("batch size given both as a count (%d) and as a ratio (%g); give one", count, ratio)
	case count != 0:
		if count < 1 || count > n {
			return 0, fmt.Errorf("batch size %d is outside [1, %d], the number of vertices", count, n)
		}
		return count, nil
	case ratio != 0:
		if !(ratio > 0 && ratio <= 1) {
			return 0, fmt.Errorf("batch ratio %g is outside (0, 1]", ratio)
		}
		return max(1, min(n, int(math.Round(ratio*float64(n))))), nil
	}
	return 0, fmt.Errorf("no batch size given")
}

// Uniform returns b distinct vertices of [0, n), drawn uniformly without
// replacement, in increasing order. The draw is a function of (seed, group,
// step) only: every rank of data-parallel group `group` gets the same
// sample at the same step, and other groups get independent ones.
//
// It runs Floyd's algorithm (one draw per member, O(b) expected with an
// open-addressing set) and sorts: O(b log b) time, O(b) memory, never O(n).
// It allocates the sample and its set; UniformInto reuses them.
func Uniform(seed uint64, group, step, n, b int) []int32 {
	if b < 0 || b > n || n > math.MaxInt32 {
		panic(fmt.Sprintf("sampler: Uniform of %d from %d vertices", b, n))
	}
	return UniformInto(make([]int32, b), new(UniformScratch), seed, group, step, n, b)
}

// UniformScratch is the reusable state of UniformInto: the generator and
// Floyd's hash set. The zero value is ready; it grows to the largest b it
// has drawn and then allocates nothing. Not safe for concurrent use.
type UniformScratch struct {
	pcg rand.PCG
	set int32Set
}

// UniformInto is Uniform writing the sample into dst[:b] and returning it,
// with its hash set and generator in scratch: the same vertices in the same
// order, and no allocation once scratch has seen a draw of b. It panics if
// len(dst) < b.
func UniformInto(dst []int32, scratch *UniformScratch, seed uint64, group, step, n, b int) []int32 {
	if b < 0 || b > n || n > math.MaxInt32 {
		panic(fmt.Sprintf("sampler: Uniform of %d from %d vertices", b, n))
	}
	if len(dst) < b {
		panic(fmt.Sprintf("sampler: UniformInto of %d vertices into %d", b, len(dst)))
	}
	out := dst[:b]
	if b == n {
		for v := range out {
			out[v] = int32(v)
		}
		return out
	}
	s := scratch
	// Seeding resets the PCG to the state NewPCG would give it; a Rand
	// keeps no state of its own, so a fresh one on the stack draws what
	// Uniform's always did.
	s.pcg.Seed(mixSeed(seed, uint64(group)), mixSeed(uint64(step), 0x5ca1e))
	rng := rand.New(&s.pcg)
	s.set.reset(b)
	for i, j := 0, n-b; j < n; i, j = i+1, j+1 {
		t := int32(rng.IntN(j + 1))
		if !s.set.add(t) {
			// t was drawn before: take j, which no earlier round could
			// have drawn (they drew from [0, j)).
			s.set.add(int32(j))
			t = int32(j)
		}
		out[i] = t
	}
	slices.Sort(out)
	return out
}

// mixSeed combines two words into a well-spread seed (splitmix64 finish).
func mixSeed(a, b uint64) uint64 {
	z := a*0x9e3779b97f4a7c15 ^ (b + 0x632be59bd9b4e019)
	z = (z ^ z>>30) * 0xbf58476d1ce4e5b9
	z = (z ^ z>>27) * 0x94d049bb133111eb
	return z ^ z>>31
}

// int32Set is an insert-only open-addressing hash set of non-negative
// int32s, emptied and sized for a draw by reset: Floyd's algorithm inserts
// exactly b keys.
type int32Set struct {
	slots []int32 // -1 marks an empty slot
	mask  uint32
}

// reset empties the set and sizes it for n keys (at most half full),
// reusing its slots when they are large enough.
func (s *int32Set) reset(n int) {
	size := 16
	for size < 2*n {
		size <<= 1
	}
	if cap(s.slots) < size {
		s.slots = make([]int32, size)
	}
	s.slots = s.slots[:size]
	s.mask = uint32(size - 1)
	for i := range s.slots {
		s.slots[i] = -1
	}
}

// add inserts k and reports whether it was absent.
func (s *int32Set) add(k int32) bool {
	h := uint32(k) * 0x9e3779b1 & s.mask
	for {
		switch s.slots[h] {
		case -1:
			s.slots[h] = k
			return true
		case k:
			return false
		}
		h = (h + 1) & s.mask
	}
}

// Positions returns the sorted positions of the vertices verts in a vertex
// order whose inverse is inv (inv[v] is the position of vertex v); a nil
// inv is the identity, and verts itself (sorted) is returned.
func Positions(verts []int32, inv []int32) []int32 {
	if inv == nil {
		return verts
	}
	return PositionsInto(make([]int32, len(verts)), verts, inv)
}

// PositionsInto is Positions writing into dst[:len(verts)] and returning
// it; with a nil inv it copies verts. It panics if dst is shorter than
// verts.
func PositionsInto(dst, verts, inv []int32) []int32 {
	if len(dst) < len(verts) {
		panic(fmt.Sprintf("sampler: PositionsInto of %d vertices into %d", len(verts), len(dst)))
	}
	pos := dst[:len(verts)]
	if inv == nil {
		copy(pos, verts)
		return pos
	}
	for i, v := range verts {
		pos[i] = inv[v]
	}
	slices.Sort(pos)
	return pos
}

// Bounds returns, for a sorted list of positions and a split of [0, n) into
// parts blocks with block i = [lo(i), hi(i)), the parts+1 boundaries of the
// positions each block holds: block i's members are pos[b[i]:b[i+1]].
func Bounds(pos []int32, parts int, block func(i int) (lo, hi int)) []int {
	return BoundsInto(make([]int, parts+1), pos, parts, block)
}

// BoundsInto is Bounds writing into dst[:parts+1] and returning it. It
// panics if len(dst) <= parts.
func BoundsInto(dst []int, pos []int32, parts int, block func(i int) (lo, hi int)) []int {
	if len(dst) <= parts {
		panic(fmt.Sprintf("sampler: BoundsInto of %d parts into %d boundaries", parts, len(dst)))
	}
	b := dst[:parts+1]
	for i := 0; i < parts; i++ {
		lo, _ := block(i)
		b[i], _ = slices.BinarySearch(pos, int32(lo))
	}
	b[parts] = len(pos)
	return b
}

// InclusionProbability is p = (B−1)/(N−1), the probability that a vertex
// u ≠ v is in the sample given that v is (ScaleGNN eq. 23); 1 when B = N
// or N = 1.
func InclusionProbability(n, b int) float64 {
	if n <= 1 || b >= n {
		return 1
	}
	return float64(b-1) / float64(n-1)
}
