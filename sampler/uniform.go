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
func Uniform(seed uint64, group, step, n, b int) []int32 {
	if b < 0 || b > n || n > math.MaxInt32 {
		panic(fmt.Sprintf("sampler: Uniform of %d from %d vertices", b, n))
	}
	out := make([]int32, 0, b)
	if b == n {
		for v := 0; v < n; v++ {
			out = append(out, int32(v))
		}
		return out
	}
	rng := rand.New(rand.NewPCG(mixSeed(seed, uint64(group)), mixSeed(uint64(step), 0x5ca1e)))
	set := newInt32Set(b)
	for j := n - b; j < n; j++ {
		t := int32(rng.IntN(j + 1))
		if !set.add(t) {
			// t was drawn before: take j, which no earlier round could
			// have drawn (they drew from [0, j)).
			set.add(int32(j))
			t = int32(j)
		}
		out = append(out, t)
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
// int32s, sized once: Floyd's algorithm inserts exactly b keys.
type int32Set struct {
	slots []int32 // -1 marks an empty slot
	mask  uint32
}

func newInt32Set(n int) *int32Set {
	size := 16
	for size < 2*n {
		size <<= 1
	}
	s := &int32Set{slots: make([]int32, size), mask: uint32(size - 1)}
	for i := range s.slots {
		s.slots[i] = -1
	}
	return s
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
	pos := make([]int32, len(verts))
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
	b := make([]int, parts+1)
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
