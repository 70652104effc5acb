/* The element-wise kernels. Every float operation is written in the order
 * of the Go code it mirrors (gcn's model code and device.Native), and the
 * file turns floating-point contraction off and without -ffast-math, so
 * results are bit-identical to Go's: no fused multiply-adds, no reordered
 * sums. Loops without a reduction vectorise; the row sums (sum of squares,
 * RMSNorm dots) stay sequential, as in Go, which costs them throughput but
 * keeps the last bit. */
#if defined(__clang__)
#pragma STDC FP_CONTRACT OFF
#elif defined(__GNUC__)
#pragma GCC optimize("fp-contract=off")
#endif

#include <math.h>
#include <string.h>
#if defined(__SSE2__)
#include <emmintrin.h>
#endif

#include "kern.h"

#define ROW(p, ld, i) ((p) + (int64_t)(i) * (ld))

/* WIDE compiles a compute-bound kernel for AVX-512 and AVX2 beside the
 * baseline, picked at load time (GCC function multiversioning): the
 * dropout hashes need 64-bit vector multiplies (AVX-512DQ) and the
 * optimizer's float64 divisions and square roots run 4 or 8 wide. The
 * rounding is IEEE's at every width, and contraction stays off. */
#if defined(__x86_64__) && defined(__GNUC__) && !defined(__clang__)
#define WIDE __attribute__((target_clones("arch=x86-64-v4", "arch=x86-64-v3", "default")))
#else
#define WIDE
#endif

void sgk_fill(float *d, int64_t ldd, int64_t cols, float v, int64_t lo, int64_t hi) {
	for (int64_t i = lo; i < hi; i++) {
		float *restrict o = ROW(d, ldd, i);
		for (int64_t j = 0; j < cols; j++)
			o[j] = v;
	}
}

void sgk_copy(float *d, int64_t ldd, const float *s, int64_t lds, int64_t cols, int64_t lo, int64_t hi) {
	for (int64_t i = lo; i < hi; i++)
		memmove(ROW(d, ldd, i), ROW(s, lds, i), (size_t)cols * sizeof(float));
}

/* dst may equal a or b exactly, so no restrict on the operands. */
void sgk_add(float *d, int64_t ldd, const float *a, int64_t lda, const float *b, int64_t ldb,
             int64_t cols, int64_t lo, int64_t hi) {
	for (int64_t i = lo; i < hi; i++) {
		float *o = ROW(d, ldd, i);
		const float *x = ROW(a, lda, i), *y = ROW(b, ldb, i);
		for (int64_t j = 0; j < cols; j++)
			o[j] = x[j] + y[j];
	}
}

void sgk_scale(float *d, int64_t ldd, float alpha, const float *a, int64_t lda, int64_t cols,
               int64_t lo, int64_t hi) {
	for (int64_t i = lo; i < hi; i++) {
		float *o = ROW(d, ldd, i);
		const float *x = ROW(a, lda, i);
		for (int64_t j = 0; j < cols; j++)
			o[j] = alpha * x[j];
	}
}

/* max(x, 0) as Go's max: NaN stays NaN, -0 becomes +0. */
static inline float relu1(float x) { return x != x ? x : (x > 0 ? x : 0.0f); }

void sgk_relu(float *d, int64_t ldd, const float *a, int64_t lda, int64_t cols, int64_t lo, int64_t hi) {
	for (int64_t i = lo; i < hi; i++) {
		float *o = ROW(d, ldd, i);
		const float *x = ROW(a, lda, i);
		for (int64_t j = 0; j < cols; j++)
			o[j] = relu1(x[j]);
	}
}

void sgk_relu_bwd(float *d, int64_t ldd, const float *g, int64_t ldg, const float *a, int64_t lda,
                  int64_t cols, int64_t lo, int64_t hi) {
	for (int64_t i = lo; i < hi; i++) {
		float *o = ROW(d, ldd, i);
		const float *x = ROW(g, ldg, i), *y = ROW(a, lda, i);
		/* A select on bits, not a branch: the signs of activations are
		 * random, and a mispredicted branch per element cost 20x. */
		for (int64_t j = 0; j < cols; j++) {
			uint32_t xb, keep = -(uint32_t)(y[j] > 0);
			memcpy(&xb, x + j, 4);
			xb &= keep;
			memcpy(o + j, &xb, 4);
		}
	}
}

