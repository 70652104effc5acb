//go:build cgo

package device_test

import (
	"math"
	"math/rand/v2"
	"syscall"
	"testing"

	"scalegnn/dataset"
	"scalegnn/device"
	"scalegnn/spmm"
)

// gatOperands are one GAT layer's inputs on a pattern a (and its
// transpose with perm): Y (rows × K·F'), s and t, an output gradient, and
// per-entry buffers, filled with a fixed seed.
type gatOperands struct {
	a, at        *device.CSR
	perm         device.Buffer[int32]
	heads        int
	y, do, o, dy device.Mat
	s, t, mx, r  device.Buffer[float32]
	e, da        device.Buffer[float32]
	att          device.Buffer[float32]
}

func newGATOperands(dev device.Device, pat *spmm.CSR, heads, f int, seed uint64) *gatOperands {
	rng := rand.New(rand.NewPCG(seed, 1))
	tr, perm := spmm.TransposePerm(pat)
	n, w, nnz := pat.Rows, heads*f, pat.NNZ()
	fill := func(k int, scale float32) device.Buffer[float32] {
		h := make([]float32, k)
		for i := range h {
			h[i] = scale * float32(rng.NormFloat64())
		}
		return device.Share(dev, h)
	}
	return &gatOperands{
		a: dev.UploadCSR(pat), at: dev.UploadCSR(tr), perm: device.Share(dev, perm), heads: heads,
		y: device.Matrix(fill(n*w, 1), n, w), do: device.Matrix(fill(n*w, 1), n, w),
		o: device.Matrix(fill(n*w, 0), n, w), dy: device.Matrix(fill(n*w, 0), n, w),
		s: fill(n*heads, 2), t: fill(n*heads, 2), mx: fill(n*heads, 0), r: fill(n*heads, 0),
		e: fill(nnz*heads, 0), da: fill(nnz*heads, 0), att: fill(w, 1),
	}
}

// gatPass runs one GAT layer's edge and row operations, forward and
// backward, in the model's order (gcn/gat.go), without the GEMMs.
func gatPass(dev device.Device, p *gatOperands, ops map[string]func()) {
	g := device.GAT{Heads: p.heads, Slope: 0.2}
	K := p.heads
	run := func(name string, f func()) {
		if ops != nil {
			ops[name] = f
			return
		}
		f()
	}
	run("HeadDot", func() { dev.HeadDot(p.t, p.y, p.att, K); dev.HeadDot(p.s, p.y, p.att, K) })
	run("GATScores", func() { dev.GATScores(p.e, p.mx, p.a, p.s, p.t, g) })
	run("GATExpSum", func() { dev.GATExpSum(p.e, p.r, p.a, p.mx, g) })
	run("GATNormalize", func() { dev.GATNormalize(p.e, device.Buffer[float32]{}, p.a, p.e, p.r, g) })
	run("SpMMHeads", func() { dev.SpMMHeads(p.o, p.a, p.e, device.Buffer[int32]{}, p.y, K) })
	run("ELU", func() { dev.ELU(p.o, p.o) })
	run("ELUBackward", func() { dev.ELUBackward(p.dy, p.do, p.o) })
	run("SDDMMHeads", func() { dev.SDDMMHeads(p.da, p.a, p.do, p.y, K) })
	run("GATRowDot", func() { dev.GATRowDot(p.r, p.da, p.a, p.e, g) })
	run("GATLogitGrad", func() { dev.GATLogitGrad(p.da, p.mx, p.a, p.e, p.da, p.r, p.s, p.t, g) })
	run("EdgeSums", func() { dev.EdgeSums(p.r, p.at, p.da, p.perm, K) })
	run("SpMMHeadsT", func() { dev.SpMMHeads(p.dy, p.at, p.e, p.perm, p.do, K) })
	run("HeadDotGrad", func() { dev.HeadDotGrad(p.att, p.s, p.y, K) })
	run("HeadDotBackward", func() { dev.HeadDotBackward(p.dy, p.s, p.att, K) })
}

