/* A bfloat16 GEMM of our own with AVX512_BF16's vdpbf16ps, for
 * GemmBF16 (gemm_bf16.go): dst = alpha·op(a)·op(b) + beta·dst, bfloat16
 * operands (uint16 bits), float32 sums and dst, row-major.
 *
 * vdpbf16ps multiplies the 16 bf16 pairs of two vectors lane by lane and
 * adds both products of a lane to its float32 accumulator, so the inner
 * dimension goes in pairs: a lane of the packed op(b) holds
 * (op(b)[2p][j], op(b)[2p+1][j]) in its low and high halves, and the
 * pair (op(a)[i][2p], op(a)[i][2p+1]) is broadcast to all lanes.
 *
 * Blocking (Goto's, much reduced, since GCN's products have k, n <= 512):
 * columns in blocks of NC, the inner dimension in chunks of KC, rows in
 * micro-panels of MR. Each (NC, KC) chunk of op(b) is packed once into
 * panels of NR = 32 columns (two vectors), k-pair-major, zero-padded to
 * whole panels and pairs; a micro-panel of op(a) is packed pair-major
 * (Trans, or an odd chunk) or read straight from a row-major a (NoTrans:
 * its pairs are adjacent in memory). The micro-kernel keeps an MR×32
 * tile of sums in 24 zmm registers over the whole chunk and then writes
 * alpha·sum + beta·dst (first chunk) or dst + alpha·sum (later chunks).
 *
 * Numerics (docs/bf16.md): the products of two bf16 are exact in float32,
 * but vdpbf16ps treats subnormal inputs as zero and flushes subnormal
 * results to zero whatever MXCSR says, and it adds a lane's two products
 * to the sum one after the other (odd element first, Intel's pseudocode).
 * Each element's sums are formed in the same order wherever it falls in
 * a tile or block (chunks from k = 0 in steps of KC, pairs in order), so
 * the result does not depend on how the product is cut into blocks or on
 * the thread count.
 *
 * Only amd64 has the kernel; elsewhere scalegnn_gemm_bf16_available()
 * returns 0 and GemmBF16 does not call it. */
#include <stdint.h>
#include <string.h>

#include "kernels.h"

enum {
	BF16_MR = 12,  /* rows of a micro-tile */
	BF16_NR = 32,  /* columns of a micro-tile: two vectors */
	BF16_KC = 512, /* inner-dimension chunk (elements, even) */
	BF16_NC = 256, /* column block */
	AMX_MR = 32,   /* rows of an AMX micro-tile: two tiles */
};

/* scalegnn_gemm_bf16_words is the scratch scalegnn_gemm_bf16 (either
 * kernel) needs for an n-column, k-deep product, in uint32 words: the
 * packed chunk of op(b) (pairs padded to whole AMX tiles), a packed
 * micro-panel of op(a) (AMX_MR rows), the AMX tile results, and 64
 * bytes to align them. */
int64_t scalegnn_gemm_bf16_words(int64_t n, int64_t k) {
	const int64_t nc = n < BF16_NC ? n : BF16_NC, kc = k < BF16_KC ? k : BF16_KC;
	const int64_t kpad = ((kc + 1) / 2 + 15) / 16 * 16;
	return (nc + BF16_NR - 1) / BF16_NR * BF16_NR * kpad + kpad * AMX_MR + AMX_MR * BF16_NR + 16;
}

#if defined(__x86_64__)
#include <immintrin.h>

#pragma GCC optimize("fp-contract=off")

#define BF16_TARGET __attribute__((target("avx512bf16,avx512f,avx512bw,avx512vl")))

int scalegnn_gemm_bf16_available(void) {
	__builtin_cpu_init();
	return __builtin_cpu_supports("avx512f") && __builtin_cpu_supports("avx512bw") &&
	       __builtin_cpu_supports("avx512vl") && __builtin_cpu_supports("avx512bf16");
}

static inline uint32_t load32(const uint16_t *p) {
	uint32_t w;
	memcpy(&w, p, sizeof w);
	return w;
}

/* pack_b packs op(b)[k0:k0+kc, j0:j0+nc] into panels of NR columns of
 * kpad >= (kc+1)/2 pairs: bp[q·kpad·NR + p·NR + jj] = pair p of column
 * j0 + q·NR + jj, zeros past nc and past kc. */
