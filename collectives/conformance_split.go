package collectives

import (
	"fmt"
	"slices"
)

// splitOf splits parent and makes sure every rank got a communicator
// exactly when want says so (want nil: no communicator). It returns ok ==
// false, having recorded the mismatch, when some rank of parent did not, so
// that no rank goes on to use a communicator that a peer lacks.
func splitOf(k *checker, parent Comm, on string, color, key int, want []int) (Comm, bool, error) {
	c, err := parent.Split(color, key)
	if err != nil {
		return nil, false, err
	}
	got := c != nil
	if got != (want != nil) {
		k.failf("%s: got communicator %v, want %v", call("Split", on, color, key), got, want != nil)
	}
	all, err := allAgree(parent, got == (want != nil))
	if err != nil {
		return nil, false, err
	}
	if !all {
		k.failf("%s: some rank got a wrong communicator", call("Split", on, color, key))
	}
	return c, all, nil
}

// checkMembers checks that c holds the world ranks want, in that order.
func checkMembers(k *checker, c Comm, on string, want []int) error {
	pos := slices.Index(want, k.worldRank)
	if c.Size() != len(want) || c.Rank() != pos {
		k.failf("%s: Rank() = %d, Size() = %d, want %d, %d (members %v)", on, c.Rank(), c.Size(), pos, len(want), want)
	}
	got := make([]float32, c.Size())
	if err := c.AllGatherF32(got, []float32{float32(k.worldRank)}); err != nil {
		return err
	}
	wantF := make([]float32, len(want))
	for i, r := range want {
		wantF[i] = float32(r)
	}
	equal(k, on+": world ranks of the members", got, wantF)
	return nil
}

// ranksWhere returns the world ranks r in [0, size) with keep(r), in
// increasing order.
func ranksWhere(size int, keep func(r int) bool) []int {
	var rs []int
	for r := range size {
		if keep(r) {
			rs = append(rs, r)
		}
	}
	return rs
}

// checkSplit checks Split: uneven groups ordered by a decreasing key, ties
// broken by old rank, nested splits, an undefined color, and every
// collective on the uneven and the nested groups.
func checkSplit(k *checker, world Comm) error {
	size, rank := world.Size(), world.Rank()

	// Uneven groups (color rank%3), key -rank: decreasing world rank.
	on3 := "split(rank%3, key -rank)"
	want3 := ranksWhere(size, func(r int) bool { return r%3 == rank%3 })
	slices.Reverse(want3)
	s3, ok, err := splitOf(k, world, "world", rank%3, -rank, want3)
	if err != nil || !ok {
		return err
	}
	if err := checkMembers(k, s3, on3, want3); err != nil {
		return err
	}

	// Equal keys: ordered by old rank.
	wantTie := ranksWhere(size, func(r int) bool { return r%2 == rank%2 })
	tie, ok, err := splitOf(k, world, "world", rank%2, 0, wantTie)
	if err != nil || !ok {
		return err
	}
	if err := checkMembers(k, tie, "split(rank%2, key 0)", wantTie); err != nil {
		return err
	}

	// Nested: split the rank%3 groups by the parity of the rank in them,
	// then reverse that.
	onN := on3 + "/split(rank%2, key rank)"
	pos := slices.Index(want3, rank)
	var wantN []int
	for i, r := range want3 {
		if i%2 == pos%2 {
			wantN = append(wantN, r)
		}
	}
	nested, ok, err := splitOf(k, s3, on3, s3.Rank()%2, s3.Rank(), wantN)
	if err != nil || !ok {
		return err
	}
	if err := checkMembers(k, nested, onN, wantN); err != nil {
		return err
	}
	onNN := onN + "/split(0, key -rank)"
	wantNN := slices.Clone(wantN)
	slices.Reverse(wantNN)
	nn, ok, err := splitOf(k, nested, onN, 0, -nested.Rank(), wantNN)
	if err != nil || !ok {
		return err
	}
	if err := checkMembers(k, nn, onNN, wantNN); err != nil {
		return err
	}

	// Undefined color: odd ranks join nothing.
	onU := "split(even 7 / odd undefined, key rank)"
	var wantU []int
	color := -1
	if rank%2 == 0 {
		wantU = ranksWhere(size, func(r int) bool { return r%2 == 0 })
		color = 7
	}
	u, ok, err := splitOf(k, world, "world", color, rank, wantU)
	if err != nil || !ok {
		return err
	}
	if u != nil {
		if err := checkMembers(k, u, onU, wantU); err != nil {
			return err
		}
	}

	if err := checkSuite(k, s3, on3); err != nil {
		return err
	}
	if err := checkSuite(k, nested, onN); err != nil {
		return err
	}
	return world.Barrier()
}