// BenchmarkGATOps times each GAT operation on R-MAT scale 16 (edge factor
// 16 and self loops, as bench/rmat16-gat.toml's graph: 65,536 vertices,
// 1.88M entries) for the two layers of bench/vs-pytorch-gat.sh's GAT (8
// heads of 8, then 1 head of 32), on Native and on the CPU device with 2
// threads: where an epoch's edge work goes.
//
//	go test ./device -run '^$' -bench GATOps -benchtime 5x
func BenchmarkGATOps(b *testing.B) {
	g, err := dataset.RMAT(dataset.RMATConfig{Scale: 16, EdgeFactor: 16, A: 0.57, B: 0.19, C: 0.19, D: 0.05,
		Classes: 2, Features: 1, TrainFrac: 0.1, ValFrac: 0.1, TestFrac: 0.1, Seed: 1})
	if err != nil {
		b.Fatal(err)
	}
	pat := dataset.NormalizeGCN(g.Adj)
	for _, dv := range []struct {
		name string
		dev  device.Device
	}{{"Native", device.NewNative(0)}, {"CPU2", device.NewCPU(2)}} {
		for _, l := range []struct {
			name     string
			heads, f int
		}{{"8x8", 8, 8}, {"1x32", 1, 32}} {
			p := newGATOperands(dv.dev, pat, l.heads, l.f, 1)
			ops := map[string]func(){}
			gatPass(dv.dev, p, ops)
			gatPass(dv.dev, p, nil) // every buffer holds a pass's values
			for name, op := range ops {
				b.Run(dv.name+"/"+l.name+"/"+name, func(b *testing.B) {
					c0 := cpuTime()
					for b.Loop() {
						op()
					}
					// CPU time as well as wall time: on a shared machine
					// the wall time also counts other processes' turns.
					b.ReportMetric(float64(cpuTime()-c0)/float64(b.N), "cpu-ns/op")
				})
			}
		}
	}
}

// TestGATKernelsAgree runs the edge and row operations on Native and on
// the CPU device with 1 and 3 threads on the same operands: the results
// must be identical bit for bit (the CPU device splits rows, never a
// row's sums), and SpMMHeads, SDDMMHeads, GATExpSum's exponentials and
// ELU must match float64 references, for the head widths the kernels
// specialise (8, 16, 32) and others.
func TestGATKernelsAgree(t *testing.T) {
	rng := rand.New(rand.NewPCG(7, 7))
	n := 300
	pat := &spmm.CSR{Rows: n, Cols: n, RowPtr: make([]int64, n+1)}
	for i := range n {
		deg := rng.IntN(12)
		if i%37 == 0 {
			deg = 150 // a hub, so that a row spans chunks' worth of work
		}
		cols := rng.Perm(n)[:deg]
		cols = append(cols, i)
		sortInt(cols)
		for k, c := range cols {
			if k == 0 || c != cols[k-1] {
				pat.ColIdx = append(pat.ColIdx, int32(c))
				pat.Val = append(pat.Val, 1)
			}
		}
		pat.RowPtr[i+1] = int64(len(pat.ColIdx))
	}
	for _, tc := range []struct{ heads, f int }{{8, 8}, {4, 16}, {1, 32}, {2, 5}, {3, 1}} {
		devs := []device.Device{device.NewNative(0), device.NewCPU(1), device.NewCPU(3)}
		var first map[string][]float32
		for di, dev := range devs {
			p := newGATOperands(dev, pat, tc.heads, tc.f, 3)
			// Inputs kept for the references before the pass overwrites them.
			y, do := matHost(dev, p.y), matHost(dev, p.do)
			gatPass(dev, p, nil)
			got := map[string][]float32{
				"o": matHost(dev, p.o), "dy": matHost(dev, p.dy), "e": bufHost(dev, p.e), "da": bufHost(dev, p.da),
				"s": bufHost(dev, p.s), "t": bufHost(dev, p.t), "mx": bufHost(dev, p.mx), "r": bufHost(dev, p.r),
				"att": bufHost(dev, p.att),
			}
			if di == 0 {
				first = got
				checkGATReference(t, pat, tc.heads, tc.f, y, do, dev)
				continue
			}
			for k, v := range got {
				for i := range v {
					if math.Float32bits(v[i]) != math.Float32bits(first[k][i]) {
						t.Fatalf("heads %d × %d: device %d's %s[%d] = %v, Native's %v", tc.heads, tc.f, di, k, i, v[i], first[k][i])
					}
				}
			}
		}
	}
}

