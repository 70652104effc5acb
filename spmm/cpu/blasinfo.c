//go:build !noblas

/* OpenBLAS extensions, declared weak so that the package also links against
 * a CBLAS without them (netlib, BLIS, MKL): there the symbols resolve to
 * NULL and the functions below report "unavailable". This file must not
 * include cblas.h, whose OpenBLAS version declares them strong. */
#include <stddef.h>

#include "kernels.h"

extern void openblas_set_num_threads(int) __attribute__((weak));
extern int openblas_get_num_threads(void) __attribute__((weak));
extern char *openblas_get_config(void) __attribute__((weak));
extern char *openblas_get_corename(void) __attribute__((weak));

int scalegnn_blas_set_threads(int n) {
	if (openblas_set_num_threads == NULL)
		return 0;
	openblas_set_num_threads(n);
	return 1;
}

int scalegnn_blas_threads(void) {
	return openblas_get_num_threads != NULL ? openblas_get_num_threads() : 0;
}

const char *scalegnn_blas_config(void) {
	return openblas_get_config != NULL ? openblas_get_config() : NULL;
}

const char *scalegnn_blas_corename(void) {
	return openblas_get_corename != NULL ? openblas_get_corename() : NULL;
}
