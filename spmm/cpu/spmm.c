/* The SpMM kernel: rows [r0, r1) of dst = A·B for CSR A and row-major B,
 * with B and dst each float32 or bfloat16 ("Element kinds" below; the
 * sums are float32 in every kind).
 *
 * The product is bound by memory latency, not arithmetic: each nonzero
 * (i, c) reads row c of B from wherever it lies, and after a random
 * permutation of the vertices that is almost never in cache. What makes
 * this kernel several times faster than the plain triple loop:
 *
 *  - Software prefetch. While nonzero p is processed, the B row segment of
 *    nonzero p+ahead (counted across row boundaries, because most rows of
 *    a power-law graph hold only a few entries) is prefetched, so the loads
 *    of many nonzeros are in flight at once. On a 200k-row, 3.2M-nonzero
 *    matrix this alone cut the time 3-5x. The distance (AHEAD_NARROW,
 *    AHEAD_WIDE) is twice as far for rows of B up to one cache line
 *    (width <= 16) as for wider ones, whose segments span several lines.
 *  - Register accumulators. The width is cut into chunks of up to 128
 *    columns whose partial sums live in vector registers for a whole row;
 *    the last columns, fewer than one vector, are summed one at a time.
 *  - Width specialisation. The widths a GCN uses (16, 32, 64, 128) get
 *    loops of their own with every trip count a constant, so the compiler
 *    unrolls the chunks completely; other widths run the same code with
 *    the width as a variable.
 *  - Vector ISA by CPU. The body is compiled three times, for x86-64-v2
 *    (the build's baseline), AVX2 and AVX-512, and the widest the CPU
 *    supports runs (checked once per call; arm64 and other targets get
 *    the baseline only). AVX-512 holds a 128-column chunk in 8 of its 32
 *    registers, AVX2 a 64-column chunk in 8 of 16 and SSE a 32-column
 *    chunk in 8 of 16; wider rows take several passes over the nonzeros.
 *
 * Summation order. Every output element is summed in the same order on
 * every path: acc = 0, then acc = acc + v·b (rounded product, then
 * rounded sum) over the row's nonzeros in index order. Vectors run across
 * columns only, and the package is compiled with -ffp-contract=off so that
 * the AVX2/AVX-512 paths do not fuse the multiply and add into an FMA:
 * results are bit-identical across ISAs, widths and chunkings, and with
 * the earlier scalar-order kernel (TestSpMMBitwise checks this). A
 * bfloat16 B widens exactly, so its products equal the float32 kernel's
 * on the widened B, bit for bit (TestSpMMBF16Bitwise).
 *
 * The kernel also checks the CSR structure it relies on (row pointers in
 * range and non-decreasing, columns below ncols): a bad index would make C
 * read outside the Go slices rather than panic. It returns the first bad
 * row, or -1 when all rows were computed.
 */
#include <string.h>

#include "kernels.h"

/* No FMA contraction in this file (see "Summation order" above); the
 * option cannot be passed through #cgo CFLAGS, which refuses it. */
#if defined(__clang__)
#pragma STDC FP_CONTRACT OFF
#elif defined(__GNUC__)
#pragma GCC optimize("fp-contract=off")
#endif

#if defined(__x86_64__) && (defined(__GNUC__) || defined(__clang__))
#define HAVE_X86_VARIANTS 1
#endif

/* vf16, vf8 and vf4 are 16, 8 and 4 floats as one value (GCC vector
 * extensions): one zmm, ymm or xmm register. Each target uses its own
 * register width, since wider vectors would be split through the stack.
 * Loads and stores go through memcpy (unaligned). vuL and viL are L
 * 32-bit integers (the same register), vhL L bfloat16 (half of one). */
