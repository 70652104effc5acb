// Package device owns the memory and the local operations of a training
// step: the Device interface, its buffers, and the host devices beside it.
//
// Buffers are opaque. Buffer[T] and the Mat views over float32 buffers
// keep their storage in unexported fields, so model code outside this
// package cannot reach device memory except through explicit copies
// (Upload, Download, UploadCSR) and the Device's operations; the compiler
// enforces it. A Device interface with an unexported method is sealed:
// every device lives in this package, because only this package can reach
// a Buffer's memory. A GPU device will keep a device pointer in Buffer and
// wrap a dlopen'ed library in device/internal/cuda, as CPU wraps
// device/internal/ckern.
//
// Devices:
//
//   - Native: pure Go, element-wise loops on one goroutine and spmm.Native
//     for SpMM and GEMM. The reference, and the device of builds without cgo.
//   - CPU (cgo builds): C element-wise kernels (device/internal/ckern, the
//     only cgo in this tree) split over a fixed pool of worker goroutines,
//     and on the same threads spmm/cpu's row kernel for SpMM (its one
//     SpMM kernel: width-specialised, prefetching, per ISA) and its sgemm
//     for GEMM, in blocks (cpu.SpMMRows, cpu.PlanGemm, cpu.GemmPart).
//     Fused where the data allows:
//     ReLU + dropout with mask recording, RMSNorm + ReLU, the optimizer in
//     one pass over weights, gradient and both moments.
//
// Semantics follow package gcn operation for operation, so that a model
// rebuilt on a Device trains bit-identically: dropout draws gcn's
// counter-based masks (random.go is a copy of gcn/random.go's draws),
// bfloat16 rounding is collectives.ToBF16, the optimizer is gcn's float64
// update, and row sums (RMSNorm) run left to right in float32 on every
// device. The C kernels keep that: no fused multiply-adds, no reordered
// sums (the row sums interleave rows, never columns). Softmax
// cross-entropy and accuracy run in Go on every host device (loss.go),
// because C's exp and log need not round as Go's do. So the CPU device's
// results are Native's bit for bit in every operation but GEMM, whose
// order of summation is BLAS's; the SpMM of both sums each row's products
// in nonzero order, as spmm.Native and spmm/cpu do.
//
// Distributed operations are split where gcn all-reduces in between:
// RMSNorm into SumSquares (local partial) and RMSNormApply (finish);
// its backward into RMSNormBackwardLocal and RMSNormBackwardFinish;
// the loss into RowMax, SoftmaxSums and SoftmaxGrad, which all take the
// training mask and skip the other rows (no exp for a vertex the loss
// ignores); accuracy into ArgMax, ArgMaxSettle and CountHits.
//
// The ReLU's backward pass needs only where its output was positive:
// ReLURecord keeps that as one bit an element, and ReLUBackwardBits reads
// the bits instead of the activations.
//
// Collectives take Buffers through the functions of collective.go
// (AllReduce, AllReduceBF16, their nonblocking forms): they live here, the
// one package that can reach a Buffer's memory, so the model never holds
// a slice of device memory and package collectives stays slice-based. A
// host device hands its memory over as it is; the bfloat16 sum packs on
// the device into a caller-owned staging buffer when the communicator
// takes packed values (PackedBF16Comm, proposed for collectives). A GPU
// device will hand over device pointers to a GPU-aware communicator or
// stage through pinned host memory it owns.
//
// Open picks a device by the name a job's configuration gives.
//
// Misuse (shapes that disagree, views outside their buffer, indices out of
// range) panics with a ShapeError whichever device runs. Operations on
// preallocated buffers do not allocate (tested with testing.AllocsPerRun),
// GEMM and SpMM included on CPU; Native's GEMM and SpMM are spmm.Native's,
// which allocate.
//
// Package device/devicetest is the conformance suite every device runs:
// every operation against a float64 or bit-exact reference.
//
// docs/architecture.md shows how this package fits with the others.
package device
