//go:build !nompi

package mpi

// The C side of GPU-aware MPI: the run-time queries are resolved with
// dlsym, never linked or declared through mpi-ext.h, so one binary runs on
// every MPI library, with or without them; and the device-pointer calls
// take the address as an integer and make it a pointer in C, so Go never
// holds a pointer to memory it does not own (go vet and checkptr would
// rightly reject the conversion on the Go side).

/*
#define _GNU_SOURCE
#include <dlfcn.h>
#include <link.h>
#include <stdint.h>
#include <string.h>
#include "shim.h"

// MPIX_GPU_SUPPORT_CUDA is 0 in MPICH's mpi.h (MPICH 4.0.2 from Debian:
// /usr/include/x86_64-linux-gnu/mpich/mpi.h, "GPU extensions", with ZE 1
// and HIP 2). It is hard-coded because Open MPI's mpi.h lacks it.
enum { sg_mpix_gpu_support_cuda = 0 };

// sg_query_cuda_support calls Open MPI's int MPIX_Query_cuda_support(void)
// (also exported by MPICH 4) if the process has it: *found is 0 when not.
static int sg_query_cuda_support(int *found) {
	int (*f)(void) = (int (*)(void))dlsym(RTLD_DEFAULT, "MPIX_Query_cuda_support");
	*found = f != NULL;
	return f != NULL ? f() : 0;
}

// sg_gpu_query_support calls MPICH's
// int MPIX_GPU_query_support(int gpu_type, int *is_supported) for CUDA if
// the process has it, and returns its return code.
static int sg_gpu_query_support(int *found, int *supported) {
	int (*f)(int, int *) = (int (*)(int, int *))dlsym(RTLD_DEFAULT, "MPIX_GPU_query_support");
	*found = f != NULL;
	*supported = 0;
	return f != NULL ? f(sg_mpix_gpu_support_cuda, supported) : 0;
}

static int sg_gtl_cuda_cb(struct dl_phdr_info *info, size_t size, void *data) {
	(void)size;
	(void)data;
	return info->dlpi_name != NULL && strstr(info->dlpi_name, "libmpi_gtl_cuda") != NULL;
}

// sg_gtl_cuda_loaded reports whether Cray's GPU transport layer for CUDA
// (libmpi_gtl_cuda.so, which the Cray compiler wrappers link when a
// craype-accel-nvidia module is loaded) is among the loaded objects.
static int sg_gtl_cuda_loaded(void) { return dl_iterate_phdr(sg_gtl_cuda_cb, NULL); }

static inline int sg_max_library_version_string(void) { return MPI_MAX_LIBRARY_VERSION_STRING; }

static inline int sg_allreduce_device(uintptr_t p, int n, MPI_Datatype t, MPI_Op op, MPI_Comm c) {
	return MPI_Allreduce(MPI_IN_PLACE, (void *)p, n, t, op, c);
}

static inline int sg_iallreduce_device(uintptr_t p, int n, MPI_Datatype t, MPI_Op op, MPI_Comm c, MPI_Request *r) {
	return MPI_Iallreduce(MPI_IN_PLACE, (void *)p, n, t, op, c, r);
}
*/
import "C"

import (
	"fmt"
	"os"
	"sync"
	"unsafe"

	"scalegnn/collectives"
)

// gpuAware is the MPI library's answer, asked once per process on first
// use (after Init: Open MPI sets what MPIX_Query_cuda_support returns
// while it initializes). Tests replace it to run the device-pointer calls
// on host memory.
var gpuAware = sync.OnceValue(func() awareness {
	return decideGPUAware(probeGPU(), os.Getenv)
})

// probeGPU asks the loaded MPI library what it says about CUDA memory.
func probeGPU() gpuProbe {
	var p gpuProbe
	buf := make([]byte, int(C.sg_max_library_version_string())+1)
	var n C.int
	if C.MPI_Get_library_version((*C.char)(unsafe.Pointer(&buf[0])), &n) == C.sg_success() {
		p.library = string(buf[:min(max(int(n), 0), len(buf))])
	}
	var found, supported C.int
	p.cudaQuery = int(C.sg_query_cuda_support(&found))
	p.hasCUDAQuery = found != 0
	p.gpuQueryCode = int(C.sg_gpu_query_support(&found, &supported))
	p.hasGPUQuery = found != 0
	p.gpuQuery = int(supported)
	p.gtlCUDA = C.sg_gtl_cuda_loaded() != 0
	return p
}

