package spmm

import (
	"runtime"

	"scalegnn/internal/par"
)

// minParallelWork is the number of multiply-adds below which a product runs
// on the calling goroutine: spawning goroutines costs microseconds, which
// dwarfs tiny products (the per-rank blocks of small test grids).
const minParallelWork = 1 << 16

// workers resolves a thread count: threads <= 0 means GOMAXPROCS.
func workers(threads int) int {
	if threads <= 0 {
		return runtime.GOMAXPROCS(0)
	}
	return threads
}

// parallelRanges runs fn over the ranges [bounds[p], bounds[p+1]),
// concurrently, skipping empty ones, and returns when all are done. A
// panic in any range is raised on the caller (package par).
func parallelRanges(bounds []int, fn func(lo, hi int)) {
	var g par.Group
	for p := 0; p+1 < len(bounds); p++ {
		lo, hi := bounds[p], bounds[p+1]
		if lo == hi {
			continue
		}
		if p+2 == len(bounds) {
			g.Run(func() { fn(lo, hi) }) // the last range runs on the caller
			continue
		}
		g.Go(func() { fn(lo, hi) })
	}
	g.Wait()
}
