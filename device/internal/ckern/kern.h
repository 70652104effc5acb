/* C element-wise kernels of package scalegnn/device/internal/ckern. Each
 * works on rows [lo, hi) (or elements, or columns, as named) of row-major
 * operands with leading dimensions ld*; Go splits the range over its
 * worker goroutines. None keeps a pointer after it returns. */
#ifndef SCALEGNN_DEVICE_CKERN_H
#define SCALEGNN_DEVICE_CKERN_H

#include <stdint.h>

void sgk_fill(float *d, int64_t ldd, int64_t cols, float v, int64_t lo, int64_t hi);
void sgk_copy(float *d, int64_t ldd, const float *s, int64_t lds, int64_t cols, int64_t lo, int64_t hi);
void sgk_add(float *d, int64_t ldd, const float *a, int64_t lda, const float *b, int64_t ldb,
             int64_t cols, int64_t lo, int64_t hi);
void sgk_scale(float *d, int64_t ldd, float alpha, const float *a, int64_t lda, int64_t cols,
               int64_t lo, int64_t hi);
void sgk_relu(float *d, int64_t ldd, const float *a, int64_t lda, int64_t cols, int64_t lo, int64_t hi);
void sgk_relu_bwd(float *d, int64_t ldd, const float *g, int64_t ldg, const float *a, int64_t lda,
                  int64_t cols, int64_t lo, int64_t hi);
void sgk_relu_record(float *d, int64_t ldd, const float *a, int64_t lda, int64_t cols,
                     uint64_t *pos, int64_t wpr, int64_t lo, int64_t hi);
void sgk_relu_bwd_bits(float *d, int64_t ldd, const float *g, int64_t ldg, int64_t cols,
                       const uint64_t *pos, int64_t wpr, int64_t lo, int64_t hi);
void sgk_relu_bwd_bits_bf16(uint16_t *d, int64_t ldd, const uint16_t *g, int64_t ldg, int64_t cols,
                            const uint64_t *pos, int64_t wpr, int64_t lo, int64_t hi);

/* Dropout with gcn's counter-based masks. keep == NULL: no record, zeros
 * skipped; otherwise every entry is drawn and the bits recorded (wpr words
 * per row), after max(x, 0) when relu is set. */
void sgk_dropout(float *d, int64_t ldd, const float *s, int64_t lds, int64_t cols,
                 const int32_t *verts, uint64_t seed, int64_t step, int64_t site,
                 int64_t col0, uint64_t threshold, float scale,
                 uint64_t *keep, int64_t wpr, int relu, int64_t lo, int64_t hi);
void sgk_apply_mask(float *d, int64_t ldd, const float *s, int64_t lds, int64_t cols,
                    const uint64_t *keep, int64_t wpr, float scale, int64_t lo, int64_t hi);

void sgk_sumsq(float *ss, const float *z, int64_t ldz, int64_t cols, int64_t lo, int64_t hi);
void sgk_rms_apply(float *d, int64_t ldd, float *u, int64_t ldu, const float *z, int64_t ldz,
                   int64_t cols, float *rms, const float *ss, const float *w, double n,
                   double eps, int relu, int64_t lo, int64_t hi);
/* dot[i] for rows [lo, hi). */
void sgk_rms_dot(float *dot, const float *da, int64_t ldda, const float *u, int64_t ldu,
                 const float *w, int64_t cols, int64_t lo, int64_t hi);
/* g[j] = sum over rows 0..rows-1 in order of da*u, for columns [lo, hi). */
void sgk_rms_gscale(float *g, const float *da, int64_t ldda, const float *u, int64_t ldu,
                    int64_t rows, int64_t lo, int64_t hi);
void sgk_rms_finish(float *dz, int64_t lddz, const float *da, int64_t ldda, const float *u,
                    int64_t ldu, int64_t cols, const float *w, const float *dot,
                    const float *rms, float inv, int64_t lo, int64_t hi);

/* Optimizer step over elements [lo, hi): kind 0 SGD, 1 Adam, 2 AdamW. */
void sgk_optim(float *w, const float *g, float *m, float *v, int kind, double lr, double wd,
               double b1, double b2, double eps, double corr1, double corr2,
               int64_t lo, int64_t hi);

void sgk_pack_bf16(uint16_t *d, const float *s, int64_t lo, int64_t hi);
void sgk_unpack_bf16(float *d, const uint16_t *s, int64_t lo, int64_t hi);
void sgk_pack_bf16_mat(uint16_t *d, int64_t ldd, const float *s, int64_t lds, int64_t cols, int64_t lo, int64_t hi);
void sgk_unpack_bf16_mat(float *d, int64_t ldd, const uint16_t *s, int64_t lds, int64_t cols, int64_t lo, int64_t hi);

void sgk_gather_rows(float *d, int64_t ldd, const float *s, int64_t lds, int64_t cols,
                     const int32_t *idx, int64_t lo, int64_t hi);
/* dst row idx[i] += src row i for all rows i in order, columns [lo, hi). */
void sgk_scatter_add_rows(float *d, int64_t ldd, const float *s, int64_t lds, int64_t rows,
                          const int32_t *idx, int64_t lo, int64_t hi);

/* STREAM triad a = b + s*c over elements [lo, hi), the bandwidth yardstick. */
void sgk_triad(float *a, const float *b, const float *c, float s, int64_t lo, int64_t hi);

/* The instruction set the multiversioned kernels run with on this CPU. */
const char *sgk_isa(void);

#endif