/* sgk_relu_record is sgk_relu that also sets bit j of row i's words where
 * the output is > 0 (the input is: NaN and zeros are not), so that the
 * backward pass reads 1 bit per element instead of the 32 of the
 * activations. Four lanes at a time with SSE2 (the compiler does not turn
 * the bit packing into a movemask); the select is relu1's. */
void sgk_relu_record(float *d, int64_t ldd, const float *a, int64_t lda, int64_t cols,
                     uint64_t *pos, int64_t wpr, int64_t lo, int64_t hi) {
	for (int64_t i = lo; i < hi; i++) {
		float *o = ROW(d, ldd, i);
		const float *x = ROW(a, lda, i); /* d may be a: no restrict */
		uint64_t *w = pos + i * wpr;
		for (int64_t j0 = 0; j0 < cols; j0 += 64) {
			int64_t n = cols - j0 < 64 ? cols - j0 : 64, t = 0;
			uint64_t word = 0;
#if defined(__SSE2__)
			const __m128 zero = _mm_setzero_ps();
			for (; t + 4 <= n; t += 4) {
				__m128 v = _mm_loadu_ps(x + j0 + t);
				__m128 gt = _mm_cmpgt_ps(v, zero), nan = _mm_cmpunord_ps(v, v);
				_mm_storeu_ps(o + j0 + t, _mm_and_ps(v, _mm_or_ps(gt, nan)));
				word |= (uint64_t)_mm_movemask_ps(gt) << t;
			}
#endif
			for (; t < n; t++) {
				float v = relu1(x[j0 + t]);
				o[j0 + t] = v;
				word |= (uint64_t)(v > 0) << t;
			}
			w[j0 / 64] = word;
		}
	}
}

/* sgk_relu_bwd_bits is sgk_relu_bwd with the positions sgk_relu_record
 * kept: the same select on bits, so the same +0 where a bit is clear. */
void sgk_relu_bwd_bits(float *d, int64_t ldd, const float *g, int64_t ldg, int64_t cols,
                       const uint64_t *pos, int64_t wpr, int64_t lo, int64_t hi) {
	for (int64_t i = lo; i < hi; i++) {
		float *o = ROW(d, ldd, i);
		const float *x = ROW(g, ldg, i); /* d may be g: no restrict */
		const uint64_t *w = pos + i * wpr;
		for (int64_t j0 = 0; j0 < cols; j0 += 64) {
			int64_t n = cols - j0 < 64 ? cols - j0 : 64, t = 0;
			const uint64_t word = w[j0 / 64];
#if defined(__SSE2__)
			const __m128i lanes = _mm_set_epi32(8, 4, 2, 1);
			for (; t + 4 <= n; t += 4) {
				__m128i m = _mm_set1_epi32((int)((word >> t) & 15));
				m = _mm_cmpeq_epi32(_mm_and_si128(m, lanes), lanes);
				_mm_storeu_ps(o + j0 + t, _mm_and_ps(_mm_loadu_ps(x + j0 + t), _mm_castsi128_ps(m)));
			}
#endif
			for (; t < n; t++) {
				uint32_t xb, keep = -(uint32_t)((word >> t) & 1);
				memcpy(&xb, x + j0 + t, 4);
				xb &= keep;
				memcpy(o + j0 + t, &xb, 4);
			}
		}
	}
}

/* sgk_relu_bwd_bits_bf16 is sgk_relu_bwd_bits on bfloat16 rows: each
 * element and-ed with all ones or zeros from its bit. Sixteen elements
 * take their bits from one 16-bit slice of the word, tested against a
 * constant vector of single bits, a loop the compiler vectorises (a bit
 * at a time, with a variable shift, it ran at about 7 GB/s). */
static const uint16_t bit16[16] = {1, 2, 4, 8, 16, 32, 64, 128, 256, 512, 1024, 2048, 4096, 8192, 16384, 32768};

WIDE void sgk_relu_bwd_bits_bf16(uint16_t *d, int64_t ldd, const uint16_t *g, int64_t ldg, int64_t cols,
                                 const uint64_t *pos, int64_t wpr, int64_t lo, int64_t hi) {
	for (int64_t i = lo; i < hi; i++) {
		uint16_t *o = d + i * ldd;
		const uint16_t *x = g + i * ldg; /* d may be g: no restrict */
		const uint64_t *w = pos + i * wpr;
		for (int64_t j0 = 0; j0 < cols; j0 += 64) {
			const int64_t n = cols - j0 < 64 ? cols - j0 : 64;
			const uint64_t word = w[j0 / 64];
			int64_t t = 0;
			for (; t + 16 <= n; t += 16) {
				const uint16_t m = (uint16_t)(word >> t);
				for (int k = 0; k < 16; k++)
					o[j0 + t + k] = x[j0 + t + k] & (uint16_t)-(uint16_t)((m & bit16[k]) != 0);
			}
			for (; t < n; t++)
				o[j0 + t] = x[j0 + t] & (uint16_t)-(uint16_t)((word >> t) & 1);
		}
	}
}

