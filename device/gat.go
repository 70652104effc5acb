package device

// GAT holds the constants of a graph attention layer's edge operations
// (gcn.GATLayer). The per-edge arrays (scores, α, their gradients) hold
// Heads values per stored entry of the CSR, entry-major: the value of
// entry p (in the CSR's storage order) and head k is at p·Heads + k. The
// per-vertex arrays (s, t, the row maxima and sums) hold Heads values per
// row (or per column), row-major likewise. A CSR's values are never read:
// only its pattern is the layer's neighbourhoods.
//
// Attention dropout keeps α of entry (i, j) and head k when the counter
// draw of (Seed, Step, Site, RowVerts[i], ColVerts[j]·Heads + k) says so,
// as gcn/random.go draws a dropout mask, and scales it by 1/(1−P): the
// same coefficients are dropped on every grid, on a resume, and in the
// serial reference.
type GAT struct {
	Heads int
	// Slope is the LeakyReLU's negative slope (gcn.GATSlope).
	Slope float32
	// Attention dropout; P == 0 draws nothing and RowVerts and ColVerts
	// may then be empty.
	Seed               uint64
	Step, Site         int
	P                  float64
	RowVerts, ColVerts Buffer[int32]
}

// GATOps are the operations of a graph attention layer, part of every
// Device. In order of a forward pass: HeadDot (s and t), GATScores (and
// the row maxima's all-reduce), GATExpSum (and the sums' all-reduce),
// GATNormalize, SpMMHeads; backward: SDDMMHeads, GATRowDot (and its
// all-reduce), GATLogitGrad, EdgeSums over the transpose, SpMMHeads over
// the transpose, HeadDotBackward, HeadDotGrad. ELU and HeadMean are the
// layer's activation and its last layer's head average.
type GATOps interface {
	// HeadDot sets s[i·K+k] = Σ_c y[i, k·F'+c]·att[k·F'+c] for K = heads
	// and F' = y.Cols()/K: each row's per-head dot product with the
	// attention vector att (K·F' values).
	HeadDot(s Buffer[float32], y Mat, att Buffer[float32], heads int)
	// HeadDotBackward adds ds[i·K+k]·att[k·F'+c] to dy[i, k·F'+c]: the
	// gradient of HeadDot with respect to y, accumulated.
	HeadDotBackward(dy Mat, ds, att Buffer[float32], heads int)
	// HeadDotGrad sets datt[k·F'+c] = Σ_i ds[i·K+k]·y[i, k·F'+c], rows in
	// order: HeadDot's gradient with respect to att, overwriting datt.
	HeadDotGrad(datt, ds Buffer[float32], y Mat, heads int)

	// GATScores sets e[p·K+k] = LeakyReLU(s[i·K+k] + t[j·K+k]) for every
	// entry p = (i, j) of a, and mx[i·K+k] to the maximum of row i's
	// scores (−Inf for a row without entries): s holds a value per row of
	// a and head, t one per column and head.
	GATScores(e, mx Buffer[float32], a *CSR, s, t Buffer[float32], g GAT)
	// GATExpSum replaces e by exp(e − mx[i·K+k]) and sets sums[i·K+k] to
	// the sum over row i, entries in order.
	GATExpSum(e, sums Buffer[float32], a *CSR, mx Buffer[float32], g GAT)
	// GATNormalize sets alpha = e/sums[i·K+k] (alpha may be e) and, when
	// g.P > 0, drop to alpha with g's attention dropout applied (drop is
	// not touched otherwise and may be empty).
	GATNormalize(alpha, drop Buffer[float32], a *CSR, e, sums Buffer[float32], g GAT)
	// SpMMHeads computes dst[i, k·F'+c] = Σ_p alpha[q(p)·K+k]·b[j, k·F'+c]
	// over row i's entries p = (i, j) of a, F' = b.Cols()/K, overwriting
	// dst (which must not overlap b). q(p) is perm[p], or p when perm is
	// empty: with a the transpose of a pattern and perm its entries'
	// positions in that pattern (spmm.TransposePerm), it multiplies by
	// the transpose of alpha.
	SpMMHeads(dst Mat, a *CSR, alpha Buffer[float32], perm Buffer[int32], b Mat, heads int)
	// SDDMMHeads sets d[p·K+k] = Σ_c x[i, k·F'+c]·y[j, k·F'+c] for every
	// entry p = (i, j) of a: the gradient of SpMMHeads with respect to
	// alpha, for dst's gradient x and the product's input y.
	SDDMMHeads(d Buffer[float32], a *CSR, x, y Mat, heads int)
	// GATRowDot first turns dalpha, the gradient of GATNormalize's drop,
	// into that of alpha (the same dropout mask and scale; nothing when
	// g.P == 0), in place, then sets r[i·K+k] = Σ_j alpha·dalpha over row
	// i: the softmax's backward partial, all-reduced like the sums.
	GATRowDot(r, dalpha Buffer[float32], a *CSR, alpha Buffer[float32], g GAT)
	// GATLogitGrad sets dz[p·K+k] = alpha·(dalpha − r[i·K+k]) times the
	// LeakyReLU's slope at s[i·K+k] + t[j·K+k] (1 above 0, g.Slope
	// otherwise), the gradient of the logits' pre-activation, and ds to
	// its row sums (entries in order). dz may be dalpha.
	GATLogitGrad(dz, ds Buffer[float32], a *CSR, alpha, dalpha, r, s, t Buffer[float32], g GAT)
	// EdgeSums sets dst[i·K+k] = Σ_p vals[q(p)·K+k] over row i's entries,
	// in order, with q as SpMMHeads has it: over the transpose and its
	// perm, the column sums of vals.
	EdgeSums(dst Buffer[float32], a *CSR, vals Buffer[float32], perm Buffer[int32], heads int)

	// ELU computes dst = a for a > 0 and exp(a) − 1 otherwise; dst may
	// be a.
	ELU(dst, a Mat)
	// ELUBackward computes dst = grad where out > 0, grad·(out + 1)
	// elsewhere, from ELU's output out; dst may be grad.
	ELUBackward(dst, grad, out Mat)
	// HeadMean sets dst[i, c] to the mean over k of src[i, k·F'+c],
	// F' = dst.Cols(), K = heads (src has K·F' columns).
	HeadMean(dst, src Mat, heads int)
	// HeadMeanBackward sets dst[i, k·F'+c] = grad[i, c]/K.
	HeadMeanBackward(dst, grad Mat, heads int)
}
