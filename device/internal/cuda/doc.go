// Package cuda is scalegnn's binding to the CUDA driver API, cuBLAS,
// cuSPARSE and NVRTC, for the CUDA device of package device. It is a cgo
// leaf that needs no CUDA headers or libraries to build: shim.h declares
// the few functions and types used, with hand-written prototypes and
// opaque handles, and shim.c fills one dispatch table per library with
// dlopen/dlsym at run time, checking every symbol, as NVIDIA/go-nvml's
// pkg/dl and xgboost's nccl_stub do (a table, not lazy binding of
// undefined symbols, which fails where lazy binding is off).
//
// Load opens libcuda.so.1 (the driver API: the driver is what a machine
// with a GPU always has), then libcublas, libcusparse and libnvrtc by
// their sonames for CUDA 13, 12 and 11, in the loader's path and then in
// $CUDA_HOME/lib64 and /usr/local/cuda/lib64. A library, symbol or GPU
// that is missing is a *MissingError naming it and saying what to
// install or set; a failing call is an *Error naming the call, its code
// and the library's message.
//
// Contexts: each Ctx holds the primary context of one GPU, a
// non-blocking stream and a cuBLAS and a cuSPARSE handle on that stream.
// The driver's current context is per OS thread and goroutines move
// between threads, so every C wrapper binds its context first (a
// thread-local check, a call only when it changed).
//
// Without cgo the package builds too (nocgo.go) and Load reports that
// the binary cannot load CUDA.
package cuda
