/* C kernels of package scalegnn/spmm/cpu. Go calls them through cgo; none
 * keeps a pointer after it returns. */
#ifndef SCALEGNN_SPMM_CPU_KERNELS_H
#define SCALEGNN_SPMM_CPU_KERNELS_H

#include <stdint.h>

/* The instruction sets the SpMM kernel is compiled for, as bits of
 * scalegnn_spmm_isas() and values of scalegnn_spmm_rows' isa (0: the
 * widest the CPU supports). */
enum {
	SCALEGNN_ISA_BASE = 1,
	SCALEGNN_ISA_AVX2 = 2,
	SCALEGNN_ISA_AVX512 = 4,
};

int scalegnn_spmm_isas(void);

int64_t scalegnn_spmm_rows(int isa, float *dst, int64_t ldd,
                           const int64_t *rowptr, const int32_t *colidx,
                           const float *val, int64_t nnzcap, int64_t ncols,
                           const float *b, int64_t ldb, int64_t width,
                           int64_t r0, int64_t r1);

/* scalegnn_spmm_bf16_rows is scalegnn_spmm_rows for a bfloat16 B (uint16
 * bits), with float sums written to dst as float (out_bf16 0) or rounded
 * once to bfloat16 (out_bf16 1). */
int64_t scalegnn_spmm_bf16_rows(int isa, int out_bf16, void *dst, int64_t ldd,
                                const int64_t *rowptr, const int32_t *colidx,
                                const float *val, int64_t nnzcap, int64_t ncols,
                                const uint16_t *b, int64_t ldb, int64_t width,
                                int64_t r0, int64_t r1);

/* scalegnn_spmm_bf16_masked_rows computes rows [r0, r1) of a·b for a
 * bfloat16 b with float sums, each row's masked and rounded into out:
 * out[i][j] = pos bit (i, j) ? bf16(sum · (keep bit (i, j) ? scale : 0))
 * : +0, the masks rows of wpr 64-bit words (Backend.SpMMBF16ToBF16Masked). */
int64_t scalegnn_spmm_bf16_masked_rows(int isa, uint16_t *out, int64_t ldo,
                                       const int64_t *rowptr, const int32_t *colidx,
                                       const float *val, int64_t nnzcap, int64_t ncols,
                                       const uint16_t *b, int64_t ldb, int64_t width,
                                       int64_t r0, int64_t r1, const uint64_t *keep,
                                       const uint64_t *pos, int64_t wpr, float scale);

void scalegnn_triad(float *a, const float *b, const float *c, float s,
                    int64_t lo, int64_t hi);

void scalegnn_sgemm(int transa, int transb, int m, int n, int k,
                    float alpha, const float *a, int lda,
                    const float *b, int ldb,
                    float beta, float *c, int ldc);

/* scalegnn_sbgemm forwards to OpenBLAS's cblas_sbgemm (row-major), which
 * exists only where scalegnn_sbgemm_available() returns 1. */
int scalegnn_sbgemm_available(void);
void scalegnn_sbgemm(int transa, int transb, int m, int n, int k, float alpha,
                     const uint16_t *a, int lda, const uint16_t *b, int ldb,
                     float beta, float *c, int ldc);

/* scalegnn_gemm_bf16 is GemmBF16's own kernel (gemm_bf16.c): AVX512_BF16,
 * run only where scalegnn_gemm_bf16_available() returns 1, with work
 * holding scalegnn_gemm_bf16_words(n, k) uint32 words; m, n, k > 0. */
int scalegnn_gemm_bf16_available(void);
int64_t scalegnn_gemm_bf16_words(int64_t n, int64_t k);
void scalegnn_gemm_bf16(int transa, int transb, int64_t m, int64_t n, int64_t k,
                        float alpha, const uint16_t *a, int64_t lda,
                        const uint16_t *b, int64_t ldb, float beta, float *c,
                        int64_t ldc, uint32_t *work);

/* scalegnn_gemm_amx is the same product with AMX tiles, run only where
 * scalegnn_gemm_amx_enable() (call it once, before) returned 1 (-1: the
 * CPU has AMX but the OS refused it; 0: no AMX). */
int scalegnn_gemm_amx_enable(void);
void scalegnn_gemm_amx(int transa, int transb, int64_t m, int64_t n, int64_t k,
                       float alpha, const uint16_t *a, int64_t lda,
                       const uint16_t *b, int64_t ldb, float beta, float *c,
                       int64_t ldc, uint32_t *work);

/* scalegnn_bf16_widen widens the rows×cols bfloat16 matrix s into d. */
void scalegnn_bf16_widen(float *d, int64_t ldd, const uint16_t *s, int64_t lds,
                         int64_t rows, int64_t cols);

void scalegnn_gemm_sparse_rows(int transa, float alpha, const float *a, int64_t lda,
                               int64_t arows, int64_t acols, const float *b, int64_t ldb,
                               float *c, int64_t ldc, int64_t n, int64_t lo, int64_t hi);

int scalegnn_blas_set_threads(int n);
int scalegnn_blas_threads(void);
const char *scalegnn_blas_config(void);
const char *scalegnn_blas_corename(void);

#endif