BF16_TARGET static void pack_b(int transb, const uint16_t *b, int64_t ldb, int64_t k0,
                               int64_t kc, int64_t j0, int64_t nc, int64_t kpad, uint32_t *bp) {
	const int64_t kp = (kc + 1) / 2, npan = (nc + BF16_NR - 1) / BF16_NR;
	for (int64_t q = 0; q < npan; q++)
		memset(bp + q * kpad * BF16_NR + kp * BF16_NR, 0, (size_t)(kpad - kp) * BF16_NR * 4);
	if (!transb) { /* b is k×n: a pair interleaves two rows */
		for (int64_t q = 0; q < npan; q++) {
			uint32_t *dst = bp + q * kpad * BF16_NR;
			for (int64_t p = 0; p < kp; p++) {
				const uint16_t *r0 = b + (k0 + 2 * p) * ldb + j0 + q * BF16_NR;
				const uint16_t *r1 = r0 + ldb;
				const int odd = 2 * p + 1 < kc;
				for (int v = 0; v < BF16_NR / 16; v++) {
					const int64_t left = nc - q * BF16_NR - 16 * v;
					const __mmask16 m = left >= 16 ? 0xffff : left <= 0 ? 0 : (__mmask16)((1u << left) - 1);
					__m512i lo = _mm512_cvtepu16_epi32(_mm256_maskz_loadu_epi16(m, r0 + 16 * v));
					__m512i hi = odd ? _mm512_cvtepu16_epi32(_mm256_maskz_loadu_epi16(m, r1 + 16 * v))
					                 : _mm512_setzero_si512();
					_mm512_storeu_si512(dst + p * BF16_NR + 16 * v,
					                    _mm512_or_si512(lo, _mm512_slli_epi32(hi, 16)));
				}
			}
		}
		return;
	}
	/* b is n×k: a pair is two adjacent elements of a row of b */
	for (int64_t q = 0; q < npan; q++) {
		uint32_t *dst = bp + q * kpad * BF16_NR;
		for (int64_t jj = 0; jj < BF16_NR; jj++) {
			const int64_t j = q * BF16_NR + jj;
			if (j >= nc) {
				for (int64_t p = 0; p < kp; p++)
					dst[p * BF16_NR + jj] = 0;
				continue;
			}
			const uint16_t *row = b + (j0 + j) * ldb + k0;
			for (int64_t p = 0; p < kc / 2; p++)
				dst[p * BF16_NR + jj] = load32(row + 2 * p);
			if (kc & 1)
				dst[(kp - 1) * BF16_NR + jj] = row[kc - 1];
		}
	}
}

/* pack_a packs rows i0..i0+mr of op(a)[:, k0:k0+kc] in pairs: pair p of
 * row i0 + r goes to ap[p·ps + r·rs], the last pair's high half zero when
 * kc is odd. The vdpbf16ps kernel packs pair-major (ps MR, rs 1), the AMX
 * kernel row-major (ps 1, rs its padded pair count). */
static void pack_a(int transa, const uint16_t *a, int64_t lda, int64_t k0, int64_t kc,
                   int64_t i0, int mr, uint32_t *ap, int64_t ps, int64_t rs) {
	const int64_t kp = (kc + 1) / 2;
	if (!transa) {
		for (int r = 0; r < mr; r++) {
			const uint16_t *row = a + (i0 + r) * lda + k0;
			for (int64_t p = 0; p < kc / 2; p++)
				ap[p * ps + r * rs] = load32(row + 2 * p);
			if (kc & 1)
				ap[(kp - 1) * ps + r * rs] = row[kc - 1];
		}
		return;
	}
	/* a is k×m: a pair interleaves two rows of a */
	for (int64_t p = 0; p < kp; p++) {
		const uint16_t *r0 = a + (k0 + 2 * p) * lda + i0;
		const uint16_t *r1 = r0 + lda;
		const int odd = 2 * p + 1 < kc;
		for (int r = 0; r < mr; r++)
			ap[p * ps + r * rs] = (uint32_t)r0[r] | (odd ? (uint32_t)r1[r] << 16 : 0);
	}
}

/* store_tile writes the mr×nr corner of the sums s (row stride NR) to
 * dst: alpha·s + beta·dst on the first chunk of the inner dimension
 * (beta 0 does not read dst), dst + alpha·s on later ones. Explicit FMAs,
 * so that every caller rounds alike (the pragma above keeps the compiler
 * from fusing some and not others). */
