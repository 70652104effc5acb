package device

import "scalegnn/spmm"

// Device owns memory and runs every local operation of a training step on
// it. Operations take Buffers and Mats, never host slices; the only ways
// between host and device are Upload, Download and UploadCSR (explicit
// copies) and, for collectives, the adapter in collective.go.
//
// Conventions, as in package spmm: the destination comes first; an output
// may be the very same view as an input where a method says so, never a
// partially overlapping one; operands that do not agree are programmer
// errors and panic with a ShapeError. Methods that return host values
// (loss sums, hit counts) wait for the device.
//
// A Device may be called from several goroutines at once on buffers that
// do not overlap; a device that parallelises an operation over threads
// runs one such operation at a time.
//
// The interface is sealed (memory is unexported): every device lives in
// this package, the only one that can reach a Buffer's memory.
type Device interface {
	// Name is a short identifier: "native" or "cpu".
	Name() string
	// Describe is one line for the start-up log: kind, threads, kernels.
	Describe() string

	// UploadCSR copies a host CSR matrix to the device.
	UploadCSR(a *spmm.CSR) *CSR
	// UploadCSRInto makes dst (a zero CSR or one this device filled
	// before) hold a, reusing dst's storage: a mini-batch's adjacency is
	// refilled every step without allocating. Host devices share a's
	// arrays instead of copying them (no second copy of the adjacency), so
	// a must stay unchanged while dst is in use.
	UploadCSRInto(dst *CSR, a *spmm.CSR)
	// SpMM computes dst = a·b, overwriting dst; dst must not overlap b.
	// For a transposed product, upload the transposed CSR (spmm.Transpose).
	SpMM(dst Mat, a *CSR, b Mat)
	// Gemm computes dst = alpha·op(a)·op(b) + beta·dst; beta == 0 does not
	// read dst. The NN, NT and TN forms are the ones training uses.
	Gemm(tA, tB spmm.Op, alpha float32, a, b Mat, beta float32, dst Mat)

	// Fill sets every element of dst to v.
	Fill(dst Mat, v float32)
	// Copy copies src into dst.
	Copy(dst, src Mat)
	// Add computes dst = a + b; dst may be a or b (residual add: Add(x, x, r)).
	Add(dst, a, b Mat)
	// Scale computes dst = alpha·a; dst may be a.
	Scale(dst Mat, alpha float32, a Mat)
	// ReLU computes dst = max(a, 0); dst may be a.
	ReLU(dst, a Mat)
	// ReLUBackward computes dst = grad where act > 0, else 0; dst may be grad.
	// act may be the ReLU's input or its output (both are > 0 at once).
	ReLUBackward(dst, grad, act Mat)
	// ReLURecord is ReLU that also records where dst > 0 in pos, one bit
	// per element in the layout of the dropout masks (rows of
	// ⌈cols/64⌉ words): the backward pass then reads bits, not act.
	ReLURecord(dst, a Mat, pos Buffer[uint64])
	// ReLUBackwardBits is ReLUBackward with act's positions from
	// ReLURecord: the same bits; dst may be grad.
	ReLUBackwardBits(dst, grad Mat, pos Buffer[uint64])

	// Dropout computes dst = src with the mask of spec applied, without
	// recording it. Zeros of src (−0 too) become +0 without a draw. Like
	// gcn, callers skip dropout outside training and for P = 0. dst may
	// be src (gcn scales its widened bfloat16 features in place).
	Dropout(dst, src Mat, spec Dropout)
	// DropoutRecord is Dropout that draws every entry and records the
	// mask in keep: row i's bits are keep[i*w : (i+1)*w], w = ceil(cols/64).
	// dst may be src.
	DropoutRecord(dst, src Mat, keep Buffer[uint64], spec Dropout)
	// ReLUDropoutRecord is ReLU then DropoutRecord in one pass.
	ReLUDropoutRecord(dst, src Mat, keep Buffer[uint64], spec Dropout)
	// ApplyMask computes dst = src scaled by 1/(1−p) where keep has a 1 bit
	// and 0 elsewhere, with keep laid out as DropoutRecord writes it.
	ApplyMask(dst, src Mat, keep Buffer[uint64], p float64)

	// SumSquares sets ss[i] to the float32 sum of squares of row i of z,
	// summed left to right: RMSNorm's local partial, all-reduced over the
	// column axis before RMSNormApply.
	SumSquares(ss Buffer[float32], z Mat)
	// RMSNormApply finishes RMSNorm from the global sums of squares ss:
	// rms[i] = sqrt(ss[i]/n + eps), u = z/rms, dst = u·scale per column,
	// then max(·, 0) when relu is set. dst may be z; u must not alias either.
	RMSNormApply(dst, u Mat, rms Buffer[float32], z Mat, ss, scale Buffer[float32], norm RMSNorm, relu bool)
	// RMSNormBackwardLocal overwrites gScale with Σ_rows da·u (rows in
	// order) and dot[i] with Σ_j da·scale[j]·u: the partials all-reduced
	// over the row and column axes before RMSNormBackwardFinish.
	RMSNormBackwardLocal(gScale, dot Buffer[float32], da, u Mat, scale Buffer[float32])
	// RMSNormBackwardFinish computes dz = (da·scale − u·dot/n)/rms; dz may be da.
	RMSNormBackwardFinish(dz, da, u Mat, scale, dot, rms Buffer[float32], norm RMSNorm)

	// RowMax sets mx[i] to the maximum of row i (−Inf for no columns), for
	// the rows with train[i] != 0; the others, which SoftmaxSums and
	// SoftmaxGrad skip, get −Inf.
	RowMax(mx Buffer[float32], x Mat, train Buffer[uint8])
	// SoftmaxSums sets sums[i] to Σ_j exp(x[i,j] − mx[i]) and sums[rows+i]
	// to the label's logit when the label is one of this block's classes
	// [c0, c0+cols), else 0: the partials all-reduced over the class axis.
	// Rows with train[i] == 0, which SoftmaxGrad ignores, get both 0
	// without an exp (most vertices are not training vertices).
	SoftmaxSums(sums Buffer[float32], x Mat, mx Buffer[float32], labels Buffer[int32], train Buffer[uint8], c0 int)
	// SoftmaxGrad writes the softmax cross-entropy gradient of every row
	// with train[i] != 0 into d (other rows 0), unscaled, and returns the
	// loss sum and the number of such rows; scale d by 1/count afterwards.
	SoftmaxGrad(d, x Mat, mx, sums Buffer[float32], labels Buffer[int32], train Buffer[uint8], c0 int) (loss, count float64)
	// ArgMax sets best[i], arg[i] to the first maximum of row i and its
	// class c0+j (MaxInt64 for a row with no columns or only NaN).
	ArgMax(best Buffer[float32], arg Buffer[int64], x Mat, c0 int)
	// ArgMaxSettle sets arg[i] to MaxInt64 where best[i] is not the global
	// maximum mx[i], before arg's min-all-reduce over the class axis.
	ArgMaxSettle(arg Buffer[int64], best, mx Buffer[float32])
	// CountHits returns, for the three masks, the rows where arg equals
	// the label (hits[k]) and the rows of each mask (hits[3+k]).
	CountHits(arg Buffer[int64], labels Buffer[int32], masks [3]Buffer[uint8]) [6]int64

	// OptimStep updates w, m and v from g in one pass, in float64 per
	// element exactly as gcn's Optimizer does.
	OptimStep(w, g, m, v Buffer[float32], st OptimStep)

	// PackBF16 rounds src to bfloat16 (nearest, ties to even) into dst.
	PackBF16(dst Buffer[uint16], src Buffer[float32])
	// UnpackBF16 widens src into dst.
	UnpackBF16(dst Buffer[float32], src Buffer[uint16])

	// GatherRows sets row i of dst to row idx[i] of src; dst must not
	// overlap src.
	GatherRows(dst, src Mat, idx Buffer[int32])
	// ScatterAddRows adds row i of src to row idx[i] of dst, in row order
	// (repeated indices sum in that order); dst must not overlap src.
	ScatterAddRows(dst, src Mat, idx Buffer[int32])
	// GatherI32 sets dst[i] = src[idx[i]] (labels of a mini-batch).
	GatherI32(dst, src, idx Buffer[int32])
	// GatherU8 sets dst[i] = src[idx[i]] (split masks of a mini-batch).
	GatherU8(dst, src Buffer[uint8], idx Buffer[int32])

	// GATOps are the graph attention layer's operations (gat.go).
	GATOps
	// BF16Ops are the bfloat16 products and conversions (bf16.go).
	BF16Ops

	// memory seals the interface and says where buffers live: nil for
	// the host devices, whose buffers are Go slices; a GPU device's own
	// allocator and copies otherwise.
	memory() deviceMemory
}