// DeviceAware reports whether the MPI library takes CUDA device pointers
// in collectives, as it says at run time, and how it said so (a phrase for
// the log). The answer is the same for every communicator of the process.
// doc.go lists the queries and the SCALEGNN_GPU_AWARE_MPI override.
func (c *comm) DeviceAware() (ok bool, how string) {
	a := c.gpuAware()
	return a.ok, a.how
}

// gpuAware returns the cached answer, asking under the MPI lock the first
// time: the queries are MPI calls, which MPI_THREAD_SERIALIZED forbids
// making at the same time as another.
func (c *comm) gpuAware() awareness {
	unlock := c.env.lock()
	defer unlock()
	return gpuAware()
}

// checkDevice panics unless the library is GPU-aware and (ptr, n) is a
// buffer.
func (c *comm) checkDevice(method string, ptr uintptr, n int) {
	if a := c.gpuAware(); !a.ok {
		panic(&DeviceMisuseError{method, "called with a device pointer, but the MPI library is not GPU-aware (" + a.how +
			"); check DeviceAware first and stage through host memory when it is false"})
	}
	switch {
	case n < 0:
		panic(&DeviceMisuseError{method, fmt.Sprintf("negative count %d", n)})
	case ptr == 0 && n > 0:
		panic(&DeviceMisuseError{method, fmt.Sprintf("nil device pointer with count %d", n)})
	}
}

// AllReduceF32Device is AllReduceF32 on n float32 values at the device
// address ptr: the same in-place MPI_Allreduce, with the address passed
// to MPI as it is. It panics with a *DeviceMisuseError when DeviceAware
// is false. As for host slices, n beyond math.MaxInt32 is an error, and
// n == 0 is a barrier.
func (c *comm) AllReduceF32Device(ptr uintptr, n int, op collectives.Op) error {
	c.checkDevice("AllReduceF32Device", ptr, n)
	return c.allReduceDevice("AllReduceF32Device", ptr, n, 4, c.env.f32, op)
}

// AllReduceI64Device is AllReduceI64 (MPI_INT64_T) on n int64 values at
// the device address ptr; see AllReduceF32Device.
func (c *comm) AllReduceI64Device(ptr uintptr, n int, op collectives.Op) error {
	c.checkDevice("AllReduceI64Device", ptr, n)
	return c.allReduceDevice("AllReduceI64Device", ptr, n, 8, c.env.i64, op)
}

// allReduceDevice is allReduce for a device address: the same operator,
// count and empty-call rules, and the same counter.
func (c *comm) allReduceDevice(method string, ptr uintptr, n, elemSize int, t C.MPI_Datatype, op collectives.Op) error {
	mop, err := c.env.op(op)
	if err != nil {
		return c.errorf(method, err)
	}
	cn, err := cInt(n, "n")
	if err != nil {
		return c.errorf(method, err)
	}
	c.counters.Add(collectives.KindAllReduce, elemSize*n)
	if n == 0 {
		return c.Barrier()
	}
	p := C.uintptr_t(ptr)
	if err := c.call("MPI_Allreduce", func() C.int { return C.sg_allreduce_device(p, cn, t, mop, c.c) }); err != nil {
		return c.errorf(method, err)
	}
	return nil
}

// IAllReduceF32Device is IAllReduceF32 on n float32 values at the device
// address ptr (MPI_Ibarrier when n == 0). Nothing is pinned: the memory
// is the device's, and the caller keeps it allocated and untouched until
// Wait returns. It panics like AllReduceF32Device.
func (c *comm) IAllReduceF32Device(ptr uintptr, n int, op collectives.Op) (collectives.Request, error) {
	const method = "IAllReduceF32Device"
	c.checkDevice(method, ptr, n)
	mop, err := c.env.op(op)
	if err != nil {
		return nil, c.errorf(method, err)
	}
	cn, err := cInt(n, "n")
	if err != nil {
		return nil, c.errorf(method, err)
	}
	c.counters.Add(collectives.KindAllReduce, 4*n)
	r := c.request(method)
	if n == 0 {
		r.call = "MPI_Ibarrier"
		err = c.call(r.call, func() C.int { return C.MPI_Ibarrier(c.c, &r.req) })
	} else {
		r.call = "MPI_Iallreduce"
		p, t := C.uintptr_t(ptr), c.env.f32
		err = c.call(r.call, func() C.int { return C.sg_iallreduce_device(p, cn, t, mop, c.c, &r.req) })
	}
	if err != nil {
		r.release()
		return nil, c.errorf(method, err)
	}
	return r, nil
}
