//go:build cgo

package device_test

import (
	"errors"
	"fmt"
	"math"
	"os"
	"strings"
	"testing"
	"time"

	"scalegnn/collectives"
	"scalegnn/device"
	"scalegnn/device/devicetest"
	"scalegnn/spmm"
	"scalegnn/spmm/spmmtest"
)

// cudaForTest opens GPU 0, or skips the test where CUDA is unavailable;
// with SCALEGNN_REQUIRE_CUDA set (the GPU machine's runs) it fails
// instead, so a broken install cannot pass as a skip.
func cudaForTest(t testing.TB) *device.CUDA {
	t.Helper()
	dev, err := device.NewCUDA(device.CUDAOptions{})
	if err != nil {
		if os.Getenv("SCALEGNN_REQUIRE_CUDA") != "" || !errors.Is(err, device.ErrNoCUDA) {
			t.Fatalf("cuda: %v", err)
		}
		t.Skipf("no CUDA here: %v", err)
	}
	return dev
}

// cudaOptions are the conformance suite's tolerances for the CUDA device.
// Its softmax uses CUDA's exp, within 1 ulp in float64 like Go's but not
// always equal to it, so a gradient entry may land one float32 ulp away;
// its loss sums the rows in a fixed tree order in float64 with CUDA's log
// (k_sum2), not in row order, which moves the sum by a few float64 ulps
// per row at most. Its bfloat16 SpMM multiplies by A's values rounded
// to bfloat16 (cuSPARSE takes A and B of one type; cuda_bf16.go), so it
// is checked within a wider bound instead of against its float32 SpMM.
// Everything else is checked bit for bit, but the library products,
// which are checked within their float32 bounds.
var cudaOptions = devicetest.Options{ExpULP: 1, LossRelTol: 1e-12, SparseBF16: true}

func TestCUDA(t *testing.T) {
	devicetest.TestDeviceWith(t, cudaForTest(t), cudaOptions)
}

func TestCUDAAllocs(t *testing.T) { devicetest.TestAllocs(t, cudaForTest(t)) }

func TestCUDABF16ProductAllocs(t *testing.T) { devicetest.TestBF16ProductAllocs(t, cudaForTest(t)) }

// TestCUDAUnavailable checks the failure where there is no CUDA (CI): one
// line, wrapping ErrNoCUDA, naming what is missing.
func TestCUDAUnavailable(t *testing.T) {
	_, err := device.NewCUDA(device.CUDAOptions{})
	if err == nil {
		t.Skip("CUDA is available here")
	}
	if !errors.Is(err, device.ErrNoCUDA) {
		t.Fatalf("error %v does not wrap ErrNoCUDA", err)
	}
	msg := err.Error()
	if strings.Contains(msg, "\n") || !(strings.Contains(msg, "libcuda") || strings.Contains(msg, "GPU")) {
		t.Errorf("error is not one line naming the missing library or GPU: %q", msg)
	}
	if _, err := device.Open("cuda", 1); !errors.Is(err, device.ErrNoCUDA) {
		t.Errorf("Open(\"cuda\") = %v, want ErrNoCUDA", err)
	}
	if _, err := device.CUDADevices(); !errors.Is(err, device.ErrNoCUDA) {
		t.Errorf("CUDADevices() = %v, want ErrNoCUDA", err)
	}
}

