//go:build cgo

package cuda

/*
#cgo LDFLAGS: -ldl
#cgo noescape sg_launch
#cgo nocallback sg_launch
#cgo noescape sg_h2d
#cgo nocallback sg_h2d
#cgo noescape sg_d2h
#cgo nocallback sg_d2h
#include <stdlib.h>
#include "shim.h"
*/
import "C"

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"unsafe"
)

// Library names, newest first: CUDA 13, 12 and 11 sonames, then the
// development symlink.
var libraries = []struct {
	what  string
	names []string
	load  func(h unsafe.Pointer, miss *C.char, n C.int) C.int
	hint  string
}{
	{"the CUDA driver (libcuda)", []string{"libcuda.so.1", "libcuda.so"},
		func(h unsafe.Pointer, m *C.char, n C.int) C.int { return C.sg_load_driver(h, m, n) },
		"install the NVIDIA driver, or run on a machine with an NVIDIA GPU"},
	{"cuBLAS (libcublas)", []string{"libcublas.so.13", "libcublas.so.12", "libcublas.so.11", "libcublas.so"},
		func(h unsafe.Pointer, m *C.char, n C.int) C.int { return C.sg_load_cublas(h, m, n) },
		"install the CUDA toolkit's cuBLAS, or add its lib64 directory to LD_LIBRARY_PATH or set CUDA_HOME"},
	{"cuSPARSE (libcusparse)", []string{"libcusparse.so.12", "libcusparse.so.13", "libcusparse.so.11", "libcusparse.so"},
		func(h unsafe.Pointer, m *C.char, n C.int) C.int { return C.sg_load_cusparse(h, m, n) },
		"install the CUDA toolkit's cuSPARSE, or add its lib64 directory to LD_LIBRARY_PATH or set CUDA_HOME"},
	{"NVRTC (libnvrtc)", []string{"libnvrtc.so.13", "libnvrtc.so.12", "libnvrtc.so.11.2", "libnvrtc.so"},
		func(h unsafe.Pointer, m *C.char, n C.int) C.int { return C.sg_load_nvrtc(h, m, n) },
		"install the CUDA toolkit's NVRTC, or add its lib64 directory to LD_LIBRARY_PATH or set CUDA_HOME"},
}

// searchDirs are tried after the loader's own path (LD_LIBRARY_PATH, the
// ld.so cache): the toolkit's usual homes.
func searchDirs() []string {
	var dirs []string
	for _, env := range []string{"CUDA_HOME", "CUDA_PATH"} {
		if v := os.Getenv(env); v != "" {
			dirs = append(dirs, filepath.Join(v, "lib64"), filepath.Join(v, "lib"))
		}
	}
	return append(dirs, "/usr/local/cuda/lib64", "/usr/local/cuda/targets/x86_64-linux/lib")
}

var (
	loadOnce sync.Once
	loadErr  error
	loaded   []string // the file each library was loaded from
)

// Load opens the driver and the libraries and initialises the driver,
// once per process; later calls return the first call's result.
func Load() error {
	loadOnce.Do(func() { loadErr = load() })
	return loadErr
}

// Loaded returns the files the libraries were loaded from, for the log.
func Loaded() []string { _ = Load(); return loaded }

func load() error {
	var miss [128]C.char
	for _, lib := range libraries {
		h, path, tried := open(lib.names)
		if h == nil {
			return &MissingError{What: lib.what, Detail: "not found (tried " + strings.Join(tried, ", ") + ")", Hint: lib.hint}
		}
		if lib.load(h, &miss[0], C.int(len(miss))) != 0 {
			return &MissingError{What: lib.what, Detail: fmt.Sprintf("%s lacks the symbol %s", path, C.GoString(&miss[0])),
				Hint: "install a CUDA 11.2 or newer toolkit"}
		}
		loaded = append(loaded, path)
		if len(loaded) == 1 {
			// The driver first: with no GPU, say so rather than which
			// toolkit library is missing.
			if r := C.sg_init(); r != 0 {
				return &MissingError{What: "a CUDA GPU", Detail: "cuInit: " + cuMsg(r),
					Hint: "run on a machine with an NVIDIA GPU, check CUDA_VISIBLE_DEVICES and nvidia-smi"}
			}
		}
	}
	return nil
}