// CSR is a sparse matrix resident on a device, made by UploadCSR.
type CSR struct {
	a *spmm.CSR // host copy, owned by the device (Native and CPU)
	// bounds cut the rows into chunks of about equal nonzeros, computed
	// once by a device that splits SpMM over threads (CPU).
	bounds []int
	// g is the device copy on a GPU (a is nil then).
	g *gpuCSR
}

// gpuCSR is a CSR in device memory, with 32-bit row offsets and column
// indices (cuSPARSE's), refilled in place by UploadCSRInto.
type gpuCSR struct {
	rows, cols, nnz int
	rowPtr, colIdx  Buffer[int32]
	val             Buffer[float32]
	rp32            []int32 // host staging of the narrowed row offsets
	// val16 is val rounded to bfloat16 for the bfloat16 SpMM (cuSPARSE
	// takes A and B of one type), made on the GPU at its first use after
	// an upload (val16ok).
	val16   Buffer[uint16]
	val16ok bool
}

// Rows returns the number of rows.
func (c *CSR) Rows() int {
	if c.g != nil {
		return c.g.rows
	}
	return c.a.Rows
}

// Cols returns the number of columns.
func (c *CSR) Cols() int {
	if c.g != nil {
		return c.g.cols
	}
	return c.a.Cols
}

// NNZ returns the number of stored entries.
func (c *CSR) NNZ() int {
	if c.g != nil {
		return c.g.nnz
	}
	return c.a.NNZ()
}

// Dropout says which counter-based dropout mask to apply: entry (i, j) of
// a block is kept or dropped by (Seed, Step, Site, Verts[i], Col0+j) alone,
// as gcn/random.go draws it, and kept entries are scaled by 1/(1−P).
type Dropout struct {
	Seed       uint64
	Step, Site int
	P          float64
	Col0       int           // global column of the block's first column
	Verts      Buffer[int32] // global vertex id of each row
}

// RMSNorm holds the constants of an RMSNorm: N, the global number of
// columns a row is normalised over, and Eps.
type RMSNorm struct {
	N   int
	Eps float64
}

// Optimizer kinds for OptimStep.
const (
	SGD   = iota // w -= lr·(g + wd·w)
	Adam         // weight decay added to the gradient
	AdamW        // decoupled weight decay
)

// OptimStep is one optimizer step's constants, computed once per step:
// Corr1 = 1 − Beta1^t and Corr2 = 1 − Beta2^t. WeightDecay is 0 for
// parameters without decay.
type OptimStep struct {
	Kind                  int
	LR, WeightDecay       float64
	Beta1, Beta2, Epsilon float64
	Corr1, Corr2          float64
}