// TestCUDACollectives checks the staged collectives against the host
// device's on in-process ranks sharing the GPU: float32 sums (one chunk
// and pipelined over several), maxima, int64 minima, bfloat16 sums and
// the nonblocking forms.
func TestCUDACollectives(t *testing.T) {
	dev := cudaForTest(t)
	host := device.NewNative(1)
	for _, n := range []int{1, 1000, 3<<20 + 5} {
		for r, err := range collectives.RunLocal(3, func(w collectives.Comm) error {
			vals := make([]float32, n)
			for i := range vals {
				vals[i] = float32(math.Sin(float64(i*(w.Rank()+1)))) * 100
			}
			ints := make([]int64, n)
			for i := range ints {
				ints[i] = int64((i * (w.Rank() + 3)) % 17)
			}
			check := func(name string, run func(d device.Device, b device.Buffer[float32]) error) error {
				want := device.Share(host, append([]float32(nil), vals...))
				if err := run(host, want); err != nil {
					return err
				}
				b := device.Alloc[float32](dev, n)
				device.Upload(dev, b, 0, vals)
				if err := run(dev, b); err != nil {
					return err
				}
				got := make([]float32, n)
				device.Download(dev, got, b, 0)
				wantH := make([]float32, n)
				device.Download(host, wantH, want, 0)
				for i := range got {
					if math.Float32bits(got[i]) != math.Float32bits(wantH[i]) {
						return fmt.Errorf("%s n=%d: element %d = %v, want %v", name, n, i, got[i], wantH[i])
					}
				}
				return nil
			}
			if err := check("sum", func(d device.Device, b device.Buffer[float32]) error {
				return device.AllReduce(d, w, b, collectives.Sum)
			}); err != nil {
				return err
			}
			if err := check("max", func(d device.Device, b device.Buffer[float32]) error {
				return device.AllReduce(d, w, b, collectives.Max)
			}); err != nil {
				return err
			}
			if err := check("isum", func(d device.Device, b device.Buffer[float32]) error {
				req, err := device.IAllReduce(d, w, b, collectives.Sum)
				if err != nil {
					return err
				}
				return req.Wait()
			}); err != nil {
				return err
			}
			if err := check("bf16", func(d device.Device, b device.Buffer[float32]) error {
				return device.AllReduceBF16(d, w, b, device.Alloc[uint16](d, n))
			}); err != nil {
				return err
			}
			if err := check("ibf16", func(d device.Device, b device.Buffer[float32]) error {
				req, err := device.IAllReduceBF16(d, w, b, device.Alloc[uint16](d, n))
				if err != nil {
					return err
				}
				return req.Wait()
			}); err != nil {
				return err
			}
			ib := device.Alloc[int64](dev, n)
			device.Upload(dev, ib, 0, ints)
			if err := device.AllReduceI64(dev, w, ib, collectives.Min); err != nil {
				return err
			}
			want := append([]int64(nil), ints...)
			if err := w.AllReduceI64(want, collectives.Min); err != nil {
				return err
			}
			got := make([]int64, n)
			device.Download(dev, got, ib, 0)
			for i := range got {
				if got[i] != want[i] {
					return fmt.Errorf("int64 min n=%d: element %d = %d, want %d", n, i, got[i], want[i])
				}
			}
			return nil
		}) {
			if err != nil {
				t.Errorf("rank %d: %v", r, err)
			}
		}
	}
	if p := device.CollectivePath(dev, collectives.NewLocalWorld(1)[0]); !strings.Contains(p, "staged") {
		t.Errorf("CollectivePath = %q, want the staged path", p)
	}
}

