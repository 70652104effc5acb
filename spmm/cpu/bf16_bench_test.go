package cpu

import (
	"fmt"
	"slices"
	"testing"
	"time"

	"scalegnn/spmm"
	"scalegnn/spmm/spmmtest"
)

// BenchmarkBF16 times the float32 and bfloat16 kernels side by side in one
// run, beside a STREAM triad, on the R-MAT graph of BenchmarkBandwidth
// (scale 18: 262144 vertices, edge factor 16) at width 128 on 2 threads,
// and the GEMMs of a GCN layer of the same graph: the forward X·W
// (262144 × 128 times 128 × 128), the weight gradient Xᵀ·G (128 × 262144
// times 262144 × 128, "-TN") and the input gradient G·Wᵀ ("-NT"), each in
// float32 (sgemm) and bfloat16 (GemmBF16):
//
//	go test -run '^$' -bench BF16 -benchtime 10x ./spmm/cpu
//
// Every iteration runs each operation once in turn, so that the shared
// machine's drift hits them alike; the reported figures are medians:
// milliseconds per operation (…-ms), ratios to the float32 operation
// (…-x), and for the SpMMs GB/s and % of the triad's GB/s, with the bytes
// of bandwidth_test.go's spmmBytes at the element size each one reads and
// writes (spmmBytesBF16). bench/bf16-kernels.sh runs it.
func BenchmarkBF16(b *testing.B) {
	for _, scale := range []int{18} {
		b.Run(fmt.Sprintf("rmat%d/threads=2/w128", scale), func(b *testing.B) {
			benchBF16(b, rmatAdj(scale), 2, 128)
		})
	}
}

// spmmBytesBF16 is spmmBytes with the B rows gathered at inBytes per
// element and the output written at outBytes: the CSR arrays once, the B
// row of every nonzero, the output once.
func spmmBytesBF16(a *spmm.CSR, width, inBytes, outBytes int) float64 {
	nnz, rows, w := float64(a.NNZ()), float64(a.Rows), float64(width)
	return nnz*(8+float64(inBytes)*w) + rows*(8+float64(outBytes)*w)
}

