/* The SpMM kernel: rows [r0, r1) of dst = A·B for CSR A and row-major B.
 *
 * The product is bound by memory latency, not arithmetic: each nonzero
 * (i, c) reads row c of B from wherever it lies, and after a random
 * permutation of the vertices that is almost never in cache. Two things
 * make this kernel several times faster than the plain triple loop:
 *
 *  - Software prefetch. While nonzero p is processed, the B row segment of
 *    nonzero p+ahead (counted across row boundaries, because most rows of
 *    a power-law graph hold only a few entries) is prefetched, so the loads
 *    of many nonzeros are in flight at once. On a 200k-row, 3.2M-nonzero
 *    matrix this alone cut the time 3-5x. Looking 32 nonzeros ahead was
 *    best for rows of B up to one cache line (width <= 16), 16 for wider
 *    ones, whose segments span several lines each (AMD EPYC Zen 4).
 *  - Register accumulators. The width is cut into chunks of 64, 32, 16 and
 *    8 columns whose partial sums live in vector registers for a whole row
 *    (the fixed trip counts let the compiler unroll and vectorise them);
 *    the remainder of fewer than 8 columns accumulates in dst directly.
 *
 * Compiling for x86-64-v3/v4 instead of v2 changed nothing measurable,
 * since the loads dominate; the build therefore asks only for v2.
 *
 * The kernel also checks the CSR structure it relies on (row pointers in
 * range and non-decreasing, columns below ncols): a bad index would make C
 * read outside the Go slices rather than panic. It returns the first bad
 * row, or -1 when all rows were computed.
 */
#include <string.h>

#include "kernels.h"

/* prefetch_span prefetches the cache lines of p[0:n]. */
static inline void prefetch_span(const float *p, int64_t n) {
	const char *c = (const char *)p;
	for (int64_t o = 0; o < n * (int64_t)sizeof(float); o += 64)
		__builtin_prefetch(c + o);
	__builtin_prefetch(c + n * (int64_t)sizeof(float) - 1);
}

/* CHUNK computes columns [j0, j0+W) of the current row for as long as W
 * of them remain, with the W partial sums in registers. */
#define CHUNK(W)                                                           \
	for (; j0 + (W) <= n; j0 += (W)) {                                 \
		float acc[W] = {0};                                        \
		for (int64_t p = lo; p < hi; p++) {                        \
			if (p + ahead < end)                               \
				prefetch_span(b + (int64_t)col[p + ahead] * ldb + j0, (W)); \
			const float v = val[p];                            \
			const float *restrict br = b + (int64_t)col[p] * ldb + j0; \
			for (int j = 0; j < (W); j++)                      \
				acc[j] += v * br[j];                       \
		}                                                          \
		for (int j = 0; j < (W); j++)                              \
			d[j0 + j] = acc[j];                                \
	}

int64_t scalegnn_spmm_rows(float *restrict dst, int64_t ldd,
                           const int64_t *restrict rowptr, const int32_t *restrict col,
                           const float *restrict val, int64_t nnzcap, int64_t ncols,
                           const float *restrict b, int64_t ldb, int64_t n,
                           int64_t r0, int64_t r1) {
	const int64_t ahead = n <= 16 ? 32 : 16;
	/* Prefetches look ahead up to the end of this range's entries, never
	 * past the slices. */
	int64_t end = rowptr[r1];
	if (end > nnzcap)
		end = nnzcap;
	for (int64_t i = r0; i < r1; i++) {
		const int64_t lo = rowptr[i], hi = rowptr[i + 1];
		if (lo < 0 || hi < lo || hi > nnzcap)
			return i;
		for (int64_t p = lo; p < hi; p++)
			if ((uint64_t)(int64_t)col[p] >= (uint64_t)ncols)
				return i;
		float *restrict d = dst + i * ldd;
		int64_t j0 = 0;
		CHUNK(64)
		CHUNK(32)
		CHUNK(16)
		CHUNK(8)
		if (j0 < n) {
			const int64_t m = n - j0;
			float *restrict dd = d + j0;
			memset(dd, 0, (size_t)m * sizeof(float));
			for (int64_t p = lo; p < hi; p++) {
				if (p + ahead < end)
					prefetch_span(b + (int64_t)col[p + ahead] * ldb + j0, m);
				const float v = val[p];
				const float *restrict br = b + (int64_t)col[p] * ldb + j0;
				for (int64_t j = 0; j < m; j++)
					dd[j] += v * br[j];
			}
		}
	}
	return -1;
}