// TestCUDABandwidth reports, on the GPU machine (SCALEGNN_CUDA_BENCH=1),
// the device-to-device copy bandwidth and the SpMM's, on a power-law
// matrix of 2^20 rows and 16 nonzeros a row, at several widths and
// cuSPARSE algorithms, in one run: SpMM bytes count the CSR once, one
// row of B per nonzero and C once, as the CPU benchmarks do.
func TestCUDABandwidth(t *testing.T) {
	if os.Getenv("SCALEGNN_CUDA_BENCH") == "" {
		t.Skip("set SCALEGNN_CUDA_BENCH=1 to measure")
	}
	dev := cudaForTest(t)
	const rows = 1 << 20
	a := spmmtest.PowerLawCSR(rows, rows, 16*rows, 1)
	timeIt := func(dev *device.CUDA, f func()) float64 {
		f()
		dev.Sync()
		best := math.Inf(1)
		for range 5 {
			start := time.Now()
			for range 10 {
				f()
			}
			dev.Sync()
			best = min(best, time.Since(start).Seconds()/10)
		}
		return best
	}
	n := 256 << 20 / 4 // 256 MiB
	src, dst := device.Alloc[float32](dev, n), device.Alloc[float32](dev, n)
	copyBW := 2 * float64(n) * 4 / timeIt(dev, func() { device.CopyBuffer(dev, dst, src) })
	kernBW := 2 * float64(n) * 4 / timeIt(dev, func() { dev.Copy(device.Matrix(dst, n/128, 128), device.Matrix(src, n/128, 128)) })
	t.Logf("device-to-device copy (cuMemcpyDtoD): %.0f GB/s; the Copy kernel: %.0f GB/s (%.0f%%)", copyBW/1e9, kernBW/1e9, 100*kernBW/copyBW)
	ca := dev.UploadCSR(a)
	for _, alg := range []int{6, 4, 12, 0} {
		os.Setenv("SCALEGNN_CUSPARSE_SPMM_ALG", fmt.Sprint(alg))
		d, err := device.NewCUDA(device.CUDAOptions{})
		if err != nil {
			t.Fatal(err)
		}
		for _, width := range []int{16, 32, 64, 128} {
			x := device.Matrix(device.Alloc[float32](d, rows*width), rows, width)
			y := device.Matrix(device.Alloc[float32](d, rows*width), rows, width)
			sec := timeIt(d, func() { d.SpMM(y, ca, x) })
			bytes := float64(a.NNZ())*8 + float64(rows+1)*4 + float64(a.NNZ())*float64(width)*4 + float64(rows*width)*4
			t.Logf("SpMM alg %2d width %3d: %7.3f ms, %5.0f GB/s = %3.0f%% of the copy", alg, width, sec*1e3, bytes/sec/1e9, 100*bytes/sec/copyBW)
		}
	}
	os.Unsetenv("SCALEGNN_CUSPARSE_SPMM_ALG")
	for _, s := range []struct{ m, k, n int }{{rows, 128, 128}, {128, rows, 128}} {
		am := device.Matrix(device.Alloc[float32](dev, s.m*s.k), s.m, s.k)
		bm := device.Matrix(device.Alloc[float32](dev, s.k*s.n), s.k, s.n)
		cm := device.Matrix(device.Alloc[float32](dev, s.m*s.n), s.m, s.n)
		if s.m == 128 { // the weight gradient: a^T·b
			am = device.Matrix(device.Alloc[float32](dev, s.k*s.m), s.k, s.m)
			sec := timeIt(dev, func() { dev.Gemm(spmm.Trans, spmm.NoTrans, 1, am, bm, 0, cm) })
			t.Logf("GEMM TN %dx%dx%d: %.3f ms, %.1f TFLOP/s", s.m, s.k, s.n, sec*1e3, 2*float64(s.m*s.k*s.n)/sec/1e12)
			continue
		}
		sec := timeIt(dev, func() { dev.Gemm(spmm.NoTrans, spmm.NoTrans, 1, am, bm, 0, cm) })
		t.Logf("GEMM NN %dx%dx%d: %.3f ms, %.1f TFLOP/s", s.m, s.k, s.n, sec*1e3, 2*float64(s.m*s.k*s.n)/sec/1e12)
	}
}

func BenchmarkCUDA(b *testing.B) {
	devicetest.BenchKernels(b, cudaForTest(b), benchRows, benchCols)
}

// TestCUDAReclaim allocates several times the GPU's memory in buffers
// that die at once: freed by Free, and left to the garbage collector,
// which an allocation that fails runs before it reports the GPU full.
func TestCUDAReclaim(t *testing.T) {
	dev := cudaForTest(t)
	free, _, _ := device.MemoryInfo(dev)
	n := int(free / 3 / 4) // a third of the free memory, in float32
	for _, explicit := range []bool{true, false} {
		for range 8 {
			b := device.Alloc[float32](dev, n)
			dev.Fill(device.Matrix(b, 1, n), 1)
			if explicit {
				device.Free(dev, b)
			}
		}
	}
	b := device.Alloc[float32](dev, 8)
	func() {
		defer func() {
			if _, ok := recover().(device.ShapeError); !ok {
				t.Errorf("Free of a view did not panic with a ShapeError")
			}
		}()
		device.Free(dev, b.Slice(1, 8))
	}()
}