/* The counter-based draws of gcn/random.go (mix, hash4, keep01). */
static inline uint64_t mix(uint64_t z) {
	z ^= z >> 30;
	z *= 0xbf58476d1ce4e5b9ULL;
	z ^= z >> 27;
	z *= 0x94d049bb133111ebULL;
	z ^= z >> 31;
	return z;
}

static inline uint64_t hash4(uint64_t a, uint64_t b, uint64_t c, uint64_t d) {
	uint64_t h = mix(a + 0x9e3779b97f4a7c15ULL);
	h = mix(h ^ (b + 0x632be59bd9b4e019ULL));
	h = mix(h ^ (c + 0x85ebca77c2b2ae63ULL));
	return mix(h ^ (d + 0xc2b2ae3d27d4eb4fULL));
}

static inline uint64_t keep01(uint64_t key, int64_t col, uint64_t threshold) {
	uint64_t draw = mix(key + (uint64_t)col * 0x9e3779b97f4a7c15ULL) >> 11;
	return 1 - ((draw - threshold) >> 63);
}

/* draws64 sets k[t] = keep01(key, c + t, threshold) for t < n <= 64: a
 * loop of independent 64-bit hashes that vectorises where the target has
 * 64-bit vector multiplies. */
static inline void draws64(uint64_t *restrict k, uint64_t key, int64_t c, int64_t n, uint64_t threshold) {
	for (int64_t t = 0; t < n; t++)
		k[t] = keep01(key, c + t, threshold);
}

WIDE void sgk_dropout(float *d, int64_t ldd, const float *s, int64_t lds, int64_t cols,
                 const int32_t *verts, uint64_t seed, int64_t step, int64_t site,
                 int64_t col0, uint64_t threshold, float scale,
                 uint64_t *keep, int64_t wpr, int relu, int64_t lo, int64_t hi) {
	const uint64_t b = (2ULL << 32) | (uint64_t)site; /* streamDropout<<32 | site */
	uint64_t k[64];
	for (int64_t i = lo; i < hi; i++) {
		/* uint64(vertex) of a negative int32 sign-extends, as in Go. */
		uint64_t key = hash4(seed, b, (uint64_t)step, (uint64_t)(int64_t)verts[i]);
		float *o = ROW(d, ldd, i);
		const float *x = ROW(s, lds, i);
		if (keep == NULL) {
			/* Zeros stay +0 without a draw. A sparse row (bag-of-words
			 * features) skips its zeros' draws with a predictable
			 * branch; a dense row draws everything and selects, since
			 * a branch on scattered zeros mispredicts. */
			int64_t nz = 0;
			for (int64_t j = 0; j < cols; j++)
				nz += x[j] != 0;
			if (4 * nz < cols) {
				const float sc[2] = {0.0f, scale};
				for (int64_t j = 0; j < cols; j++) {
					float v = x[j];
					o[j] = 0.0f;
					if (v != 0)
						o[j] = v * sc[keep01(key, col0 + j, threshold)];
				}
				continue;
			}
		}
		for (int64_t j0 = 0; j0 < cols; j0 += 64) {
			int64_t n = cols - j0 < 64 ? cols - j0 : 64;
			draws64(k, key, col0 + j0, n, threshold);
			const float *xx = x + j0; /* dst may be src: no restrict */
			uint64_t word = 0;
			for (int64_t t = 0; t < n; t++) {
				float v = relu ? relu1(xx[t]) : xx[t];
				float r = v * (k[t] ? scale : 0.0f);
				if (keep == NULL) {
					/* no record: a zero stays +0 */
					uint32_t rb, nzm = -(uint32_t)(v != 0);
					memcpy(&rb, &r, 4);
					rb &= nzm;
					memcpy(&r, &rb, 4);
				}
				o[j0 + t] = r;
				word |= k[t] << t;
			}
			if (keep != NULL)
				keep[i * wpr + j0 / 64] = word;
		}
	}
}

