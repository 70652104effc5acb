package grappa

import "scalegnn/spmm"

// Loader hands one worker its partition super-epoch by super-epoch and
// builds the next one in a goroutine while the current one trains (§3.3:
// the swept chunk is prefetched during the previous super-epoch). Loads
// counts the chunks read, which with an in-memory graph is what a
// prepared dataset would read from disk: one per boundary inside a base
// rotation, two when the base rotates. Bytes is what those reads cost
// (ChunkBytes with the graph's feature width): the byte counter of the
// chunk loads, beside the collectives' counters.
type Loader struct {
	adj   *spmm.CSR
	ch    *Chunks
	train []bool
	sc    Schedule
	w     int
	kind  Kind
	hops  int
	feats int

	s     int
	next  chan Partition
	Loads int
	Bytes int64
}

// NewLoader starts building worker w's first partition; features is the
// graph's input width, which Bytes counts.
func NewLoader(adj *spmm.CSR, ch *Chunks, train []bool, sc Schedule, w int, kind Kind, hops, features int) *Loader {
	l := &Loader{adj: adj, ch: ch, train: train, sc: sc, w: w, kind: kind, hops: hops, feats: features}
	b, x := sc.Partition(w, 0)
	l.read(b)
	if x != b {
		l.read(x)
	}
	l.start(0)
	return l
}

func (l *Loader) start(s int) {
	c := make(chan Partition, 1)
	l.next = c
	go func() {
		b, x := l.sc.Partition(l.w, s)
		c <- Build(l.adj, l.ch, l.train, b, x, l.kind, l.hops)
	}()
}

// Next returns the partition of the next super-epoch (the first on the
// first call) and starts prefetching the one after it.
func (l *Loader) Next() Partition {
	p := <-l.next
	if l.s > 0 {
		for _, c := range l.sc.Loads(l.w, l.s-1) {
			l.read(c)
		}
	}
	l.s++
	l.start(l.s)
	return p
}

// read counts one chunk read.
func (l *Loader) read(c int) {
	l.Loads++
	l.Bytes += ChunkBytes(l.adj, l.ch, c, l.feats)
}

// Close waits for the prefetch in flight, so no goroutine outlives the
// Loader.
func (l *Loader) Close() { <-l.next }

// Seek makes the next Next return super-epoch s's partition, as if Next
// had been called s times, without counting the reads in between (a
// resumed run starts at its checkpoint's super-epoch).
func (l *Loader) Seek(s int) {
	<-l.next
	l.s = s
	l.start(s)
}
