package node

import (
	"fmt"

	"scalegnn/collectives"
)

// Info is what Detect found for one rank.
type Info struct {
	// RanksPerNode is the number of ranks on this rank's node.
	RanksPerNode int
	// LocalRank is this rank's rank on its node (in the node
	// communicator), 0 to RanksPerNode-1: what binds a rank to one of the
	// node's GPUs.
	LocalRank int
	// Cores is the number of CPUs in this rank's affinity mask.
	Cores int
	// Sharing is the number of ranks of the node whose masks overlap this
	// rank's, itself included.
	Sharing int
	// Threads is Threads(Cores, Sharing): this rank's kernel threads.
	Threads int
	// MinThreads and MaxThreads range over every rank of the world, for a
	// log line that speaks for all of them.
	MinThreads, MaxThreads int
}

// Detect finds this rank's threads. It is collective over world: the node
// communicator is split off (a world that is not a
// collectives.NodeSplitter puts every rank on a node of its own), its
// ranks exchange their affinity masks, and the world agrees on the range
// of threads.
func Detect(world collectives.Comm) (Info, error) {
	return detect(world, Affinity)
}

// detect is Detect with the affinity mask from mask, so that tests can
// give each rank of an in-process world the mask a launcher would.
func detect(world collectives.Comm, mask func() ([]uint64, error)) (Info, error) {
	mine, merr := mask()
	// Every rank takes part in the collectives below even when its mask
	// failed, so that no peer blocks; the error is returned after them.
	if merr != nil {
		mine = nil
	}
	node := collectives.Comm(nil)
	if ns, ok := world.(collectives.NodeSplitter); ok {
		var err error
		if node, err = ns.SplitNode(); err != nil {
			return Info{}, fmt.Errorf("node: splitting the node communicator: %w", err)
		}
	}
	var masks [][]uint64
	self := 0
	if node == nil {
		masks = [][]uint64{mine}
	} else {
		var err error
		if masks, err = gatherMasks(node, mine); err != nil {
			return Info{}, err
		}
		self = node.Rank()
	}
	info := Info{RanksPerNode: len(masks), LocalRank: self, Sharing: 1, Threads: 1}
	info.Cores = Cores(mine)
	if info.Cores > 0 {
		info.Sharing = Sharing(masks, self)
		info.Threads = Threads(info.Cores, info.Sharing)
	}
	span := []int64{-int64(info.Threads), int64(info.Threads)}
	if err := world.AllReduceI64(span, collectives.Max); err != nil {
		return Info{}, fmt.Errorf("node: agreeing on the threads: %w", err)
	}
	info.MinThreads, info.MaxThreads = int(-span[0]), int(span[1])
	if merr != nil {
		return Info{}, merr
	}
	if info.Cores == 0 {
		return Info{}, fmt.Errorf("node: the affinity mask of rank %d holds no CPU", world.Rank())
	}
	return info, nil
}

// gatherMasks gives every rank of node every rank's mask, in node order:
// each rank writes its mask into its own slot of a zeroed buffer and the
// buffer is summed (a sum with zeros is exact, even for the sign bit).
func gatherMasks(node collectives.Comm, mine []uint64) ([][]uint64, error) {
	words := []int64{int64(len(mine))}
	if err := node.AllReduceI64(words, collectives.Max); err != nil {
		return nil, fmt.Errorf("node: exchanging affinity masks: %w", err)
	}
	w := int(words[0])
	buf := make([]int64, node.Size()*w)
	for i, v := range mine {
		buf[node.Rank()*w+i] = int64(v)
	}
	if err := node.AllReduceI64(buf, collectives.Sum); err != nil {
		return nil, fmt.Errorf("node: exchanging affinity masks: %w", err)
	}
	masks := make([][]uint64, node.Size())
	for r := range masks {
		masks[r] = make([]uint64, w)
		for i := range w {
			masks[r][i] = uint64(buf[r*w+i])
		}
	}
	return masks, nil
}