typedef float vf16 __attribute__((vector_size(64)));
typedef float vf8 __attribute__((vector_size(32)));
typedef float vf4 __attribute__((vector_size(16)));
typedef uint32_t vu16 __attribute__((vector_size(64)));
typedef uint32_t vu8 __attribute__((vector_size(32)));
typedef uint32_t vu4 __attribute__((vector_size(16)));
typedef uint16_t vh16 __attribute__((vector_size(32)));
typedef uint16_t vh8 __attribute__((vector_size(16)));
typedef uint16_t vh4 __attribute__((vector_size(8)));

/* Element kinds. The kernel is written once over the type of B's elements
 * and of dst's, each float or bfloat16 (uint16_t, the high half of a
 * float32; see spmm.ToBF16), in three kinds:
 *   ff: float B, float dst (Backend.SpMM);
 *   hf: bfloat16 B, float dst (Backend.SpMMBF16);
 *   hh: bfloat16 B, bfloat16 dst (Backend.SpMMBF16ToBF16);
 *   hm: bfloat16 B, a row's float sums into a row buffer, then masked,
 *       scaled and rounded into a bfloat16 dst by its epilogue
 *       (Backend.SpMMBF16ToBF16Masked; "Masked rows" below).
 * The sums are float32 in every kind and in the same order: a bfloat16
 * element widens to float32 exactly (a 16-bit shift, or a mask for the
 * odd elements of a pair: "Paired loads" below), so hf equals ff on the widened B bit for bit, and hh rounds
 * each finished float32 sum once, to nearest even, exactly as
 * spmm.ToBF16 does (integer arithmetic, no MXCSR, no flush of
 * subnormals: AVX512_BF16's vcvtneps2bf16 would flush them).
 *
 * For each kind K: BT_K and OT_K are B's and dst's element types;
 * LDV_K(VT, L, p) loads L elements of B at p as a VT of floats, LD1_K(p)
 * one as a float; STV_K(p, L, acc) stores a vf##L of sums at p, ST1_K(p,
 * x) one sum. */
#define BT_ff float
#define OT_ff float
#define BT_hf uint16_t
#define OT_hf float
#define BT_hh uint16_t
#define OT_hh uint16_t
#define BT_hm uint16_t
#define OT_hm float