// open tries each name in the loader's path, then in searchDirs.
func open(names []string) (unsafe.Pointer, string, []string) {
	var errb [256]C.char
	var tried []string
	try := func(p string) unsafe.Pointer {
		cs := C.CString(p)
		defer C.free(unsafe.Pointer(cs))
		h := C.sg_dlopen(cs, &errb[0], C.int(len(errb)))
		tried = append(tried, p)
		return h
	}
	for _, n := range names {
		if h := try(n); h != nil {
			return h, n, nil
		}
	}
	for _, d := range searchDirs() {
		for _, n := range names {
			p := filepath.Join(d, n)
			if _, err := os.Stat(p); err != nil {
				continue
			}
			if h := try(p); h != nil {
				return h, p, nil
			}
		}
	}
	short := append([]string(nil), names...)
	return nil, "", append(short, "in LD_LIBRARY_PATH, the ld.so cache, "+strings.Join(searchDirs(), ", "))
}

// MissingError says that CUDA cannot be used here: a library, a symbol
// or a GPU is missing.
type MissingError struct{ What, Detail, Hint string }

func (e *MissingError) Error() string { return fmt.Sprintf("%s: %s; %s", e.What, e.Detail, e.Hint) }

// Error is a failed CUDA call.
type Error struct {
	Call string
	Code int
	Msg  string
}

func (e *Error) Error() string { return fmt.Sprintf("%s failed: %s (code %d)", e.Call, e.Msg, e.Code) }

func cuMsg(r C.CUresult) string { return C.GoString(C.sg_cu_error(r)) }

func cuErr(call string, r C.CUresult) error {
	if r == 0 {
		return nil
	}
	return &Error{Call: call, Code: int(r), Msg: cuMsg(r)}
}

// Count returns the number of GPUs visible to this process.
func Count() (int, error) {
	if err := Load(); err != nil {
		return 0, err
	}
	var n C.int
	if err := cuErr("cuDeviceGetCount", C.sg_device_count(&n)); err != nil {
		return 0, err
	}
	return int(n), nil
}

// DriverVersion returns the driver's CUDA version, e.g. 13000.
func DriverVersion() int {
	var v C.int
	if Load() != nil || C.sg_driver_version(&v) != 0 {
		return 0
	}
	return int(v)
}

// NVRTCVersion returns NVRTC's version.
func NVRTCVersion() (major, minor int) {
	var a, b C.int
	if Load() != nil || C.sg_nvrtc_version(&a, &b) != 0 {
		return 0, 0
	}
	return int(a), int(b)
}

// Info describes a GPU.
type Info struct {
	Name         string
	Major, Minor int // compute capability
	SMs          int
	Total        int64 // memory in bytes
}

// DeviceInfo describes GPU ordinal.
func DeviceInfo(ordinal int) (Info, error) {
	if err := Load(); err != nil {
		return Info{}, err
	}
	var name [256]C.char
	var major, minor, sms C.int
	var total C.longlong
	if err := cuErr("cuDeviceGet/GetAttribute", C.sg_device_info(C.int(ordinal), &name[0], C.int(len(name)), &major, &minor, &sms, &total)); err != nil {
		return Info{}, err
	}
	return Info{Name: C.GoString(&name[0]), Major: int(major), Minor: int(minor), SMs: int(sms), Total: int64(total)}, nil
}

// Ctx is one GPU's context, stream and library handles. Its methods may
// be called from several goroutines; the work goes to the one stream in
// the order of the calls.
type Ctx struct {
	c *C.sg_ctx // in C memory: cgo passes it without pointer checks
}

