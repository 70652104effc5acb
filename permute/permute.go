package permute

import (
	"math"
	"runtime"
	"slices"
	"sync/atomic"

	"scalegnn/internal/par"
	"scalegnn/spmm"
)

// Permute returns A[rowPerm][:, colPerm]: row i of the result is row
// rowPerm[i] of a, and original column c moves to the position j with
// colPerm[j] = c. Columns come out sorted. A nil permutation is the
// identity. The cost is O(nnz log deg) for the per-row sorts (none when
// colPerm is nil), spread over GOMAXPROCS goroutines; the memory is the
// result plus O(N). A permutation of the wrong length, or a slice that is
// not a permutation, panics with a UsageError.
func Permute(a *spmm.CSR, rowPerm, colPerm []int32) *spmm.CSR {
	if rowPerm != nil {
		if len(rowPerm) != a.Rows {
			usage("Permute: row permutation of %d for %d rows", len(rowPerm), a.Rows)
		}
		checkPerm(rowPerm)
	}
	var colInv []int32
	if colPerm != nil {
		if len(colPerm) != a.Cols {
			usage("Permute: column permutation of %d for %d columns", len(colPerm), a.Cols)
		}
		colInv = Inverse(colPerm)
	}
	row := func(i int) int {
		if rowPerm == nil {
			return i
		}
		return int(rowPerm[i])
	}
	out := &spmm.CSR{Rows: a.Rows, Cols: a.Cols, RowPtr: make([]int64, a.Rows+1)}
	for i := range a.Rows {
		r := row(i)
		out.RowPtr[i+1] = out.RowPtr[i] + a.RowPtr[r+1] - a.RowPtr[r]
	}
	nnz := out.RowPtr[a.Rows]
	out.ColIdx = make([]int32, nnz)
	out.Val = make([]float32, nnz)
	parallelRows(a.Rows, func(lo, hi int, scratch *[]uint64) {
		for i := lo; i < hi; i++ {
			r := row(i)
			src := a.ColIdx[a.RowPtr[r]:a.RowPtr[r+1]]
			val := a.Val[a.RowPtr[r]:a.RowPtr[r+1]]
			dc := out.ColIdx[out.RowPtr[i]:out.RowPtr[i+1]]
			dv := out.Val[out.RowPtr[i]:out.RowPtr[i+1]]
			if colInv == nil {
				copy(dc, src)
				copy(dv, val)
				continue
			}
			// Sort (new column, value) pairs packed in one uint64: the
			// column in the high half orders them, and a flat uint64 sort
			// is several times faster than sorting two parallel slices.
			buf := (*scratch)[:0]
			for k, c := range src {
				buf = append(buf, uint64(colInv[c])<<32|uint64(math.Float32bits(val[k])))
			}
			slices.Sort(buf)
			for k, x := range buf {
				dc[k] = int32(x >> 32)
				dv[k] = math.Float32frombits(uint32(x))
			}
			*scratch = buf
		}
	})
	return out
}

// checkPerm panics with a UsageError unless p is a permutation.
func checkPerm(p []int32) {
	seen := make([]bool, len(p))
	for i, v := range p {
		if v < 0 || int(v) >= len(p) || seen[v] {
			usage("not a permutation: entry %d is %d", i, v)
		}
		seen[v] = true
	}
}

// rowsPerTask is the number of rows handed to a goroutine at a time: small
// enough that the few very long rows of a power-law graph balance out.
const rowsPerTask = 1 << 12

// parallelRows runs f over [0, n) in tasks of rowsPerTask rows on
// GOMAXPROCS goroutines. Each goroutine passes f its own state (a scratch
// buffer, partial counts), starting from the zero value; the states are
// returned for the caller to combine. A panic in f is raised on the caller
// (package par).
func parallelRows[S any](n int, f func(lo, hi int, state *S)) []*S {
	tasks := (n + rowsPerTask - 1) / rowsPerTask
	workers := min(runtime.GOMAXPROCS(0), tasks)
	states := make([]*S, workers)
	var next atomic.Int64
	var g par.Group
	for w := range workers {
		states[w] = new(S)
		g.Go(func() {
			for {
				t := int(next.Add(1) - 1)
				if t >= tasks {
					return
				}
				f(t*rowsPerTask, min(n, (t+1)*rowsPerTask), states[w])
			}
		})
	}
	g.Wait()
	return states
}
