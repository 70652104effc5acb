/* The dispatch tables: every CUDA function scalegnn calls, resolved by
 * dlsym when its library is loaded, each checked, so a missing symbol is
 * an error naming it rather than a crash at first use (no lazy binding of
 * undefined symbols, which breaks where lazy binding is off). */
#include <dlfcn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "shim.h"

/* Enum values from CUDA 12/13's headers. */
enum {
	SG_CU_STREAM_NON_BLOCKING = 1,          /* cuda.h CUstream_flags */
	SG_CU_ATTR_SMS = 16,                    /* CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT */
	SG_CU_ATTR_CC_MAJOR = 75,               /* CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR */
	SG_CU_ATTR_CC_MINOR = 76,               /* ..._MINOR */
	SG_CUBLAS_DEFAULT_MATH = 0,             /* cublas_api.h cublasMath_t */
	SG_CUBLAS_TF32_TENSOR_OP_MATH = 3,
	SG_CUSPARSE_INDEX_32I = 2,              /* cusparse.h cusparseIndexType_t */
	SG_CUSPARSE_INDEX_BASE_ZERO = 0,
	SG_CUSPARSE_ORDER_ROW = 2,              /* cusparseOrder_t */
	SG_CUSPARSE_OP_N = 0,
	SG_CUDA_R_32F = 0,                      /* library_types.h cudaDataType */
	SG_CUDA_R_16BF = 14,
	SG_CUBLAS_COMPUTE_32F = 68,             /* cublas_api.h cublasComputeType_t */
	SG_CUBLAS_GEMM_DEFAULT = -1,            /* cublasGemmAlgo_t */
};

static struct {
	CUresult (*cuInit)(unsigned);
	CUresult (*cuDriverGetVersion)(int *);
	CUresult (*cuDeviceGetCount)(int *);
	CUresult (*cuDeviceGet)(CUdevice *, int);
	CUresult (*cuDeviceGetName)(char *, int, CUdevice);
	CUresult (*cuDeviceGetAttribute)(int *, int, CUdevice);
	CUresult (*cuDeviceTotalMem_v2)(size_t *, CUdevice);
	CUresult (*cuDevicePrimaryCtxRetain)(CUcontext *, CUdevice);
	CUresult (*cuDevicePrimaryCtxRelease_v2)(CUdevice);
	CUresult (*cuCtxSetCurrent)(CUcontext);
	CUresult (*cuMemGetInfo_v2)(size_t *, size_t *);
	CUresult (*cuMemAlloc_v2)(CUdeviceptr *, size_t);
	CUresult (*cuMemFree_v2)(CUdeviceptr);
	CUresult (*cuMemAllocHost_v2)(void **, size_t);
	CUresult (*cuMemFreeHost)(void *);
	CUresult (*cuMemsetD8Async)(CUdeviceptr, unsigned char, size_t, CUstream);
	CUresult (*cuMemcpyHtoDAsync_v2)(CUdeviceptr, const void *, size_t, CUstream);
	CUresult (*cuMemcpyDtoHAsync_v2)(void *, CUdeviceptr, size_t, CUstream);
	CUresult (*cuMemcpyDtoDAsync_v2)(CUdeviceptr, CUdeviceptr, size_t, CUstream);
	CUresult (*cuStreamCreate)(CUstream *, unsigned);
	CUresult (*cuStreamDestroy_v2)(CUstream);
	CUresult (*cuStreamSynchronize)(CUstream);
	CUresult (*cuModuleLoadData)(CUmodule *, const void *);
	CUresult (*cuModuleGetFunction)(CUfunction *, CUmodule, const char *);
	CUresult (*cuLaunchKernel)(CUfunction, unsigned, unsigned, unsigned, unsigned, unsigned, unsigned,
	                           unsigned, CUstream, void **, void **);
	CUresult (*cuGetErrorString)(CUresult, const char **);
} cu;

