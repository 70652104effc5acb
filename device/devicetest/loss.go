package devicetest

import (
	"fmt"
	"math"
	"math/rand/v2"
	"testing"

	"scalegnn/device"
)

// lossShapes: rows × classes of a logits block.
var lossShapes = []shape{{0, 3, 0}, {1, 1, 0}, {5, 7, 2}, {40, 16, 0}, {300, 41, 1}}

// testLoss checks the split softmax cross-entropy: one block holding every
// class against gcn's float32 loops bit for bit and float64 within 1e-5;
// two class blocks, combined on the host as the all-reduces would, against
// the one-block result within 1e-6.
func testLoss(t *testing.T, dev device.Device, opt Options) {
	for n, s := range lossShapes {
		r := newRand(uint64(300 + n))
		name := fmt.Sprintf("%dx%d/pad%d", s.rows, s.cols, s.pad)
		x := newMat(dev, s.rows, s.cols, s.pad, r, func(r *rand.Rand) float32 { return float32(3 * r.NormFloat64()) })
		labels := make([]int32, s.rows)
		train := make([]uint8, s.rows)
		for i := range labels {
			labels[i] = r.Int32N(int32(s.cols))
			if r.IntN(3) > 0 {
				train[i] = 1
			}
		}
		lb, tb := upload(dev, labels), upload(dev, train)
		stale := make([]float32, 2*s.rows)
		for i := range stale {
			stale[i] = 42
		}
		mx, sums := upload(dev, stale[:s.rows]), upload(dev, stale)
		d := newMat(dev, s.rows, s.cols, s.pad+1, r, normal) // stale values must go
		dev.RowMax(mx, x.m, tb)
		// The row maxima of the training rows, −Inf for the others.
		for i, v := range download(dev, mx) {
			want := float32(math.Inf(-1))
			if train[i] != 0 {
				for _, e := range x.want[i*s.cols : (i+1)*s.cols] {
					want = max(want, e)
				}
			}
			if v != want {
				t.Errorf("RowMax %s: row %d (train %d) is %v, want %v", name, i, train[i], v, want)
			}
		}
		dev.SoftmaxSums(sums, x.m, mx, lb, tb, 0)
		// Rows outside the mask are written 0 (over stale values), the
		// others with their exp sum and label logit.
		got := download(dev, sums)
		for i := range s.rows {
			skipped := got[i] == 0 && got[s.rows+i] == 0 // an exp sum is at least 1
			if skipped != (train[i] == 0) {
				t.Errorf("SoftmaxSums %s: row %d has sums (%v, %v) with train = %d", name, i, got[i], got[s.rows+i], train[i])
			}
		}
		loss, count := dev.SoftmaxGrad(d.m, x.m, mx, sums, lb, tb, 0)
		wantD, wantLoss, wantCount := gcnLoss(x.want, s.rows, s.cols, labels, train)
		gotD := d.get(t, dev, "SoftmaxGrad")
		if opt.ExpULP == 0 {
			exact(t, "SoftmaxGrad "+name, gotD, wantD)
		} else {
			withinULP(t, "SoftmaxGrad "+name, gotD, wantD, opt.ExpULP)
		}
		if math.Abs(loss-wantLoss) > opt.LossRelTol*math.Abs(wantLoss) || count != wantCount {
			t.Errorf("SoftmaxGrad %s: loss %v over %v rows, want %v over %v", name, loss, count, wantLoss, wantCount)
		}
		// float64 definition.
		ref := make([]float64, len(x.want))
		var refLoss float64
		for i := range s.rows {
			if train[i] == 0 {
				continue
			}
			row := to64(x.want[i*s.cols : (i+1)*s.cols])
			m := math.Inf(-1)
			for _, v := range row {
				m = max(m, v)
			}
			var se float64
			for _, v := range row {
				se += math.Exp(v - m)
			}
			refLoss += math.Log(se) + m - row[labels[i]]
			for j, v := range row {
				ref[i*s.cols+j] = math.Exp(v-m) / se
			}
			ref[i*s.cols+int(labels[i])]--
		}
		near(t, "SoftmaxGrad vs float64 "+name, gotD, ref, 1e-5, 1e-6)
		if math.Abs(loss-refLoss) > 1e-5*(1+math.Abs(refLoss)) {
			t.Errorf("SoftmaxGrad %s: loss %v, float64 %v", name, loss, refLoss)
		}

		if s.cols < 2 {
			continue
		}
		// Two class blocks [0, c) and [c, cols), views of the same buffer.
		c := s.cols / 2
		blocks := []struct {
			m  device.Mat
			c0 int
		}{{x.m.Slice(0, s.rows, 0, c), 0}, {x.m.Slice(0, s.rows, c, s.cols), c}}
		gmx := make([]float32, s.rows)
		gsum := make([]float32, 2*s.rows)
		for i := range gmx {
			gmx[i] = float32(math.Inf(-1))
		}
		for _, b := range blocks { // max all-reduce
			dev.RowMax(mx, b.m, tb)
			for i, v := range download(dev, mx) {
				gmx[i] = max(gmx[i], v)
			}
		}
		device.Upload(dev, mx, 0, gmx)
		for _, b := range blocks { // sum all-reduce
			dev.SoftmaxSums(sums, b.m, mx, lb, tb, b.c0)
			for i, v := range download(dev, sums) {
				gsum[i] += v
			}
		}
		device.Upload(dev, sums, 0, gsum)
		split := make([]float32, 0, len(gotD))
		parts := make([][]float32, 2)
		var splitLoss float64
		for k, b := range blocks {
			db := newMat(dev, s.rows, b.m.Cols(), 0, r, nil)
			l, cnt := dev.SoftmaxGrad(db.m, b.m, mx, sums, lb, tb, b.c0)
			if cnt != wantCount {
				t.Errorf("split SoftmaxGrad %s: count %v, want %v", name, cnt, wantCount)
			}
			if k == 0 {
				splitLoss = l
			} else if l != splitLoss {
				t.Errorf("split SoftmaxGrad %s: blocks disagree on the loss, %v and %v", name, splitLoss, l)
			}
			parts[k] = db.get(t, dev, "split SoftmaxGrad")
		}
		for i := range s.rows {
			split = append(split, parts[0][i*c:(i+1)*c]...)
			split = append(split, parts[1][i*(s.cols-c):(i+1)*(s.cols-c)]...)
		}
		near(t, "split SoftmaxGrad "+name, split, to64(gotD), 1e-6, 1e-7)
		if math.Abs(splitLoss-loss) > 1e-5*(1+math.Abs(loss)) {
			t.Errorf("split SoftmaxGrad %s: loss %v, one block %v", name, splitLoss, loss)
		}
	}
}

