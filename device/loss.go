package device

import "math"

// The loss and accuracy kernels, in Go for every host device. They follow
// gcn/loss.go operation for operation; the CPU device runs them too rather
// than C because C's exp and log may differ from Go's math.Exp and
// math.Log in the last bit, and the loss must stay bit-identical. They
// touch rows×classes elements once or twice per step, but an exp costs
// as much as many element-wise passes, so the CPU device splits the rows
// over its threads (each row is computed on its own; the loss's float64
// sum stays one pass in row order).

func checkRowVec(name string, b int, x Mat) {
	x.check(name, "")
	checkLen2(name, "vector", b, x.rows)
}

func checkLabels(name string, labels Buffer[int32], x Mat, c0 int) {
	checkLen2(name, "labels", labels.Len(), x.rows)
	if c0 < 0 {
		shapePanic("%s: c0 = %d", name, c0)
	}
}

func checkRowMax(mx Buffer[float32], x Mat, train Buffer[uint8]) {
	checkRowVec("RowMax", mx.Len(), x)
	checkLen("RowMax train", train.Len(), x.rows)
}

func checkSoftmaxSums(sums Buffer[float32], x Mat, mx Buffer[float32], labels Buffer[int32], train Buffer[uint8], c0 int) {
	checkRowVec("SoftmaxSums", mx.Len(), x)
	checkLen("SoftmaxSums sums", sums.Len(), 2*x.rows)
	checkLen("SoftmaxSums train", train.Len(), x.rows)
	checkLabels("SoftmaxSums", labels, x, c0)
}

func checkSoftmaxGrad(d, x Mat, mx, sums Buffer[float32], labels Buffer[int32], train Buffer[uint8], c0 int) {
	checkSame("SoftmaxGrad", d, x)
	checkRowVec("SoftmaxGrad", mx.Len(), x)
	checkLen("SoftmaxGrad sums", sums.Len(), 2*x.rows)
	checkLen("SoftmaxGrad train", train.Len(), x.rows)
	checkLabels("SoftmaxGrad", labels, x, c0)
}

func checkArgMax(best Buffer[float32], arg Buffer[int64], x Mat) {
	checkRowVec("ArgMax", best.Len(), x)
	checkLen("ArgMax arg", arg.Len(), x.rows)
}

// The kernels below compute rows [lo, hi) of their outputs, each row on
// its own, so a device may split the rows over threads with the same bits.

func rowMax(mx Buffer[float32], x Mat, train Buffer[uint8], lo, hi int) {
	for i := lo; i < hi; i++ {
		m := float32(math.Inf(-1))
		if train.host[i] == 0 {
			mx.host[i] = m
			continue
		}
		for _, v := range x.row(i) {
			m = max(m, v)
		}
		mx.host[i] = m
	}
}

// softmaxSums skips the rows softmaxGradRows and softmaxLoss skip: their
// exps were most of the loss's time (90% of R-MAT's rows are not
// training rows).
func softmaxSums(sums Buffer[float32], x Mat, mx Buffer[float32], labels Buffer[int32], train Buffer[uint8], c0, lo, hi int) {
	rows := x.rows
	for i := lo; i < hi; i++ {
		if train.host[i] == 0 {
			sums.host[i], sums.host[rows+i] = 0, 0
			continue
		}
		var se float32
		r := x.row(i)
		for _, v := range r {
			se += float32(math.Exp(float64(v - mx.host[i])))
		}
		sums.host[i] = se
		sums.host[rows+i] = 0
		if lab := int(labels.host[i]); lab >= c0 && lab < c0+x.cols {
			sums.host[rows+i] = r[lab-c0]
		}
	}
}

// softmaxGradRows writes the gradient rows; softmaxLoss sums the loss.
func softmaxGradRows(d, x Mat, mx, sums Buffer[float32], labels Buffer[int32], train Buffer[uint8], c0, lo, hi int) {
	for i := lo; i < hi; i++ {
		o := d.row(i)
		if train.host[i] == 0 {
			clear(o)
			continue
		}
		se, m := sums.host[i], mx.host[i]
		for j, v := range x.row(i) {
			o[j] = float32(math.Exp(float64(v-m))) / se
		}
		if lab := int(labels.host[i]); lab >= c0 && lab < c0+x.cols {
			o[lab-c0]--
		}
	}
}

// softmaxLoss returns the loss summed over the training rows, in row
// order (one float64 sum, so it is not split), and their number.
func softmaxLoss(mx, sums Buffer[float32], train Buffer[uint8]) (loss, count float64) {
	rows := train.Len()
	for i := range rows {
		if train.host[i] == 0 {
			continue
		}
		loss += math.Log(float64(sums.host[i])) + float64(mx.host[i]) - float64(sums.host[rows+i])
		count++
	}
	return loss, count
}

func argMax(best Buffer[float32], arg Buffer[int64], x Mat, c0, lo, hi int) {
	for i := lo; i < hi; i++ {
		b, a := float32(math.Inf(-1)), int64(math.MaxInt64)
		for j, v := range x.row(i) {
			if v > b {
				b, a = v, int64(c0+j)
			}
		}
		best.host[i], arg.host[i] = b, a
	}
}

func argMaxSettle(arg Buffer[int64], best, mx Buffer[float32]) {
	checkLen("ArgMaxSettle best", best.Len(), arg.Len())
	checkLen("ArgMaxSettle mx", mx.Len(), arg.Len())
	for i := range arg.host {
		if best.host[i] != mx.host[i] {
			arg.host[i] = math.MaxInt64
		}
	}
}

func countHits(arg Buffer[int64], labels Buffer[int32], masks [3]Buffer[uint8]) [6]int64 {
	checkLen("CountHits labels", labels.Len(), arg.Len())
	for k := range masks {
		checkLen("CountHits mask", masks[k].Len(), arg.Len())
	}
	var hits [6]int64
	for i, a := range arg.host {
		for k := range masks {
			if masks[k].host[i] != 0 {
				hits[3+k]++
				if a == int64(labels.host[i]) {
					hits[k]++
				}
			}
		}
	}
	return hits
}
