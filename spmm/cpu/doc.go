// Package cpu is the fast CPU implementation of spmm.Backend: a C SpMM
// kernel run on goroutines over nonzero-balanced row ranges, and CBLAS
// sgemm (or gonum's, -tags noblas) for the dense products. It is a leaf cgo package; spmm.Native is
// the pure-Go reference it is tested against (spmm/spmmtest).
//
// # SpMM
//
// The kernel (spmm.c) computes a range of output rows. A sparse-times-dense
// product is bound by the latency of fetching the rows of B picked by the
// column indices, so the kernel prefetches them well ahead of use, across
// row boundaries, and keeps the partial sums of up to 128 columns of the
// output row in vector registers. Widths 16, 32, 64 and 128 have loops of
// their own with constant trip counts, and the kernel is compiled for
// x86-64-v2, AVX2 and AVX-512 and picks the widest the CPU runs; every
// path sums each output element in the same order, without FMA, so the
// results are bit-identical whatever the CPU (TestSpMMBitwise). Rows are
// split into 4 ranges per thread of about equal nonzero count
// (spmm.PartitionRows) that the goroutines take dynamically: power-law
// graphs put a large share of the nonzeros in a few rows, so equal row
// counts would leave threads idle. On a 200k-row, 3.2M-nonzero power-law
// matrix one thread of it runs about 4x (width 128) to 8x (width 16)
// faster than one of spmm.Native (before the AVX-512 path).
//
// BenchmarkBandwidth (bandwidth_test.go) times the kernel beside a STREAM
// triad in the same run on R-MAT graphs of scale 16 and 18 and reports
// its throughput as a fraction of the triad's; the bytes it credits are
// defined there.
//
// The kernel also checks the CSR structure it relies on and panics with a
// spmm.ShapeError on an out-of-range row pointer or column index, where a
// C loop would otherwise read outside the Go slices.
//
// # bfloat16
//
// SpMMBF16 and SpMMBF16ToBF16 run the same kernel with a bfloat16 B
// (spmm.DenseBF16) and float32 or bfloat16 output: spmm.c is written once
// over B's and dst's element types, a bfloat16 widens to float32 exactly
// as it is loaded, and the sums are float32 in the float32 kernel's order,
// so SpMMBF16 equals SpMM on the widened B bit for bit and
// SpMMBF16ToBF16 equals spmm.ToBF16 of that (TestSpMMBF16Bitwise). GemmBF16
// multiplies bfloat16 operands into a float32 dst with Gemm's plan and
// blocks. Each block runs the first that exists of: a kernel of our own
// on AMX tiles (gemm_bf16.c; CPUs with AMX-BF16 where Linux grants the
// tile state), the same blocking with AVX512_BF16's vdpbf16ps (CPUs with
// avx512_bf16 and no AMX), OpenBLAS's cblas_sbgemm (a weak symbol;
// Debian's 0.3.21 lacks it), and sgemm on float32 copies widened chunk by
// chunk. GemmBF16Kernel says which. Our kernels treat subnormal inputs as
// zero and flush subnormal sums, as the instructions do, and their results
// do not depend on the thread count. BenchmarkBF16 and
// bench/bf16-kernels.sh time them against float32; docs/bf16.md has the
// numbers.
//
// # GEMM and choosing the BLAS
//
// Gemm calls cblas_sgemm in row-major order with the strides of the views
// as leading dimensions. Large products are cut into blocks of output rows
// (or columns) that run as separate single-threaded sgemm calls on the
// backend's goroutines, and OpenBLAS is set to one thread per process when
// the package loads (unless OPENBLAS_NUM_THREADS is set): several MPI ranks
// usually share a node's cores, and BLAS threads on top of them would
// oversubscribe it. SetBLASThreads changes that.
//
// The BLAS is chosen at link time:
//
//	go build ./...                          # -lopenblas (default)
//	go build -tags cblas_generic ./...      # -lblas: the system's selected BLAS
//	CGO_LDFLAGS="-L/opt/blis/lib -lblis" \
//	    go build -tags cblas_custom ./...   # whatever CGO_LDFLAGS names
//
//	go build -tags noblas ./...             # no BLAS: gonum's pure-Go Sgemm
//
// cblas_generic suits Debian/Ubuntu's update-alternatives and FlexiBLAS,
// whose libblas.so exports the cblas_* symbols. cblas_custom links nothing
// by itself, for MKL, BLIS or a netlib CBLAS split into -lcblas -lblas.
// A cblas.h outside the default include path goes in CGO_CFLAGS
// (-I/path). The OpenBLAS extensions (thread count, configuration string)
// are weak symbols, so other libraries link too and BLASConfig returns "".
// noblas links no BLAS at all, for machines without one: Gemm keeps its
// blocking but each block is spmm.Native's Gemm (gonum's Sgemm, several
// times slower than OpenBLAS), SetBLASThreads does nothing and BLASConfig
// says so. The C SpMM kernel is the same in every variant.
//
// OpenBLAS picks its kernels by CPU at load time and falls back to slow
// generic ones (core "Prescott": 2.4x slower sgemm on an AMD EPYC Zen 4)
// on CPUs its version does not know. Log BLASConfig at startup; if it names
// Prescott on a modern x86-64, set OPENBLAS_CORETYPE=Haswell (AVX2) or
// SkylakeX (AVX-512) in every rank's environment, before the process starts.
//
// The C files are compiled with -O3 and, on amd64, -march=x86-64-v2; the
// SpMM kernel adds its AVX2 and AVX-512 variants by function attributes
// and chooses at run time, so the binary still runs on any x86-64-v2 CPU.
// arm64 builds with the compiler's defaults.
//
// docs/architecture.md shows how this package fits with the others.
package cpu
