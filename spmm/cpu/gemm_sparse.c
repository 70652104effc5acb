/* The zero-skipping product of gemm_sparse.go: output rows [lo, hi) of
 * c += alpha·op(a)·b, each nonzero a entry adding its multiple of a row of
 * b, in the entries' order. Zeros are found eight entries at a time: the
 * magnitude bits of eight floats ORed together are zero only when all
 * eight are ±0 (which add nothing). */
#include <stdint.h>
#include <string.h>

#include "kernels.h"

static inline void axpy(float s, const float *x, float *y, int64_t n) {
	for (int64_t j = 0; j < n; j++)
		y[j] += s * x[j];
}

static inline int any8(const float *p) {
	uint32_t u[8];
	memcpy(u, p, sizeof u);
	return ((u[0] | u[1] | u[2] | u[3] | u[4] | u[5] | u[6] | u[7]) & 0x7fffffffu) != 0;
}

/* row r of a (len entries from column c0) times b's rows (its entries'
 * columns, offset by c0 for NoTrans) into y, or with trans each entry
 * into its own row of c. */
void scalegnn_gemm_sparse_rows(int transa, float alpha, const float *a, int64_t lda,
                               int64_t arows, int64_t acols, const float *b, int64_t ldb,
                               float *c, int64_t ldc, int64_t n, int64_t lo, int64_t hi) {
	if (!transa) {
		for (int64_t i = lo; i < hi; i++) {
			const float *ar = a + i * lda;
			float *y = c + i * ldc;
			int64_t k = 0;
			for (; k + 8 <= acols; k += 8) {
				if (!any8(ar + k))
					continue;
				for (int64_t q = k; q < k + 8; q++)
					if (ar[q] != 0)
						axpy(alpha * ar[q], b + q * ldb, y, n);
			}
			for (; k < acols; k++)
				if (ar[k] != 0)
					axpy(alpha * ar[k], b + k * ldb, y, n);
		}
		return;
	}
	int64_t w = hi - lo;
	for (int64_t i = 0; i < arows; i++) {
		const float *ar = a + i * lda + lo;
		const float *br = b + i * ldb;
		int64_t k = 0;
		for (; k + 8 <= w; k += 8) {
			if (!any8(ar + k))
				continue;
			for (int64_t q = k; q < k + 8; q++)
				if (ar[q] != 0)
					axpy(alpha * ar[q], br, c + (lo + q) * ldc, n);
		}
		for (; k < w; k++)
			if (ar[k] != 0)
				axpy(alpha * ar[k], br, c + (lo + k) * ldc, n);
	}
}
