package neighbor

import (
	"fmt"
	"math/bits"

	"scalegnn/internal/counter"
)

// Seeds hands out each step's seeds: balanced, every rank the same number
// of training vertices. An epoch is a permutation of the training
// vertices keyed by (seed, epoch) alone, cut into global batches of
// Ranks·Batch consecutive vertices; rank r takes slice r of each. The last
// global batch of an epoch, when the permutation runs out, is filled up
// from its beginning, so every step has exactly Ranks·Batch distinct
// seeds and every training vertex is a seed at least once per epoch.
//
// The global batch of a step depends only on (seed, Ranks·Batch, step):
// 1 rank with batch 8b trains on the same seeds as 8 ranks with batch b.
// Not safe for concurrent use (it caches the current epoch's permutation).
type Seeds struct {
	train             []int32
	seed              uint64
	ranks, rank, size int

	perm  []int32
	epoch int // whose permutation perm holds; -1: none
}

// NewSeeds returns the seeds of rank over the training mask. A global
// batch larger than the training set is a configuration error.
func NewSeeds(train []bool, seed uint64, ranks, rank, batch int) (*Seeds, error) {
	s := &Seeds{seed: seed, ranks: ranks, rank: rank, size: batch, epoch: -1}
	for v, t := range train {
		if t {
			s.train = append(s.train, int32(v))
		}
	}
	if batch < 1 || ranks*batch > len(s.train) {
		return nil, fmt.Errorf("neighbor: batch_size = %d seeds per rank on %d ranks needs %d training vertices; the graph has %d: set train.batch_size to at most %d",
			batch, ranks, ranks*batch, len(s.train), len(s.train)/ranks)
	}
	s.perm = make([]int32, len(s.train))
	return s, nil
}

// Batch returns the seeds per rank.
func (s *Seeds) Batch() int { return s.size }

// StepsPerEpoch is ceil(training vertices / (Ranks·Batch)).
func (s *Seeds) StepsPerEpoch() int {
	g := s.ranks * s.size
	return (len(s.train) + g - 1) / g
}

// Into writes this rank's seeds of global step step (counted from 0 over
// all epochs) into dst (len Batch) and returns it.
func (s *Seeds) Into(dst []int32, step int) []int32 {
	spe := s.StepsPerEpoch()
	epoch, k := step/spe, step%spe
	if epoch != s.epoch {
		s.permute(epoch)
	}
	dst = dst[:s.size]
	t := len(s.perm)
	p := k*s.ranks*s.size + s.rank*s.size
	for i := range dst {
		q := p + i
		if q >= t {
			q -= t
		}
		dst[i] = s.perm[q]
	}
	return dst
}

// permute draws epoch's permutation of the training vertices
// (Fisher–Yates with counter-based draws).
func (s *Seeds) permute(epoch int) {
	copy(s.perm, s.train)
	for i := len(s.perm) - 1; i > 0; i-- {
		h := counter.Hash4(s.seed, counter.StreamSeeds<<32, uint64(epoch), uint64(i))
		j, _ := bits.Mul64(h, uint64(i)+1)
		s.perm[i], s.perm[j] = s.perm[j], s.perm[i]
	}
	s.epoch = epoch
}
