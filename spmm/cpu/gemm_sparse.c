/* The zero-skipping product of gemm_sparse.go: output rows [lo, hi) of
 * c += alpha·op(a)·b, each nonzero a entry adding its multiple of a row of
 * b, in the entries' order, summed in double and rounded to float once:
 * the product is then as exact as its inputs allow, so that grids that
 * split its sums differently (a 3D grid's blocks against one rank's whole)
 * differ only by how they add the partial sums. Zeros are found eight
 * entries at a time: the magnitude bits of eight floats ORed together are
 * zero only when all eight are ±0 (which add nothing). */
#include <stdint.h>
#include <string.h>

#include "kernels.h"

/* The double accumulators live on the stack, ACC of them (256 KiB, held
 * in L2) per tile of output rows and up to COLS columns: the more rows a
 * tile has, the fewer passes the transposed product makes over a. */
enum { ACC = 32768, COLS = 512 };

static inline int any8(const float *p) {
	uint32_t u[8];
	memcpy(u, p, sizeof u);
	return ((u[0] | u[1] | u[2] | u[3] | u[4] | u[5] | u[6] | u[7]) & 0x7fffffffu) != 0;
}

static inline void axpy(double s, const float *x, double *y, int64_t n) {
	for (int64_t j = 0; j < n; j++)
		y[j] += s * (double)x[j];
}

static inline void store(float alpha, const double *acc, float *c, int64_t n) {
	for (int64_t j = 0; j < n; j++)
		c[j] = (float)((double)c[j] + (double)alpha * acc[j]);
}

void scalegnn_gemm_sparse_rows(int transa, float alpha, const float *a, int64_t lda,
                               int64_t arows, int64_t acols, const float *b, int64_t ldb,
                               float *c, int64_t ldc, int64_t n, int64_t lo, int64_t hi) {
	double acc[ACC];
	for (int64_t j0 = 0; j0 < n; j0 += COLS) {
		int64_t w = n - j0 < COLS ? n - j0 : COLS;
		if (!transa) {
			/* Output row i is a's row i times b. */
			for (int64_t i = lo; i < hi; i++) {
				const float *ar = a + i * lda;
				memset(acc, 0, (size_t)w * sizeof acc[0]);
				int64_t k = 0;
				for (; k + 8 <= acols; k += 8) {
					if (!any8(ar + k))
						continue;
					for (int64_t q = k; q < k + 8; q++)
						if (ar[q] != 0)
							axpy(ar[q], b + q * ldb + j0, acc, w);
				}
				for (; k < acols; k++)
					if (ar[k] != 0)
						axpy(ar[k], b + k * ldb + j0, acc, w);
				store(alpha, acc, c + i * ldc + j0, w);
			}
			continue;
		}
		/* Output row r is a's column r times b: a tile of t output
		 * rows at a time, every row of a adding its nonzeros in the
		 * tile's columns, rows in order. */
		int64_t t = ACC / w;
		for (int64_t r0 = lo; r0 < hi; r0 += t) {
			int64_t tr = hi - r0 < t ? hi - r0 : t;
			memset(acc, 0, (size_t)(tr * w) * sizeof acc[0]);
			for (int64_t i = 0; i < arows; i++) {
				const float *ar = a + i * lda + r0;
				const float *br = b + i * ldb + j0;
				int64_t k = 0;
				for (; k + 8 <= tr; k += 8) {
					if (!any8(ar + k))
						continue;
					for (int64_t q = k; q < k + 8; q++)
						if (ar[q] != 0)
							axpy(ar[q], br, acc + q * w, w);
				}
				for (; k < tr; k++)
					if (ar[k] != 0)
						axpy(ar[k], br, acc + k * w, w);
			}
			for (int64_t q = 0; q < tr; q++)
				store(alpha, acc + q * w, c + (r0 + q) * ldc + j0, w);
		}
	}
}
