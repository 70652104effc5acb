//go:build cgo

package device

// The loss and accuracy kernels of loss.go on the CPU device's threads:
// rows are independent, so splitting them gives Native's bits.

// Operations of lossJob.
const (
	lossRowMax = iota
	lossSums
	lossGrad
	lossArgMax
)

// expCost weighs an element of the exp-based kernels against one of a
// plain pass when deciding whether to split.
const expCost = 16

// lossJob is one Go row kernel's arguments; the device copies it into its
// own job so that handing it to the pool allocates nothing.
type lossJob struct {
	op       int
	x, d     Mat
	mx, sums Buffer[float32]
	labels   Buffer[int32]
	train    Buffer[uint8]
	arg      Buffer[int64]
	c0       int
}

func (j *lossJob) run(lo, hi int) {
	switch j.op {
	case lossRowMax:
		rowMax(j.mx, j.x, j.train, lo, hi)
	case lossSums:
		softmaxSums(j.sums, j.x, j.mx, j.labels, j.train, j.c0, lo, hi)
	case lossGrad:
		softmaxGradRows(j.d, j.x, j.mx, j.sums, j.labels, j.train, j.c0, lo, hi)
	case lossArgMax:
		argMax(j.mx, j.arg, j.x, j.c0, lo, hi)
	}
}

// runLoss runs j over the rows of j.x on the pool; cost weighs its
// elements (expCost for the exp-based ones).
func (d *CPU) runLoss(j *lossJob, cost int) {
	d.mu.Lock()
	d.ljob = *j
	// Every row is written even without columns (a block of no classes:
	// max −Inf, sums 0, no argmax), so rows run whatever the width.
	d.pool.run(&d.ljob, j.x.rows, cost*j.x.rows*max(j.x.cols, 1))
	d.ljob = lossJob{} // the device keeps no buffer alive
	d.mu.Unlock()
}
