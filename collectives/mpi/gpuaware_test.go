//go:build !nompi

package mpi

import (
	"context"
	"errors"
	"fmt"
	"math"
	"os"
	"os/exec"
	"runtime"
	"strings"
	"testing"
	"time"
	"unsafe"

	"scalegnn/collectives"
	"scalegnn/device"
)

// The MPI communicator is the DeviceComm that package device picks by type
// assertion (device does not import this package, so no cycle).
var _ device.DeviceComm = (*comm)(nil)

func TestLibraryName(t *testing.T) {
	for _, tc := range []struct{ version, want string }{
		{"Open MPI v4.1.4, package: Debian OpenMPI, ident: 4.1.4, repo rev: v4.1.4, May 26, 2022\x00", "Open MPI"},
		{"MPICH Version:\t4.0.2\nMPICH Release date:\tThu Apr  7 12:34:45 CDT 2022\n", "MPICH"},
		{"MPI VERSION    : CRAY MPICH version 8.1.27.12 (ANL base 3.4a2)\nMPI BUILD INFO : ...", "Cray MPICH"},
		{"MVAPICH2 Version      :\t2.3.7\nMVAPICH2 Release date :\tWed March 02 22:00:00 EST 2022", "MVAPICH"},
		{"Intel(R) MPI Library 2021.6 for Linux* OS\n", "Intel MPI"},
		{"Spectrum   MPI 10.4, built somewhere", "Spectrum MPI 10.4"},
		{strings.Repeat("x", 50), strings.Repeat("x", 40) + "..."},
		{"", "the MPI library"},
	} {
		if got := libraryName(tc.version); got != tc.want {
			t.Errorf("libraryName(%q) = %q, want %q", tc.version, got, tc.want)
		}
	}
}

