package perfmodel

import (
	"fmt"
	"math"

	"scalegnn/collectives"
)

// largeAllReduceFrom is the message size from which an all-reduce's
// temporary buffer is mapped afresh on every call (Link.LargeFrom):
// glibc's DEFAULT_MMAP_THRESHOLD_MAX, 32 MiB on 64-bit systems. Below it
// malloc raises its mmap threshold to the largest block freed and then
// reuses heap memory; from it on every block is a new mmap, freed with
// munmap. A block of exactly 32 MiB is mapped too (malloc adds its header).
const largeAllReduceFrom = 32 << 20

// largeAllReduceBytes is the message calibration times the large
// all-reduce with: half again the threshold, so that the buffer is mapped
// whatever MPI adds to it, and small enough to take about a second per
// call with 8 ranks on 2 cores.
const largeAllReduceBytes = 48 << 20

// largeSample is one timed all-reduce of Bytes over groups of Size ranks
// (all groups at once): T seconds, the slowest rank's median.
type largeSample struct {
	Size  int
	Bytes int64
	T     float64
}

// largeCost returns Link.Large for link l from timed all-reduces above the
// threshold: each sample's time beyond what l's latency and bandwidth
// predict (never below 0), per byte, averaged over the samples, and each
// sample's value. The latency and bandwidth were fitted on messages below
// the threshold, so the excess is the cost of the fresh buffer.
func largeCost(samples []largeSample, l Link) (mean float64, each []float64) {
	l.Large = 0
	for _, s := range samples {
		model := CollectiveTime(Collective{Kind: collectives.KindAllReduce, Size: s.Size, Elems: s.Bytes, ElemBytes: 1}, l)
		v := math.Max(0, s.T-model) / float64(s.Bytes)
		each = append(each, v)
		mean += v / float64(len(samples))
	}
	return mean, each
}

// large times an all-reduce of largeAllReduceBytes on groups of each size
// (color as fitLink's), all groups at once, and sets link's LargeFrom and
// Large (largeCost); the fit records each group size's value.
func (c *calibrator) large(m *Machine, link *Link, name string, color func(p int) int, groupSizes []int) error {
	var samples []largeSample
	buf := filled(largeAllReduceBytes / 4)
	for _, p := range groupSizes {
		sub, err := c.world.Split(color(p), c.world.Rank())
		if err != nil {
			return err
		}
		t, err := c.timeIt(func() error { return sub.AllReduceF32(buf, collectives.Sum) })
		if err != nil {
			return err
		}
		samples = append(samples, largeSample{Size: p, Bytes: largeAllReduceBytes, T: t})
		fmt.Fprintf(c.log, "%s allreduce p=%d bytes=%d (large): %.3g s\n", name, p, largeAllReduceBytes, t)
	}
	mean, each := largeCost(samples, *link)
	for i, s := range samples {
		m.Fit[fmt.Sprintf("comm_%s_large_p%d_s_per_byte", name, s.Size)] = each[i]
	}
	link.LargeFrom, link.Large = largeAllReduceFrom, mean
	return nil
}