BF16_TARGET static inline __attribute__((always_inline)) void
store_tile(const float *s, float *c, int64_t ldc, int mr, int nr, float alpha, float beta,
           int first) {
	const __mmask16 m0 = nr >= 16 ? 0xffff : (__mmask16)((1u << nr) - 1);
	const __mmask16 m1 = nr >= 32 ? 0xffff : nr <= 16 ? 0 : (__mmask16)((1u << (nr - 16)) - 1);
	const __m512 va = _mm512_set1_ps(alpha), vb = _mm512_set1_ps(beta);
	for (int r = 0; r < mr; r++) {
		float *cr = c + r * ldc;
		for (int v = 0; v < 2; v++) {
			const __mmask16 m = v ? m1 : m0;
			if (!m)
				continue;
			const __m512 sv = _mm512_loadu_ps(s + r * BF16_NR + 16 * v);
			__m512 x;
			if (!first)
				x = _mm512_fmadd_ps(va, sv, _mm512_maskz_loadu_ps(m, cr + 16 * v));
			else if (beta != 0)
				x = _mm512_fmadd_ps(vb, _mm512_maskz_loadu_ps(m, cr + 16 * v), _mm512_mul_ps(va, sv));
			else
				x = _mm512_mul_ps(va, sv);
			_mm512_mask_storeu_ps(cr + 16 * v, m, x);
		}
	}
}

/* kern computes an mr×nr tile (mr <= MR, nr <= NR) over kp pairs: the
 * pair p of row r of op(a) is the uint32 at a + r·ars + p·aps (uint16
 * units), the packed panel of op(b) is bp. first says this is the first
 * chunk of the inner dimension (beta applies; beta 0 does not read c). */
BF16_TARGET static inline __attribute__((always_inline)) void
kern(const int mr, int64_t kp, const uint16_t *a, int64_t ars, int64_t aps,
     const uint32_t *bp, float *c, int64_t ldc, int nr, float alpha, float beta, int first) {
	__m512 acc[BF16_MR][2];
	for (int r = 0; r < mr; r++)
		acc[r][0] = acc[r][1] = _mm512_setzero_ps();
	for (int64_t p = 0; p < kp; p++) {
		const __m512bh b0 = (__m512bh)_mm512_loadu_si512(bp + p * BF16_NR);
		const __m512bh b1 = (__m512bh)_mm512_loadu_si512(bp + p * BF16_NR + 16);
		const uint16_t *ap = a + p * aps;
		for (int r = 0; r < mr; r++) {
			const __m512bh av = (__m512bh)_mm512_set1_epi32((int)load32(ap + r * ars));
			acc[r][0] = _mm512_dpbf16_ps(acc[r][0], av, b0);
			acc[r][1] = _mm512_dpbf16_ps(acc[r][1], av, b1);
		}
	}
	float sums[BF16_MR * BF16_NR] __attribute__((aligned(64)));
	for (int r = 0; r < mr; r++) {
		_mm512_store_ps(sums + r * BF16_NR, acc[r][0]);
		_mm512_store_ps(sums + r * BF16_NR + 16, acc[r][1]);
	}
	store_tile(sums, c, ldc, mr, nr, alpha, beta, first);
}

BF16_TARGET static void kern_mr(int mr, int64_t kp, const uint16_t *a, int64_t ars, int64_t aps,
                                const uint32_t *bp, float *c, int64_t ldc, int nr, float alpha,
                                float beta, int first) {
#define KERN_CASE(R)                                                                        \
	case R:                                                                             \
		kern(R, kp, a, ars, aps, bp, c, ldc, nr, alpha, beta, first);               \
		return;
	switch (mr) {
		KERN_CASE(1) KERN_CASE(2) KERN_CASE(3) KERN_CASE(4) KERN_CASE(5) KERN_CASE(6)
		KERN_CASE(7) KERN_CASE(8) KERN_CASE(9) KERN_CASE(10) KERN_CASE(11) KERN_CASE(12)
	}
#undef KERN_CASE
}