// Open makes a Ctx on GPU ordinal, with TF32 GEMM when tf32 is set.
func Open(ordinal int, tf32 bool) (*Ctx, error) {
	n, err := Count()
	if err != nil {
		return nil, err
	}
	if ordinal < 0 || ordinal >= n {
		return nil, &MissingError{What: fmt.Sprintf("GPU %d", ordinal), Detail: fmt.Sprintf("%d GPUs are visible", n),
			Hint: "check CUDA_VISIBLE_DEVICES"}
	}
	c := (*C.sg_ctx)(C.calloc(1, C.size_t(unsafe.Sizeof(C.sg_ctx{}))))
	var where *C.char
	var code C.int
	t := C.int(0)
	if tf32 {
		t = 1
	}
	if r := C.sg_open(c, C.int(ordinal), t, &where, &code); r != 0 {
		C.sg_close(c)
		C.free(unsafe.Pointer(c))
		msg := cuMsg(C.CUresult(code))
		if r != -1 {
			msg = fmt.Sprintf("library status %d", int(code))
		}
		return nil, &Error{Call: C.GoString(where), Code: int(code), Msg: msg}
	}
	return &Ctx{c: c}, nil
}

// Close releases the stream, handles and context.
func (x *Ctx) Close() {
	if x.c != nil {
		C.sg_close(x.c)
		C.free(unsafe.Pointer(x.c))
		x.c = nil
	}
}

// SetTF32 switches cuBLAS's TF32 mode.
func (x *Ctx) SetTF32(on bool) error {
	t := C.int(0)
	if on {
		t = 1
	}
	if r := C.sg_set_tf32(x.c, t); r != 0 {
		return &Error{Call: "cublasSetMathMode", Code: int(r), Msg: "cuBLAS status"}
	}
	return nil
}

// MemInfo returns the GPU's free and total memory.
func (x *Ctx) MemInfo() (free, total int64, err error) {
	var f, t C.size_t
	err = cuErr("cuMemGetInfo", C.sg_mem_info(x.c, &f, &t))
	return int64(f), int64(t), err
}

// OutOfMemory is the driver's code for a failed allocation.
const OutOfMemory = 2

// Alloc allocates bytes of device memory.
func (x *Ctx) Alloc(bytes int64) (uintptr, error) {
	var p C.CUdeviceptr
	err := cuErr("cuMemAlloc", C.sg_alloc(x.c, &p, C.size_t(bytes)))
	return uintptr(p), err
}

// Free frees device memory from Alloc.
func (x *Ctx) Free(p uintptr) error { return cuErr("cuMemFree", C.sg_free(x.c, C.CUdeviceptr(p))) }

// AllocHost allocates pinned (page-locked) host memory.
func (x *Ctx) AllocHost(bytes int64) (unsafe.Pointer, error) {
	var p unsafe.Pointer
	err := cuErr("cuMemAllocHost", C.sg_alloc_host(x.c, &p, C.size_t(bytes)))
	return p, err
}

// FreeHost frees memory from AllocHost.
func (x *Ctx) FreeHost(p unsafe.Pointer) error { return cuErr("cuMemFreeHost", C.sg_free_host(x.c, p)) }

// Memset zeroes bytes at p, in stream order.
func (x *Ctx) Memset(p uintptr, bytes int64) error {
	return cuErr("cuMemsetD8Async", C.sg_memset(x.c, C.CUdeviceptr(p), C.size_t(bytes)))
}

// H2D copies bytes from host src to device dst in stream order; with
// sync it waits for the stream, so that src may change afterwards.
func (x *Ctx) H2D(dst uintptr, src unsafe.Pointer, bytes int64, sync bool) error {
	s := C.int(0)
	if sync {
		s = 1
	}
	return cuErr("cuMemcpyHtoDAsync", C.sg_h2d(x.c, C.CUdeviceptr(dst), src, C.size_t(bytes), s))
}

// D2H copies bytes from device src to host dst, after the work queued
// before it, and waits for it.
func (x *Ctx) D2H(dst unsafe.Pointer, src uintptr, bytes int64) error {
	return cuErr("cuMemcpyDtoHAsync", C.sg_d2h(x.c, dst, C.CUdeviceptr(src), C.size_t(bytes)))
}