void sgk_apply_mask(float *d, int64_t ldd, const float *s, int64_t lds, int64_t cols,
                    const uint64_t *keep, int64_t wpr, float scale, int64_t lo, int64_t hi) {
	const float sc[2] = {0.0f, scale};
	for (int64_t i = lo; i < hi; i++) {
		float *o = ROW(d, ldd, i);
		const float *x = ROW(s, lds, i);
		const uint64_t *bits = keep + i * wpr;
		for (int64_t j = 0; j < cols; j++)
			o[j] = x[j] * sc[(bits[j >> 6] >> (j & 63)) & 1];
	}
}

/* The row sums below run left to right in float32, as Go's loops do, so
 * one row's sum is a chain of dependent adds. Eight rows are summed side
 * by side, each in its own order, so that eight chains are in flight: the
 * same bits, several times the throughput of one row at a time. */
#define ROWS8 8

void sgk_sumsq(float *ss, const float *z, int64_t ldz, int64_t cols, int64_t lo, int64_t hi) {
	int64_t i = lo;
	for (; i + ROWS8 <= hi; i += ROWS8) {
		float s[ROWS8] = {0};
		for (int64_t j = 0; j < cols; j++)
			for (int r = 0; r < ROWS8; r++) {
				const float x = ROW(z, ldz, i + r)[j];
				s[r] += x * x;
			}
		for (int r = 0; r < ROWS8; r++)
			ss[i + r] = s[r];
	}
	for (; i < hi; i++) {
		const float *x = ROW(z, ldz, i);
		float s = 0;
		for (int64_t j = 0; j < cols; j++)
			s += x[j] * x[j];
		ss[i] = s;
	}
}

void sgk_rms_apply(float *d, int64_t ldd, float *u, int64_t ldu, const float *z, int64_t ldz,
                   int64_t cols, float *rms, const float *ss, const float *w, double n,
                   double eps, int relu, int64_t lo, int64_t hi) {
	for (int64_t i = lo; i < hi; i++) {
		float r = (float)sqrt((double)ss[i] / n + eps);
		rms[i] = r;
		float *o = ROW(d, ldd, i), *restrict uu = ROW(u, ldu, i);
		const float *x = ROW(z, ldz, i);
		for (int64_t j = 0; j < cols; j++) {
			float q = x[j] / r;
			float v = q * w[j];
			uu[j] = q;
			o[j] = relu ? relu1(v) : v;
		}
	}
}

void sgk_rms_dot(float *dot, const float *da, int64_t ldda, const float *u, int64_t ldu,
                 const float *w, int64_t cols, int64_t lo, int64_t hi) {
	int64_t i = lo;
	for (; i + ROWS8 <= hi; i += ROWS8) {
		float s[ROWS8] = {0};
		for (int64_t j = 0; j < cols; j++)
			for (int r = 0; r < ROWS8; r++)
				s[r] += ROW(da, ldda, i + r)[j] * w[j] * ROW(u, ldu, i + r)[j];
		for (int r = 0; r < ROWS8; r++)
			dot[i + r] = s[r];
	}
	for (; i < hi; i++) {
		const float *a = ROW(da, ldda, i), *uu = ROW(u, ldu, i);
		float s = 0;
		for (int64_t j = 0; j < cols; j++)
			s += a[j] * w[j] * uu[j];
		dot[i] = s;
	}
}

void sgk_rms_gscale(float *g, const float *da, int64_t ldda, const float *u, int64_t ldu,
                    int64_t rows, int64_t lo, int64_t hi) {
	for (int64_t j = lo; j < hi; j++)
		g[j] = 0;
	for (int64_t i = 0; i < rows; i++) {
		const float *a = ROW(da, ldda, i), *uu = ROW(u, ldu, i);
		for (int64_t j = lo; j < hi; j++)
			g[j] += a[j] * uu[j];
	}
}

void sgk_rms_finish(float *dz, int64_t lddz, const float *da, int64_t ldda, const float *u,
                    int64_t ldu, int64_t cols, const float *w, const float *dot,
                    const float *rms, float inv, int64_t lo, int64_t hi) {
	for (int64_t i = lo; i < hi; i++) {
		float *o = ROW(dz, lddz, i);
		const float *a = ROW(da, ldda, i), *uu = ROW(u, ldu, i);
		const float dt = dot[i], r = rms[i];
		for (int64_t j = 0; j < cols; j++)
			o[j] = (a[j] * w[j] - uu[j] * dt * inv) / r;
	}
}

