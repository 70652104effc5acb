package collectives

import "fmt"

// The data of the conformance check: small integers (exact in float32,
// float64 and int64, whatever the order of a sum), different per rank and
// per index, some negative.

func valF32(r, i int) float32 { return float32((r*7+i*3)%11 - 5) }

func valF64(r, i int) float64 { return float64((r*5+i)%13-6) + 0.25*float64((r+i)%4) }

// valI64 does not fit in 32 bits, so a transport that truncates shows.
func valI64(r, i int) int64 { return int64(r+1)<<40 - int64(i*(r%5)) + int64(i) }

// valA2A is the k-th element that rank s sends to rank d in alltoallv.
func valA2A(s, d, k int) float32 { return float32((s*131 + d*17 + k*5) % 4093) }

// fill returns n values val(r, i).
func fill[T any](n, r int, val func(r, i int) T) []T {
	s := make([]T, n)
	for i := range s {
		s[i] = val(r, i)
	}
	return s
}

// wantReduce returns the reduction over ranks 0 .. size-1 of fill(n, r,
// val), computed here.
func wantReduce[T number](size, n int, op Op, val func(r, i int) T) []T {
	want := fill(n, 0, val)
	for r := 1; r < size; r++ {
		combine(want, fill(n, r, val), op)
	}
	return want
}

// checkBasics checks Rank, Size, Barrier and a first all-gather and
// all-reduce on world.
func checkBasics(k *checker, world Comm) error {
	size, rank := world.Size(), world.Rank()
	if size < 1 || rank < 0 || rank >= size {
		k.failf("Rank() = %d, Size() = %d", rank, size)
		return fmt.Errorf("rank %d out of range [0, %d): cannot go on", rank, size)
	}
	if err := world.Barrier(); err != nil {
		return err
	}
	ranks := make([]float32, size)
	if err := world.AllGatherF32(ranks, []float32{float32(rank)}); err != nil {
		return err
	}
	equal(k, call("AllGatherF32", "world", "rank"), ranks, fill(size, 0, func(_, i int) float32 { return float32(i) }))
	v := []int64{1, int64(rank)}
	if err := world.AllReduceI64(v, Sum); err != nil {
		return err
	}
	equal(k, call("AllReduceI64", "world", Sum, "{1, rank}"), v, []int64{int64(size), int64(size * (size - 1) / 2)})
	return world.Barrier()
}

// checkSuite checks every data collective of c, which is named on in
// messages.
func checkSuite(k *checker, c Comm, on string) error {
	for _, f := range []func(*checker, Comm, string) error{
		checkAllReduce, checkAllReduceBF16, checkAllGather, checkAllGatherV, checkReduceScatter, checkBcast, checkAlltoallv,
		checkAliased,
	} {
		if err := f(k, c, on); err != nil {
			return err
		}
	}
	return c.Barrier()
}

func checkAllReduce(k *checker, c Comm, on string) error {
	size, rank := c.Size(), c.Rank()
	for _, n := range []int{0, 1, 7, 1001} {
		for _, op := range []Op{Sum, Max, Min} {
			if err := checkAllReduceOf(k, on, "AllReduceF32", size, rank, n, op, c.AllReduceF32, valF32); err != nil {
				return err
			}
			if err := checkAllReduceOf(k, on, "AllReduceF64", size, rank, n, op, c.AllReduceF64, valF64); err != nil {
				return err
			}
			if err := checkAllReduceOf(k, on, "AllReduceI64", size, rank, n, op, c.AllReduceI64, valI64); err != nil {
				return err
			}
		}
	}
	return nil
}