BF16_TARGET void scalegnn_gemm_bf16(int transa, int transb, int64_t m, int64_t n, int64_t k,
                                    float alpha, const uint16_t *a, int64_t lda,
                                    const uint16_t *b, int64_t ldb, float beta, float *c,
                                    int64_t ldc, uint32_t *work) {
	uint32_t *const bp = (uint32_t *)(((uintptr_t)work + 63) & ~(uintptr_t)63);
	const int64_t kcmax = k < BF16_KC ? k : BF16_KC, ncmax = n < BF16_NC ? n : BF16_NC;
	uint32_t *const ap = bp + (ncmax + BF16_NR - 1) / BF16_NR * BF16_NR * ((kcmax + 1) / 2);
	for (int64_t j0 = 0; j0 < n; j0 += BF16_NC) {
		const int64_t nc = n - j0 < BF16_NC ? n - j0 : BF16_NC;
		const int64_t npan = (nc + BF16_NR - 1) / BF16_NR;
		for (int64_t k0 = 0; k0 < k; k0 += BF16_KC) {
			const int64_t kc = k - k0 < BF16_KC ? k - k0 : BF16_KC, kp = (kc + 1) / 2;
			pack_b(transb, b, ldb, k0, kc, j0, nc, kp, bp);
			const int direct = !transa && kc % 2 == 0;
			for (int64_t i0 = 0; i0 < m; i0 += BF16_MR) {
				const int mr = m - i0 < BF16_MR ? (int)(m - i0) : BF16_MR;
				const uint16_t *pa = (const uint16_t *)ap;
				int64_t ars = 2, aps = 2 * BF16_MR;
				if (direct) {
					pa = a + i0 * lda + k0;
					ars = lda, aps = 2;
				} else {
					pack_a(transa, a, lda, k0, kc, i0, mr, ap, BF16_MR, 1);
				}
				for (int64_t q = 0; q < npan; q++) {
					const int nr = nc - q * BF16_NR < BF16_NR ? (int)(nc - q * BF16_NR) : BF16_NR;
					kern_mr(mr, kp, pa, ars, aps, bp + q * kp * BF16_NR,
					        c + i0 * ldc + j0 + q * BF16_NR, ldc, nr, alpha, beta, k0 == 0);
				}
			}
		}
	}
}

/* The AMX kernel. TDPBF16PS multiplies a 16-row tile of op(a) (16
 * rows × 16 pairs, 64 bytes a row) by a tile of op(b) in pair layout
 * (16 pairs × 16 columns: exactly half a packed panel's 128-byte row)
 * into a 16×16 float32 tile. The micro-tile is 32 rows × 32 columns: four
 * result tiles, two of op(a), two of op(b). op(a)'s rows are loaded
 * straight from a row-major a where a whole 32-row, whole-tile chunk is
 * there; otherwise they are packed, zero-padded, into ap. Results go
 * through cbuf to dst, where alpha, beta and the edges apply. Rounding and
 * flushing are as vdpbf16ps's (Intel SDM: DAZ, FTZ, round to nearest
 * even); each element's sums are formed in an order that depends only on
 * k, as above. */

#include <sys/syscall.h>
#include <unistd.h>

#define AMX_TARGET __attribute__((target("amx-tile,amx-bf16,avx512f,avx512bw,avx512vl,avx512bf16")))

struct amx_cfg {
	uint8_t palette, start_row, reserved[14];
	uint16_t colsb[16];
	uint8_t rows[16];
};

/* scalegnn_gemm_amx_enable returns 1 where the CPU has AMX-BF16 and
 * AMX-TILE and Linux lets this process use the tile data (asked by
 * ARCH_REQ_XCOMP_PERM, once per process: it fails before Linux 5.16, where
 * a hypervisor hides the state, or where a thread's signal stack is too
 * small for it), -1 where the CPU has them but Linux refused, 0 where the
 * CPU lacks them. */
int scalegnn_gemm_amx_enable(void) {
	unsigned eax, ebx, ecx, edx;
	__asm__("cpuid" : "=a"(eax), "=b"(ebx), "=c"(ecx), "=d"(edx) : "a"(7), "c"(0));
	if (!(edx & (1u << 22)) || !(edx & (1u << 24)) || !scalegnn_gemm_bf16_available())
		return 0;
	return syscall(SYS_arch_prctl, 0x1023 /* ARCH_REQ_XCOMP_PERM */, 18 /* XTILEDATA */) == 0 ? 1 : -1;
}

