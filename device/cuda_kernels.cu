// The CUDA device's own kernels, compiled at start by NVRTC for the GPU
// present (cuda_module.go) with --fmad=false and IEEE division and square
// root, so that every element-wise float operation rounds as the Go code
// it mirrors (device.Native, gcn): no fused multiply-adds, operations in
// the same order. Sums that Go runs left to right (a row's sum of
// squares, RMSNorm's dots, ScatterAddRows' repeated rows) run left to
// right here too, one thread per row or column. exp and log are CUDA's
// double-precision ones, within 1 ulp like Go's math.Exp and math.Log but
// not always equal to them: the loss agrees with the host devices'
// within a tolerance, not bit for bit (devicetest knows which devices).
//
// Conventions: every kernel is extern "C"; integer parameters are long
// long, pointers are device addresses; element-wise kernels end with
// (rows, cols), which runFlat rewrites for contiguous operands; element-wise kernels on matrices
// run on blocks of 32×8 threads, x over columns and y over rows, with
// grid-stride loops, and the bit-mask kernels give each warp one row and
// one 64-bit word at a time, built with two ballots.

typedef unsigned long long u64;
typedef long long i64;
typedef unsigned int u32;
typedef unsigned short u16;
typedef unsigned char u8;

#define ROWS_LOOP(i) for (i64 i = (i64)blockIdx.y * blockDim.y + threadIdx.y; i < rows; i += (i64)gridDim.y * blockDim.y)
#define COLS_LOOP(j) for (i64 j = (i64)blockIdx.x * blockDim.x + threadIdx.x; j < cols; j += (i64)gridDim.x * blockDim.x)
#define FLAT_LOOP(k, n) for (i64 k = (i64)blockIdx.x * blockDim.x + threadIdx.x; k < (n); k += (i64)gridDim.x * blockDim.x)
// A warp per row (y), a 64-column word per x block.
#define WORDS_LOOP(w) for (i64 w = blockIdx.x; w < wpr; w += gridDim.x)

// gomax is Go's max for float32: NaN wins, and max(-0, +0) is +0.
__device__ __forceinline__ float gomax(float a, float b) {
	if (a != a) return a;
	if (b != b) return b;
	if (a > b) return a;
	if (b > a) return b;
	return a == 0.0f ? a + b : a; // -0 + +0 = +0
}

// The counter-based draws of internal/counter.
__device__ __forceinline__ u64 mix(u64 z) {
	z ^= z >> 30;
	z *= 0xbf58476d1ce4e5b9ULL;
	z ^= z >> 27;
	z *= 0x94d049bb133111ebULL;
	z ^= z >> 31;
	return z;
}

__device__ __forceinline__ u64 hash4(u64 a, u64 b, u64 c, u64 d) {
	u64 h = mix(a + 0x9e3779b97f4a7c15ULL);
	h = mix(h ^ (b + 0x632be59bd9b4e019ULL));
	h = mix(h ^ (c + 0x85ebca77c2b2ae63ULL));
	return mix(h ^ (d + 0xc2b2ae3d27d4eb4fULL));
}

// rowkey is counter.DropoutKey; sitebits is StreamDropout<<32 | site,
// computed on the host. The vertex is a signed int32 widened as Go does.
__device__ __forceinline__ u64 rowkey(u64 seed, u64 sitebits, u64 step, int vertex) {
	return hash4(seed, sitebits, step, (u64)(i64)vertex);
}

__device__ __forceinline__ u64 keep01(u64 key, i64 col, u64 th) {
	u64 draw = mix(key + (u64)col * 0x9e3779b97f4a7c15ULL) >> 11;
	return 1 - ((draw - th) >> 63);
}

extern "C" __global__ void k_fill(float *d, i64 ldd, float v, i64 rows, i64 cols) {
	ROWS_LOOP(i) COLS_LOOP(j) d[i * ldd + j] = v;
}

extern "C" __global__ void k_copy(float *d, i64 ldd, const float *s, i64 lds, i64 rows, i64 cols) {
	ROWS_LOOP(i) COLS_LOOP(j) d[i * ldd + j] = s[i * lds + j];
}

extern "C" __global__ void k_add(float *d, i64 ldd, const float *a, i64 lda, const float *b, i64 ldb, i64 rows, i64 cols) {
	ROWS_LOOP(i) COLS_LOOP(j) d[i * ldd + j] = a[i * lda + j] + b[i * ldb + j];
}

extern "C" __global__ void k_scale(float *d, i64 ldd, float alpha, const float *a, i64 lda, i64 rows, i64 cols) {
	ROWS_LOOP(i) COLS_LOOP(j) d[i * ldd + j] = alpha * a[i * lda + j];
}