// checkAllReduceBF16 checks the bfloat16 sum, blocking and not: small
// integers add exactly in any order, and 1+2⁻⁸ (halfway between two
// bfloat16 values) must round to even, i.e. to 1, before it is summed.
func checkAllReduceBF16(k *checker, c Comm, on string) error {
	size, rank := c.Size(), c.Rank()
	for _, n := range []int{0, 1, 7, 1001} {
		buf := fill(n, rank, valF32)
		if err := c.AllReduceBF16(buf); err != nil {
			return err
		}
		equal(k, call("AllReduceBF16", on, fmt.Sprintf("len %d", n)), buf, wantReduce(size, n, Sum, valF32))
	}
	tie := []float32{1 + 1.0/256, -(1 + 1.0/256), 3}
	req, err := c.IAllReduceBF16(tie)
	if err != nil {
		return err
	}
	if err := req.Wait(); err != nil {
		return err
	}
	s := float32(size)
	equal(k, call("IAllReduceBF16", on, "ties to even"), tie, []float32{s, -s, 3 * s})
	return nil
}

// checkAllReduceOf checks one all-reduce of n elements.
func checkAllReduceOf[T number](k *checker, on, name string, size, rank, n int, op Op,
	allReduce func([]T, Op) error, val func(r, i int) T) error {
	buf := fill(n, rank, val)
	if err := allReduce(buf, op); err != nil {
		return err
	}
	equal(k, call(name, on, op, fmt.Sprintf("len %d", n)), buf, wantReduce(size, n, op, val))
	return nil
}

func checkAllGather(k *checker, c Comm, on string) error {
	size, rank := c.Size(), c.Rank()
	for _, n := range []int{0, 1, 5} {
		dst := make([]float32, size*n)
		if err := c.AllGatherF32(dst, fill(n, rank, valF32)); err != nil {
			return err
		}
		want := make([]float32, 0, size*n)
		for r := range size {
			want = append(want, fill(n, r, valF32)...)
		}
		equal(k, call("AllGatherF32", on, fmt.Sprintf("len(src) %d", n)), dst, want)
	}
	return nil
}

func checkAllGatherV(k *checker, c Comm, on string) error {
	size, rank := c.Size(), c.Rank()
	patterns := []struct {
		name  string
		count func(r int) int
	}{
		{"(3r+1)%4", func(r int) int { return (3*r + 1) % 4 }},
		{"all zero", func(int) int { return 0 }},
		{"257 but last 0", func(r int) int {
			if r == size-1 {
				return 0
			}
			return 257
		}},
	}
	for _, p := range patterns {
		counts := fill(size, 0, func(_, r int) int { return p.count(r) })
		want := []float32{}
		for r := range size {
			want = append(want, fill(counts[r], r, valF32)...)
		}
		dst := make([]float32, len(want))
		if err := c.AllGatherVF32(dst, fill(counts[rank], rank, valF32), counts); err != nil {
			return err
		}
		equal(k, call("AllGatherVF32", on, "counts "+p.name), dst, want)
		// In place: src is dst's own block, the rest of dst garbage.
		displ := 0
		for r := range rank {
			displ += counts[r]
		}
		for i := range dst {
			dst[i] = -1
		}
		copy(dst[displ:], fill(counts[rank], rank, valF32))
		if err := c.AllGatherVF32(dst, dst[displ:displ+counts[rank]], counts); err != nil {
			return err
		}
		equal(k, call("AllGatherVF32", on, "in place, counts "+p.name), dst, want)
	}
	return nil
}

func checkReduceScatter(k *checker, c Comm, on string) error {
	size, rank := c.Size(), c.Rank()
	for _, n := range []int{0, 1, 3} {
		dst := make([]float32, n)
		if err := c.ReduceScatterF32(dst, fill(size*n, rank, valF32)); err != nil {
			return err
		}
		want := wantReduce(size, size*n, Sum, valF32)[rank*n : (rank+1)*n]
		equal(k, call("ReduceScatterF32", on, fmt.Sprintf("len(dst) %d", n)), dst, want)
	}
	return nil
}

