package devicetest

import (
	"sync"
	"testing"

	"scalegnn/device"
)

// testConcurrent runs the same operations from four goroutines at once,
// each on its own buffers, and checks every result against one computed
// alone: a device must be usable from several goroutines on buffers that
// do not overlap (gcn computes while a nonblocking all-reduce is waited
// for on another goroutine's behalf).
func testConcurrent(t *testing.T, dev device.Device) {
	const rows, cols, workers = 300, 128, 4
	run := func(seed uint64) ([]float32, []float32) {
		r := newRand(seed)
		x := newMat(dev, rows, cols, 0, r, normal)
		y := newMat(dev, rows, cols, 0, r, normal)
		verts := make([]int32, rows)
		for i := range verts {
			verts[i] = int32(i)
		}
		keep := device.Alloc[uint64](dev, rows*2)
		for range 5 {
			dev.Add(y.m, x.m, y.m)
			dev.ReLUDropoutRecord(x.m, y.m, keep, device.Dropout{Seed: seed, P: 0.3, Verts: upload(dev, verts)})
			dev.OptimStep(x.buf, y.buf, y.buf, y.buf, device.OptimStep{Kind: device.SGD, LR: 0.1})
		}
		return x.get(t, dev, "concurrent x"), y.get(t, dev, "concurrent y")
	}
	var want [workers][2][]float32
	for k := range want {
		want[k][0], want[k][1] = run(uint64(k))
	}
	var got [workers][2][]float32
	var wg sync.WaitGroup
	for k := range workers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			got[k][0], got[k][1] = run(uint64(k))
		}()
	}
	wg.Wait()
	for k := range workers {
		exact(t, "concurrent x", got[k][0], want[k][0])
		exact(t, "concurrent y", got[k][1], want[k][1])
	}
}