#define LDV_F32(VT, L, p) ({ VT x_; memcpy(&x_, (p), sizeof x_); x_; })
#define LDV_BF16(VT, L, p)                                                 \
	({                                                                 \
		vh##L h_;                                                  \
		memcpy(&h_, (p), sizeof h_);                               \
		(VT)(__builtin_convertvector(h_, vu##L) << 16);            \
	})
#define LD1_F32(p) (*(p))
#define LD1_BF16(p) bf16_to_f32(*(p))
#define STV_F32(p, L, acc) memcpy((p), &(acc), sizeof(acc))
/* RND_BF16(L, acc) is the vu##L of acc's elements rounded to bfloat16
 * (spmm.ToBF16), each in the low half of its 32 bits. */
#define RND_BF16(L, acc)                                                   \
	({                                                                 \
		const vu##L u_ = (vu##L)(acc);                             \
		const vu##L nan_ = (vu##L)((u_ & 0x7fffffff) > 0x7f800000); \
		((u_ + 0x7fff + ((u_ >> 16) & 1)) >> 16 & ~nan_)           \
		    | (((u_ >> 16) | 0x40) & nan_);                        \
	})
#define STV_BF16(p, L, acc)                                                \
	do {                                                               \
		const vh##L h_ = __builtin_convertvector(RND_BF16(L, acc), vh##L); \
		memcpy((p), &h_, sizeof h_);                               \
	} while (0)
#define ST1_F32(p, x) (*(p) = (x))
#define ST1_BF16(p, x) (*(p) = f32_to_bf16(x))

/* Paired loads. A bfloat16 B is read 2L elements at a time, as L 32-bit
 * words: the even-indexed elements are the words shifted left by 16 and
 * the odd ones the words with their low half cleared. That is two integer
 * operations for 2L elements where widening (vpmovzxwd and vpslld) takes
 * four, and the SpMM, bound by how many loads the core keeps in flight,
 * gains from every operation saved (R-MAT 18, width 128, float32 result:
 * bf16 went from 0.70-0.76x the float32 kernel to 0.59-0.63x). The partial sums run in two
 * vectors, evens and odds, and are put back in order once per row when
 * stored: each sum is formed exactly as before, bit for bit.
 * PAIRED_K says whether kind K reads in pairs; LDP loads 2L elements at p
 * into e (evens) and o (odds); STP_K stores the 2L sums of e and o at p in
 * order. */
#define PAIRED_ff 0
#define PAIRED_hf 1
#define PAIRED_hh 1
#define PAIRED_hm 1
#define LDP(VT, L, p, e, o)                                                \
	do {                                                               \
		vu##L w_;                                                  \
		memcpy(&w_, (p), sizeof w_);                               \
		(e) = (VT)(w_ << 16);                                      \
		(o) = (VT)(w_ & 0xffff0000u);                              \
	} while (0)
#if defined(__GNUC__) && !defined(__clang__)
#define STP_hf(p, L, e, o)                                                 \
	do {                                                               \
		const __typeof__(e) lo_ = __builtin_shuffle((e), (o), ILO##L); \
		const __typeof__(e) hi_ = __builtin_shuffle((e), (o), IHI##L); \
		memcpy((p), &lo_, sizeof lo_);                             \
		memcpy((p) + (L), &hi_, sizeof hi_);                       \
	} while (0)
#else
#define STP_hf(p, L, e, o)                                                 \
	do {                                                               \
		for (int m_ = 0; m_ < (L); m_++) {                         \
			(p)[2 * m_] = (e)[m_];                             \
			(p)[2 * m_ + 1] = (o)[m_];                         \
		}                                                          \
	} while (0)
#endif
#define STP_hh(p, L, e, o)                                                 \
	do {                                                               \
		const vu##L w_ = RND_BF16(L, e) | RND_BF16(L, o) << 16;    \
		memcpy((p), &w_, sizeof w_);                               \
	} while (0)
#define STP_ff(p, L, e, o) ((void)0)
#define STP_hm STP_hf

/* ILO##L and IHI##L interleave two vectors of L floats, e and o: the first
 * and the second half of e0 o0 e1 o1 ... (GCC's __builtin_shuffle). */
static const vu4 ILO4 = {0, 4, 1, 5}, IHI4 = {2, 6, 3, 7};
static const vu8 ILO8 = {0, 8, 1, 9, 2, 10, 3, 11}, IHI8 = {4, 12, 5, 13, 6, 14, 7, 15};
static const vu16 ILO16 = {0, 16, 1, 17, 2, 18, 3, 19, 4, 20, 5, 21, 6, 22, 7, 23},
		  IHI16 = {8, 24, 9, 25, 10, 26, 11, 27, 12, 28, 13, 29, 14, 30, 15, 31};

#define LDV_ff LDV_F32
#define LDV_hf LDV_BF16
#define LDV_hh LDV_BF16
#define LDV_hm LDV_BF16
#define LD1_ff LD1_F32
#define LD1_hf LD1_BF16
#define LD1_hh LD1_BF16
#define LD1_hm LD1_BF16
#define STV_ff STV_F32
#define STV_hf STV_F32
#define STV_hh STV_BF16
#define STV_hm STV_F32
#define ST1_ff ST1_F32
#define ST1_hf ST1_F32
#define ST1_hh ST1_BF16
#define ST1_hm ST1_F32

/* Masked rows (kind hm). A row's float sums go to a row buffer (rb_,
 * in L1), and the epilogue writes out[i][j] = pos(i, j) ? round(sum ·
 * sc[keep(i, j)]) : +0, sc = {0, scale}: the device's ApplyMask (the
 * dropout's mask and scale; a dropped entry is sum·0, a signed zero)
 * followed by ReLUBackwardBits (a select of +0) and one rounding, on the
 * float32 sums, fused into the SpMM so that the float32 result is never
 * stored. keep and pos are rows of wpr 64-bit words, bit j%64 of word
 * j/64 for column j. ROWDST_K is where a row's sums go and EPI_K the
 * epilogue after them (nothing for the other kinds). */
struct spmm_epi {
	uint16_t *out;
	int64_t ldo;
	const uint64_t *keep, *pos;
	int64_t wpr;
	float scale;
};
#define ROWDST_ff(i) (dst + (i) * ldd)
#define ROWDST_hf(i) (dst + (i) * ldd)
#define ROWDST_hh(i) (dst + (i) * ldd)
#define ROWDST_hm(i) (rb_)
#define ROWBUF_ff
#define ROWBUF_hf
#define ROWBUF_hh
#define ROWBUF_hm float rb_[width];
#define EPI_ff(i, VT, L, n) ((void)0)
#define EPI_hf(i, VT, L, n) ((void)0)
#define EPI_hh(i, VT, L, n) ((void)0)
/* EPI_hm runs L columns at a time: their L bits of keep and of pos (L
 * divides 64, so they share a word) become lane masks, the dropout's
 * factor is scale's bits or +0's under the keep mask, the product's bits
 * survive under the pos mask (+0 elsewhere), and RND_BF16 rounds them;
 * the last n%L columns one at a time. */
#define EPI_hm(i, VT, L, n)                                                	do {                                                               		uint16_t *o_ = epi->out + (i) * epi->ldo;                  		const uint64_t *k_ = epi->keep + (i) * epi->wpr;           		const uint64_t *q_ = epi->pos + (i) * epi->wpr;            		uint32_t sb_;                                              		memcpy(&sb_, &epi->scale, sizeof sb_);                     		const vu##L lane_ = LANES##L;                              		int64_t j_ = 0;                                            		for (; j_ + (L) <= (n); j_ += (L)) {                       			const uint32_t kb_ = (uint32_t)(k_[j_ >> 6] >> (j_ & 63)); 			const uint32_t qb_ = (uint32_t)(q_[j_ >> 6] >> (j_ & 63)); 			const vu##L km_ = (vu##L)((((vu##L){0} + kb_) & lane_) != 0); 			const vu##L qm_ = (vu##L)((((vu##L){0} + qb_) & lane_) != 0); 			VT x_;                                             			memcpy(&x_, rb_ + j_, sizeof x_);                  			const VT v_ = x_ * (VT)(((vu##L){0} + sb_) & km_);    			STV_BF16(o_ + j_, L, (VT)((vu##L)v_ & qm_));        		}                                                          		const float sc_[2] = {0.0f, epi->scale};                   		for (; j_ < (n); j_++) {                                   			const float v_ = rb_[j_] * sc_[(k_[j_ >> 6] >> (j_ & 63)) & 1]; 			o_[j_] = (q_[j_ >> 6] >> (j_ & 63)) & 1 ? f32_to_bf16(v_) : 0; 		}                                                          	} while (0)

/* LANES##L is lane m's bit, 1 << m, of L lanes. */
static const vu4 LANES4 = {1, 2, 4, 8};
static const vu8 LANES8 = {1, 2, 4, 8, 16, 32, 64, 128};
static const vu16 LANES16 = {1, 2, 4, 8, 16, 32, 64, 128, 256, 512, 1024, 2048, 4096, 8192, 16384, 32768};

static inline float bf16_to_f32(uint16_t h) {
	const uint32_t u = (uint32_t)h << 16;
	float f;
	memcpy(&f, &u, sizeof f);
	return f;
}

/* f32_to_bf16 is spmm.ToBF16: round to nearest, ties to even; a NaN stays
 * a quiet NaN. */
static inline uint16_t f32_to_bf16(float f) {
	uint32_t u;
	memcpy(&u, &f, sizeof u);
	if ((u & 0x7fffffff) > 0x7f800000)
		return (uint16_t)((u >> 16) | 0x40);
	return (uint16_t)((u + 0x7fff + ((u >> 16) & 1)) >> 16);
}

/* PREFETCH_SPAN prefetches the cache lines of p[0:n]: one per 64 bytes
 * from p, and the line of the last byte too unless tail is 0 (the caller
 * knows that p starts a line and n fills whole lines: most rows of B do,
 * and at width 16 the redundant prefetch cost 10-20%). */
#define PREFETCH_SPAN(p, n, tail)                                          \
	do {                                                               \
		const char *c_ = (const char *)(p);                        \
		const int64_t nb_ = (n) * (int64_t)sizeof(*(p));           \
		for (int64_t o_ = 0; o_ < nb_; o_ += 64)                   \
			__builtin_prefetch(c_ + o_);                       \
		if (tail)                                                  \
			__builtin_prefetch(c_ + nb_ - 1);                  \
	} while (0)

/* AHEAD_NARROW and AHEAD_WIDE are the prefetch distances in nonzeros for
 * rows of B up to one cache line (float widths up to 16, bfloat16 up to
 * 32) and beyond. On R-MAT scale 16 and 18 (AMD EPYC Zen 5,
 * BenchmarkBandwidth) 64/32 ran 1.3-1.4x faster than 32/16 and 16/8;
 * 96/48 and 128/64 were no better. */
#define AHEAD_NARROW 64
#define AHEAD_WIDE 32

/* CHUNK(K, VT, L, NV) computes columns [j0, j0+NV·L) of the current row
 * for as long as that many remain, with NV vectors of type VT (L floats
 * each) of partial sums in registers. */
#define CHUNK(K, VT, L, NV)                                                \
	for (; j0 + (NV) * (L) <= n; j0 += (NV) * (L)) {                   \
		VT acc[NV];                                                \
		const int tail = (((uintptr_t)(b + j0) | (uintptr_t)ldb * sizeof(*b)) & 63) != 0 \
		    || (NV) * (L) * sizeof(*b) % 64 != 0;                  \
		for (int k = 0; k < (NV); k++)                             \
			acc[k] = (VT){0};                                  \
		if (PAIRED_##K && (NV) % 2 == 0) {                         \
			for (int64_t p = lo; p < hi; p++) {                \
				if (p + ahead < end)                       \
					PREFETCH_SPAN(b + (int64_t)col[p + ahead] * ldb + j0, (NV) * (L), tail); \
				const float v = val[p];                    \
				const BT_##K *br = b + (int64_t)col[p] * ldb + j0; \
				for (int k = 0; k < (NV); k += 2) {        \
					VT e_, o_;                         \
					LDP(VT, L, br + k * (L), e_, o_);  \
					acc[k] += v * e_;                  \
					acc[k + 1] += v * o_;              \
				}                                          \
			}                                                  \
			for (int k = 0; k < (NV); k += 2)                  \
				STP_##K(d + j0 + k * (L), L, acc[k], acc[k + 1]); \
		} else {                                                   \
			for (int64_t p = lo; p < hi; p++) {                \
				if (p + ahead < end)                       \
					PREFETCH_SPAN(b + (int64_t)col[p + ahead] * ldb + j0, (NV) * (L), tail); \
				const float v = val[p];                    \
				const BT_##K *br = b + (int64_t)col[p] * ldb + j0; \
				for (int k = 0; k < (NV); k++)             \
					acc[k] += v * LDV_##K(VT, L, br + k * (L)); \
			}                                                  \
			for (int k = 0; k < (NV); k++)                     \
				STV_##K(d + j0 + k * (L), L, acc[k]);      \
		}                                                          \
	}

/* CH is CHUNK for NV >= 1 and nothing otherwise (NV is a constant). */
#define CH(K, VT, L, NV)                                                   \
	if ((NV) >= 1)                                                     \
		CHUNK(K, VT, L, (NV) >= 1 ? (NV) : 1)

/* ROWS(K, W, VT, L, CW) computes rows [r0, r1) of width W (a constant for
 * the specialised widths) in chunks of CW columns, then CW/2, ..., down
 * to one vector VT of L floats, and the last columns (fewer than L) one
 * at a time with their sums in t. */
#define ROWS(K, W, VT, L, CW)                                              \
	do {                                                               \
		const int64_t n = (W);                                     \
		const int64_t ahead = n * (int64_t)sizeof(*b) <= 64 ? AHEAD_NARROW : AHEAD_WIDE; \
		for (int64_t i = r0; i < r1; i++) {                        \
			const int64_t lo = rowptr[i], hi = rowptr[i + 1];  \
			if (lo < 0 || hi < lo || hi > nnzcap)              \
				return i;                                  \
			for (int64_t p = lo; p < hi; p++)                  \
				if ((uint64_t)(int64_t)col[p] >= (uint64_t)ncols) \
					return i;                          \
			OT_##K *restrict d = ROWDST_##K(i);                \
			int64_t j0 = 0;                                    \
			CH(K, VT, L, (CW) / (L))                           \
			CH(K, VT, L, (CW) / (L) / 2)                       \
			CH(K, VT, L, (CW) / (L) / 4)                       \
			CH(K, VT, L, (CW) / (L) / 8)                       \
			if (j0 < n) {                                      \
				const int64_t m = n - j0;                  \
				float t[L] = {0};                          \
				for (int64_t p = lo; p < hi; p++) {        \
					if (p + ahead < end)               \
						PREFETCH_SPAN(b + (int64_t)col[p + ahead] * ldb + j0, m, 1); \
					const float v = val[p];            \
					const BT_##K *restrict br = b + (int64_t)col[p] * ldb + j0; \
					for (int64_t j = 0; j < m; j++)    \
						t[j] += v * LD1_##K(br + j); \
				}                                          \
				for (int64_t j = 0; j < m; j++)            \
					ST1_##K(d + j0 + j, t[j]);         \
			}                                                  \
			EPI_##K(i, VT, L, n);                              \
		}                                                          \
		return -1;                                                 \
	} while (0)

#define SPMM_ARGS(K)                                                       \
	OT_##K *restrict dst, int64_t ldd, const int64_t *restrict rowptr, \
	    const int32_t *restrict col, const float *restrict val,        \
	    int64_t nnzcap, int64_t ncols, const BT_##K *restrict b,       \
	    int64_t ldb, int64_t width, int64_t r0, int64_t r1,            \
	    const struct spmm_epi *restrict epi

#define SPMM_PASS dst, ldd, rowptr, col, val, nnzcap, ncols, b, ldb, width, r0, r1, epi

/* DEFINE_SPMM defines NAME, the kernel of kind K for one target: one loop
 * per specialised width and one for the rest. */
#define DEFINE_SPMM(NAME, K, ATTR, VT, L, CW)                              \
	ATTR static int64_t NAME(SPMM_ARGS(K)) {                           \
		(void)epi;                                                 \
		ROWBUF_##K                                                 \
		/* Prefetches look ahead up to the end of this range's     \
		 * entries, never past the slices. */                       \
		int64_t end = rowptr[r1];                                  \
		if (end > nnzcap)                                          \
			end = nnzcap;                                      \
		switch (width) {                                           \
		case 16:                                                   \
			ROWS(K, 16, VT, L, CW);                            \
		case 32:                                                   \
			ROWS(K, 32, VT, L, CW);                            \
		case 64:                                                   \
			ROWS(K, 64, VT, L, CW);                            \
		case 128:                                                  \
			ROWS(K, 128, VT, L, CW);                           \
		default:                                                   \
			ROWS(K, width, VT, L, CW);                         \
		}                                                          \
	}

/* DEFINE_KIND defines the kernels of kind K for every target and
 * spmm_rows_K, which runs the one isa names. */
#ifdef HAVE_X86_VARIANTS
#define DEFINE_KIND(K)                                                     \
	DEFINE_SPMM(spmm_base_##K, K, , vf4, 4, 32)                        \
	DEFINE_SPMM(spmm_avx2_##K, K, __attribute__((target("avx2"))), vf8, 8, 64) \
	DEFINE_SPMM(spmm_avx512_##K, K, __attribute__((target("avx512f"))), vf16, 16, 128) \
	static int64_t spmm_rows_##K(int isa, SPMM_ARGS(K)) {              \
		switch (resolve_isa(isa)) {                                \
		case SCALEGNN_ISA_AVX512:                                  \
			return spmm_avx512_##K(SPMM_PASS);                 \
		case SCALEGNN_ISA_AVX2:                                    \
			return spmm_avx2_##K(SPMM_PASS);                   \
		default:                                                   \
			return spmm_base_##K(SPMM_PASS);                   \
		}                                                          \
	}
#else
#define DEFINE_KIND(K)                                                     \
	DEFINE_SPMM(spmm_base_##K, K, , vf4, 4, 32)                        \
	static int64_t spmm_rows_##K(int isa, SPMM_ARGS(K)) {              \
		(void)isa;                                                 \
		return spmm_base_##K(SPMM_PASS);                           \
	}
#endif

int scalegnn_spmm_isas(void) {
	int isas = SCALEGNN_ISA_BASE;
#ifdef HAVE_X86_VARIANTS
	if (__builtin_cpu_supports("avx2"))
		isas |= SCALEGNN_ISA_AVX2;
	if (__builtin_cpu_supports("avx512f"))
		isas |= SCALEGNN_ISA_AVX512;
#endif
	return isas;
}

/* resolve_isa turns isa 0 into the widest the CPU supports. */
static int resolve_isa(int isa) {
	if (isa != 0)
		return isa;
	const int isas = scalegnn_spmm_isas();
	return isas & SCALEGNN_ISA_AVX512 ? SCALEGNN_ISA_AVX512
	    : isas & SCALEGNN_ISA_AVX2   ? SCALEGNN_ISA_AVX2
	                                 : SCALEGNN_ISA_BASE;
}

DEFINE_KIND(ff)
DEFINE_KIND(hf)
DEFINE_KIND(hh)
DEFINE_KIND(hm)

int64_t scalegnn_spmm_rows(int isa, float *dst, int64_t ldd,
                           const int64_t *rowptr, const int32_t *col,
                           const float *val, int64_t nnzcap, int64_t ncols,
                           const float *b, int64_t ldb, int64_t width,
                           int64_t r0, int64_t r1) {
	return spmm_rows_ff(isa, dst, ldd, rowptr, col, val, nnzcap, ncols, b, ldb,
	                    width, r0, r1, NULL);
}

int64_t scalegnn_spmm_bf16_masked_rows(int isa, uint16_t *out, int64_t ldo,
                                       const int64_t *rowptr, const int32_t *col,
                                       const float *val, int64_t nnzcap, int64_t ncols,
                                       const uint16_t *b, int64_t ldb, int64_t width,
                                       int64_t r0, int64_t r1, const uint64_t *keep,
                                       const uint64_t *pos, int64_t wpr, float scale) {
	const struct spmm_epi e = {out, ldo, keep, pos, wpr, scale};
	return spmm_rows_hm(isa, NULL, 0, rowptr, col, val, nnzcap, ncols, b, ldb,
	                    width, r0, r1, &e);
}

int64_t scalegnn_spmm_bf16_rows(int isa, int out_bf16, void *dst, int64_t ldd,
                                const int64_t *rowptr, const int32_t *col,
                                const float *val, int64_t nnzcap, int64_t ncols,
                                const uint16_t *b, int64_t ldb, int64_t width,
                                int64_t r0, int64_t r1) {
	if (out_bf16)
		return spmm_rows_hh(isa, (uint16_t *)dst, ldd, rowptr, col, val, nnzcap,
		                    ncols, b, ldb, width, r0, r1, NULL);
	return spmm_rows_hf(isa, (float *)dst, ldd, rowptr, col, val, nnzcap, ncols,
	                    b, ldb, width, r0, r1, NULL);
}
