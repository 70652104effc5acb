//go:build !nompi

package mpi

// #include "shim.h"
import "C"

import (
	"fmt"
	"slices"
	"unsafe"

	"scalegnn/collectives"
)

// AllGatherF32 implements collectives.Comm with MPI_Allgather. An empty
// all-gather is a barrier (see allReduce).
func (c *comm) AllGatherF32(dst, src []float32) error {
	const method = "AllGatherF32"
	if len(dst) != c.size*len(src) {
		return c.errorf(method, fmt.Errorf("len(dst) = %d, want Size()*len(src) = %d*%d", len(dst), c.size, len(src)))
	}
	cn, err := cInt(len(src), "len(src)")
	if err != nil {
		return c.errorf(method, err)
	}
	if _, err := cInt(len(dst), "len(dst)"); err != nil {
		return c.errorf(method, err)
	}
	c.counters.Add(collectives.KindAllGather, 4*len(src))
	if len(src) == 0 {
		return c.Barrier()
	}
	if overlap(dst, src) {
		src = slices.Clone(src)
	}
	s, d := ptr(src), ptr(dst)
	if err := c.call("MPI_Allgather", func() C.int { return C.sg_allgather(s, cn, d, c.env.f32, c.c) }); err != nil {
		return c.errorf(method, err)
	}
	return nil
}

// AllGatherVF32 implements collectives.Comm with MPI_Allgatherv. When
// every count is zero it is a barrier (see allReduce).
func (c *comm) AllGatherVF32(dst, src []float32, counts []int) error {
	const method = "AllGatherVF32"
	if len(counts) != c.size {
		return c.errorf(method, fmt.Errorf("len(counts) = %d, want Size() = %d", len(counts), c.size))
	}
	sc := &c.scratch.counts
	cs, displs, total, err := countsAndDispls(counts, "counts", sc[0], sc[1])
	if err != nil {
		return c.errorf(method, err)
	}
	sc[0], sc[1] = cs, displs
	if counts[c.rank] != len(src) {
		return c.errorf(method, fmt.Errorf("counts[%d] = %d, but len(src) = %d", c.rank, counts[c.rank], len(src)))
	}
	if len(dst) != total {
		return c.errorf(method, fmt.Errorf("len(dst) = %d, want the sum of counts %d", len(dst), total))
	}
	c.counters.Add(collectives.KindAllGather, 4*len(src))
	if total == 0 {
		return c.Barrier()
	}
	// src as dst's own block goes as MPI_IN_PLACE; any other overlap is
	// cloned, since MPI forbids aliased buffers.
	own := len(src) > 0 && &src[0] == &dst[displs[c.rank]]
	if !own && overlap(dst, src) {
		src = slices.Clone(src)
	}
	s, d := ptr(src), ptr(dst)
	cn := cs[c.rank]
	if err := c.call("MPI_Allgatherv", func() C.int {
		if own {
			return C.sg_allgatherv_inplace(d, &cs[0], &displs[0], c.env.f32, c.c)
		}
		return C.sg_allgatherv(s, cn, d, &cs[0], &displs[0], c.env.f32, c.c)
	}); err != nil {
		return c.errorf(method, err)
	}
	return nil
}

// ReduceScatterF32 implements collectives.Comm with
// MPI_Reduce_scatter_block. An empty reduce-scatter is a barrier (see
// allReduce).
func (c *comm) ReduceScatterF32(dst, src []float32) error {
	const method = "ReduceScatterF32"
	if len(src) != c.size*len(dst) {
		return c.errorf(method, fmt.Errorf("len(src) = %d, want Size()*len(dst) = %d*%d", len(src), c.size, len(dst)))
	}
	cn, err := cInt(len(dst), "len(dst)")
	if err != nil {
		return c.errorf(method, err)
	}
	if _, err := cInt(len(src), "len(src)"); err != nil {
		return c.errorf(method, err)
	}
	c.counters.Add(collectives.KindReduceScatter, 4*len(src))
	if len(dst) == 0 {
		return c.Barrier()
	}
	if overlap(dst, src) {
		src = slices.Clone(src)
	}
	s, d := ptr(src), ptr(dst)
	if err := c.call("MPI_Reduce_scatter_block", func() C.int {
		return C.sg_reduce_scatter_block(s, d, cn, c.env.f32, c.env.sum, c.c)
	}); err != nil {
		return c.errorf(method, err)
	}
	return nil
}