extern "C" __global__ void k_relu(float *d, i64 ldd, const float *a, i64 lda, i64 rows, i64 cols) {
	ROWS_LOOP(i) COLS_LOOP(j) d[i * ldd + j] = gomax(a[i * lda + j], 0.0f);
}

extern "C" __global__ void k_relu_backward(float *d, i64 ldd, const float *g, i64 ldg, const float *act, i64 lda, i64 rows, i64 cols) {
	ROWS_LOOP(i) COLS_LOOP(j) {
		float gv = g[i * ldg + j];
		d[i * ldd + j] = act[i * lda + j] > 0 ? gv : 0.0f;
	}
}

// k_relu_record: blocks of 32×8, one warp per (row, word).
extern "C" __global__ void k_relu_record(float *d, i64 ldd, const float *a, i64 lda, u64 *pos, i64 wpr, i64 rows, i64 cols) {
	u32 lane = threadIdx.x;
	ROWS_LOOP(i) WORDS_LOOP(w) {
		u64 word = 0;
		for (int half = 0; half < 2; half++) {
			i64 j = w * 64 + half * 32 + lane;
			bool p = false;
			if (j < cols) {
				float v = gomax(a[i * lda + j], 0.0f);
				d[i * ldd + j] = v;
				p = v > 0;
			}
			u64 bits = __ballot_sync(0xffffffffu, p);
			word |= bits << (32 * half);
		}
		if (lane == 0) pos[i * wpr + w] = word;
	}
}

extern "C" __global__ void k_relu_backward_bits(float *d, i64 ldd, const float *g, i64 ldg, const u64 *pos, i64 wpr, i64 rows, i64 cols) {
	ROWS_LOOP(i) COLS_LOOP(j) {
		float gv = g[i * ldg + j];
		d[i * ldd + j] = (pos[i * wpr + (j >> 6)] >> (j & 63)) & 1 ? gv : 0.0f;
	}
}

// k_dropout: zeros become +0 without a draw, as device.Native does.
extern "C" __global__ void k_dropout(float *d, i64 ldd, const float *s, i64 lds, const int *verts, u64 seed, u64 sitebits,
                                     u64 step, u64 th, float scale, i64 col0, i64 rows, i64 cols) {
	ROWS_LOOP(i) {
		u64 key = rowkey(seed, sitebits, step, verts[i]);
		COLS_LOOP(j) {
			float v = s[i * lds + j];
			float o = 0.0f;
			if (v != 0) o = v * (keep01(key, col0 + j, th) ? scale : 0.0f);
			d[i * ldd + j] = o;
		}
	}
}

// k_dropout_record: ReLU first when relu is set; every entry is drawn.
extern "C" __global__ void k_dropout_record(float *d, i64 ldd, const float *s, i64 lds, u64 *keep, i64 wpr, const int *verts,
                                            u64 seed, u64 sitebits, u64 step, u64 th, float scale, i64 col0, i64 relu,
                                            i64 rows, i64 cols) {
	u32 lane = threadIdx.x;
	ROWS_LOOP(i) {
		u64 key = rowkey(seed, sitebits, step, verts[i]);
		WORDS_LOOP(w) {
			u64 word = 0;
			for (int half = 0; half < 2; half++) {
				i64 j = w * 64 + half * 32 + lane;
				u64 k = 0;
				if (j < cols) {
					float v = s[i * lds + j];
					if (relu) v = gomax(v, 0.0f);
					k = keep01(key, col0 + j, th);
					d[i * ldd + j] = v * (k ? scale : 0.0f);
				}
				word |= (u64)__ballot_sync(0xffffffffu, k != 0) << (32 * half);
			}
			if (lane == 0) keep[i * wpr + w] = word;
		}
	}
}

extern "C" __global__ void k_apply_mask(float *d, i64 ldd, const float *s, i64 lds, const u64 *keep, i64 wpr, float scale,
                                        i64 rows, i64 cols) {
	ROWS_LOOP(i) COLS_LOOP(j) {
		float x = s[i * lds + j];
		d[i * ldd + j] = x * ((keep[i * wpr + (j >> 6)] >> (j & 63)) & 1 ? scale : 0.0f);
	}
}

// Row sums left to right, a thread per row (flat launch).
extern "C" __global__ void k_sum_squares(float *ss, const float *z, i64 ldz, i64 rows, i64 cols) {
	FLAT_LOOP(i, rows) {
		const float *r = z + i * ldz;
		float s = 0;
		for (i64 j = 0; j < cols; j++) {
			float v = r[j];
			s += v * v;
		}
		ss[i] = s;
	}
}