func checkBcast(k *checker, c Comm, on string) error {
	size, rank := c.Size(), c.Rank()
	// The first, middle and last rank as roots keep the count of calls
	// independent of the size of large worlds.
	roots := []int{0}
	if size > 2 {
		roots = append(roots, size/2)
	}
	if size > 1 {
		roots = append(roots, size-1)
	}
	for _, root := range roots {
		for _, n := range []int{0, 1, 5} {
			val := func(_, i int) float32 { return valF32(root+100, i) }
			buf := fill(n, rank, func(int, int) float32 { return -999 })
			if rank == root {
				buf = fill(n, rank, val)
			}
			if err := c.BcastF32(buf, root); err != nil {
				return err
			}
			equal(k, call("BcastF32", on, fmt.Sprintf("len %d", n), fmt.Sprintf("root %d", root)), buf, fill(n, root, val))
		}
		for _, n := range []int{0, 3, 300} {
			val := func(_, i int) byte { return byte((root*31 + i*7) % 256) }
			buf := fill(n, rank, func(int, int) byte { return 0xEE })
			if rank == root {
				buf = fill(n, rank, val)
			}
			if err := c.BcastBytes(buf, root); err != nil {
				return err
			}
			equal(k, call("BcastBytes", on, fmt.Sprintf("len %d", n), fmt.Sprintf("root %d", root)), buf, fill(n, root, val))
		}
	}
	return nil
}

func checkAlltoallv(k *checker, c Comm, on string) error {
	size, rank := c.Size(), c.Rank()
	patterns := []struct {
		name  string
		count func(s, d int) int
	}{
		{"(s+2d+1)%4", func(s, d int) int { return (s + 2*d + 1) % 4 }},
		{"(2s+3d)%4", func(s, d int) int { return (2*s + 3*d) % 4 }},
		{"all zero", func(int, int) int { return 0 }},
		{"self only", func(s, d int) int {
			if s == d {
				return 3
			}
			return 0
		}},
		{"64+(s*d)%5", func(s, d int) int { return 64 + (s*d)%5 }},
	}
	for _, p := range patterns {
		sendCounts := make([]int, size)
		recvCounts := make([]int, size)
		var send, want []float32
		for d := range size {
			sendCounts[d] = p.count(rank, d)
			for j := range sendCounts[d] {
				send = append(send, valA2A(rank, d, j))
			}
		}
		for s := range size {
			recvCounts[s] = p.count(s, rank)
			for j := range recvCounts[s] {
				want = append(want, valA2A(s, rank, j))
			}
		}
		recv := fill(len(want), 0, func(int, int) float32 { return -1 })
		if err := c.AlltoallvF32(send, sendCounts, recv, recvCounts); err != nil {
			return err
		}
		equal(k, call("AlltoallvF32", on, "counts "+p.name), recv, want)
	}
	return nil
}

// checkAliased checks the collectives whose input and output overlap: the
// in-place patterns (a rank's src is its own block of dst, or dst is its
// own block of src) and alltoallv from and into one buffer.
func checkAliased(k *checker, c Comm, on string) error {
	size, rank := c.Size(), c.Rank()
	const n = 3
	buf := make([]float32, size*n)
	copy(buf[rank*n:], fill(n, rank, valF32))
	if err := c.AllGatherF32(buf, buf[rank*n:(rank+1)*n]); err != nil {
		return err
	}
	want := make([]float32, 0, size*n)
	for r := range size {
		want = append(want, fill(n, r, valF32)...)
	}
	equal(k, call("AllGatherF32", on, "src = own block of dst"), buf, want)

	buf = fill(size*n, rank, valF32)
	if err := c.ReduceScatterF32(buf[rank*n:(rank+1)*n], buf); err != nil {
		return err
	}
	equal(k, call("ReduceScatterF32", on, "dst = own block of src"), buf[rank*n:(rank+1)*n],
		wantReduce(size, size*n, Sum, valF32)[rank*n:(rank+1)*n])

	counts := fill(size, 0, func(int, int) int { return 2 })
	buf = make([]float32, 0, 2*size)
	for d := range size {
		buf = append(buf, valA2A(rank, d, 0), valA2A(rank, d, 1))
	}
	if err := c.AlltoallvF32(buf, counts, buf, counts); err != nil {
		return err
	}
	want = want[:0]
	for s := range size {
		want = append(want, valA2A(s, rank, 0), valA2A(s, rank, 1))
	}
	equal(k, call("AlltoallvF32", on, "send = recv"), buf, want)
	return nil
}
