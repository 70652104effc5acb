/* SpMM for the CPU device: rows [lo, hi) of dst = A·B, A in CSR, B
 * row-major. The product is bound by the latency of gathering rows of B,
 * as spmm/cpu's kernel is (see its notes); this one differs in three ways:
 *
 *  - The CSR was validated once, when it was uploaded, so the kernel
 *    checks nothing per call.
 *  - Widths 16, 32 and 64 (and 128 on AVX-512) get a loop whose trip
 *    count is a constant (the hidden widths of a model), so the
 *    accumulators live in vector registers for the whole row; others are cut
 *    into chunks of 64, 32, 16 and 8 columns and a remainder, as spmm/cpu
 *    does.
 *  - It is compiled for x86-64-v4 and v3 beside the baseline (function
 *    multiversioning), so a 64-column accumulator is 4 AVX-512 registers.
 *
 * Every output element is the float32 sum of its products in nonzero
 * order starting from zero, with no fused multiply-adds: the same bits as
 * spmm.Native and spmm/cpu. Rows of B are prefetched a fixed number of
 * nonzeros ahead (counted across row boundaries, since power-law rows are
 * short). */
#if defined(__clang__)
#pragma STDC FP_CONTRACT OFF
#elif defined(__GNUC__)
#pragma GCC optimize("fp-contract=off")
#endif

#include <string.h>

#include "kern.h"

#if defined(__x86_64__) && defined(__GNUC__) && !defined(__clang__)
#define WIDE __attribute__((target_clones("arch=x86-64-v4", "arch=x86-64-v3", "default")))
#else
#define WIDE
#endif

static inline void prefetch_span(const float *p, int64_t n) {
	const char *c = (const char *)p;
	for (int64_t o = 0; o < n * (int64_t)sizeof(float); o += 64)
		__builtin_prefetch(c + o);
	__builtin_prefetch(c + n * (int64_t)sizeof(float) - 1);
}

/* ACC computes columns [j0, j0+W) of row i with W register accumulators. */
#define ACC(W)                                                                       \
	do {                                                                         \
		float acc[W] = {0};                                                  \
		for (int64_t p = rowptr[i]; p < rowptr[i + 1]; p++) {                \
			if (p + ahead < end)                                         \
				prefetch_span(b + (int64_t)col[p + ahead] * ldb + j0, (W)); \
			const float v = val[p];                                      \
			const float *restrict br = b + (int64_t)col[p] * ldb + j0;   \
			for (int j = 0; j < (W); j++)                                \
				acc[j] += v * br[j];                                 \
		}                                                                    \
		memcpy(d + j0, acc, sizeof acc);                                     \
	} while (0)

WIDE void sgk_spmm(float *restrict dst, int64_t ldd, const int64_t *restrict rowptr,
                   const int32_t *restrict col, const float *restrict val,
                   const float *restrict b, int64_t ldb, int64_t n, int wide,
                   int64_t lo, int64_t hi) {
	const int64_t ahead = n <= 16 ? 32 : 16;
	const int64_t end = rowptr[hi];
	for (int64_t i = lo; i < hi; i++) {
		float *restrict d = dst + i * ldd;
		int64_t j0 = 0;
		switch (n) {
		case 16:
			ACC(16);
			continue;
		case 32:
			ACC(32);
			continue;
		case 64:
			ACC(64);
			continue;
		case 128:
			/* One pass over the nonzeros with 128 accumulators: 8
			 * AVX-512 registers. Narrower vector sets would spill them,
			 * so only the caller that knows the CPU has AVX-512 asks. */
			if (wide) {
				ACC(128);
				continue;
			}
		}
		for (; j0 + 64 <= n; j0 += 64)
			ACC(64);
		for (; j0 + 32 <= n; j0 += 32)
			ACC(32);
		for (; j0 + 16 <= n; j0 += 16)
			ACC(16);
		for (; j0 + 8 <= n; j0 += 8)
			ACC(8);
		if (j0 < n) {
			const int64_t m = n - j0;
			float *restrict dd = d + j0;
			memset(dd, 0, (size_t)m * sizeof(float));
			for (int64_t p = rowptr[i]; p < rowptr[i + 1]; p++) {
				if (p + ahead < end)
					prefetch_span(b + (int64_t)col[p + ahead] * ldb + j0, m);
				const float v = val[p];
				const float *restrict br = b + (int64_t)col[p] * ldb + j0;
				for (int64_t j = 0; j < m; j++)
					dd[j] += v * br[j];
			}
		}
	}
}
