package spmm

// CSR is a sparse matrix in compressed sparse row form. Row i's entries are
// ColIdx[RowPtr[i]:RowPtr[i+1]] with values Val[...]; column indices within
// a row are sorted ascending and unique. len(RowPtr) == Rows+1.
type CSR struct {
	Rows, Cols int
	RowPtr     []int64
	ColIdx     []int32
	Val        []float32
}

// NNZ is the number of stored entries.
func (a *CSR) NNZ() int { return int(a.RowPtr[a.Rows]) }

// Dense is a row-major matrix view: element (i, j) is Data[i*Stride+j].
// Stride >= Cols; len(Data) >= (Rows-1)*Stride+Cols when Rows > 0.
type Dense struct {
	Rows, Cols, Stride int
	Data               []float32
}

// NewDense allocates a zeroed r×c matrix with Stride c.
func NewDense(r, c int) Dense {
	return Dense{Rows: r, Cols: c, Stride: c, Data: make([]float32, r*c)}
}

// Op selects op(X) in a GEMM: the matrix itself or its transpose.
type Op bool

const (
	NoTrans Op = false
	Trans   Op = true
)

// Backend computes the local products of the distributed layers. Every
// method overwrites or accumulates into dst as documented; dst must not
// alias an input. Shapes that do not agree are programmer errors and panic
// with a ShapeError.
type Backend interface {
	// SpMM computes dst = a·b. dst is a.Rows×b.Cols, b is a.Cols×b.Cols.
	SpMM(dst Dense, a *CSR, b Dense)
	// Gemm computes dst = alpha·op(a)·op(b) + beta·dst.
	Gemm(tA, tB Op, alpha float32, a, b Dense, beta float32, dst Dense)
	// Name identifies the backend in logs.
	Name() string
}