// checkGATReference checks SpMMHeads (plain and through the transpose),
// SDDMMHeads, GATExpSum and ELU on dev against float64 sums.
func checkGATReference(t *testing.T, pat *spmm.CSR, heads, f int, y, do []float32, dev device.Device) {
	t.Helper()
	n, w, nnz := pat.Rows, heads*f, pat.NNZ()
	rng := rand.New(rand.NewPCG(11, uint64(w)))
	alpha := make([]float32, nnz*heads)
	for i := range alpha {
		alpha[i] = rng.Float32()
	}
	tr, perm := spmm.TransposePerm(pat)
	a, at := dev.UploadCSR(pat), dev.UploadCSR(tr)
	dst := device.Matrix(device.Alloc[float32](dev, n*w), n, w)
	const tol = 1e-5
	near := func(what string, i int, got float32, want float64, scale float64) {
		if math.Abs(float64(got)-want) > tol*(1+scale) {
			t.Fatalf("heads %d × %d: %s[%d] = %v, float64 reference %v", heads, f, what, i, got, want)
		}
	}
	for _, transposed := range []bool{false, true} {
		if transposed {
			dev.SpMMHeads(dst, at, device.Share(dev, alpha), device.Share(dev, perm), device.Matrix(device.Share(dev, y), n, w), heads)
		} else {
			dev.SpMMHeads(dst, a, device.Share(dev, alpha), device.Buffer[int32]{}, device.Matrix(device.Share(dev, y), n, w), heads)
		}
		got := matHost(dev, dst)
		want := make([]float64, n*w)
		absSum := make([]float64, n*w)
		for i := range n {
			for p := pat.RowPtr[i]; p < pat.RowPtr[i+1]; p++ {
				j := int(pat.ColIdx[p])
				r, c := i, j // entry (i, j); through the transpose it lands in row j from row i
				if transposed {
					r, c = j, i
				}
				for k := range heads {
					for x := range f {
						v := float64(alpha[int(p)*heads+k]) * float64(y[c*w+k*f+x])
						want[r*w+k*f+x] += v
						absSum[r*w+k*f+x] += math.Abs(v)
					}
				}
			}
		}
		for i := range want {
			near("SpMMHeads", i, got[i], want[i], absSum[i])
		}
	}
	d := device.Alloc[float32](dev, nnz*heads)
	dev.SDDMMHeads(d, a, device.Matrix(device.Share(dev, do), n, w), device.Matrix(device.Share(dev, y), n, w), heads)
	dh := bufHost(dev, d)
	for i := range n {
		for p := pat.RowPtr[i]; p < pat.RowPtr[i+1]; p++ {
			j := int(pat.ColIdx[p])
			for k := range heads {
				var acc, abs float64
				for x := range f {
					v := float64(do[i*w+k*f+x]) * float64(y[j*w+k*f+x])
					acc += v
					abs += math.Abs(v)
				}
				near("SDDMMHeads", int(p)*heads+k, dh[int(p)*heads+k], acc, abs)
			}
		}
	}
	// GATExpSum with a zero maximum is exp of each entry; the scores span
	// the range where softmax terms matter and where they underflow.
	e := make([]float32, nnz*heads)
	for i := range e {
		e[i] = -100 * rng.Float32() * rng.Float32()
	}
	eb, sums := device.Share(dev, append([]float32(nil), e...)), device.Alloc[float32](dev, n*heads)
	dev.GATExpSum(eb, sums, a, device.Alloc[float32](dev, n*heads), device.GAT{Heads: heads, Slope: 0.2})
	eh := bufHost(dev, eb)
	for i, v := range e {
		want := math.Exp(float64(v))
		if math.Abs(float64(eh[i])-want) > 2e-7*want+1e-38 {
			t.Fatalf("GATExpSum: exp(%v) = %v, float64 %v", v, eh[i], want)
		}
	}
	x := make([]float32, 1000)
	for i := range x {
		x[i] = 20 * (rng.Float32() - 0.7)
	}
	x[0], x[1] = -1e-7, -100
	xm := device.Matrix(device.Share(dev, append([]float32(nil), x...)), 1, len(x))
	dev.ELU(xm, xm)
	xh := matHost(dev, xm)
	for i, v := range x {
		want := float64(v)
		if v <= 0 {
			want = math.Expm1(float64(v))
		}
		if math.Abs(float64(xh[i])-want) > 2e-7*math.Abs(want) {
			t.Fatalf("ELU(%v) = %v, float64 %v", v, xh[i], want)
		}
	}
}

// cpuTime is this process's user and system time in nanoseconds.
func cpuTime() int64 {
	var ru syscall.Rusage
	if syscall.Getrusage(syscall.RUSAGE_SELF, &ru) != nil {
		return 0
	}
	return ru.Utime.Nano() + ru.Stime.Nano()
}

func sortInt(a []int) {
	for i := 1; i < len(a); i++ {
		for j := i; j > 0 && a[j] < a[j-1]; j-- {
			a[j], a[j-1] = a[j-1], a[j]
		}
	}
}

func bufHost(dev device.Device, b device.Buffer[float32]) []float32 {
	h := make([]float32, b.Len())
	device.Download(dev, h, b, 0)
	return h
}

func matHost(dev device.Device, m device.Mat) []float32 {
	return bufHost(dev, m.Flat())
}
