//go:build !nompi

package mpi

import (
	"fmt"
	"strings"
)

// gpuAwareEnv is the environment variable that overrides the MPI library's
// answer to DeviceAware: "0" stages through host memory whatever the
// library says; "1" asserts GPU-awareness for a library that has no
// run-time query, and is refused when the library answers no.
const gpuAwareEnv = "SCALEGNN_GPU_AWARE_MPI"

// gpuProbe is what the loaded MPI library says about CUDA memory (see
// probeGPU), kept apart from the decision so that the decision can be
// tested on any library's answers.
type gpuProbe struct {
	library string // MPI_Get_library_version ("" if it failed)

	hasCUDAQuery bool // MPIX_Query_cuda_support is in the process
	cudaQuery    int  // its result

	hasGPUQuery  bool // MPIX_GPU_query_support is in the process
	gpuQueryCode int  // its return code for MPIX_GPU_SUPPORT_CUDA
	gpuQuery     int  // its *is_supported

	gtlCUDA bool // Cray's libmpi_gtl_cuda is loaded
}

// awareness is DeviceAware's answer.
type awareness struct {
	ok  bool
	how string
}

// verdict is the library's own answer: yes, no, or none (no run-time
// query, or none this package knows).
type verdict int

const (
	verdictNone verdict = iota
	verdictNo
	verdictYes
)

// libraryName is a short name for the library of an
// MPI_Get_library_version string, for the log.
func libraryName(version string) string {
	switch {
	case strings.Contains(strings.ToUpper(version), "CRAY MPICH"):
		return "Cray MPICH"
	case strings.HasPrefix(version, "Open MPI"):
		return "Open MPI"
	case strings.Contains(version, "MVAPICH"):
		return "MVAPICH"
	case strings.Contains(version, "Intel(R) MPI"):
		return "Intel MPI"
	case strings.HasPrefix(version, "MPICH"):
		return "MPICH"
	}
	name, _, _ := strings.Cut(version, "\n")
	name, _, _ = strings.Cut(name, ",")
	name = strings.Join(strings.Fields(name), " ")
	if name == "" {
		return "the MPI library"
	}
	if r := []rune(name); len(r) > 40 {
		name = string(r[:40]) + "..."
	}
	return name
}

// answer is the library's verdict on CUDA memory and how it gave it.
// Cray MPICH is asked through its environment (its MPIX queries are not
// documented to reflect MPICH_GPU_SUPPORT_ENABLED); other libraries through
// MPIX_GPU_query_support (MPICH >= 4), else MPIX_Query_cuda_support (Open
// MPI; MPICH 4 exports both and answers the same through either).
func (p gpuProbe) answer(getenv func(string) string) (verdict, string) {
	lib := libraryName(p.library)
	if lib == "Cray MPICH" {
		const key = "MPICH_GPU_SUPPORT_ENABLED"
		switch v := getenv(key); {
		case v != "1":
			return verdictNo, fmt.Sprintf("%s: %s=%q, not 1 (not CUDA-aware)", lib, key, v)
		case !p.gtlCUDA:
			return verdictNo, fmt.Sprintf("%s: %s=1 but libmpi_gtl_cuda is not loaded (not CUDA-aware)", lib, key)
		}
		return verdictYes, lib + ": MPICH_GPU_SUPPORT_ENABLED=1 and libmpi_gtl_cuda loaded (CUDA-aware)"
	}
	switch {
	case p.hasGPUQuery && p.gpuQueryCode != 0:
		return verdictNo, fmt.Sprintf("%s: MPIX_GPU_query_support(MPIX_GPU_SUPPORT_CUDA) failed with code %d (not CUDA-aware)",
			lib, p.gpuQueryCode)
	case p.hasGPUQuery:
		return yesNo(p.gpuQuery != 0, fmt.Sprintf("%s: MPIX_GPU_query_support(MPIX_GPU_SUPPORT_CUDA) = %d", lib, p.gpuQuery))
	case p.hasCUDAQuery:
		return yesNo(p.cudaQuery != 0, fmt.Sprintf("%s: MPIX_Query_cuda_support() = %d", lib, p.cudaQuery))
	}
	return verdictNone, lib + ": no run-time CUDA query (MPIX_GPU_query_support, MPIX_Query_cuda_support)"
}

func yesNo(yes bool, how string) (verdict, string) {
	if yes {
		return verdictYes, how + " (CUDA-aware)"
	}
	return verdictNo, how + " (not CUDA-aware)"
}

// decideGPUAware combines the library's answer with the gpuAwareEnv
// override. "1" cannot overrule a library that says no: such a library
// reduces on the host CPU and would read device memory as host memory.
// A value other than "0" or "1" is bad input that DeviceAware cannot
// return as an error; it stages (the safe path) and the phrase says why.
func decideGPUAware(p gpuProbe, getenv func(string) string) awareness {
	v, how := p.answer(getenv)
	switch o := getenv(gpuAwareEnv); o {
	case "":
		if v == verdictNone {
			return awareness{false, how + "; taken as not CUDA-aware (" + gpuAwareEnv + "=1 asserts it is)"}
		}
		return awareness{v == verdictYes, how}
	case "0":
		return awareness{false, gpuAwareEnv + "=0 stages through host memory; " + how}
	case "1":
		switch v {
		case verdictYes:
			return awareness{true, how + "; " + gpuAwareEnv + "=1 agrees"}
		case verdictNo:
			return awareness{false, gpuAwareEnv + "=1 refused, the library says no: " + how}
		}
		return awareness{true, gpuAwareEnv + "=1 asserts CUDA-aware: " + how}
	default:
		return awareness{false, fmt.Sprintf("%s=%q is not 0 or 1 (unset it to follow the MPI library), so staging through host memory; %s",
			gpuAwareEnv, o, how)}
	}
}
