package collectives

import "fmt"

// Op is a reduction operator.
type Op int

const (
	Sum Op = iota
	Max
	Min
)

// String returns the operator's name: sum, max or min.
func (o Op) String() string {
	switch o {
	case Sum:
		return "sum"
	case Max:
		return "max"
	case Min:
		return "min"
	}
	return fmt.Sprintf("Op(%d)", int(o))
}

// Comm is a communicator: a fixed, ordered group of ranks. Every collective
// must be called by every rank of the group, in the same order, with buffers
// of the sizes documented per method; a size mismatch between ranks is a
// programmer error.
//
// Methods return an error when the transport fails or when the job has been
// aborted by another rank (so that no rank blocks forever on a peer that
// gave up). Buffers may be empty; an empty collective still synchronises.
// An input and an output buffer may overlap (e.g. src may be this rank's
// own block of dst); the result is as if the input were copied first.
type Comm interface {
	// Rank is this process's index in the group, in [0, Size()).
	Rank() int
	// Size is the number of ranks in the group.
	Size() int
	// Split partitions the group like MPI_Comm_split: ranks passing the same
	// color form a new communicator, ordered by key (ties by old rank).
	// A negative color is MPI_UNDEFINED: the rank joins no group and gets
	// a nil Comm (and a nil error). Split is collective over the group.
	Split(color, key int) (Comm, error)
	// Barrier blocks until every rank of the group has entered it.
	Barrier() error
	// Abort ends the whole job (every rank of the world, not only of this
	// group) with the given exit code. It does not return for MPI.
	Abort(code int)

	// AllReduceF32 reduces buf element-wise over the group, in place.
	AllReduceF32(buf []float32, op Op) error
	// AllReduceF64 reduces buf element-wise over the group, in place.
	AllReduceF64(buf []float64, op Op) error
	// AllReduceI64 reduces buf element-wise over the group, in place.
	AllReduceI64(buf []int64, op Op) error
	// IAllReduceF32 starts a nonblocking in-place all-reduce. buf must not be
	// read or written until Wait returns.
	IAllReduceF32(buf []float32, op Op) (Request, error)
	// AllReduceBF16 sums buf over the group in bfloat16, in place: each
	// rank's values are rounded to bfloat16 (ToBF16), partial sums are
	// combined with AddBF16, and the result is widened back to float32.
	// It moves half the bytes of AllReduceF32 (counted as 2 per element).
	// The order of the partial sums is the implementation's, so results
	// may differ between implementations in the last bfloat16 bit.
	AllReduceBF16(buf []float32) error
	// IAllReduceBF16 is the nonblocking AllReduceBF16: buf must not be
	// read or written until Wait returns.
	IAllReduceBF16(buf []float32) (Request, error)

	// AllGatherF32 concatenates every rank's src in rank order into dst;
	// len(dst) == Size()*len(src) and len(src) is the same on every rank.
	AllGatherF32(dst, src []float32) error
	// AllGatherVF32 concatenates src of varying lengths in rank order into
	// dst; counts[i] is the length of rank i's src and len(dst) is their sum.
	// src may be the rank's own block of dst (in place: MPI_IN_PLACE), so
	// that a caller needs no second copy of its rows.
	AllGatherVF32(dst, src []float32, counts []int) error
	// ReduceScatterF32 sums src over the group and leaves block Rank() of the
	// result in dst; len(src) == Size()*len(dst).
	ReduceScatterF32(dst, src []float32) error
	// BcastF32 copies root's buf into every rank's buf.
	BcastF32(buf []float32, root int) error
	// IBcastF32 starts a nonblocking BcastF32: buf must not be read or
	// written (nor, on root, changed) until Wait returns.
	IBcastF32(buf []float32, root int) (Request, error)
	// BcastBytes copies root's buf into every rank's buf.
	BcastBytes(buf []byte, root int) error
	// AlltoallvF32 sends send[sdispl(i) : sdispl(i)+sendCounts[i]] to rank i
	// and receives rank i's block into recv at rdispl(i), where the
	// displacements are the running sums of the counts (blocks contiguous,
	// in rank order). sendCounts on rank j, entry i, must equal recvCounts on
	// rank i, entry j. send and recv may be longer than the sums of the
	// counts; their tails are neither read nor written.
	AlltoallvF32(send []float32, sendCounts []int, recv []float32, recvCounts []int) error

	// Counters returns this rank's running totals of bytes handed to the
	// collectives of this communicator (and of no other).
	Counters() *Counters
}

// Request is a pending nonblocking operation. Communicators reuse their
// requests (so that a steady sequence of calls allocates none): once Wait
// has returned, a Request may be handed out again by the communicator's
// next nonblocking call, and must not be waited for after that call.
type Request interface {
	// Wait blocks until the operation is complete; its buffer may then be
	// used. Waiting again before the next nonblocking call returns the
	// first result.
	Wait() error
}

// NodeSplitter is a Comm that knows which of its ranks share a node (a
// machine with one memory), for the node-aware choices: threads per rank,
// memory per rank. Callers test for it and treat a Comm without it as one
// whose every rank has a node to itself.
type NodeSplitter interface {
	// SplitNode returns the communicator of the ranks of the group that
	// run on this rank's node, ordered as in the group, like
	// MPI_Comm_split_type with MPI_COMM_TYPE_SHARED. It is collective over
	// the group.
	SplitNode() (Comm, error)
}
