/* Hand-written prototypes of the CUDA driver API, cuBLAS, cuSPARSE and
 * NVRTC functions scalegnn calls, with opaque handle types, so this
 * package builds without CUDA headers. Every function is reached through
 * a table filled by dlopen/dlsym at run time (shim.c); nothing is linked.
 * The values of the few enums used are those of CUDA 12/13's headers
 * (cuda.h, cublas_api.h, cusparse.h, library_types.h), cited beside them. */
#ifndef SCALEGNN_CUDA_SHIM_H
#define SCALEGNN_CUDA_SHIM_H

#include <stddef.h>
#include <stdint.h>

typedef int CUresult;
typedef int CUdevice;
typedef struct CUctx_st *CUcontext;
typedef struct CUstream_st *CUstream;
typedef struct CUmod_st *CUmodule;
typedef struct CUfunc_st *CUfunction;
typedef unsigned long long CUdeviceptr;

typedef int cublasStatus_t;
typedef struct cublasContext *cublasHandle_t;
typedef int cusparseStatus_t;
typedef struct cusparseContext *cusparseHandle_t;
typedef struct cusparseSpMatDescr *cusparseSpMatDescr_t;
typedef struct cusparseDnMatDescr *cusparseDnMatDescr_t;
typedef int nvrtcResult;
typedef struct _nvrtcProgram *nvrtcProgram;

/* sg_ctx is one rank's GPU state: the primary context of its device, its
 * stream and library handles. */
typedef struct {
	CUdevice dev;
	CUcontext ctx;
	CUstream stream;
	cublasHandle_t blas;
	cusparseHandle_t sparse;
} sg_ctx;

/* Loading: each returns 0, or -1 with the missing symbol's name in miss. */
int sg_load_driver(void *h, char *miss, int n);
int sg_load_cublas(void *h, char *miss, int n);
int sg_load_cusparse(void *h, char *miss, int n);
int sg_load_nvrtc(void *h, char *miss, int n);
void *sg_dlopen(const char *path, char *err, int n);

/* Errors: a static string for a result code of each library. */
const char *sg_cu_error(CUresult r);
const char *sg_cusparse_error(cusparseStatus_t r);
const char *sg_nvrtc_error(nvrtcResult r);

CUresult sg_init(void);
CUresult sg_device_count(int *n);
CUresult sg_driver_version(int *v);
CUresult sg_device_info(int ordinal, char *name, int n, int *major, int *minor, int *sms, long long *total);
/* sg_open fills c for GPU ordinal: retain the primary context, make a
 * non-blocking stream; where is set to the failing step. */
int sg_open(sg_ctx *c, int ordinal, int tf32, const char **where, int *code);
void sg_close(sg_ctx *c);
int sg_set_tf32(sg_ctx *c, int on);

CUresult sg_mem_info(sg_ctx *c, size_t *free, size_t *total);
CUresult sg_alloc(sg_ctx *c, CUdeviceptr *p, size_t bytes);
CUresult sg_free(sg_ctx *c, CUdeviceptr p);
CUresult sg_alloc_host(sg_ctx *c, void **p, size_t bytes);
CUresult sg_free_host(sg_ctx *c, void *p);
CUresult sg_memset(sg_ctx *c, CUdeviceptr p, size_t bytes);
CUresult sg_h2d(sg_ctx *c, CUdeviceptr dst, const void *src, size_t bytes, int sync);
CUresult sg_d2h(sg_ctx *c, void *dst, CUdeviceptr src, size_t bytes);
CUresult sg_d2h_async(sg_ctx *c, void *dst, CUdeviceptr src, size_t bytes);
CUresult sg_d2d(sg_ctx *c, CUdeviceptr dst, CUdeviceptr src, size_t bytes);
CUresult sg_sync(sg_ctx *c);

CUresult sg_module_load(sg_ctx *c, CUmodule *m, const void *image);
CUresult sg_function(sg_ctx *c, CUmodule m, const char *name, CUfunction *f);
/* sg_launch launches f with nargs 8-byte argument slots (a 4-byte
 * parameter reads the low half of its slot, x86-64 being little-endian). */
CUresult sg_launch(sg_ctx *c, CUfunction f, unsigned gx, unsigned gy, unsigned bx, unsigned by,
                   unsigned shmem, const uint64_t *args, int nargs);

/* sg_sgemm is cublasSgemm on column-major operands (the caller swaps
 * row-major ones); ta, tb are 0 (N) or 1 (T). */
cublasStatus_t sg_sgemm(sg_ctx *c, int ta, int tb, int m, int n, int k, float alpha,
                        CUdeviceptr a, int lda, CUdeviceptr b, int ldb, float beta, CUdeviceptr cc, int ldc);
/* sg_gemm_bf16 is cublasGemmEx with bfloat16 A and B, a float32 C and
 * float32 computation (CUBLAS_COMPUTE_32F), column-major as sg_sgemm. */
cublasStatus_t sg_gemm_bf16(sg_ctx *c, int ta, int tb, int m, int n, int k, float alpha, CUdeviceptr a, int lda,
                            CUdeviceptr b, int ldb, float beta, CUdeviceptr cc, int ldc);
/* sg_spmm computes C = A·B with A CSR (32-bit offsets and indices) and B,
 * C row-major with leading dimensions ldb, ldc, in float32 (the compute
 * type); atype, btype and ctype are the cudaDataType of A's values, B and
 * C. work is grown by the caller to *need bytes when it is smaller (then
 * call again). */
cusparseStatus_t sg_spmm(sg_ctx *c, int rows, int cols, int nnz, CUdeviceptr rowptr, CUdeviceptr colidx,
                         CUdeviceptr val, int n, CUdeviceptr b, long long ldb, CUdeviceptr cc, long long ldc,
                         int atype, int btype, int ctype, int alg, CUdeviceptr work, size_t worksize, size_t *need,
                         const char **where);

/* NVRTC: compile src for arch (e.g. "sm_90"); on success *image (malloc'ed,
 * the caller frees) holds a cubin or, when cubin is 0, PTX. */
nvrtcResult sg_nvrtc_version(int *major, int *minor);
nvrtcResult sg_compile(const char *src, const char *name, const char **opts, int nopts, int cubin,
                       char **image, size_t *size, char **log);
#endif
