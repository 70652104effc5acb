/* The SpMM kernel: rows [r0, r1) of dst = A·B for CSR A and row-major B.
 *
 * The product is bound by memory latency, not arithmetic: each nonzero
 * (i, c) reads row c of B from wherever it lies, and after a random
 * permutation of the vertices that is almost never in cache. What makes
 * this kernel several times faster than the plain triple loop:
 *
 *  - Software prefetch. While nonzero p is processed, the B row segment of
 *    nonzero p+ahead (counted across row boundaries, because most rows of
 *    a power-law graph hold only a few entries) is prefetched, so the loads
 *    of many nonzeros are in flight at once. On a 200k-row, 3.2M-nonzero
 *    matrix this alone cut the time 3-5x. The distance (AHEAD_NARROW,
 *    AHEAD_WIDE) is twice as far for rows of B up to one cache line
 *    (width <= 16) as for wider ones, whose segments span several lines.
 *  - Register accumulators. The width is cut into chunks of up to 128
 *    columns whose partial sums live in vector registers for a whole row;
 *    the last columns, fewer than one vector, are summed one at a time.
 *  - Width specialisation. The widths a GCN uses (16, 32, 64, 128) get
 *    loops of their own with every trip count a constant, so the compiler
 *    unrolls the chunks completely; other widths run the same code with
 *    the width as a variable.
 *  - Vector ISA by CPU. The body is compiled three times, for x86-64-v2
 *    (the build's baseline), AVX2 and AVX-512, and the widest the CPU
 *    supports runs (checked once per call; arm64 and other targets get
 *    the baseline only). AVX-512 holds a 128-column chunk in 8 of its 32
 *    registers, AVX2 a 64-column chunk in 8 of 16 and SSE a 32-column
 *    chunk in 8 of 16; wider rows take several passes over the nonzeros.
 *
 * Summation order. Every output element is summed in the same order on
 * every path: acc = 0, then acc = acc + v·b (rounded product, then
 * rounded sum) over the row's nonzeros in index order. Vectors run across
 * columns only, and the package is compiled with -ffp-contract=off so that
 * the AVX2/AVX-512 paths do not fuse the multiply and add into an FMA:
 * results are bit-identical across ISAs, widths and chunkings, and with
 * the earlier scalar-order kernel (TestSpMMBitwise checks this).
 *
 * The kernel also checks the CSR structure it relies on (row pointers in
 * range and non-decreasing, columns below ncols): a bad index would make C
 * read outside the Go slices rather than panic. It returns the first bad
 * row, or -1 when all rows were computed.
 */
#include <string.h>

#include "kernels.h"

/* No FMA contraction in this file (see "Summation order" above); the
 * option cannot be passed through #cgo CFLAGS, which refuses it. */
#if defined(__clang__)
#pragma STDC FP_CONTRACT OFF
#elif defined(__GNUC__)
#pragma GCC optimize("fp-contract=off")
#endif

/* vf16, vf8 and vf4 are 16, 8 and 4 floats as one value (GCC vector
 * extensions): one zmm, ymm or xmm register. Each target uses its own
 * register width, since wider vectors would be split through the stack.
 * Loads and stores go through memcpy (unaligned). */
typedef float vf16 __attribute__((vector_size(64)));
typedef float vf8 __attribute__((vector_size(32)));
typedef float vf4 __attribute__((vector_size(16)));

/* PREFETCH_SPAN prefetches the cache lines of p[0:n]: one per 64 bytes
 * from p, and the line of the last byte too unless tail is 0 (the caller
 * knows that p starts a line and n fills whole lines: most rows of B do,
 * and at width 16 the redundant prefetch cost 10-20%). */
#define PREFETCH_SPAN(p, n, tail)                                          \
	do {                                                               \
		const char *c_ = (const char *)(p);                        \
		for (int64_t o_ = 0; o_ < (n) * (int64_t)sizeof(float); o_ += 64) \
			__builtin_prefetch(c_ + o_);                       \
		if (tail)                                                  \
			__builtin_prefetch(c_ + (n) * (int64_t)sizeof(float) - 1); \
	} while (0)

/* AHEAD_NARROW and AHEAD_WIDE are the prefetch distances in nonzeros for
 * widths up to 16 and beyond. On R-MAT scale 16 and 18 (AMD EPYC Zen 5,
 * BenchmarkBandwidth) 64/32 ran 1.3-1.4x faster than 32/16 and 16/8;
 * 96/48 and 128/64 were no better. */
#define AHEAD_NARROW 64
#define AHEAD_WIDE 32

/* CHUNK(VT, L, NV) computes columns [j0, j0+NV·L) of the current row for
 * as long as that many remain, with NV vectors of type VT (L floats each)
 * of partial sums in registers. */
#define CHUNK(VT, L, NV)                                                   \
	for (; j0 + (NV) * (L) <= n; j0 += (NV) * (L)) {                   \
		VT acc[NV];                                                \
		const int tail = (((uintptr_t)(b + j0) | (uintptr_t)ldb * sizeof(float)) & 63) != 0 \
		    || (NV) * (L) % 16 != 0;                               \
		for (int k = 0; k < (NV); k++)                             \
			acc[k] = (VT){0};                                  \
		for (int64_t p = lo; p < hi; p++) {                        \
			if (p + ahead < end)                               \
				PREFETCH_SPAN(b + (int64_t)col[p + ahead] * ldb + j0, (NV) * (L), tail); \
			const float v = val[p];                            \
			const float *br = b + (int64_t)col[p] * ldb + j0;  \
			for (int k = 0; k < (NV); k++) {                   \
				VT x;                                      \
				memcpy(&x, br + k * (L), sizeof x);        \
				acc[k] += v * x;                           \
			}                                                  \
		}                                                          \
		for (int k = 0; k < (NV); k++)                             \
			memcpy(d + j0 + k * (L), &acc[k], sizeof acc[k]);  \
	}

