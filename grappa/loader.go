package grappa

import "slices"

// Loader hands one rank the partitions it trains, slot by slot, and
// builds the next one in a goroutine while the current one trains (§3.3:
// the swept chunk is prefetched during the previous super-epoch; §3.6:
// the next phase's partition during this one). What a partition is, and
// how it is read, is the build function's: the vertex sets of a graph in
// memory (Build), or a partition's blocks read from a prepared dataset.
//
// Loads and Bytes count the reads. With a cost function, a load reads the
// chunks of its partition that the rank's previous partition did not
// hold (one per boundary inside a base rotation, two when the base
// rotates, with one partition per rank), each costing cost(c): what a
// prepared dataset would read for a graph held in memory. Without one,
// Bytes adds what build says it read.
type Loader[T any] struct {
	sc    Schedule
	build func(base, swept int) (T, int64, error)
	cost  func(chunk int) int64
	held  []int // the chunks of the partition last loaded
	// pending is the slot being built in the background and where it
	// arrives; next is nil when nothing is in flight.
	pending Slot
	next    chan built[T]
	Loads   int
	Bytes   int64
}

type built[T any] struct {
	v     T
	bytes int64
	err   error
}

// NewLoader starts building slot first. build makes the partition of
// chunks base and swept and says how many bytes it read; cost, when not
// nil, replaces that count by the chunk reads (the type's comment).
func NewLoader[T any](sc Schedule, build func(base, swept int) (T, int64, error), cost func(chunk int) int64, first Slot) *Loader[T] {
	l := &Loader[T]{sc: sc, build: build, cost: cost}
	l.Prefetch(first)
	return l
}

// Prefetch starts building slot s in the background, dropping a
// prefetch of another slot still in flight.
func (l *Loader[T]) Prefetch(s Slot) {
	if l.next != nil {
		if l.pending == s {
			return
		}
		<-l.next
	}
	c := make(chan built[T], 1)
	l.pending, l.next = s, c
	go func() { c <- l.buildSlot(s) }()
}

func (l *Loader[T]) buildSlot(s Slot) built[T] {
	b, x := l.sc.Partition(s.Part, s.SuperEpoch)
	v, n, err := l.build(b, x)
	return built[T]{v, n, err}
}

// Load returns slot s's partition: the prefetched one when it is s, else
// built now; it counts its reads. Nothing is in flight afterwards.
func (l *Loader[T]) Load(s Slot) (T, error) {
	var p built[T]
	if l.next != nil && l.pending == s {
		p = <-l.next
	} else {
		if l.next != nil {
			<-l.next
		}
		p = l.buildSlot(s)
	}
	l.next = nil
	if p.err != nil {
		var zero T
		return zero, p.err
	}
	b, x := l.sc.Partition(s.Part, s.SuperEpoch)
	chunks := []int{b}
	if x != b {
		chunks = append(chunks, x)
	}
	if l.cost == nil {
		l.Loads += len(chunks)
		l.Bytes += p.bytes
	}
	for _, c := range chunks {
		if l.cost != nil && !slices.Contains(l.held, c) {
			l.Loads++
			l.Bytes += l.cost(c)
		}
	}
	l.held = chunks
	return p.v, nil
}

// Close waits for the prefetch in flight, so no goroutine outlives the
// Loader.
func (l *Loader[T]) Close() {
	if l.next != nil {
		<-l.next
		l.next = nil
	}
}