func TestDecideGPUAware(t *testing.T) {
	const (
		ompi  = "Open MPI v4.1.4, package: Debian OpenMPI"
		mpich = "MPICH Version:\t4.0.2\n"
		cray  = "MPI VERSION    : CRAY MPICH version 8.1.27.12 (ANL base 3.4a2)"
		intel = "Intel(R) MPI Library 2021.6 for Linux* OS"
	)
	ompiNo := gpuProbe{library: ompi, hasCUDAQuery: true}
	ompiYes := gpuProbe{library: ompi, hasCUDAQuery: true, cudaQuery: 1}
	// MPICH 4 exports both queries; MPIX_GPU_query_support is the one asked.
	mpichNo := gpuProbe{library: mpich, hasCUDAQuery: true, cudaQuery: 1, hasGPUQuery: true}
	mpichYes := gpuProbe{library: mpich, hasCUDAQuery: true, hasGPUQuery: true, gpuQuery: 1}
	mpichFails := gpuProbe{library: mpich, hasGPUQuery: true, gpuQueryCode: 12, gpuQuery: 1}
	// Cray MPICH is asked through its environment, whatever its queries say.
	crayGTL := gpuProbe{library: cray, hasGPUQuery: true, hasCUDAQuery: true, gtlCUDA: true}
	crayNoGTL := gpuProbe{library: cray, hasGPUQuery: true, gpuQuery: 1}
	none := gpuProbe{library: intel}
	crayOn := map[string]string{"MPICH_GPU_SUPPORT_ENABLED": "1"}
	with := func(m map[string]string, k, v string) map[string]string {
		out := map[string]string{k: v}
		for k, v := range m {
			out[k] = v
		}
		return out
	}
	for _, tc := range []struct {
		name  string
		probe gpuProbe
		env   map[string]string
		ok    bool
		how   string
	}{
		{"ompi no", ompiNo, nil, false, "Open MPI: MPIX_Query_cuda_support() = 0 (not CUDA-aware)"},
		{"ompi yes", ompiYes, nil, true, "Open MPI: MPIX_Query_cuda_support() = 1 (CUDA-aware)"},
		{"mpich no", mpichNo, nil, false, "MPICH: MPIX_GPU_query_support(MPIX_GPU_SUPPORT_CUDA) = 0 (not CUDA-aware)"},
		{"mpich yes", mpichYes, nil, true, "MPICH: MPIX_GPU_query_support(MPIX_GPU_SUPPORT_CUDA) = 1 (CUDA-aware)"},
		{"mpich query fails", mpichFails, nil, false,
			"MPICH: MPIX_GPU_query_support(MPIX_GPU_SUPPORT_CUDA) failed with code 12 (not CUDA-aware)"},
		{"cray on", crayGTL, crayOn, true, "Cray MPICH: MPICH_GPU_SUPPORT_ENABLED=1 and libmpi_gtl_cuda loaded (CUDA-aware)"},
		{"cray off", crayGTL, nil, false, `Cray MPICH: MPICH_GPU_SUPPORT_ENABLED="", not 1 (not CUDA-aware)`},
		{"cray 0", crayGTL, map[string]string{"MPICH_GPU_SUPPORT_ENABLED": "0"}, false,
			`Cray MPICH: MPICH_GPU_SUPPORT_ENABLED="0", not 1 (not CUDA-aware)`},
		{"cray no gtl", crayNoGTL, crayOn, false,
			"Cray MPICH: MPICH_GPU_SUPPORT_ENABLED=1 but libmpi_gtl_cuda is not loaded (not CUDA-aware)"},
		{"no query", none, nil, false,
			"Intel MPI: no run-time CUDA query (MPIX_GPU_query_support, MPIX_Query_cuda_support); taken as not CUDA-aware (SCALEGNN_GPU_AWARE_MPI=1 asserts it is)"},

		{"0 over yes", ompiYes, map[string]string{gpuAwareEnv: "0"}, false,
			"SCALEGNN_GPU_AWARE_MPI=0 stages through host memory; Open MPI: MPIX_Query_cuda_support() = 1 (CUDA-aware)"},
		{"0 over cray", crayGTL, with(crayOn, gpuAwareEnv, "0"), false,
			"SCALEGNN_GPU_AWARE_MPI=0 stages through host memory; Cray MPICH: MPICH_GPU_SUPPORT_ENABLED=1 and libmpi_gtl_cuda loaded (CUDA-aware)"},
		{"0 over no", ompiNo, map[string]string{gpuAwareEnv: "0"}, false,
			"SCALEGNN_GPU_AWARE_MPI=0 stages through host memory; Open MPI: MPIX_Query_cuda_support() = 0 (not CUDA-aware)"},
		{"1 with yes", mpichYes, map[string]string{gpuAwareEnv: "1"}, true,
			"MPICH: MPIX_GPU_query_support(MPIX_GPU_SUPPORT_CUDA) = 1 (CUDA-aware); SCALEGNN_GPU_AWARE_MPI=1 agrees"},
		{"1 refused", ompiNo, map[string]string{gpuAwareEnv: "1"}, false,
			"SCALEGNN_GPU_AWARE_MPI=1 refused, the library says no: Open MPI: MPIX_Query_cuda_support() = 0 (not CUDA-aware)"},
		{"1 refused by cray", crayNoGTL, with(crayOn, gpuAwareEnv, "1"), false,
			"SCALEGNN_GPU_AWARE_MPI=1 refused, the library says no: Cray MPICH: MPICH_GPU_SUPPORT_ENABLED=1 but libmpi_gtl_cuda is not loaded (not CUDA-aware)"},
		{"1 without query", none, map[string]string{gpuAwareEnv: "1"}, true,
			"SCALEGNN_GPU_AWARE_MPI=1 asserts CUDA-aware: Intel MPI: no run-time CUDA query (MPIX_GPU_query_support, MPIX_Query_cuda_support)"},
		{"bad value", ompiYes, map[string]string{gpuAwareEnv: "yes"}, false,
			`SCALEGNN_GPU_AWARE_MPI="yes" is not 0 or 1 (unset it to follow the MPI library), so staging through host memory; Open MPI: MPIX_Query_cuda_support() = 1 (CUDA-aware)`},
		{"spaces are not 1", none, map[string]string{gpuAwareEnv: " 1"}, false,
			`SCALEGNN_GPU_AWARE_MPI=" 1" is not 0 or 1 (unset it to follow the MPI library), so staging through host memory; Intel MPI: no run-time CUDA query (MPIX_GPU_query_support, MPIX_Query_cuda_support)`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			a := decideGPUAware(tc.probe, func(k string) string { return tc.env[k] })
			if a.ok != tc.ok || a.how != tc.how {
				t.Errorf("got (%v, %q)\nwant (%v, %q)", a.ok, a.how, tc.ok, tc.how)
			}
			if strings.Contains(a.how, "\n") {
				t.Errorf("how %q spans several lines", a.how)
			}
		})
	}
}