/* CH is CHUNK for NV >= 1 and nothing otherwise (NV is a constant). */
#define CH(VT, L, NV)                                                      \
	if ((NV) >= 1)                                                     \
		CHUNK(VT, L, (NV) >= 1 ? (NV) : 1)

/* ROWS(W, VT, L, CW) computes rows [r0, r1) of width W (a constant for
 * the specialised widths) in chunks of CW columns, then CW/2, ..., down
 * to one vector VT of L floats, and the last columns one at a time. */
#define ROWS(W, VT, L, CW)                                                 \
	do {                                                               \
		const int64_t n = (W);                                     \
		const int64_t ahead = n <= 16 ? AHEAD_NARROW : AHEAD_WIDE;                   \
		for (int64_t i = r0; i < r1; i++) {                        \
			const int64_t lo = rowptr[i], hi = rowptr[i + 1];  \
			if (lo < 0 || hi < lo || hi > nnzcap)              \
				return i;                                  \
			for (int64_t p = lo; p < hi; p++)                  \
				if ((uint64_t)(int64_t)col[p] >= (uint64_t)ncols) \
					return i;                          \
			float *restrict d = dst + i * ldd;                 \
			int64_t j0 = 0;                                    \
			CH(VT, L, (CW) / (L))                              \
			CH(VT, L, (CW) / (L) / 2)                          \
			CH(VT, L, (CW) / (L) / 4)                          \
			CH(VT, L, (CW) / (L) / 8)                          \
			if (j0 < n) {                                      \
				const int64_t m = n - j0;                  \
				float *restrict dd = d + j0;               \
				memset(dd, 0, (size_t)m * sizeof(float));  \
				for (int64_t p = lo; p < hi; p++) {        \
					if (p + ahead < end)               \
						PREFETCH_SPAN(b + (int64_t)col[p + ahead] * ldb + j0, m, 1); \
					const float v = val[p];            \
					const float *restrict br = b + (int64_t)col[p] * ldb + j0; \
					for (int64_t j = 0; j < m; j++)    \
						dd[j] += v * br[j];        \
				}                                          \
			}                                                  \
		}                                                          \
		return -1;                                                 \
	} while (0)

#define SPMM_ARGS                                                          \
	float *restrict dst, int64_t ldd, const int64_t *restrict rowptr,  \
	    const int32_t *restrict col, const float *restrict val,        \
	    int64_t nnzcap, int64_t ncols, const float *restrict b,        \
	    int64_t ldb, int64_t width, int64_t r0, int64_t r1

/* DEFINE_SPMM defines NAME, the kernel for one target: one loop per
 * specialised width and one for the rest. */
#define DEFINE_SPMM(NAME, ATTR, VT, L, CW)                                     \
	ATTR static int64_t NAME(SPMM_ARGS) {                              \
		/* Prefetches look ahead up to the end of this range's     \
		 * entries, never past the slices. */                       \
		int64_t end = rowptr[r1];                                  \
		if (end > nnzcap)                                          \
			end = nnzcap;                                      \
		switch (width) {                                           \
		case 16:                                                   \
			ROWS(16, VT, L, CW);                                   \
		case 32:                                                   \
			ROWS(32, VT, L, CW);                                   \
		case 64:                                                   \
			ROWS(64, VT, L, CW);                                   \
		case 128:                                                  \
			ROWS(128, VT, L, CW);                                  \
		default:                                                   \
			ROWS(width, VT, L, CW);                                \
		}                                                          \
	}

DEFINE_SPMM(spmm_base, , vf4, 4, 32)

#if defined(__x86_64__) && (defined(__GNUC__) || defined(__clang__))
#define HAVE_X86_VARIANTS 1
DEFINE_SPMM(spmm_avx2, __attribute__((target("avx2"))), vf8, 8, 64)
DEFINE_SPMM(spmm_avx512, __attribute__((target("avx512f"))), vf16, 16, 128)
#endif

int scalegnn_spmm_isas(void) {
	int isas = SCALEGNN_ISA_BASE;
#ifdef HAVE_X86_VARIANTS
	if (__builtin_cpu_supports("avx2"))
		isas |= SCALEGNN_ISA_AVX2;
	if (__builtin_cpu_supports("avx512f"))
		isas |= SCALEGNN_ISA_AVX512;
#endif
	return isas;
}

int64_t scalegnn_spmm_rows(int isa, SPMM_ARGS) {
	if (isa == 0) {
		const int isas = scalegnn_spmm_isas();
		isa = isas & SCALEGNN_ISA_AVX512 ? SCALEGNN_ISA_AVX512
		    : isas & SCALEGNN_ISA_AVX2   ? SCALEGNN_ISA_AVX2
		                                 : SCALEGNN_ISA_BASE;
	}
	switch (isa) {
#ifdef HAVE_X86_VARIANTS
	case SCALEGNN_ISA_AVX512:
		return spmm_avx512(dst, ldd, rowptr, col, val, nnzcap, ncols, b, ldb, width, r0, r1);
	case SCALEGNN_ISA_AVX2:
		return spmm_avx2(dst, ldd, rowptr, col, val, nnzcap, ncols, b, ldb, width, r0, r1);
#endif
	default:
		return spmm_base(dst, ldd, rowptr, col, val, nnzcap, ncols, b, ldb, width, r0, r1);
	}
}