/* gcn's step.update (gcn/optim.go) in the same double operations. */
WIDE void sgk_optim(float *w, const float *g, float *m, float *v, int kind, double lr, double wd,
               double b1, double b2, double eps, double corr1, double corr2,
               int64_t lo, int64_t hi) {
	if (kind == 0) {
		for (int64_t k = lo; k < hi; k++) {
			double ww = w[k];
			w[k] = (float)(ww - lr * ((double)g[k] + wd * ww));
		}
		return;
	}
	const double c1 = 1 - b1, c2 = 1 - b2;
	for (int64_t k = lo; k < hi; k++) {
		double ww = w[k], gg = g[k], mm = m[k], vv = v[k];
		if (kind == 1)
			gg += wd * ww;
		mm = b1 * mm + c1 * gg;
		vv = b2 * vv + c2 * gg * gg;
		double mh = mm / corr1, vh = vv / corr2;
		if (kind == 2)
			ww -= lr * wd * ww;
		w[k] = (float)(ww - lr * mh / (sqrt(vh) + eps));
		m[k] = (float)mm;
		v[k] = (float)vv;
	}
}

/* collectives.ToBF16: round to nearest, ties to even; NaN stays NaN.
 * Integer operations only, so every width rounds alike; WIDE, because
 * mixed precision rounds every hidden output and gradient this way
 * (baseline SSE: about 10 GB/s of input on R-MAT 18's outputs). */
static inline void pack_bf16(uint16_t *restrict d, const float *restrict s, int64_t lo, int64_t hi) {
	for (int64_t k = lo; k < hi; k++) {
		uint32_t u;
		memcpy(&u, s + k, 4);
		uint32_t r = u + 0x7fff + ((u >> 16) & 1);
		uint16_t h = (uint16_t)(r >> 16);
		d[k] = (u & 0x7fffffff) > 0x7f800000 ? (uint16_t)((u >> 16) | 0x40) : h;
	}
}

WIDE void sgk_pack_bf16(uint16_t *d, const float *s, int64_t lo, int64_t hi) { pack_bf16(d, s, lo, hi); }

void sgk_unpack_bf16(float *d, const uint16_t *s, int64_t lo, int64_t hi) {
	for (int64_t k = lo; k < hi; k++) {
		uint32_t u = (uint32_t)s[k] << 16;
		memcpy(d + k, &u, 4);
	}
}

/* Rows [lo, hi) of a strided view, a row at a time. */
WIDE void sgk_pack_bf16_mat(uint16_t *d, int64_t ldd, const float *s, int64_t lds, int64_t cols, int64_t lo, int64_t hi) {
	for (int64_t i = lo; i < hi; i++)
		pack_bf16(d + i * ldd, s + i * lds, 0, cols);
}

void sgk_unpack_bf16_mat(float *d, int64_t ldd, const uint16_t *s, int64_t lds, int64_t cols, int64_t lo, int64_t hi) {
	for (int64_t i = lo; i < hi; i++)
		sgk_unpack_bf16(d + i * ldd, s + i * lds, 0, cols);
}

void sgk_gather_rows(float *d, int64_t ldd, const float *s, int64_t lds, int64_t cols,
                     const int32_t *idx, int64_t lo, int64_t hi) {
	for (int64_t i = lo; i < hi; i++) {
		if (i + 8 < hi)
			__builtin_prefetch(ROW(s, lds, idx[i + 8]));
		memcpy(ROW(d, ldd, i), ROW(s, lds, idx[i]), (size_t)cols * sizeof(float));
	}
}

void sgk_scatter_add_rows(float *d, int64_t ldd, const float *s, int64_t lds, int64_t rows,
                          const int32_t *idx, int64_t lo, int64_t hi) {
	for (int64_t i = 0; i < rows; i++) {
		float *o = ROW(d, ldd, idx[i]);
		const float *x = ROW(s, lds, i);
		for (int64_t j = lo; j < hi; j++)
			o[j] += x[j];
	}
}

void sgk_triad(float *a, const float *b, const float *c, float s, int64_t lo, int64_t hi) {
	for (int64_t k = lo; k < hi; k++)
		a[k] = b[k] + s * c[k];
}

const char *sgk_isa(void) {
#if defined(__x86_64__) && defined(__GNUC__) && !defined(__clang__)
	__builtin_cpu_init();
	if (__builtin_cpu_supports("x86-64-v4"))
		return "x86-64-v4";
	if (__builtin_cpu_supports("x86-64-v3"))
		return "x86-64-v3";
	return "x86-64-v2";
#else
	return "baseline";
#endif
}