// TestDeviceAwareSingleton asks this build's MPI library, in a singleton
// child per value of the override (the answer is cached per process), and
// runs the device-pointer calls there on host memory (see childDevice).
func TestDeviceAwareSingleton(t *testing.T) {
	lib := libraryAnswer(t)
	for _, tc := range []struct {
		env  string
		want string // the DeviceAware line
	}{
		{"", lib},
		{"0", "DeviceAware() = false, SCALEGNN_GPU_AWARE_MPI=0 stages through host memory; " + strings.TrimPrefix(lib, "DeviceAware() = false, ")},
		{"yes", `DeviceAware() = false, SCALEGNN_GPU_AWARE_MPI="yes" is not 0 or 1`},
	} {
		t.Run("env="+tc.env, func(t *testing.T) {
			t.Setenv(gpuAwareEnv, tc.env)
			runDeviceChild(t, tc.want, "device: ok on 1 ranks")
		})
	}
	if strings.HasPrefix(lib, "DeviceAware() = false") {
		t.Run("env=1", func(t *testing.T) {
			t.Setenv(gpuAwareEnv, "1")
			runDeviceChild(t, "DeviceAware() = false, SCALEGNN_GPU_AWARE_MPI=1 refused, the library says no: ", "device: ok on 1 ranks")
		})
	}
}

// runDeviceChild runs the test binary as a singleton in the child mode
// "device" and checks that it succeeds and prints every line of want.
func runDeviceChild(t *testing.T, want ...string) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	cmd := exec.CommandContext(ctx, os.Args[0])
	cmd.Env = append(os.Environ(), childEnv+"=device")
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("child: %v\n%s", err, out)
	}
	for _, w := range want {
		if !strings.Contains(string(out), w) {
			t.Errorf("child's output does not contain %q:\n%s", w, out)
		}
	}
}

// libraryAnswer returns the DeviceAware line this build's library must
// print, or the part of it that does not depend on how the library was
// built. A library built without CUDA must say no: Open MPI when ompi_info
// says mpi_built_with_cuda_support is false, MPICH when mpichversion's
// configure line names no CUDA (MPICH 4's GPU support also needs yaksa,
// which Debian's is built without).
func libraryAnswer(t *testing.T) string {
	t.Helper()
	var tool string
	var args []string
	var noCUDA func(string) bool
	switch testMPI {
	case "ompi":
		tool, args = "ompi_info", []string{"--parsable", "--all"}
		noCUDA = func(out string) bool { return strings.Contains(out, "mpi_built_with_cuda_support:value:false") }
	case "mpich":
		tool = "mpichversion"
		noCUDA = func(out string) bool { return !strings.Contains(strings.ToLower(out), "cuda") }
	}
	if tool != "" {
		if out, err := exec.Command(tool, args...).Output(); err == nil && noCUDA(string(out)) {
			return "DeviceAware() = false, " + testQuery + "0 (not CUDA-aware)\n"
		}
		t.Logf("%s does not say that the library is built without CUDA; checking the query's name only", tool)
	}
	return testQuery
}

// TestDeviceMPIRun runs the device-pointer calls on host memory on three
// ranks, where the reductions change the values.
func TestDeviceMPIRun(t *testing.T) {
	if testing.Short() {
		t.Skip("starts mpirun")
	}
	mpirun, err := exec.LookPath(testMPIRun)
	if err != nil {
		t.Skipf("no %s in PATH", testMPIRun)
	}
	var args []string
	if os.Geteuid() == 0 && testMPI == "ompi" {
		args = append(args, "--allow-run-as-root")
	}
	if testMPI == "ompi" {
		args = append(args, "--oversubscribe", "-x", childEnv, "-x", gpuAwareEnv)
	}
	args = append(args, "-np", "3", os.Args[0])
	t.Setenv(gpuAwareEnv, "")
	runChild(t, "device", "device: ok on 3 ranks", mpirun, args...)
}