extern "C" __global__ void k_rmsnorm_apply(float *d, i64 ldd, float *u, i64 ldu, float *rms, const float *z, i64 ldz,
                                           const float *ss, const float *scale, double n, double eps, i64 relu,
                                           i64 rows, i64 cols) {
	ROWS_LOOP(i) {
		float r = (float)sqrt((double)ss[i] / n + eps);
		if (blockIdx.x == 0 && threadIdx.x == 0) rms[i] = r;
		COLS_LOOP(j) {
			float uu = z[i * ldz + j] / r;
			u[i * ldu + j] = uu;
			float v = uu * scale[j];
			if (relu) v = gomax(v, 0.0f);
			d[i * ldd + j] = v;
		}
	}
}

// gScale[j] = Σ_rows da·u in row order: a thread per column.
extern "C" __global__ void k_rmsnorm_gscale(float *g, const float *da, i64 ldda, const float *u, i64 ldu, i64 rows, i64 cols) {
	FLAT_LOOP(j, cols) {
		float s = 0;
		for (i64 i = 0; i < rows; i++) s += da[i * ldda + j] * u[i * ldu + j];
		g[j] = s;
	}
}

// dot[i] = Σ_j (da·scale)·u left to right: a thread per row.
extern "C" __global__ void k_rmsnorm_dot(float *dot, const float *da, i64 ldda, const float *u, i64 ldu, const float *scale,
                                         i64 rows, i64 cols) {
	FLAT_LOOP(i, rows) {
		float s = 0;
		for (i64 j = 0; j < cols; j++) s += da[i * ldda + j] * scale[j] * u[i * ldu + j];
		dot[i] = s;
	}
}

extern "C" __global__ void k_rmsnorm_finish(float *dz, i64 lddz, const float *da, i64 ldda, const float *u, i64 ldu,
                                            const float *scale, const float *dot, const float *rms, float inv, i64 rows, i64 cols) {
	ROWS_LOOP(i) {
		float dt = dot[i], r = rms[i];
		COLS_LOOP(j) dz[i * lddz + j] = (da[i * ldda + j] * scale[j] - u[i * ldu + j] * dt * inv) / r;
	}
}

extern "C" __global__ void k_row_max(float *mx, const float *x, i64 ldx, const u8 *train, i64 rows, i64 cols) {
	FLAT_LOOP(i, rows) {
		float m = __int_as_float(0xff800000); // -Inf
		if (train[i]) {
			const float *r = x + i * ldx;
			for (i64 j = 0; j < cols; j++) m = gomax(m, r[j]);
		}
		mx[i] = m;
	}
}

extern "C" __global__ void k_softmax_sums(float *sums, const float *x, i64 ldx, const float *mx, const int *labels,
                                          const u8 *train, i64 c0, i64 rows, i64 cols) {
	FLAT_LOOP(i, rows) {
		if (!train[i]) {
			sums[i] = 0, sums[rows + i] = 0;
			continue;
		}
		const float *r = x + i * ldx;
		float m = mx[i], se = 0;
		for (i64 j = 0; j < cols; j++) se += (float)exp((double)(r[j] - m));
		sums[i] = se;
		i64 lab = labels[i];
		sums[rows + i] = (lab >= c0 && lab < c0 + cols) ? r[lab - c0] : 0.0f;
	}
}

extern "C" __global__ void k_softmax_grad(float *d, i64 ldd, const float *x, i64 ldx, const float *mx, const float *sums,
                                          const int *labels, const u8 *train, i64 c0, i64 rows, i64 cols) {
	ROWS_LOOP(i) {
		bool t = train[i] != 0;
		float se = sums[i], m = mx[i];
		i64 lab = (i64)labels[i] - c0;
		COLS_LOOP(j) {
			float o = 0.0f;
			if (t) {
				o = (float)exp((double)(x[i * ldx + j] - m)) / se;
				if (j == lab) o = o - 1.0f;
			}
			d[i * ldd + j] = o;
		}
	}
}

// k_loss_terms writes each training row's loss term (0 for the others)
// and its flag, for the fixed-order reduction k_sum2.
extern "C" __global__ void k_loss_terms(double *terms, const float *mx, const float *sums, const u8 *train, i64 rows) {
	FLAT_LOOP(i, rows) {
		double t = 0, c = 0;
		if (train[i]) {
			t = log((double)sums[i]) + (double)mx[i] - (double)sums[rows + i];
			c = 1;
		}
		terms[i] = t;
		terms[rows + i] = c;
	}
}