// BcastF32 implements collectives.Comm with MPI_Bcast. An empty broadcast
// is a barrier (see allReduce).
func (c *comm) BcastF32(buf []float32, root int) error {
	return c.bcast("BcastF32", ptr(buf), len(buf), 4, c.env.f32, root)
}

// BcastBytes implements collectives.Comm with MPI_Bcast on MPI_BYTE. An
// empty broadcast is a barrier (see allReduce).
func (c *comm) BcastBytes(buf []byte, root int) error {
	return c.bcast("BcastBytes", ptr(buf), len(buf), 1, c.env.bytes, root)
}

func (c *comm) bcast(method string, p unsafe.Pointer, n, elemSize int, t C.MPI_Datatype, root int) error {
	if root < 0 || root >= c.size {
		return c.errorf(method, fmt.Errorf("root %d out of range [0, %d)", root, c.size))
	}
	cn, err := cInt(n, "len(buf)")
	if err != nil {
		return c.errorf(method, err)
	}
	c.counters.Add(collectives.KindBcast, elemSize*n)
	if n == 0 {
		return c.Barrier()
	}
	if err := c.call("MPI_Bcast", func() C.int { return C.sg_bcast(p, cn, t, C.int(root), c.c) }); err != nil {
		return c.errorf(method, err)
	}
	return nil
}

// AlltoallvF32 implements collectives.Comm with MPI_Alltoallv. send and
// recv may be longer than the sums of the counts; their tails are neither
// read nor written. Unlike the other collectives it is not turned into a
// barrier when this rank has nothing to send or receive, since only the
// sum over all ranks, which no rank knows, would tell that it is empty.
func (c *comm) AlltoallvF32(send []float32, sendCounts []int, recv []float32, recvCounts []int) error {
	const method = "AlltoallvF32"
	if len(sendCounts) != c.size || len(recvCounts) != c.size {
		return c.errorf(method, fmt.Errorf("len(sendCounts) = %d, len(recvCounts) = %d, want Size() = %d",
			len(sendCounts), len(recvCounts), c.size))
	}
	sc := &c.scratch.counts
	scs, sdispls, sendTotal, err := countsAndDispls(sendCounts, "sendCounts", sc[0], sc[1])
	if err != nil {
		return c.errorf(method, err)
	}
	sc[0], sc[1] = scs, sdispls
	rcs, rdispls, recvTotal, err := countsAndDispls(recvCounts, "recvCounts", sc[2], sc[3])
	if err != nil {
		return c.errorf(method, err)
	}
	sc[2], sc[3] = rcs, rdispls
	if len(send) < sendTotal || len(recv) < recvTotal {
		return c.errorf(method, fmt.Errorf("len(send) = %d, len(recv) = %d, want at least the sums of the counts %d, %d",
			len(send), len(recv), sendTotal, recvTotal))
	}
	c.counters.Add(collectives.KindAlltoallv, 4*sendTotal)
	send, recv = send[:sendTotal], recv[:recvTotal]
	if overlap(send, recv) {
		send = slices.Clone(send)
	}
	s, r := ptr(send), ptr(recv)
	if err := c.call("MPI_Alltoallv", func() C.int {
		return C.sg_alltoallv(s, &scs[0], &sdispls[0], r, &rcs[0], &rdispls[0], c.env.f32, c.c)
	}); err != nil {
		return c.errorf(method, err)
	}
	return nil
}