AMX_TARGET void scalegnn_gemm_amx(int transa, int transb, int64_t m, int64_t n, int64_t k,
                                  float alpha, const uint16_t *a, int64_t lda,
                                  const uint16_t *b, int64_t ldb, float beta, float *c,
                                  int64_t ldc, uint32_t *work) {
	struct amx_cfg cfg;
	memset(&cfg, 0, sizeof cfg);
	cfg.palette = 1;
	for (int t = 0; t < 8; t++)
		cfg.colsb[t] = 64, cfg.rows[t] = 16;
	_tile_loadconfig(&cfg);
	uint32_t *const bp = (uint32_t *)(((uintptr_t)work + 63) & ~(uintptr_t)63);
	const int64_t kcmax = k < BF16_KC ? k : BF16_KC, ncmax = n < BF16_NC ? n : BF16_NC;
	const int64_t kpmax = ((kcmax + 1) / 2 + 15) / 16 * 16;
	uint32_t *const ap = bp + (ncmax + BF16_NR - 1) / BF16_NR * BF16_NR * kpmax;
	float *const c32 = (float *)(ap + AMX_MR * kpmax);
	for (int64_t j0 = 0; j0 < n; j0 += BF16_NC) {
		const int64_t nc = n - j0 < BF16_NC ? n - j0 : BF16_NC;
		const int64_t npan = (nc + BF16_NR - 1) / BF16_NR;
		for (int64_t k0 = 0; k0 < k; k0 += BF16_KC) {
			const int64_t kc = k - k0 < BF16_KC ? k - k0 : BF16_KC;
			const int64_t kpad = ((kc + 1) / 2 + 15) / 16 * 16;
			pack_b(transb, b, ldb, k0, kc, j0, nc, kpad, bp);
			for (int64_t i0 = 0; i0 < m; i0 += AMX_MR) {
				const int mr = m - i0 < AMX_MR ? (int)(m - i0) : AMX_MR;
				const char *pa = (const char *)ap;
				int64_t astride = kpad * 4;
				if (!transa && kc % 32 == 0 && mr == AMX_MR) {
					pa = (const char *)(a + i0 * lda + k0);
					astride = lda * 2;
				} else {
					/* zero past mr and kc: whole tiles */
					memset(ap, 0, (size_t)AMX_MR * kpad * 4);
					pack_a(transa, a, lda, k0, kc, i0, mr, ap, 1, kpad);
				}
				for (int64_t q = 0; q < npan; q++) {
					const char *pb = (const char *)(bp + q * kpad * BF16_NR);
					_tile_zero(0);
					_tile_zero(1);
					_tile_zero(2);
					_tile_zero(3);
					for (int64_t p = 0; p < kpad; p += 16) {
						_tile_loadd(4, pa + p * 4, astride);
						_tile_loadd(5, pa + 16 * astride + p * 4, astride);
						_tile_loadd(6, pb + p * BF16_NR * 4, BF16_NR * 4);
						_tile_loadd(7, pb + p * BF16_NR * 4 + 64, BF16_NR * 4);
						_tile_dpbf16ps(0, 4, 6);
						_tile_dpbf16ps(1, 4, 7);
						_tile_dpbf16ps(2, 5, 6);
						_tile_dpbf16ps(3, 5, 7);
					}
					_tile_stored(0, c32, BF16_NR * 4);
					_tile_stored(1, c32 + 16, BF16_NR * 4);
					_tile_stored(2, c32 + 16 * BF16_NR, BF16_NR * 4);
					_tile_stored(3, c32 + 16 * BF16_NR + 16, BF16_NR * 4);
					const int nr = nc - q * BF16_NR < BF16_NR ? (int)(nc - q * BF16_NR) : BF16_NR;
					store_tile(c32, c + i0 * ldc + j0 + q * BF16_NR, ldc, mr, nr, alpha, beta, k0 == 0);
				}
			}
		}
	}
	_tile_release();
}

#else

int scalegnn_gemm_bf16_available(void) { return 0; }
int scalegnn_gemm_amx_enable(void) { return 0; }

void scalegnn_gemm_amx(int transa, int transb, int64_t m, int64_t n, int64_t k, float alpha,
                       const uint16_t *a, int64_t lda, const uint16_t *b, int64_t ldb,
                       float beta, float *c, int64_t ldc, uint32_t *work) {
	scalegnn_gemm_bf16(transa, transb, m, n, k, alpha, a, lda, b, ldb, beta, c, ldc, work);
}

void scalegnn_gemm_bf16(int transa, int transb, int64_t m, int64_t n, int64_t k, float alpha,
                        const uint16_t *a, int64_t lda, const uint16_t *b, int64_t ldb,
                        float beta, float *c, int64_t ldc, uint32_t *work) {
	(void)transa, (void)transb, (void)m, (void)n, (void)k, (void)alpha, (void)a, (void)lda;
	(void)b, (void)ldb, (void)beta, (void)c, (void)ldc, (void)work;
}

#endif
