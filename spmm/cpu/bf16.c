/* Widening bfloat16 to float32 for the GEMM that has no bfloat16 BLAS
 * (gemm_bf16.go): exact, a 16-bit shift of each element. */
#include <string.h>

#include "kernels.h"

void scalegnn_bf16_widen(float *restrict d, int64_t ldd, const uint16_t *restrict s,
                         int64_t lds, int64_t rows, int64_t cols) {
	for (int64_t i = 0; i < rows; i++) {
		float *restrict dr = d + i * ldd;
		const uint16_t *restrict sr = s + i * lds;
		for (int64_t j = 0; j < cols; j++) {
			const uint32_t u = (uint32_t)sr[j] << 16;
			memcpy(dr + j, &u, sizeof u);
		}
	}
}