// childDevice is the child mode "device": it prints DeviceAware's answer,
// checks that the device-pointer calls panic when it is false, then makes
// them aware with the test hook and runs them on host memory passed as
// addresses, and finalizes MPI.
func childDevice(world collectives.Comm) int {
	c := world.(*comm)
	ok, how := c.DeviceAware()
	if c.rank == 0 {
		fmt.Printf("DeviceAware() = %v, %s\n", ok, how)
	}
	err := checkDeviceCalls(c, ok)
	if err != nil {
		fmt.Fprintf(os.Stderr, "rank %d: %v\n", c.rank, err)
		world.Abort(1)
	}
	if err := Finalize(); err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	if c.rank == 0 {
		fmt.Printf("device: ok on %d ranks\n", c.size)
	}
	return 0
}

// misuse runs f and returns the *DeviceMisuseError it panics with, or an
// error if it panics with something else or returns.
func misuse(f func()) (err error) {
	defer func() {
		r := recover()
		m, ok := r.(*DeviceMisuseError)
		switch {
		case r == nil:
			err = errors.New("no panic")
		case !ok:
			err = fmt.Errorf("panic %v, want a *DeviceMisuseError", r)
		default:
			err = m
		}
	}()
	f()
	return nil
}

func checkDeviceCalls(c *comm, aware bool) error {
	var one [1]float32
	p := uintptr(unsafe.Pointer(&one[0]))
	calls := []struct {
		name string
		f    func(ptr uintptr, n int) error
	}{
		{"AllReduceF32Device", func(ptr uintptr, n int) error { return c.AllReduceF32Device(ptr, n, collectives.Sum) }},
		{"AllReduceI64Device", func(ptr uintptr, n int) error { return c.AllReduceI64Device(ptr, n, collectives.Sum) }},
		{"IAllReduceF32Device", func(ptr uintptr, n int) error {
			r, err := c.IAllReduceF32Device(ptr, n, collectives.Sum)
			if err == nil {
				err = r.Wait()
			}
			return err
		}},
	}
	if !aware {
		for _, call := range calls {
			err := misuse(func() { _ = call.f(p, 1) })
			want := "mpi: " + call.name + ": called with a device pointer, but the MPI library is not GPU-aware ("
			if err == nil || !strings.HasPrefix(err.Error(), want) {
				return fmt.Errorf("%s when not aware: %v, want a panic starting %q", call.name, err, want)
			}
		}
	}
	// The test hook: host memory stands in for device memory, which a
	// GPU-aware library takes through the same calls.
	gpuAware = func() awareness { return awareness{true, "test"} }
	for _, call := range calls {
		for _, bad := range []struct {
			ptr  uintptr
			n    int
			want string
		}{{0, 1, "nil device pointer with count 1"}, {p, -1, "negative count -1"}} {
			err := misuse(func() { _ = call.f(bad.ptr, bad.n) })
			if want := "mpi: " + call.name + ": " + bad.want; err == nil || err.Error() != want {
				return fmt.Errorf("%s(%#x, %d): %v, want a panic %q", call.name, bad.ptr, bad.n, err, want)
			}
		}
		// Counts beyond MPI's int are refused as for host slices, before
		// any memory is touched.
		err := call.f(p, math.MaxInt32+1)
		want := fmt.Sprintf("mpi: %s on rank %d of %d: n = 2147483648 does not fit MPI's int count (0 to 2147483647); split the call",
			call.name, c.rank, c.size)
		if err == nil || err.Error() != want {
			return fmt.Errorf("%s with n = 2^31: %v, want %q", call.name, err, want)
		}
		// An empty call is a barrier, even at address 0.
		if err := call.f(0, 0); err != nil {
			return fmt.Errorf("%s(0, 0): %v", call.name, err)
		}
	}
	if err := c.AllReduceF32Device(p, 1, collectives.Op(99)); err == nil || !strings.Contains(err.Error(), "unknown reduction operator") {
		return fmt.Errorf("AllReduceF32Device with op 99: %v, want an unknown operator error", err)
	}
	for _, n := range []int{1, 7, 1000, 1 << 18} {
		for _, op := range []collectives.Op{collectives.Sum, collectives.Max, collectives.Min} {
			if err := checkF32Device(c, n, op, false); err != nil {
				return err
			}
			if err := checkF32Device(c, n, op, true); err != nil {
				return err
			}
			if err := checkI64Device(c, n, op); err != nil {
				return err
			}
		}
	}
	return nil
}

