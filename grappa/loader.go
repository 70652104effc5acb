package grappa

import (
	"slices"

	"scalegnn/spmm"
)

// Loader hands one rank the partitions it trains, slot by slot, and
// builds the next one in a goroutine while the current one trains (§3.3:
// the swept chunk is prefetched during the previous super-epoch; §3.6:
// the next phase's partition during this one). Loads counts the chunks
// read, which with an in-memory graph is what a prepared dataset would
// read from disk: the chunks of each partition that the rank's previous
// partition did not hold (one per boundary inside a base rotation, two
// when the base rotates, with one partition per rank). Bytes is what
// those reads cost (ChunkBytes with the graph's feature width): the byte
// counter of the chunk loads, beside the collectives' counters.
type Loader struct {
	adj   *spmm.CSR
	ch    *Chunks
	train []bool
	sc    Schedule
	kind  Kind
	hops  int
	feats int
	held  []int // the chunks of the partition last loaded
	// pending is the slot being built in the background and where it
	// arrives; next is nil when nothing is in flight.
	pending Slot
	next    chan Partition
	Loads   int
	Bytes   int64
}

// NewLoader starts building slot first; features is the graph's input
// width, which Bytes counts.
func NewLoader(adj *spmm.CSR, ch *Chunks, train []bool, sc Schedule, kind Kind, hops, features int, first Slot) *Loader {
	l := &Loader{adj: adj, ch: ch, train: train, sc: sc, kind: kind, hops: hops, feats: features}
	l.Prefetch(first)
	return l
}

// Prefetch starts building slot s in the background, dropping a
// prefetch of another slot still in flight.
func (l *Loader) Prefetch(s Slot) {
	if l.next != nil {
		if l.pending == s {
			return
		}
		<-l.next
	}
	c := make(chan Partition, 1)
	l.pending, l.next = s, c
	go func() { c <- l.build(s) }()
}

func (l *Loader) build(s Slot) Partition {
	b, x := l.sc.Partition(s.Part, s.SuperEpoch)
	return Build(l.adj, l.ch, l.train, b, x, l.kind, l.hops)
}

// Load returns slot s's partition: the prefetched one when it is s, else
// built now; it counts the reads of the chunks the previous partition
// did not hold. Nothing is in flight afterwards.
func (l *Loader) Load(s Slot) Partition {
	var p Partition
	if l.next != nil && l.pending == s {
		p = <-l.next
	} else {
		if l.next != nil {
			<-l.next
		}
		p = l.build(s)
	}
	l.next = nil
	b, x := l.sc.Partition(s.Part, s.SuperEpoch)
	chunks := []int{b}
	if x != b {
		chunks = append(chunks, x)
	}
	for _, c := range chunks {
		if !slices.Contains(l.held, c) {
			l.read(c)
		}
	}
	l.held = chunks
	return p
}

// read counts one chunk read.
func (l *Loader) read(c int) {
	l.Loads++
	l.Bytes += ChunkBytes(l.adj, l.ch, c, l.feats)
}

// Close waits for the prefetch in flight, so no goroutine outlives the
// Loader.
func (l *Loader) Close() {
	if l.next != nil {
		<-l.next
		l.next = nil
	}
}