// checkNonblocking overlaps nonblocking all-reduces on world with blocking
// collectives on another communicator, and waits for them out of order.
func checkNonblocking(k *checker, world Comm) error {
	size, rank := world.Size(), world.Rank()
	sub, err := world.Split(rank%2, rank)
	if err != nil {
		return err
	}
	if sub == nil {
		k.failf("%s: got no communicator", call("Split", "world", rank%2, rank))
		return fmt.Errorf("cannot go on without a communicator")
	}
	subSize := (size + 1 - rank%2) / 2
	subRank := rank / 2

	a := fill(1001, rank, valF32)
	reqA, err := world.IAllReduceF32(a, Sum)
	if err != nil {
		return err
	}
	b := fill(7, subRank, valF64)
	if err := sub.AllReduceF64(b, Max); err != nil {
		return err
	}
	var e []float32
	reqE, err := world.IAllReduceF32(e, Max)
	if err != nil {
		return err
	}
	g := make([]float32, 3*sub.Size())
	if err := sub.AllGatherF32(g, fill(3, subRank, valF32)); err != nil {
		return err
	}
	m := fill(5, rank, valF32)
	reqM, err := world.IAllReduceF32(m, Min)
	if err != nil {
		return err
	}
	if err := sub.Barrier(); err != nil {
		return err
	}
	for _, req := range []Request{reqM, reqE, reqA} {
		if err := req.Wait(); err != nil {
			return err
		}
	}

	on := "world, overlapped with split(rank%2)"
	equal(k, call("IAllReduceF32", on, Sum, "len 1001"), a, wantReduce(size, 1001, Sum, valF32))
	equal(k, call("IAllReduceF32", on, Max, "len 0"), e, nil)
	equal(k, call("IAllReduceF32", on, Min, "len 5"), m, wantReduce(size, 5, Min, valF32))
	equal(k, call("AllReduceF64", "split(rank%2) during IAllReduceF32", Max, "len 7"), b, wantReduce(subSize, 7, Max, valF64))
	var wantG []float32
	for r := range subSize {
		wantG = append(wantG, fill(3, r, valF32)...)
	}
	equal(k, call("AllGatherF32", "split(rank%2) during IAllReduceF32", "len(src) 3"), g, wantG)
	return world.Barrier()
}

// counts is a snapshot of a Counters.
type counts [numKinds][2]int64

func snapshot(c *Counters) counts {
	var s counts
	for kd := range numKinds {
		s[kd] = [2]int64{c.Calls(kd), c.Bytes(kd)}
	}
	return s
}

// checkCounters checks the byte counters of a fresh communicator after a
// known sequence of calls, and that the parent's counters do not move.
func checkCounters(k *checker, world Comm) error {
	size, rank := world.Size(), world.Rank()
	before := snapshot(world.Counters())
	c, err := world.Split(0, rank)
	if err != nil {
		return err
	}
	if c == nil {
		k.failf("%s: got no communicator", call("Split", "world", 0, rank))
		return fmt.Errorf("cannot go on without a communicator")
	}
	if got := snapshot(c.Counters()); got != (counts{}) {
		k.failf("counters of a new communicator: got %v, want zero", got)
	}

	var want counts
	add := func(kd Kind, bytes int) {
		want[kd][0]++
		want[kd][1] += int64(bytes)
	}
	steps := []struct {
		kind  Kind
		bytes int
		run   func() error
	}{
		{KindAllReduce, 4 * 5, func() error { return c.AllReduceF32(make([]float32, 5), Sum) }},
		{KindAllReduce, 8 * 3, func() error { return c.AllReduceF64(make([]float64, 3), Max) }},
		{KindAllReduce, 8 * 2, func() error { return c.AllReduceI64(make([]int64, 2), Min) }},
		{KindAllReduce, 0, func() error { return c.AllReduceF32(nil, Sum) }},
		{KindAllReduce, 4 * 4, func() error {
			req, err := c.IAllReduceF32(make([]float32, 4), Sum)
			if err != nil {
				return err
			}
			return req.Wait()
		}},
		{KindAllGather, 4 * 3, func() error { return c.AllGatherF32(make([]float32, 3*size), make([]float32, 3)) }},
		{KindAllGather, 4 * (rank % 3), func() error {
			cs := fill(size, 0, func(_, r int) int { return r % 3 })
			total := 0
			for _, n := range cs {
				total += n
			}
			return c.AllGatherVF32(make([]float32, total), make([]float32, rank%3), cs)
		}},
		{KindReduceScatter, 4 * 2 * size, func() error { return c.ReduceScatterF32(make([]float32, 2), make([]float32, 2*size)) }},
		{KindBcast, 4 * 6, func() error { return c.BcastF32(make([]float32, 6), size-1) }},
		{KindBcast, 10, func() error { return c.BcastBytes(make([]byte, 10), 0) }},
		{KindAlltoallv, 4 * 2 * size, func() error {
			cs := fill(size, 0, func(int, int) int { return 2 })
			return c.AlltoallvF32(make([]float32, 2*size), cs, make([]float32, 2*size), cs)
		}},
	}
	for _, s := range steps {
		if err := s.run(); err != nil {
			return err
		}
		add(s.kind, s.bytes)
	}
	if err := c.Barrier(); err != nil {
		return err
	}
	got := snapshot(c.Counters())
	for kd := range numKinds {
		if got[kd] != want[kd] {
			k.failf("counters of split(0, key rank), %v: got %d calls, %d bytes, want %d calls, %d bytes",
				kd, got[kd][0], got[kd][1], want[kd][0], want[kd][1])
		}
	}
	var total int64
	for kd := range numKinds {
		total += want[kd][1]
	}
	if got := c.Counters().TotalBytes(); got != total {
		k.failf("counters of split(0, key rank): TotalBytes() = %d, want %d", got, total)
	}
	if after := snapshot(world.Counters()); after != before {
		k.failf("counters of world moved during Split and calls on the split: before %v, after %v", before, after)
	}
	return nil
}