// D2HAsync queues a copy into pinned host memory without waiting.
func (x *Ctx) D2HAsync(dst unsafe.Pointer, src uintptr, bytes int64) error {
	return cuErr("cuMemcpyDtoHAsync", C.sg_d2h_async(x.c, dst, C.CUdeviceptr(src), C.size_t(bytes)))
}

// D2D copies bytes between device buffers in stream order.
func (x *Ctx) D2D(dst, src uintptr, bytes int64) error {
	return cuErr("cuMemcpyDtoDAsync", C.sg_d2d(x.c, C.CUdeviceptr(dst), C.CUdeviceptr(src), C.size_t(bytes)))
}

// Sync waits for the stream's work.
func (x *Ctx) Sync() error { return cuErr("cuStreamSynchronize", C.sg_sync(x.c)) }

// Module is loaded device code; Func one of its kernels.
type (
	Module struct{ m C.CUmodule }
	Func   struct{ f C.CUfunction }
)

// LoadModule loads a cubin or PTX image.
func (x *Ctx) LoadModule(image []byte) (Module, error) {
	if len(image) == 0 {
		return Module{}, &Error{Call: "cuModuleLoadData", Msg: "empty image"}
	}
	cimg := C.CBytes(image)
	defer C.free(cimg)
	var m C.CUmodule
	err := cuErr("cuModuleLoadData", C.sg_module_load(x.c, &m, cimg))
	return Module{m}, err
}

// Function returns kernel name of m.
func (x *Ctx) Function(m Module, name string) (Func, error) {
	cs := C.CString(name)
	defer C.free(unsafe.Pointer(cs))
	var f C.CUfunction
	err := cuErr("cuModuleGetFunction("+name+")", C.sg_function(x.c, m.m, cs, &f))
	return Func{f}, err
}

// MaxArgs is the most kernel parameters Launch passes.
const MaxArgs = 32

// Launch queues kernel f on a gx×gy grid of bx×by blocks, its parameters
// in 8-byte slots (floats as their bits in the low half, as
// math.Float32bits gives them).
func (x *Ctx) Launch(f Func, gx, gy, bx, by, shmem uint32, args *[MaxArgs]uint64, nargs int) error {
	r := C.sg_launch(x.c, f.f, C.uint(gx), C.uint(gy), C.uint(bx), C.uint(by), C.uint(shmem), (*C.uint64_t)(unsafe.Pointer(&args[0])), C.int(nargs))
	return cuErr("cuLaunchKernel", r)
}

// Sgemm is cublasSgemm on column-major operands.
func (x *Ctx) Sgemm(ta, tb bool, m, n, k int, alpha float32, a uintptr, lda int, b uintptr, ldb int, beta float32, c uintptr, ldc int) error {
	if r := C.sg_sgemm(x.c, op(ta), op(tb), C.int(m), C.int(n), C.int(k), C.float(alpha), C.CUdeviceptr(a), C.int(lda),
		C.CUdeviceptr(b), C.int(ldb), C.float(beta), C.CUdeviceptr(c), C.int(ldc)); r != 0 {
		return &Error{Call: "cublasSgemm", Code: int(r), Msg: "cuBLAS status"}
	}
	return nil
}

// GemmBF16 is cublasGemmEx on column-major operands with bfloat16 a and
// b, a float32 c and float32 computation (CUBLAS_COMPUTE_32F, which
// cuBLAS runs on tensor cores where the GPU has bfloat16 ones).
func (x *Ctx) GemmBF16(ta, tb bool, m, n, k int, alpha float32, a uintptr, lda int, b uintptr, ldb int, beta float32, c uintptr, ldc int) error {
	if r := C.sg_gemm_bf16(x.c, op(ta), op(tb), C.int(m), C.int(n), C.int(k), C.float(alpha), C.CUdeviceptr(a), C.int(lda),
		C.CUdeviceptr(b), C.int(ldb), C.float(beta), C.CUdeviceptr(c), C.int(ldc)); r != 0 {
		return &Error{Call: "cublasGemmEx", Code: int(r), Msg: "cuBLAS status"}
	}
	return nil
}

