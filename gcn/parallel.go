package gcn

import "sync"

// parallelRows runs f over [0, rows) split into contiguous ranges, one per
// kernel thread of the rank, when the work (rows×width) is worth it.
// Element-wise passes (dropout, ReLU, normalisation) touch every activation
// and would otherwise run on one core while the kernels use all of them.
func (m *Model) parallelRows(rows, width int, f func(lo, hi int)) {
	t := m.Options.Threads
	if t <= 1 || rows*width < 1<<15 || rows < 2 {
		f(0, rows)
		return
	}
	t = min(t, rows)
	var wg sync.WaitGroup
	for k := 0; k < t; k++ {
		lo, hi := rows*k/t, rows*(k+1)/t
		wg.Add(1)
		go func() {
			defer wg.Done()
			f(lo, hi)
		}()
	}
	wg.Wait()
}