static struct {
	cublasStatus_t (*cublasCreate_v2)(cublasHandle_t *);
	cublasStatus_t (*cublasDestroy_v2)(cublasHandle_t);
	cublasStatus_t (*cublasSetStream_v2)(cublasHandle_t, CUstream);
	cublasStatus_t (*cublasSetMathMode)(cublasHandle_t, int);
	cublasStatus_t (*cublasSgemm_v2)(cublasHandle_t, int, int, int, int, int, const float *, const float *, int,
	                                 const float *, int, const float *, float *, int);
	cublasStatus_t (*cublasGemmEx)(cublasHandle_t, int, int, int, int, int, const void *, const void *, int, int,
	                               const void *, int, int, const void *, void *, int, int, int, int);
} blas;

static struct {
	cusparseStatus_t (*cusparseCreate)(cusparseHandle_t *);
	cusparseStatus_t (*cusparseDestroy)(cusparseHandle_t);
	cusparseStatus_t (*cusparseSetStream)(cusparseHandle_t, CUstream);
	cusparseStatus_t (*cusparseCreateCsr)(cusparseSpMatDescr_t *, int64_t, int64_t, int64_t, void *, void *, void *,
	                                      int, int, int, int);
	cusparseStatus_t (*cusparseDestroySpMat)(cusparseSpMatDescr_t);
	cusparseStatus_t (*cusparseCreateDnMat)(cusparseDnMatDescr_t *, int64_t, int64_t, int64_t, void *, int, int);
	cusparseStatus_t (*cusparseDestroyDnMat)(cusparseDnMatDescr_t);
	cusparseStatus_t (*cusparseSpMM_bufferSize)(cusparseHandle_t, int, int, const void *, cusparseSpMatDescr_t,
	                                            cusparseDnMatDescr_t, const void *, cusparseDnMatDescr_t, int, int,
	                                            size_t *);
	cusparseStatus_t (*cusparseSpMM)(cusparseHandle_t, int, int, const void *, cusparseSpMatDescr_t,
	                                 cusparseDnMatDescr_t, const void *, cusparseDnMatDescr_t, int, int, void *);
	const char *(*cusparseGetErrorString)(cusparseStatus_t);
} sparse;

static struct {
	nvrtcResult (*nvrtcVersion)(int *, int *);
	nvrtcResult (*nvrtcCreateProgram)(nvrtcProgram *, const char *, const char *, int, const char *const *,
	                                  const char *const *);
	nvrtcResult (*nvrtcCompileProgram)(nvrtcProgram, int, const char *const *);
	nvrtcResult (*nvrtcGetCUBINSize)(nvrtcProgram, size_t *);
	nvrtcResult (*nvrtcGetCUBIN)(nvrtcProgram, char *);
	nvrtcResult (*nvrtcGetPTXSize)(nvrtcProgram, size_t *);
	nvrtcResult (*nvrtcGetPTX)(nvrtcProgram, char *);
	nvrtcResult (*nvrtcGetProgramLogSize)(nvrtcProgram, size_t *);
	nvrtcResult (*nvrtcGetProgramLog)(nvrtcProgram, char *);
	nvrtcResult (*nvrtcDestroyProgram)(nvrtcProgram *);
	const char *(*nvrtcGetErrorString)(nvrtcResult);
} rtc;

