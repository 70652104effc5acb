// Package device owns the memory and the local operations of a training
// step: the Device interface, its buffers, and the host devices beside it.
//
// Buffers are opaque. Buffer[T] and the Mat (float32) and MatBF16 views
// keep their storage in unexported fields, so model code outside this
// package cannot reach device memory except through explicit copies
// (Upload, Download, UploadCSR) and the Device's operations; the compiler
// enforces it. A Device interface with an unexported method is sealed:
// every device lives in this package, because only this package can reach
// a Buffer's memory. A GPU buffer holds a device allocation (gpuBlock)
// and an offset; host buffers hold a slice.
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
//   - CUDA (cgo builds, a GPU and its libraries at run time): buffers in
//     the GPU's memory, cuSPARSE SpMM, cuBLAS GEMM and kernels of its own
//     (cuda_kernels.cu, compiled by NVRTC at start and cached), all on
//     one stream, through device/internal/cuda, which dlopens the
//     libraries (no CUDA headers or libraries at build time). It waits
//     for the GPU only where a host value is needed. Its element-wise
//     results are Native's bit for bit; the softmax's exp and log and the
//     library products round their own way (cuda.go). Allocations are
//     freed by Free or when unreachable; a failed one collects garbage
//     before it panics with an *OutOfMemoryError.
//
// Semantics follow package gcn operation for operation, so that a model
// rebuilt on a Device trains bit-identically: dropout draws gcn's
// counter-based masks (random.go is a copy of gcn/random.go's draws),
// bfloat16 rounding is spmm.ToBF16, the optimizer is gcn's float64
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
// bfloat16 mixed precision (bf16.go): MatBF16 is the bfloat16 view, with
// Mat's geometry, checks and copies (UploadMatBF16, DownloadMatBF16); the
// BF16Ops every Device has are the products that read bfloat16 operands
// with float32 sums, SpMMBF16 (float32 out), SpMMBF16ToBF16 (rounded
// once) and GemmBF16 (all four forms, float32 out), and the conversions
// of strided views, PackMatBF16 and UnpackMatBF16. Native runs
// spmm.Native's bfloat16 products, CPU spmm/cpu's (cpu.SpMMRowsBF16,
// cpu.PlanGemmBF16, cpu.GemmPartBF16) on its pool; both SpMMs equal SpMM
// on the widened operand bit for bit. CUDA runs cuSPARSE's SpMM with
// bfloat16 A and B (A's values rounded to bfloat16 in a copy beside the
// float32 ones, because cuSPARSE takes A and B of one type) and cuBLAS's
// GemmEx with bfloat16 inputs and float32 computation.
//
// Collectives take Buffers through the functions of collective.go
// (AllReduce, AllReduceBF16, their nonblocking forms): they live here, the
// one package that can reach a Buffer's memory, so the model never holds
// a slice of device memory and package collectives stays slice-based. A
// host device hands its memory over as it is; the bfloat16 sum packs on
// the device into a caller-owned staging buffer when the communicator
// takes packed values (PackedBF16Comm, proposed for collectives). The
// CUDA device hands device pointers to a communicator whose MPI says it
// is GPU-aware (DeviceComm), and otherwise stages through pinned host
// memory it owns, pipelining large sums in chunks (cuda_collective.go);
// CollectivePath says which, for the log.
//
// Open picks a device by the name a job's configuration gives; OpenCUDA
// binds a GPU by ordinal. Without cgo, or where the CUDA libraries or a
// GPU are missing, they return an error wrapping ErrNoCUDA that names what
// is missing.
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
