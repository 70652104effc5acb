//go:build !noblas

/* scalegnn_sgemm forwards to cblas_sgemm in row-major order. The wrapper
 * exists so that Go passes plain ints whatever integer type the installed
 * cblas.h uses (OpenBLAS's blasint, netlib's CBLAS_INT, MKL's MKL_INT). */
#include <cblas.h>

#include "kernels.h"

void scalegnn_sgemm(int transa, int transb, int m, int n, int k,
                    float alpha, const float *a, int lda,
                    const float *b, int ldb,
                    float beta, float *c, int ldc) {
	cblas_sgemm(CblasRowMajor, transa ? CblasTrans : CblasNoTrans,
	            transb ? CblasTrans : CblasNoTrans,
	            m, n, k, alpha, a, lda, b, ldb, beta, c, ldc);
}
