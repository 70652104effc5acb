package gcn

import (
	"fmt"
	"math"

	"scalegnn/spmm"
)

// A SAGE layer aggregates with D^-1 A, the row-normalised adjacency
// without self loops, but a Source serves blocks of the GCN's
// Â = D̃^-1/2 (A+I) D̃^-1/2 (a prepared dataset stores nothing else).
// scalegnn's graphs are binary and free of self loops (dataset.Graph), so
// Â determines D^-1 A block by block: A is Â's off-diagonal pattern, and
// vertex v's degree is d_v = 1/Â_vv − 1, read from the diagonal, which
// lies in the square block of the rank's own rows. readMeanShard reads
// that block beside the one it converts (a transient second read, at
// setup only); a mini-batch cuts its blocks out of the converted shards.
//
// The reference derives D^-1 A independently, by counting each row's
// off-diagonal entries (MeanAdjacency); both give float32(1/d_v) exactly.

// readMeanShard reads the block of D^-1 A with rows [r0, r1) of order ro
// and columns [c0, c1) of order co, and its transpose when withT.
func readMeanShard(src Source, o *Orders, ro, r0, r1, co, c0, c1 int, withT bool) (*adjShard, error) {
	hat, err := readShard(src, ro, r0, r1, co, c0, c1, false)
	if err != nil {
		return nil, err
	}
	diag, err := readShard(src, ro, r0, r1, ro, r0, r1, false)
	if err != nil {
		return nil, err
	}
	inv, err := meanScales(diag.a, o.Order[ro][r0:r1])
	if err != nil {
		return nil, err
	}
	a, rows, cols := hat.a, o.Order[ro][r0:r1], o.Order[co][c0:c1]
	out := &spmm.CSR{Rows: a.Rows, Cols: a.Cols, RowPtr: make([]int64, a.Rows+1),
		ColIdx: make([]int32, 0, len(a.ColIdx)), Val: make([]float32, 0, len(a.Val))}
	for i := 0; i < a.Rows; i++ {
		for k := a.RowPtr[i]; k < a.RowPtr[i+1]; k++ {
			j := a.ColIdx[k]
			if cols[j] == rows[i] {
				continue // A has no self loops: Â's diagonal is the +I
			}
			out.ColIdx = append(out.ColIdx, j)
			out.Val = append(out.Val, inv[i])
		}
		out.RowPtr[i+1] = int64(len(out.ColIdx))
	}
	s := &adjShard{a: out}
	if withT {
		s.at = spmm.Transpose(out)
	}
	return s, nil
}

// meanScales returns float32(1/d_v) for the vertices verts of the rows of
// diag, the square block of Â on those rows (row i's diagonal entry at
// column i), with d_v = 1/Â_vv − 1; 0 for an isolated vertex, whose row
// of D^-1 A is empty.
func meanScales(diag *spmm.CSR, verts []int32) ([]float32, error) {
	inv := make([]float32, diag.Rows)
	for i := range inv {
		var hat float32
		for k := diag.RowPtr[i]; k < diag.RowPtr[i+1]; k++ {
			if int(diag.ColIdx[k]) == i {
				hat = diag.Val[k]
			}
		}
		d, ok := DegreeFromDiagonal(hat)
		if !ok {
			return nil, fmt.Errorf("gcn: vertex %d: normalised adjacency has diagonal %g, not 1/(degree+1) of a binary graph without self loops; model.layer = \"sage\" needs one (dataset.NormalizeGCN of a dataset.Graph)", verts[i], hat)
		}
		if d > 0 {
			inv[i] = float32(1 / float64(d))
		}
	}
	return inv, nil
}

// DegreeFromDiagonal is vertex v's degree d_v read from Â's diagonal,
// Â_vv = float32(1/(d_v + 1)) for a binary graph without self loops; ok
// is false for a diagonal that is not such a value (a weighted graph, or
// none). float32(1/d̃) inverted is within 2⁻²⁴·d̃ of the integer d̃: far
// closer than ¼ for any degree a float32 count can hold.
func DegreeFromDiagonal(hat float32) (d int, ok bool) {
	dt := 1 / float64(hat)
	if hat <= 0 || math.Round(dt) < 1 || math.Abs(dt-math.Round(dt)) > 0.25 {
		return 0, false
	}
	return int(math.Round(dt)) - 1, true
}

// MeanAdjacency returns D^-1 A for the GCN-normalised adjacency hat of a
// binary graph without self loops: A is hat's off-diagonal pattern, and
// row v holds 1/d_v in each of its d_v entries (computed in float64). It
// is the serial definition the Reference and SerialBatch take for a SAGE
// model; the distributed model derives its blocks apart (readMeanShard).
func MeanAdjacency(hat *spmm.CSR) *spmm.CSR {
	return MeanRows(hat, func(i int) int32 { return int32(i) })
}

// MeanRows is MeanAdjacency for rows of Â whose own vertex, the diagonal
// entry each row skips, is at column self(i): whole rows of a taller
// matrix (layer-wise inference's strips). Each row must hold all of its
// vertex's neighbours.
func MeanRows(hat *spmm.CSR, self func(i int) int32) *spmm.CSR {
	out := &spmm.CSR{Rows: hat.Rows, Cols: hat.Cols, RowPtr: make([]int64, hat.Rows+1),
		ColIdx: make([]int32, 0, len(hat.ColIdx)), Val: make([]float32, 0, len(hat.Val))}
	for i := 0; i < hat.Rows; i++ {
		v, d := self(i), 0
		for k := hat.RowPtr[i]; k < hat.RowPtr[i+1]; k++ {
			if hat.ColIdx[k] != v {
				d++
			}
		}
		for k := hat.RowPtr[i]; k < hat.RowPtr[i+1]; k++ {
			if hat.ColIdx[k] != v {
				out.ColIdx = append(out.ColIdx, hat.ColIdx[k])
				out.Val = append(out.Val, float32(1/float64(d)))
			}
		}
		out.RowPtr[i+1] = int64(len(out.ColIdx))
	}
	return out
}
