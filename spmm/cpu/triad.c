/* STREAM's triad, the yardstick of the SpMM bandwidth benchmark
 * (bandwidth_test.go): the same compiler and flags as the kernel it is
 * compared with, so the ratio measures the kernel, not the build. */
#include "kernels.h"

void scalegnn_triad(float *restrict a, const float *restrict b,
                    const float *restrict c, float s, int64_t lo, int64_t hi) {
	for (int64_t i = lo; i < hi; i++)
		a[i] = b[i] + s * c[i];
}