// k_sum2 sums terms[0:n] and terms[n:2n] in one block of 256 threads in
// a fixed order (strided partials, then a tree), so the result does not
// depend on scheduling: replicas agree bit for bit.
extern "C" __global__ void k_sum2(double *out, const double *terms, i64 n) {
	__shared__ double s0[256], s1[256];
	u32 t = threadIdx.x;
	double a = 0, b = 0;
	for (i64 i = t; i < n; i += 256) {
		a += terms[i];
		b += terms[n + i];
	}
	s0[t] = a, s1[t] = b;
	__syncthreads();
	for (u32 h = 128; h > 0; h >>= 1) {
		if (t < h) s0[t] += s0[t + h], s1[t] += s1[t + h];
		__syncthreads();
	}
	if (t == 0) out[0] = s0[0], out[1] = s1[0];
}

extern "C" __global__ void k_argmax(float *best, i64 *arg, const float *x, i64 ldx, i64 c0, i64 rows, i64 cols) {
	FLAT_LOOP(i, rows) {
		float b = __int_as_float(0xff800000);
		i64 a = 0x7fffffffffffffffLL;
		const float *r = x + i * ldx;
		for (i64 j = 0; j < cols; j++) {
			float v = r[j];
			if (v > b) b = v, a = c0 + j;
		}
		best[i] = b, arg[i] = a;
	}
}

extern "C" __global__ void k_argmax_settle(i64 *arg, const float *best, const float *mx, i64 n) {
	FLAT_LOOP(i, n) if (best[i] != mx[i]) arg[i] = 0x7fffffffffffffffLL;
}

// k_count_hits adds into hits[6] (zeroed first) with integer atomics,
// whose sums do not depend on order.
extern "C" __global__ void k_count_hits(u64 *hits, const i64 *arg, const int *labels, const u8 *m0, const u8 *m1, const u8 *m2, i64 n) {
	u64 h[6] = {0, 0, 0, 0, 0, 0};
	FLAT_LOOP(i, n) {
		bool hit = arg[i] == (i64)labels[i];
		if (m0[i]) h[3]++, h[0] += hit;
		if (m1[i]) h[4]++, h[1] += hit;
		if (m2[i]) h[5]++, h[2] += hit;
	}
	for (int k = 0; k < 6; k++)
		if (h[k]) atomicAdd(&hits[k], h[k]);
}

// k_optim is device.optimUpdate, in float64, operation for operation.
extern "C" __global__ void k_optim(float *w, const float *g, float *m, float *v, i64 n, i64 kind, double lr, double wd,
                                   double b1, double b2, double epsilon, double corr1, double corr2) {
	FLAT_LOOP(k, n) {
		double ww = w[k], gg = g[k], mm = m[k], vv = v[k];
		if (kind == 0) { // SGD
			w[k] = (float)(ww - lr * (gg + wd * ww));
			continue;
		}
		if (kind == 1) gg += wd * ww; // Adam
		mm = b1 * mm + (1 - b1) * gg;
		vv = b2 * vv + (1 - b2) * gg * gg;
		double mh = mm / corr1;
		double vh = vv / corr2;
		if (kind == 2) ww -= lr * wd * ww; // AdamW
		w[k] = (float)(ww - lr * mh / (sqrt(vh) + epsilon));
		m[k] = (float)mm;
		v[k] = (float)vv;
	}
}

// to_bf16 is spmm.ToBF16: nearest, ties to even; a NaN stays a NaN.
__device__ __forceinline__ u16 to_bf16(float f) {
	u32 u = __float_as_uint(f);
	if ((u & 0x7fffffffu) > 0x7f800000u)
		return (u16)(u >> 16) | 0x40;
	u += 0x7fffu + ((u >> 16) & 1);
	return (u16)(u >> 16);
}

__device__ __forceinline__ float from_bf16(u16 h) { return __uint_as_float((u32)h << 16); }

extern "C" __global__ void k_pack_bf16(u16 *d, const float *s, i64 n) {
	FLAT_LOOP(k, n) d[k] = to_bf16(s[k]);
}

extern "C" __global__ void k_unpack_bf16(float *d, const u16 *s, i64 n) {
	FLAT_LOOP(k, n) d[k] = from_bf16(s[k]);
}

extern "C" __global__ void k_pack_bf16_mat(u16 *d, i64 ldd, const float *s, i64 lds, i64 rows, i64 cols) {
	ROWS_LOOP(i) COLS_LOOP(j) d[i * ldd + j] = to_bf16(s[i * lds + j]);
}

extern "C" __global__ void k_unpack_bf16_mat(float *d, i64 ldd, const u16 *s, i64 lds, i64 rows, i64 cols) {
	ROWS_LOOP(i) COLS_LOOP(j) d[i * ldd + j] = from_bf16(s[i * lds + j]);
}

extern "C" __global__ void k_relu_backward_bits_bf16(u16 *d, i64 ldd, const u16 *g, i64 ldg, const u64 *pos, i64 wpr, i64 rows, i64 cols) {
	ROWS_LOOP(i) COLS_LOOP(j) {
		u16 gv = g[i * ldg + j];
		d[i * ldd + j] = (pos[i * wpr + (j >> 6)] >> (j & 63)) & 1 ? gv : (u16)0;
	}
}