#define SYM(tab, name)                                                                                            \
	do {                                                                                                      \
		*(void **)(&tab.name) = dlsym(h, #name);                                                          \
		if (!tab.name) {                                                                                  \
			snprintf(miss, (size_t)n, "%s", #name);                                                   \
			return -1;                                                                                \
		}                                                                                                 \
	} while (0)

void *sg_dlopen(const char *path, char *err, int n) {
	void *h = dlopen(path, RTLD_NOW | RTLD_LOCAL);
	if (!h) {
		const char *e = dlerror();
		snprintf(err, (size_t)n, "%s", e ? e : "dlopen failed");
	}
	return h;
}

int sg_load_driver(void *h, char *miss, int n) {
	SYM(cu, cuInit);
	SYM(cu, cuDriverGetVersion);
	SYM(cu, cuDeviceGetCount);
	SYM(cu, cuDeviceGet);
	SYM(cu, cuDeviceGetName);
	SYM(cu, cuDeviceGetAttribute);
	SYM(cu, cuDeviceTotalMem_v2);
	SYM(cu, cuDevicePrimaryCtxRetain);
	SYM(cu, cuDevicePrimaryCtxRelease_v2);
	SYM(cu, cuCtxSetCurrent);
	SYM(cu, cuMemGetInfo_v2);
	SYM(cu, cuMemAlloc_v2);
	SYM(cu, cuMemFree_v2);
	SYM(cu, cuMemAllocHost_v2);
	SYM(cu, cuMemFreeHost);
	SYM(cu, cuMemsetD8Async);
	SYM(cu, cuMemcpyHtoDAsync_v2);
	SYM(cu, cuMemcpyDtoHAsync_v2);
	SYM(cu, cuMemcpyDtoDAsync_v2);
	SYM(cu, cuStreamCreate);
	SYM(cu, cuStreamDestroy_v2);
	SYM(cu, cuStreamSynchronize);
	SYM(cu, cuModuleLoadData);
	SYM(cu, cuModuleGetFunction);
	SYM(cu, cuLaunchKernel);
	SYM(cu, cuGetErrorString);
	return 0;
}

int sg_load_cublas(void *h, char *miss, int n) {
	SYM(blas, cublasCreate_v2);
	SYM(blas, cublasDestroy_v2);
	SYM(blas, cublasSetStream_v2);
	SYM(blas, cublasSetMathMode);
	SYM(blas, cublasSgemm_v2);
	SYM(blas, cublasGemmEx);
	return 0;
}

int sg_load_cusparse(void *h, char *miss, int n) {
	SYM(sparse, cusparseCreate);
	SYM(sparse, cusparseDestroy);
	SYM(sparse, cusparseSetStream);
	SYM(sparse, cusparseCreateCsr);
	SYM(sparse, cusparseDestroySpMat);
	SYM(sparse, cusparseCreateDnMat);
	SYM(sparse, cusparseDestroyDnMat);
	SYM(sparse, cusparseSpMM_bufferSize);
	SYM(sparse, cusparseSpMM);
	SYM(sparse, cusparseGetErrorString);
	return 0;
}

int sg_load_nvrtc(void *h, char *miss, int n) {
	SYM(rtc, nvrtcVersion);
	SYM(rtc, nvrtcCreateProgram);
	SYM(rtc, nvrtcCompileProgram);
	SYM(rtc, nvrtcGetCUBINSize);
	SYM(rtc, nvrtcGetCUBIN);
	SYM(rtc, nvrtcGetPTXSize);
	SYM(rtc, nvrtcGetPTX);
	SYM(rtc, nvrtcGetProgramLogSize);
	SYM(rtc, nvrtcGetProgramLog);
	SYM(rtc, nvrtcDestroyProgram);
	SYM(rtc, nvrtcGetErrorString);
	return 0;
}

const char *sg_cu_error(CUresult r) {
	const char *s = NULL;
	if (cu.cuGetErrorString && cu.cuGetErrorString(r, &s) == 0 && s)
		return s;
	return "unknown CUDA error";
}

const char *sg_cusparse_error(cusparseStatus_t r) {
	return sparse.cusparseGetErrorString ? sparse.cusparseGetErrorString(r) : "unknown cuSPARSE error";
}

const char *sg_nvrtc_error(nvrtcResult r) {
	return rtc.nvrtcGetErrorString ? rtc.nvrtcGetErrorString(r) : "unknown NVRTC error";
}

/* The driver API's current context is per OS thread, and goroutines move
 * between threads: every call binds its context first, once per thread
 * and context. */
static __thread CUcontext bound;

static CUresult bind(sg_ctx *c) {
	if (bound == c->ctx)
		return 0;
	CUresult r = cu.cuCtxSetCurrent(c->ctx);
	if (r == 0)
		bound = c->ctx;
	return r;
}

#define BIND(c)                                                                                                   \
	do {                                                                                                      \
		CUresult br = bind(c);                                                                            \
		if (br)                                                                                           \
			return br;                                                                                \
	} while (0)

CUresult sg_init(void) { return cu.cuInit(0); }
CUresult sg_device_count(int *n) { return cu.cuDeviceGetCount(n); }
CUresult sg_driver_version(int *v) { return cu.cuDriverGetVersion(v); }

CUresult sg_device_info(int ordinal, char *name, int n, int *major, int *minor, int *sms, long long *total) {
	CUdevice d;
	CUresult r = cu.cuDeviceGet(&d, ordinal);
	if (r)
		return r;
	if ((r = cu.cuDeviceGetName(name, n, d)))
		return r;
	if ((r = cu.cuDeviceGetAttribute(major, SG_CU_ATTR_CC_MAJOR, d)))
		return r;
	if ((r = cu.cuDeviceGetAttribute(minor, SG_CU_ATTR_CC_MINOR, d)))
		return r;
	if ((r = cu.cuDeviceGetAttribute(sms, SG_CU_ATTR_SMS, d)))
		return r;
	size_t t = 0;
	r = cu.cuDeviceTotalMem_v2(&t, d);
	*total = (long long)t;
	return r;
}

int sg_set_tf32(sg_ctx *c, int on) {
	return blas.cublasSetMathMode(c->blas, on ? SG_CUBLAS_TF32_TENSOR_OP_MATH : SG_CUBLAS_DEFAULT_MATH);
}

int sg_open(sg_ctx *c, int ordinal, int tf32, const char **where, int *code) {
	memset(c, 0, sizeof *c);
	int r;
	if ((r = cu.cuDeviceGet(&c->dev, ordinal))) {
		*where = "cuDeviceGet", *code = r;
		return -1;
	}
	if ((r = cu.cuDevicePrimaryCtxRetain(&c->ctx, c->dev))) {
		*where = "cuDevicePrimaryCtxRetain", *code = r;
		return -1;
	}
	if ((r = bind(c))) {
		*where = "cuCtxSetCurrent", *code = r;
		return -1;
	}
	if ((r = cu.cuStreamCreate(&c->stream, SG_CU_STREAM_NON_BLOCKING))) {
		*where = "cuStreamCreate", *code = r;
		return -1;
	}
	if ((r = blas.cublasCreate_v2(&c->blas))) {
		*where = "cublasCreate", *code = r;
		return -2;
	}
	if ((r = blas.cublasSetStream_v2(c->blas, c->stream)) || (r = sg_set_tf32(c, tf32))) {
		*where = "cublasSetStream/cublasSetMathMode", *code = r;
		return -2;
	}
	if ((r = sparse.cusparseCreate(&c->sparse))) {
		*where = "cusparseCreate", *code = r;
		return -3;
	}
	if ((r = sparse.cusparseSetStream(c->sparse, c->stream))) {
		*where = "cusparseSetStream", *code = r;
		return -3;
	}
	return 0;
}

void sg_close(sg_ctx *c) {
	if (!c->ctx || bind(c))
		return;
	if (c->stream)
		cu.cuStreamSynchronize(c->stream);
	if (c->sparse)
		sparse.cusparseDestroy(c->sparse);
	if (c->blas)
		blas.cublasDestroy_v2(c->blas);
	if (c->stream)
		cu.cuStreamDestroy_v2(c->stream);
	cu.cuDevicePrimaryCtxRelease_v2(c->dev);
	bound = NULL;
	memset(c, 0, sizeof *c);
}

CUresult sg_mem_info(sg_ctx *c, size_t *free, size_t *total) {
	BIND(c);
	return cu.cuMemGetInfo_v2(free, total);
}

CUresult sg_alloc(sg_ctx *c, CUdeviceptr *p, size_t bytes) {
	BIND(c);
	return cu.cuMemAlloc_v2(p, bytes);
}

CUresult sg_free(sg_ctx *c, CUdeviceptr p) {
	BIND(c);
	return cu.cuMemFree_v2(p);
}

CUresult sg_alloc_host(sg_ctx *c, void **p, size_t bytes) {
	BIND(c);
	return cu.cuMemAllocHost_v2(p, bytes);
}

CUresult sg_free_host(sg_ctx *c, void *p) {
	BIND(c);
	return cu.cuMemFreeHost(p);
}

CUresult sg_memset(sg_ctx *c, CUdeviceptr p, size_t bytes) {
	BIND(c);
	return cu.cuMemsetD8Async(p, 0, bytes, c->stream);
}

CUresult sg_h2d(sg_ctx *c, CUdeviceptr dst, const void *src, size_t bytes, int sync) {
	BIND(c);
	CUresult r = cu.cuMemcpyHtoDAsync_v2(dst, src, bytes, c->stream);
	if (r == 0 && sync)
		r = cu.cuStreamSynchronize(c->stream);
	return r;
}

CUresult sg_d2h(sg_ctx *c, void *dst, CUdeviceptr src, size_t bytes) {
	BIND(c);
	CUresult r = cu.cuMemcpyDtoHAsync_v2(dst, src, bytes, c->stream);
	if (r == 0)
		r = cu.cuStreamSynchronize(c->stream);
	return r;
}

CUresult sg_d2h_async(sg_ctx *c, void *dst, CUdeviceptr src, size_t bytes) {
	BIND(c);
	return cu.cuMemcpyDtoHAsync_v2(dst, src, bytes, c->stream);
}

CUresult sg_d2d(sg_ctx *c, CUdeviceptr dst, CUdeviceptr src, size_t bytes) {
	BIND(c);
	return cu.cuMemcpyDtoDAsync_v2(dst, src, bytes, c->stream);
}

CUresult sg_sync(sg_ctx *c) {
	BIND(c);
	return cu.cuStreamSynchronize(c->stream);
}

CUresult sg_module_load(sg_ctx *c, CUmodule *m, const void *image) {
	BIND(c);
	return cu.cuModuleLoadData(m, image);
}

CUresult sg_function(sg_ctx *c, CUmodule m, const char *name, CUfunction *f) {
	BIND(c);
	return cu.cuModuleGetFunction(f, m, name);
}

CUresult sg_launch(sg_ctx *c, CUfunction f, unsigned gx, unsigned gy, unsigned bx, unsigned by, unsigned shmem,
                   const uint64_t *args, int nargs) {
	void *params[32];
	if (nargs > 32)
		return 1; /* CUDA_ERROR_INVALID_VALUE */
	for (int i = 0; i < nargs; i++)
		params[i] = (void *)&args[i];
	BIND(c);
	return cu.cuLaunchKernel(f, gx, gy, 1, bx, by, 1, shmem, c->stream, params, NULL);
}

cublasStatus_t sg_sgemm(sg_ctx *c, int ta, int tb, int m, int n, int k, float alpha, CUdeviceptr a, int lda,
                        CUdeviceptr b, int ldb, float beta, CUdeviceptr cc, int ldc) {
	if (bind(c))
		return 14; /* CUBLAS_STATUS_INTERNAL_ERROR */
	return blas.cublasSgemm_v2(c->blas, ta, tb, m, n, k, &alpha, (const float *)a, lda, (const float *)b, ldb,
	                           &beta, (float *)cc, ldc);
}

cublasStatus_t sg_gemm_bf16(sg_ctx *c, int ta, int tb, int m, int n, int k, float alpha, CUdeviceptr a, int lda,
                            CUdeviceptr b, int ldb, float beta, CUdeviceptr cc, int ldc) {
	if (bind(c))
		return 14; /* CUBLAS_STATUS_INTERNAL_ERROR */
	return blas.cublasGemmEx(c->blas, ta, tb, m, n, k, &alpha, (const void *)a, SG_CUDA_R_16BF, lda, (const void *)b,
	                         SG_CUDA_R_16BF, ldb, &beta, (void *)cc, SG_CUDA_R_32F, ldc, SG_CUBLAS_COMPUTE_32F,
	                         SG_CUBLAS_GEMM_DEFAULT);
}

cusparseStatus_t sg_spmm(sg_ctx *c, int rows, int cols, int nnz, CUdeviceptr rowptr, CUdeviceptr colidx,
                         CUdeviceptr val, int n, CUdeviceptr b, long long ldb, CUdeviceptr cc, long long ldc,
                         int atype, int btype, int ctype, int alg, CUdeviceptr work, size_t worksize, size_t *need,
                         const char **where) {
	cusparseSpMatDescr_t A = NULL;
	cusparseDnMatDescr_t B = NULL, C = NULL;
	float alpha = 1, beta = 0;
	cusparseStatus_t r;
	*need = 0;
	if (bind(c)) {
		*where = "cuCtxSetCurrent";
		return 7; /* CUSPARSE_STATUS_INTERNAL_ERROR */
	}
	*where = "cusparseCreateCsr";
	r = sparse.cusparseCreateCsr(&A, rows, cols, nnz, (void *)rowptr, (void *)colidx, (void *)val,
	                             SG_CUSPARSE_INDEX_32I, SG_CUSPARSE_INDEX_32I, SG_CUSPARSE_INDEX_BASE_ZERO, atype);
	if (r)
		goto out;
	*where = "cusparseCreateDnMat";
	if ((r = sparse.cusparseCreateDnMat(&B, cols, n, ldb, (void *)b, btype, SG_CUSPARSE_ORDER_ROW)))
		goto out;
	if ((r = sparse.cusparseCreateDnMat(&C, rows, n, ldc, (void *)cc, ctype, SG_CUSPARSE_ORDER_ROW)))
		goto out;
	*where = "cusparseSpMM_bufferSize";
	size_t sz = 0;
	if ((r = sparse.cusparseSpMM_bufferSize(c->sparse, SG_CUSPARSE_OP_N, SG_CUSPARSE_OP_N, &alpha, A, B, &beta, C,
	                                        SG_CUDA_R_32F, alg, &sz)))
		goto out;
	if (sz > worksize) {
		*need = sz;
		goto out;
	}
	*where = "cusparseSpMM";
	r = sparse.cusparseSpMM(c->sparse, SG_CUSPARSE_OP_N, SG_CUSPARSE_OP_N, &alpha, A, B, &beta, C, SG_CUDA_R_32F,
	                        alg, (void *)work);
out:
	if (C)
		sparse.cusparseDestroyDnMat(C);
	if (B)
		sparse.cusparseDestroyDnMat(B);
	if (A)
		sparse.cusparseDestroySpMat(A);
	return r;
}

nvrtcResult sg_nvrtc_version(int *major, int *minor) { return rtc.nvrtcVersion(major, minor); }

nvrtcResult sg_compile(const char *src, const char *name, const char **opts, int nopts, int cubin, char **image,
                       size_t *size, char **log) {
	nvrtcProgram p = NULL;
	*image = NULL, *log = NULL, *size = 0;
	nvrtcResult r = rtc.nvrtcCreateProgram(&p, src, name, 0, NULL, NULL);
	if (r)
		return r;
	nvrtcResult cr = rtc.nvrtcCompileProgram(p, nopts, opts);
	size_t ls = 0;
	if (rtc.nvrtcGetProgramLogSize(p, &ls) == 0 && ls > 1) {
		*log = malloc(ls);
		if (*log && rtc.nvrtcGetProgramLog(p, *log) != 0) {
			free(*log);
			*log = NULL;
		}
	}
	if (cr) {
		rtc.nvrtcDestroyProgram(&p);
		return cr;
	}
	r = cubin ? rtc.nvrtcGetCUBINSize(p, size) : rtc.nvrtcGetPTXSize(p, size);
	if (r == 0) {
		*image = malloc(*size);
		r = cubin ? rtc.nvrtcGetCUBIN(p, *image) : rtc.nvrtcGetPTX(p, *image);
	}
	rtc.nvrtcDestroyProgram(&p);
	return r;
}