func benchBF16(b *testing.B, a *spmm.CSR, threads, width int) {
	x := spmmtest.RandomDense(a.Cols, width, 0, 2)
	xh := spmm.NewDenseBF16(a.Cols, width)
	spmm.EncodeBF16(xh, x)
	d32, d16 := spmm.NewDense(a.Rows, width), spmm.NewDenseBF16(a.Rows, width)
	w := spmmtest.RandomDense(width, width, 0, 3)
	wh := spmm.NewDenseBF16(width, width)
	spmm.EncodeBF16(wh, w)
	g32 := spmm.NewDense(a.Rows, width)
	// The backward pass's GEMMs: a gradient G (a.Rows × width), the weight
	// gradient Xᵀ·G and the input gradient G·Wᵀ.
	gin := spmmtest.RandomDense(a.Rows, width, 0, 4)
	gh := spmm.NewDenseBF16(a.Rows, width)
	spmm.EncodeBF16(gh, gin)
	dw := spmm.NewDense(width, width)
	be := New(threads)
	t := triadArrays()
	ops := []struct {
		name  string
		run   func()
		bytes float64 // 0: not a bandwidth-bound product
	}{
		{"triad", func() { triad(t[0], t[1], t[2], 3, threads) }, triadBytes(triadLen)},
		{"spmm-f32", func() { be.SpMM(d32, a, x) }, spmmBytesBF16(a, width, 4, 4)},
		{"spmm-bf16-f32", func() { be.SpMMBF16(d32, a, xh) }, spmmBytesBF16(a, width, 2, 4)},
		{"spmm-bf16-bf16", func() { be.SpMMBF16ToBF16(d16, a, xh) }, spmmBytesBF16(a, width, 2, 2)},
		{"sgemm", func() { be.Gemm(spmm.NoTrans, spmm.NoTrans, 1, x, w, 0, g32) }, 0},
		{"gemm-bf16", func() { be.GemmBF16(spmm.NoTrans, spmm.NoTrans, 1, xh, wh, 0, g32) }, 0},
		{"sgemm-TN", func() { be.Gemm(spmm.Trans, spmm.NoTrans, 1, x, gin, 0, dw) }, 0},
		{"gemm-bf16-TN", func() { be.GemmBF16(spmm.Trans, spmm.NoTrans, 1, xh, gh, 0, dw) }, 0},
		{"sgemm-NT", func() { be.Gemm(spmm.NoTrans, spmm.Trans, 1, gin, w, 0, g32) }, 0},
		{"gemm-bf16-NT", func() { be.GemmBF16(spmm.NoTrans, spmm.Trans, 1, gh, wh, 0, g32) }, 0},
	}
	for _, op := range ops { // touch every page, warm the caches
		op.run()
	}
	times := make([][]float64, len(ops))
	cpus := make([][]float64, len(ops))
	for b.Loop() {
		for i, op := range ops {
			c0, t0 := cpuSeconds(), time.Now()
			op.run()
			times[i] = append(times[i], time.Since(t0).Seconds())
			cpus[i] = append(cpus[i], cpuSeconds()-c0)
		}
	}
	median := func(v []float64) float64 {
		v = slices.Clone(v)
		slices.Sort(v)
		return v[len(v)/2]
	}
	med := make(map[string]float64, len(ops))
	cpu := make(map[string]float64, len(ops))
	for i, op := range ops {
		med[op.name] = median(times[i])
		cpu[op.name] = median(cpus[i])
	}
	triadGBs := ops[0].bytes / med["triad"] / 1e9
	b.ReportMetric(triadGBs, "triad-GB/s")
	for _, op := range ops[1:] {
		b.ReportMetric(1e3*med[op.name], op.name+"-ms")
		if op.bytes > 0 {
			gbs := op.bytes / med[op.name] / 1e9
			b.ReportMetric(gbs, op.name+"-GB/s")
			b.ReportMetric(100*gbs/triadGBs, op.name+"-%triad")
		}
	}
	b.ReportMetric(med["spmm-bf16-f32"]/med["spmm-f32"], "spmm-bf16-f32-x")
	b.ReportMetric(med["spmm-bf16-bf16"]/med["spmm-f32"], "spmm-bf16-bf16-x")
	for _, f := range []string{"", "-TN", "-NT"} {
		b.ReportMetric(med["gemm-bf16"+f]/med["sgemm"+f], "gemm-bf16"+f+"-x")
		b.ReportMetric(cpu["gemm-bf16"+f]/cpu["sgemm"+f], "gemm-bf16"+f+"-x-cpu")
	}
	// The same ratios of CPU time, which other processes on the cores do
	// not inflate (see benchBandwidth).
	b.ReportMetric(cpu["spmm-bf16-f32"]/cpu["spmm-f32"], "spmm-bf16-f32-x-cpu")
	b.ReportMetric(cpu["spmm-bf16-bf16"]/cpu["spmm-f32"], "spmm-bf16-bf16-x-cpu")
	b.ReportMetric(100*(ops[1].bytes/cpu["spmm-f32"])/(ops[0].bytes/cpu["triad"]), "spmm-f32-%triad-cpu")
	b.ReportMetric(100*(ops[2].bytes/cpu["spmm-bf16-f32"])/(ops[0].bytes/cpu["triad"]), "spmm-bf16-f32-%triad-cpu")
	b.ReportMetric(100*(ops[3].bytes/cpu["spmm-bf16-bf16"])/(ops[0].bytes/cpu["triad"]), "spmm-bf16-bf16-%triad-cpu")
	b.Logf("GemmBF16Kernel: %s; BLAS: %s", GemmBF16Kernel(), BLASConfig())
}