extern "C" __global__ void k_gather_rows_bf16(u16 *d, i64 ldd, const u16 *s, i64 lds, const int *idx, i64 rows, i64 cols) {
	ROWS_LOOP(i) {
		i64 r = idx[i];
		COLS_LOOP(j) d[i * ldd + j] = s[r * lds + j];
	}
}

extern "C" __global__ void k_fill_bf16(u16 *d, i64 ldd, u16 v, i64 rows, i64 cols) {
	ROWS_LOOP(i) COLS_LOOP(j) d[i * ldd + j] = v;
}

extern "C" __global__ void k_gather_rows(float *d, i64 ldd, const float *s, i64 lds, const int *idx, i64 rows, i64 cols) {
	ROWS_LOOP(i) {
		i64 r = idx[i];
		COLS_LOOP(j) d[i * ldd + j] = s[r * lds + j];
	}
}

// k_scatter_add_rows: a thread per column walks the rows in order, so
// repeated indices sum in that order, as on the host.
extern "C" __global__ void k_scatter_add_rows(float *d, i64 ldd, const float *s, i64 lds, const int *idx, i64 rows, i64 cols) {
	FLAT_LOOP(j, cols) {
		for (i64 i = 0; i < rows; i++) {
			i64 r = idx[i];
			d[r * ldd + j] += s[i * lds + j];
		}
	}
}

extern "C" __global__ void k_gather_i32(int *d, const int *s, const int *idx, i64 n) {
	FLAT_LOOP(k, n) d[k] = s[idx[k]];
}

extern "C" __global__ void k_gather_u8(u8 *d, const u8 *s, const int *idx, i64 n) {
	FLAT_LOOP(k, n) d[k] = s[idx[k]];
}

// ---- Graph attention (device/gat.go; the host's are gat_host.go) ----
//
// Per-edge arrays are entry-major (entry p, head k at p·K+k); the CSR has
// 32-bit row pointers and column indices. Every sum runs in the host's
// order, one thread per result, so the results are the host devices' bit
// for bit apart from exp and expm1 (CUDA's double ones, as in the loss)
// and HeadDotGrad, whose sum over rows is split into fixed chunks of
// GAT_CHUNK rows and then summed chunk by chunk: deterministic, but not
// in row order. No atomics anywhere: the same inputs give the same bits.
// The row reductions (a thread per row and head, entries in order) are
// simple rather than balanced: a very long row is one thread's loop.

#define GAT_CHUNK 256

// A thread per (row, head): n = rows·K.
#define ROWHEAD_LOOP(ik, n) FLAT_LOOP(ik, n)
// A warp per row (y of the 32×8 block, x blocks striding), lanes over x.
#define WARP_ROWS_LOOP(i) for (i64 i = (i64)blockIdx.x * blockDim.y + threadIdx.y; i < rows; i += (i64)gridDim.x * blockDim.y)

// s[i·K+k] = Σ_c y[i, k·F+c]·att[k·F+c], c in order.
extern "C" __global__ void k_head_dot(float *s, const float *y, i64 ldy, const float *att, i64 heads, i64 f, i64 rows) {
	ROWHEAD_LOOP(ik, rows * heads) {
		i64 i = ik / heads, k = ik % heads;
		const float *r = y + i * ldy + k * f;
		const float *a = att + k * f;
		float acc = 0;
		for (i64 c = 0; c < f; c++) acc += r[c] * a[c];
		s[ik] = acc;
	}
}

// dy[i, c] += ds[i·K + c/F]·att[c].
extern "C" __global__ void k_head_dot_backward(float *dy, i64 lddy, const float *ds, const float *att, i64 heads, i64 f,
                                               i64 rows, i64 cols) {
	ROWS_LOOP(i) COLS_LOOP(j) dy[i * lddy + j] += ds[i * heads + j / f] * att[j];
}

// HeadDotGrad's first stage: part[b·cols + c] = Σ ds[i·K + c/F]·y[i, c]
// over the rows of chunk b in order; ROWS_LOOP runs over chunks.
extern "C" __global__ void k_head_dot_grad_part(float *part, const float *ds, const float *y, i64 ldy, i64 heads, i64 f,
                                                i64 nrows, i64 rows, i64 cols) {
	ROWS_LOOP(b) COLS_LOOP(j) {
		i64 i0 = b * GAT_CHUNK, i1 = i0 + GAT_CHUNK < nrows ? i0 + GAT_CHUNK : nrows;
		i64 k = j / f;
		float acc = 0;
		for (i64 i = i0; i < i1; i++) acc += ds[i * heads + k] * y[i * ldy + j];
		part[b * cols + j] = acc;
	}
}