// f32Want and i64Want are the reductions of the values rank r puts at
// index i: r + i%7, and r<<40 + i%5 + 1<<60, which a double cannot hold
// (an int64 reduced as a float64 would show; the sum fits up to 7 ranks).
func f32Want(size, i int, op collectives.Op) float32 {
	switch op {
	case collectives.Sum:
		return float32(size*(size-1)/2 + size*(i%7))
	case collectives.Max:
		return float32(size - 1 + i%7)
	}
	return float32(i % 7)
}

func i64Want(size, i int, op collectives.Op) int64 {
	base := int64(i%5) + 1<<60
	switch op {
	case collectives.Sum:
		return int64(size*(size-1)/2)<<40 + int64(size)*base
	case collectives.Max:
		return int64(size-1)<<40 + base
	}
	return base
}

// checkF32Device reduces n values placed between two guard elements,
// which must stay as they are: the count reaches MPI unchanged.
func checkF32Device(c *comm, n int, op collectives.Op, nonblocking bool) error {
	const guard = float32(-12345)
	buf := make([]float32, n+2)
	buf[0], buf[n+1] = guard, guard
	for i := range n {
		buf[1+i] = float32(c.rank + i%7)
	}
	name := "AllReduceF32Device"
	before := c.counters.Bytes(collectives.KindAllReduce)
	p := uintptr(unsafe.Pointer(&buf[1]))
	if nonblocking {
		name = "IAllReduceF32Device"
		r, err := c.IAllReduceF32Device(p, n, op)
		if err != nil {
			return err
		}
		runtime.GC()
		if err := r.Wait(); err != nil {
			return err
		}
		if err := r.Wait(); err != nil {
			return fmt.Errorf("%s: second Wait: %v", name, err)
		}
	} else if err := c.AllReduceF32Device(p, n, op); err != nil {
		return err
	}
	runtime.KeepAlive(buf)
	if got := c.counters.Bytes(collectives.KindAllReduce) - before; got != int64(4*n) {
		return fmt.Errorf("%s of %d: counted %d bytes, want %d", name, n, got, 4*n)
	}
	if buf[0] != guard || buf[n+1] != guard {
		return fmt.Errorf("%s of %d: guards %v, %v changed", name, n, buf[0], buf[n+1])
	}
	for i, v := range buf[1 : n+1] {
		if want := f32Want(c.size, i, op); v != want {
			return fmt.Errorf("%s of %d, op %v: index %d: got %v, want %v", name, n, op, i, v, want)
		}
	}
	return nil
}

func checkI64Device(c *comm, n int, op collectives.Op) error {
	const guard = int64(-12345)
	buf := make([]int64, n+2)
	buf[0], buf[n+1] = guard, guard
	for i := range n {
		buf[1+i] = int64(c.rank)<<40 + int64(i%5) + 1<<60
	}
	if err := c.AllReduceI64Device(uintptr(unsafe.Pointer(&buf[1])), n, op); err != nil {
		return err
	}
	runtime.KeepAlive(buf)
	if buf[0] != guard || buf[n+1] != guard {
		return fmt.Errorf("AllReduceI64Device of %d: guards %v, %v changed", n, buf[0], buf[n+1])
	}
	for i, v := range buf[1 : n+1] {
		if want := i64Want(c.size, i, op); v != want {
			return fmt.Errorf("AllReduceI64Device of %d, op %v: index %d: got %v, want %v", n, op, i, v, want)
		}
	}
	return nil
}
