package device

import (
	"errors"
	"fmt"
)

// CUDAOptions configures OpenCUDA.
type CUDAOptions struct {
	// Ordinal is the GPU among the visible ones (CUDA_VISIBLE_DEVICES):
	// callers bind a rank to local rank mod CUDADevices().
	Ordinal int
	// TF32 lets cuBLAS use TF32 tensor cores for GEMM (runtime.tf32); off,
	// GEMM rounds as float32.
	TF32 bool
	// CacheDir holds the kernels NVRTC compiled, keyed by source, GPU
	// architecture and NVRTC version; "" is the user cache directory.
	CacheDir string
}

// ErrNoCUDA is wrapped by every error that says CUDA cannot be used in
// this build or on this machine (no cgo, a missing library or driver, no
// GPU); the message names what is missing.
var ErrNoCUDA = errors.New("cuda unavailable")

// CUDADevices returns the number of GPUs visible to this process, or an
// error wrapping ErrNoCUDA that names the missing library, driver or GPU.
func CUDADevices() (int, error) {
	if cudaDevices == nil {
		return 0, fmt.Errorf("%w: this scalegnn was built without cgo; build it with CGO_ENABLED=1 to use runtime.device = \"cuda\"", ErrNoCUDA)
	}
	return cudaDevices()
}

// OpenCUDA returns the CUDA device on GPU opt.Ordinal: its own stream,
// cuBLAS and cuSPARSE handles and kernels compiled by NVRTC for the GPU.
// Every failure is an error (wrapping ErrNoCUDA when CUDA is missing),
// one line naming the library, symbol or GPU.
func OpenCUDA(opt CUDAOptions) (Device, error) {
	if openCUDA == nil {
		_, err := CUDADevices()
		return nil, err
	}
	return openCUDA(opt)
}

// MemoryInfo returns the free and total memory of a device with memory of
// its own (a GPU); ok is false for the host devices, whose memory is the
// process's.
func MemoryInfo(dev Device) (free, total int64, ok bool) {
	if m, isGPU := unwrapped(dev).(interface{ memoryInfo() (int64, int64) }); isGPU {
		free, total = m.memoryInfo()
		return free, total, true
	}
	return 0, 0, false
}

// cudaDevices and openCUDA are set by cuda_open.go in builds with cgo.
var (
	cudaDevices func() (int, error)
	openCUDA    func(CUDAOptions) (Device, error)
)

// OutOfMemoryError is the panic value of an allocation a GPU cannot
// satisfy (Alloc, Share, UploadCSR on a CUDA device): the device's memory
// is a resource the job sized before starting (jobs' memory check), so
// running out is reported, by the caller that recovers it, with the
// predicted need and a grid that fits.
type OutOfMemoryError struct {
	Bytes       int64 // the allocation that failed
	Free, Total int64 // the GPU's memory when it failed
	Device      string
}

func (e *OutOfMemoryError) Error() string {
	return fmt.Sprintf("device: %s is out of memory: %d bytes asked for with %d of %d free", e.Device, e.Bytes, e.Free, e.Total)
}