// HeadDotGrad's second stage: datt[c] = Σ_b part[b·cols + c], chunks in
// order (0 without rows).
extern "C" __global__ void k_head_dot_grad_sum(float *datt, const float *part, i64 nchunks, i64 cols) {
	FLAT_LOOP(j, cols) {
		float acc = 0;
		for (i64 b = 0; b < nchunks; b++) acc += part[b * cols + j];
		datt[j] = acc;
	}
}

// e = LeakyReLU(s_i + t_j) per entry and head, mx its row maximum (−Inf
// for an empty row; a later equal value, ±0 or NaN does not replace it).
extern "C" __global__ void k_gat_scores(float *e, float *mx, const int *rp, const int *ci, const float *s, const float *t,
                                        i64 heads, float slope, i64 rows) {
	ROWHEAD_LOOP(ik, rows * heads) {
		i64 i = ik / heads, k = ik % heads;
		float si = s[ik], m = __int_as_float(0xff800000);
		for (i64 p = rp[i], p1 = rp[i + 1]; p < p1; p++) {
			float x = si + t[(i64)ci[p] * heads + k];
			float v = x > 0 ? x : slope * x;
			e[p * heads + k] = v;
			if (v > m) m = v;
		}
		mx[ik] = m;
	}
}

// e = exp(e − mx) and its row sums, entries in order.
extern "C" __global__ void k_gat_exp_sum(float *e, float *sums, const int *rp, const float *mx, i64 heads, i64 rows) {
	ROWHEAD_LOOP(ik, rows * heads) {
		i64 i = ik / heads, k = ik % heads;
		float m = mx[ik], acc = 0;
		for (i64 p = rp[i], p1 = rp[i + 1]; p < p1; p++) {
			float v = (float)exp((double)(e[p * heads + k] - m));
			e[p * heads + k] = v;
			acc += v;
		}
		sums[ik] = acc;
	}
}

// alpha = e/sums (alpha may be e) and, with dropout (drop != 0), the
// dropped coefficients: kept by the draw of (row vertex, column vertex·K
// + k), scaled. A warp per row, lanes over the row's entries and heads.
extern "C" __global__ void k_gat_normalize(float *alpha, float *drop, const int *rp, const int *ci, const float *e,
                                           const float *sums, i64 heads, const int *rowverts, const int *colverts,
                                           u64 seed, u64 sitebits, u64 step, u64 th, float scale, i64 dodrop, i64 rows) {
	WARP_ROWS_LOOP(i) {
		u64 key = dodrop ? rowkey(seed, sitebits, step, rowverts[i]) : 0;
		for (i64 q = (i64)rp[i] * heads + threadIdx.x, q1 = (i64)rp[i + 1] * heads; q < q1; q += 32) {
			i64 p = q / heads, k = q % heads;
			float a = e[q] / sums[i * heads + k];
			alpha[q] = a;
			if (dodrop) drop[q] = a * (keep01(key, (i64)colverts[ci[p]] * heads + k, th) ? scale : 0.0f);
		}
	}
}

// dst[i, c] = Σ_p alpha[q(p)·K + c/F]·b[j, c] over row i's entries in
// order, q(p) = perm[p] (perm != 0) or p: a warp per row, lanes over c.
extern "C" __global__ void k_spmm_heads(float *d, i64 ldd, const int *rp, const int *ci, const float *alpha, const int *perm,
                                        const float *b, i64 ldb, i64 heads, i64 f, i64 rows, i64 cols) {
	WARP_ROWS_LOOP(i) {
		i64 p0 = rp[i], p1 = rp[i + 1];
		for (i64 c = threadIdx.x; c < cols; c += 32) {
			i64 k = c / f;
			float acc = 0;
			for (i64 p = p0; p < p1; p++) {
				i64 q = perm ? (i64)perm[p] : p;
				acc += alpha[q * heads + k] * b[(i64)ci[p] * ldb + c];
			}
			d[i * ldd + c] = acc;
		}
	}
}

// d[p·K+k] = Σ_c x[i, k·F+c]·y[j, k·F+c], c in order: a warp per row,
// lanes over the row's entries and heads.
extern "C" __global__ void k_sddmm_heads(float *d, const int *rp, const int *ci, const float *x, i64 ldx, const float *y,
                                         i64 ldy, i64 heads, i64 f, i64 rows) {
	WARP_ROWS_LOOP(i) {
		for (i64 q = (i64)rp[i] * heads + threadIdx.x, q1 = (i64)rp[i + 1] * heads; q < q1; q += 32) {
			i64 p = q / heads, k = q % heads;
			const float *xr = x + i * ldx + k * f;
			const float *yr = y + (i64)ci[p] * ldy + k * f;
			float acc = 0;
			for (i64 c = 0; c < f; c++) acc += xr[c] * yr[c];
			d[q] = acc;
		}
	}
}

