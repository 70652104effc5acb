package cpu

import (
	"fmt"
	"slices"
	"sync"
	"syscall"
	"testing"
	"time"

	"scalegnn/dataset"
	"scalegnn/spmm"
	"scalegnn/spmm/spmmtest"
)

// The bandwidth benchmark compares the SpMM kernel with a STREAM triad
// measured in the same run, interleaved rep by rep, on the same number of
// goroutines: the machine is shared and its bandwidth moves by tens of
// percent from one minute to the next, so only the ratio of the two taken
// side by side means something.
//
//	go test -run '^$' -bench Bandwidth -benchtime 20x ./spmm/cpu
//
// spmmBytes is the traffic credited to one SpMM, the definition behind
// every "% of triad" figure of this package: the CSR arrays once (8 bytes
// of column index and value per nonzero, 8 bytes of row pointer per row),
// the B row gathered by every nonzero (width·4 bytes each: the kernel reads
// it once per nonzero, whether it comes from cache or memory), and the
// output written once (rows·width·4). Hub rows of B are served from cache,
// so the figure can exceed the triad; it is the kernel's throughput in the
// units of the memory system, not the DRAM traffic. triadBytes counts as
// STREAM does: 12 bytes per element (two reads, one write; the write
// allocation is not counted).
func spmmBytes(a *spmm.CSR, width int) float64 {
	nnz, rows, w := float64(a.NNZ()), float64(a.Rows), float64(width)
	return nnz*(8+4*w) + rows*(8+4*w)
}

func triadBytes(n int) float64 { return 12 * float64(n) }

// triadLen is the length of each triad array: 64 MiB of float32, far beyond
// the last-level cache.
const triadLen = 1 << 24

var triadArrays = sync.OnceValue(func() [3][]float32 {
	var t [3][]float32
	for i := range t {
		t[i] = make([]float32, triadLen)
		for j := range t[i] {
			t[i][j] = float32(j%7) + float32(i)
		}
	}
	return t
})

// rmatAdj returns the GCN-normalised adjacency of the default R-MAT graph
// at scale (2^scale vertices, edge factor 16, Graph500 quadrant
// probabilities, seed 1), built once per process.
var rmatAdj = func() func(scale int) *spmm.CSR {
	var mu sync.Mutex
	cache := map[int]*spmm.CSR{}
	return func(scale int) *spmm.CSR {
		mu.Lock()
		defer mu.Unlock()
		if a, ok := cache[scale]; ok {
			return a
		}
		cfg := dataset.DefaultRMATConfig(scale)
		cfg.Features = 1 // the benchmark brings its own B
		g, err := dataset.RMAT(cfg)
		if err != nil {
			panic(err)
		}
		a := dataset.NormalizeGCN(g.Adj)
		cache[scale] = a
		return a
	}
}()

func BenchmarkBandwidth(b *testing.B) {
	for _, scale := range []int{16, 18} {
		for _, threads := range []int{1, 2} {
			for _, width := range []int{16, 32, 64, 128} {
				b.Run(fmt.Sprintf("rmat%d/threads=%d/w%d", scale, threads, width), func(b *testing.B) {
					benchBandwidth(b, rmatAdj(scale), threads, width)
				})
			}
		}
	}
}

// cpuSeconds returns the CPU time the process has used so far.
func cpuSeconds() float64 {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		panic(err)
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano()).Seconds()
}

// benchBandwidth runs a triad and an SpMM in turn each iteration and
// reports the median GB/s of each, the ratio of the medians (%triad) and
// the ratio of the best times (%triad-best). When other processes crowd
// the cores, wall time measures the scheduler, so it also reports the
// ratio of median CPU times divided by threads (%triad-cpu): the time the
// operation would take if its goroutines had the cores to themselves.
func benchBandwidth(b *testing.B, a *spmm.CSR, threads, width int) {
	x := spmmtest.RandomDense(a.Cols, width, 0, 2)
	dst := spmm.NewDense(a.Rows, width)
	be := New(threads)
	t := triadArrays()
	// Touch every page and warm the caches outside the timing.
	triad(t[0], t[1], t[2], 3, threads)
	be.SpMM(dst, a, x)
	var ts, tt, cs, ct []float64
	for b.Loop() {
		c0, t0 := cpuSeconds(), time.Now()
		triad(t[0], t[1], t[2], 3, threads)
		c1, t1 := cpuSeconds(), time.Now()
		be.SpMM(dst, a, x)
		c2, t2 := cpuSeconds(), time.Now()
		tt = append(tt, t1.Sub(t0).Seconds())
		ts = append(ts, t2.Sub(t1).Seconds())
		ct = append(ct, c1-c0)
		cs = append(cs, c2-c1)
	}
	median := func(v []float64) float64 {
		v = slices.Clone(v)
		slices.Sort(v)
		return v[len(v)/2]
	}
	sb, tb := spmmBytes(a, width), triadBytes(triadLen)
	s, tr := sb/median(ts)/1e9, tb/median(tt)/1e9
	b.ReportMetric(s, "spmm-GB/s")
	b.ReportMetric(tr, "triad-GB/s")
	b.ReportMetric(100*s/tr, "%triad")
	b.ReportMetric(100*(sb/slices.Min(ts))/(tb/slices.Min(tt)), "%triad-best")
	sc, tc := sb/median(cs)*float64(threads)/1e9, tb/median(ct)*float64(threads)/1e9
	b.ReportMetric(sc, "spmm-GB/s-cpu")
	b.ReportMetric(tc, "triad-GB/s-cpu")
	b.ReportMetric(100*sc/tc, "%triad-cpu")
}

// TestTriad checks the yardstick itself on a length that does not divide
// among the goroutines.
func TestTriad(t *testing.T) {
	const n = 1001
	a, x, y := make([]float32, n), make([]float32, n), make([]float32, n)
	for i := range x {
		x[i], y[i] = float32(i), float32(2*i+1)
	}
	for _, threads := range []int{1, 2, 3} {
		clear(a)
		triad(a, x, y, 0.5, threads)
		for i := range a {
			if want := x[i] + 0.5*y[i]; a[i] != want {
				t.Fatalf("threads=%d: a[%d] = %v, want %v", threads, i, a[i], want)
			}
		}
	}
}
