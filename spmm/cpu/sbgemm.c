//go:build !noblas

/* OpenBLAS's bfloat16 GEMM, declared weak as the extensions of blasinfo.c
 * are: OpenBLAS builds without BUILD_BFLOAT16 (Debian's 0.3.21 among them)
 * and other BLAS libraries do not export it, and there it resolves to
 * NULL and Backend.GemmBF16 widens to float32 and calls sgemm instead.
 * This file must not include cblas.h, which declares it strong; the
 * arguments are those of OpenBLAS's LP64 interface (blasint is int, the
 * CBLAS enums are ints: CblasRowMajor 101, CblasNoTrans 111, CblasTrans
 * 112). */
#include <stddef.h>

#include "kernels.h"

extern void cblas_sbgemm(int order, int transa, int transb, int m, int n, int k,
                         float alpha, const uint16_t *a, int lda,
                         const uint16_t *b, int ldb, float beta, float *c,
                         int ldc) __attribute__((weak));

int scalegnn_sbgemm_available(void) { return cblas_sbgemm != NULL; }

void scalegnn_sbgemm(int transa, int transb, int m, int n, int k, float alpha,
                     const uint16_t *a, int lda, const uint16_t *b, int ldb,
                     float beta, float *c, int ldc) {
	cblas_sbgemm(101, transa ? 112 : 111, transb ? 112 : 111, m, n, k, alpha,
	             a, lda, b, ldb, beta, c, ldc);
}