// op is cublasOperation_t: 0 (N) or 1 (T).
func op(t bool) C.int {
	if t {
		return 1
	}
	return 0
}

// DataType is a cudaDataType (library_types.h), for SpMM's operands.
type DataType int

// The data types SpMM takes.
const (
	R32F  DataType = 0  // CUDA_R_32F: float
	R16BF DataType = 14 // CUDA_R_16BF: __nv_bfloat16
)

// SpMMTypes are the data types of an SpMM's sparse values (A), dense
// operand (B) and result (C); the computation is float32. cuSPARSE takes
// A and B of one type: {R32F, R32F, R32F}, or {R16BF, R16BF, R32F or
// R16BF} (its documented mixed-precision rows for cusparseSpMM).
type SpMMTypes struct{ A, B, C DataType }

// SpMM algorithms (cusparse.h cusparseSpMMAlg_t).
const (
	SpMMDefault = 0
	SpMMCSRAlg1 = 4
	SpMMCSRAlg2 = 6
	SpMMCSRAlg3 = 12
)

// SpMM computes C = A·B with cuSPARSE: A CSR with 32-bit offsets and
// indices, B and C row-major, of the given types. When the workspace
// (work, worksize bytes) is too small it does nothing and returns the
// size needed.
func (x *Ctx) SpMM(rows, cols, nnz int, rowptr, colidx, val uintptr, n int, b uintptr, ldb int, c uintptr, ldc int,
	types SpMMTypes, alg int, work uintptr, worksize int64) (need int64, err error) {
	var nd C.size_t
	var where *C.char
	r := C.sg_spmm(x.c, C.int(rows), C.int(cols), C.int(nnz), C.CUdeviceptr(rowptr), C.CUdeviceptr(colidx), C.CUdeviceptr(val),
		C.int(n), C.CUdeviceptr(b), C.longlong(ldb), C.CUdeviceptr(c), C.longlong(ldc), C.int(types.A), C.int(types.B),
		C.int(types.C), C.int(alg), C.CUdeviceptr(work), C.size_t(worksize), &nd, &where)
	if r != 0 {
		return 0, &Error{Call: C.GoString(where), Code: int(r), Msg: C.GoString(C.sg_cusparse_error(r))}
	}
	return int64(nd), nil
}

// Compile compiles CUDA C source with NVRTC: a cubin when cubin is set,
// else PTX. The log is NVRTC's, also on success (warnings).
func Compile(src, name string, opts []string, cubin bool) (image []byte, log string, err error) {
	if err := Load(); err != nil {
		return nil, "", err
	}
	csrc, cname := C.CString(src), C.CString(name)
	defer C.free(unsafe.Pointer(csrc))
	defer C.free(unsafe.Pointer(cname))
	copts := C.malloc(C.size_t(len(opts)+1) * C.size_t(unsafe.Sizeof(uintptr(0))))
	defer C.free(copts)
	arr := unsafe.Slice((**C.char)(copts), len(opts)+1)
	for i, o := range opts {
		arr[i] = C.CString(o)
		defer C.free(unsafe.Pointer(arr[i]))
	}
	cb := C.int(0)
	if cubin {
		cb = 1
	}
	var img, clog *C.char
	var size C.size_t
	r := C.sg_compile(csrc, cname, (**C.char)(copts), C.int(len(opts)), cb, &img, &size, &clog)
	if clog != nil {
		log = C.GoString(clog)
		C.free(unsafe.Pointer(clog))
	}
	if img != nil {
		image = C.GoBytes(unsafe.Pointer(img), C.int(size))
		C.free(unsafe.Pointer(img))
	}
	if r != 0 {
		return nil, log, &Error{Call: "nvrtcCompileProgram", Code: int(r), Msg: C.GoString(C.sg_nvrtc_error(r))}
	}
	return image, log, nil
}