// dalpha unmasked in place (with dropout), then r = Σ alpha·dalpha over
// the row, entries in order.
extern "C" __global__ void k_gat_row_dot(float *r, float *dalpha, const int *rp, const int *ci, const float *alpha, i64 heads,
                                         const int *rowverts, const int *colverts, u64 seed, u64 sitebits, u64 step, u64 th,
                                         float scale, i64 dodrop, i64 rows) {
	ROWHEAD_LOOP(ik, rows * heads) {
		i64 i = ik / heads, k = ik % heads;
		u64 key = dodrop ? rowkey(seed, sitebits, step, rowverts[i]) : 0;
		float acc = 0;
		for (i64 p = rp[i], p1 = rp[i + 1]; p < p1; p++) {
			i64 q = p * heads + k;
			float d = dalpha[q];
			if (dodrop) {
				d = d * (keep01(key, (i64)colverts[ci[p]] * heads + k, th) ? scale : 0.0f);
				dalpha[q] = d;
			}
			acc += alpha[q] * d;
		}
		r[ik] = acc;
	}
}

// dz = alpha·(dalpha − r), times slope where s + t <= 0 (or NaN), and ds
// its row sums, entries in order. dz may be dalpha.
extern "C" __global__ void k_gat_logit_grad(float *dz, float *ds, const int *rp, const int *ci, const float *alpha,
                                            const float *dalpha, const float *r, const float *s, const float *t, i64 heads,
                                            float slope, i64 rows) {
	ROWHEAD_LOOP(ik, rows * heads) {
		i64 i = ik / heads, k = ik % heads;
		float ri = r[ik], si = s[ik], acc = 0;
		for (i64 p = rp[i], p1 = rp[i + 1]; p < p1; p++) {
			i64 q = p * heads + k;
			float v = alpha[q] * (dalpha[q] - ri);
			if (!(si + t[(i64)ci[p] * heads + k] > 0)) v = v * slope;
			dz[q] = v;
			acc += v;
		}
		ds[ik] = acc;
	}
}

// dst[i·K+k] = Σ_p vals[q(p)·K+k], entries in order, q as k_spmm_heads.
extern "C" __global__ void k_edge_sums(float *dst, const int *rp, const float *vals, const int *perm, i64 heads, i64 rows) {
	ROWHEAD_LOOP(ik, rows * heads) {
		i64 i = ik / heads, k = ik % heads;
		float acc = 0;
		for (i64 p = rp[i], p1 = rp[i + 1]; p < p1; p++) {
			i64 q = perm ? (i64)perm[p] : p;
			acc += vals[q * heads + k];
		}
		dst[ik] = acc;
	}
}

// ELU with CUDA's double expm1 rounded once, as the host rounds Go's.
extern "C" __global__ void k_elu(float *d, i64 ldd, const float *a, i64 lda, i64 rows, i64 cols) {
	ROWS_LOOP(i) COLS_LOOP(j) {
		float v = a[i * lda + j];
		d[i * ldd + j] = v > 0 ? v : (float)expm1((double)v);
	}
}

extern "C" __global__ void k_elu_backward(float *d, i64 ldd, const float *g, i64 ldg, const float *out, i64 ldo, i64 rows, i64 cols) {
	ROWS_LOOP(i) COLS_LOOP(j) {
		float o = out[i * ldo + j], gv = g[i * ldg + j];
		d[i * ldd + j] = o > 0 ? gv : gv * (o + 1.0f);
	}
}

// d[i, c] = (Σ_k s[i, k·F+c], heads in order)·inv, inv = 1/K in float32.
extern "C" __global__ void k_head_mean(float *d, i64 ldd, const float *s, i64 lds, i64 heads, float inv, i64 rows, i64 cols) {
	ROWS_LOOP(i) COLS_LOOP(j) {
		float acc = 0;
		for (i64 k = 0; k < heads; k++) acc += s[i * lds + k * cols + j];
		d[i * ldd + j] = acc * inv;
	}
}

// d[i, k·F+c] = g[i, c]·inv; cols = K·F.
extern "C" __global__ void k_head_mean_backward(float *d, i64 ldd, const float *g, i64 ldg, i64 f, float inv, i64 rows, i64 cols) {
	ROWS_LOOP(i) COLS_LOOP(j) d[i * ldd + j] = g[i * ldg + j % f] * inv;
}