// testAccuracy checks ArgMax (first maximum), its settling against the
// global maximum over two class blocks, and CountHits, on logits with
// ties, against a float64 reference. These are exact.
func testAccuracy(t *testing.T, dev device.Device) {
	for n, s := range lossShapes {
		r := newRand(uint64(400 + n))
		name := fmt.Sprintf("%dx%d", s.rows, s.cols)
		x := newMat(dev, s.rows, s.cols, s.pad, r, func(r *rand.Rand) float32 { return float32(r.IntN(4)) })
		labels := make([]int32, s.rows)
		var masks [3][]uint8
		var mb [3]device.Buffer[uint8]
		for k := range masks {
			masks[k] = make([]uint8, s.rows)
			for i := range masks[k] {
				masks[k][i] = uint8(r.IntN(2))
			}
			mb[k] = upload(dev, masks[k])
		}
		for i := range labels {
			labels[i] = r.Int32N(int32(s.cols))
		}
		// Reference: first maximum over the whole row.
		var want [6]int64
		for i := range s.rows {
			row := x.want[i*s.cols : (i+1)*s.cols]
			arg := 0
			for j, v := range row {
				if v > row[arg] {
					arg = j
				}
			}
			for k := range masks {
				if masks[k][i] != 0 {
					want[3+k]++
					if int32(arg) == labels[i] {
						want[k]++
					}
				}
			}
		}
		c := s.cols / 2
		best := device.Alloc[float32](dev, s.rows)
		arg := device.Alloc[int64](dev, s.rows)
		gmx := make([]float32, s.rows)
		garg := make([]int64, s.rows)
		for i := range gmx {
			gmx[i], garg[i] = float32(math.Inf(-1)), math.MaxInt64
		}
		type blk struct {
			m  device.Mat
			c0 int
		}
		blocks := []blk{{x.m.Slice(0, s.rows, 0, c), 0}, {x.m.Slice(0, s.rows, c, s.cols), c}}
		for _, b := range blocks { // max all-reduce
			dev.ArgMax(best, arg, b.m, b.c0)
			for i, v := range download(dev, best) {
				gmx[i] = max(gmx[i], v)
			}
		}
		mxb := upload(dev, gmx)
		for _, b := range blocks { // min all-reduce of the settled args
			dev.ArgMax(best, arg, b.m, b.c0)
			dev.ArgMaxSettle(arg, best, mxb)
			for i, a := range download(dev, arg) {
				garg[i] = min(garg[i], a)
			}
		}
		device.Upload(dev, arg, 0, garg)
		if got := dev.CountHits(arg, upload(dev, labels), mb); got != want {
			t.Errorf("accuracy %s: hits %v, want %v", name, got, want)
		}
	}
}

// testNoClasses checks the row kernels of the loss and the argmax on a
// block with rows but no classes (a rank whose class block is empty when
// the classes do not divide over the axis): every row is still written,
// over stale values, with what the all-reduces expect from it.
func testNoClasses(t *testing.T, dev device.Device) {
	const rows = 70000 // enough for a device to split the rows
	x := device.Matrix(device.Alloc[float32](dev, 0), rows, 0)
	stale := make([]float32, 2*rows)
	for i := range stale {
		stale[i] = 42
	}
	labels := make([]int32, rows)
	mx, sums := upload(dev, stale[:rows]), upload(dev, stale)
	best, arg := upload(dev, stale[:rows]), upload(dev, make([]int64, rows))
	train := make([]uint8, rows)
	for i := range train {
		train[i] = 1 // every row a training row: no row skipped
	}
	tb := upload(dev, train)
	dev.RowMax(mx, x, tb)
	dev.SoftmaxSums(sums, x, upload(dev, make([]float32, rows)), upload(dev, labels), tb, 3)
	dev.ArgMax(best, arg, x, 3)
	for i, v := range download(dev, mx) {
		if !math.IsInf(float64(v), -1) {
			t.Fatalf("RowMax of a row without columns: row %d is %v, want -Inf", i, v)
		}
	}
	for i, v := range download(dev, sums) {
		if v != 0 {
			t.Fatalf("SoftmaxSums of a row without columns: entry %d is %v, want 0", i, v)
		}
	}
	bs, as := download(dev, best), download(dev, arg)
	for i := range bs {
		if !math.IsInf(float64(bs[i]), -1) || as[i] != math.MaxInt64 {
			t.Fatalf("ArgMax of a row without columns: row %d is (%v, %d), want (-Inf, MaxInt64)", i, bs[i], as[i])
		}
	}
}
