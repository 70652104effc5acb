//go:build cgo

package device

import (
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"testing"
)

// TestKernelNames checks the embedded kernel source against the kernel
// table on the host, without a GPU: every name the device loads is
// defined as an extern "C" kernel, and every kernel defined is loaded, so
// that a renamed or new kernel fails here rather than at a GPU's start.
func TestKernelNames(t *testing.T) {
	defined := map[string]bool{}
	for _, m := range regexp.MustCompile(`extern "C" __global__ void (k_\w+)\(`).FindAllStringSubmatch(kernelSource, -1) {
		defined[m[1]] = true
	}
	loaded := map[string]bool{}
	for k, name := range kernelNames {
		if name == "" {
			t.Errorf("kernel %d has no name", k)
		}
		loaded[name] = true
		if !defined[name] {
			t.Errorf("kernel %s is loaded but cuda_kernels.cu does not define it", name)
		}
	}
	for name := range defined {
		if !loaded[name] {
			t.Errorf("cuda_kernels.cu defines %s, which the device does not load", name)
		}
	}
	if len(kernelNames) != int(numKernels) {
		t.Errorf("%d names for %d kernels", len(kernelNames), numKernels)
	}
}

// TestKernelSourceSyntax compiles the kernel source as C++ with g++ (when
// there is one) against stand-ins for CUDA's built-ins: a syntax and type
// check of what NVRTC compiles on a GPU machine.
func TestKernelSourceSyntax(t *testing.T) {
	gxx, err := exec.LookPath("g++")
	if err != nil {
		t.Skip("no g++")
	}
	const stubs = `#define __global__
#define __device__
#define __forceinline__ inline
#define __shared__ static
struct dim3_ { unsigned x, y, z; };
extern dim3_ threadIdx, blockIdx, blockDim, gridDim;
unsigned __ballot_sync(unsigned, bool);
float __shfl_xor_sync(unsigned, float, int);
float __int_as_float(int);
float __uint_as_float(unsigned);
unsigned __float_as_uint(float);
double exp(double); double expm1(double); double log(double); double sqrt(double);
unsigned long long atomicAdd(unsigned long long *, unsigned long long);
void __syncthreads();
`
	src := filepath.Join(t.TempDir(), "kernels.cpp")
	if err := os.WriteFile(src, []byte(stubs+kernelSource), 0o644); err != nil {
		t.Fatal(err)
	}
	if out, err := exec.Command(gxx, "-std=c++17", "-fsyntax-only", "-Wall", "-Werror", src).CombinedOutput(); err != nil {
		t.Errorf("g++ rejects cuda_kernels.cu: %v\n%s", err, out)
	}
}