// The row reductions above again, a warp per row, for K dividing 32
// (device/cuda_gat.go picks them): lane l walks the row's (entry, head)
// pairs q = p·K + k with q ≡ l (mod 32), all of head l mod K, and the
// lanes of a head then combine in a fixed xor tree. A row of 10⁴ entries
// (R-MAT's hubs) is then 32 lanes' work instead of one thread's; the sums
// are deterministic but not in the host's order.
__device__ __forceinline__ float warp_head_sum(float v, i64 heads) {
	for (int off = 16; off >= heads; off >>= 1) v += __shfl_xor_sync(0xffffffffu, v, off);
	return v;
}

// The maximum as the host takes it: a NaN never replaces a number.
__device__ __forceinline__ float warp_head_max(float v, i64 heads) {
	for (int off = 16; off >= heads; off >>= 1) {
		float o = __shfl_xor_sync(0xffffffffu, v, off);
		if (o > v) v = o;
	}
	return v;
}

#define WARP_ROW_PAIRS(q) for (i64 q = (i64)rp[i] * heads + threadIdx.x, q##1 = (i64)rp[i + 1] * heads; q < q##1; q += 32)

extern "C" __global__ void k_gat_scores_w(float *e, float *mx, const int *rp, const int *ci, const float *s, const float *t,
                                          i64 heads, float slope, i64 rows) {
	WARP_ROWS_LOOP(i) {
		i64 k = threadIdx.x % heads;
		float si = s[i * heads + k], m = __int_as_float(0xff800000);
		WARP_ROW_PAIRS(q) {
			float x = si + t[(i64)ci[q / heads] * heads + k];
			float v = x > 0 ? x : slope * x;
			e[q] = v;
			if (v > m) m = v;
		}
		m = warp_head_max(m, heads);
		if (threadIdx.x < heads) mx[i * heads + threadIdx.x] = m;
	}
}

extern "C" __global__ void k_gat_exp_sum_w(float *e, float *sums, const int *rp, const float *mx, i64 heads, i64 rows) {
	WARP_ROWS_LOOP(i) {
		float m = mx[i * heads + threadIdx.x % heads], acc = 0;
		WARP_ROW_PAIRS(q) {
			float v = (float)exp((double)(e[q] - m));
			e[q] = v;
			acc += v;
		}
		acc = warp_head_sum(acc, heads);
		if (threadIdx.x < heads) sums[i * heads + threadIdx.x] = acc;
	}
}

extern "C" __global__ void k_gat_row_dot_w(float *r, float *dalpha, const int *rp, const int *ci, const float *alpha, i64 heads,
                                           const int *rowverts, const int *colverts, u64 seed, u64 sitebits, u64 step, u64 th,
                                           float scale, i64 dodrop, i64 rows) {
	WARP_ROWS_LOOP(i) {
		i64 k = threadIdx.x % heads;
		u64 key = dodrop ? rowkey(seed, sitebits, step, rowverts[i]) : 0;
		float acc = 0;
		WARP_ROW_PAIRS(q) {
			float d = dalpha[q];
			if (dodrop) {
				d = d * (keep01(key, (i64)colverts[ci[q / heads]] * heads + k, th) ? scale : 0.0f);
				dalpha[q] = d;
			}
			acc += alpha[q] * d;
		}
		acc = warp_head_sum(acc, heads);
		if (threadIdx.x < heads) r[i * heads + threadIdx.x] = acc;
	}
}

extern "C" __global__ void k_gat_logit_grad_w(float *dz, float *ds, const int *rp, const int *ci, const float *alpha,
                                              const float *dalpha, const float *r, const float *s, const float *t, i64 heads,
                                              float slope, i64 rows) {
	WARP_ROWS_LOOP(i) {
		i64 k = threadIdx.x % heads;
		float ri = r[i * heads + k], si = s[i * heads + k], acc = 0;
		WARP_ROW_PAIRS(q) {
			float v = alpha[q] * (dalpha[q] - ri);
			if (!(si + t[(i64)ci[q / heads] * heads + k] > 0)) v = v * slope;
			dz[q] = v;
			acc += v;
		}
		acc = warp_head_sum(acc, heads);
		if (threadIdx.x < heads) ds[i * heads + threadIdx.x] = acc;
	}
}

extern "C" __global__ void k_edge_sums_w(float *dst, const int *rp, const float *vals, const int *perm, i64 heads, i64 rows) {
	WARP_ROWS_LOOP(i) {
		i64 k = threadIdx.x % heads;
		float acc = 0;
		WARP_ROW_PAIRS(q) {
			i64 p = q / heads;
			i64 src = perm ? (i64)perm[p] : p;
			acc += vals[src * heads + k];
		}
		acc = warp_head_sum(acc, heads);
		if (threadIdx.x < heads) dst[i * heads + threadIdx.x] = acc;
	}
}
