package device

// The argument checks of the GAT operations, shared by every device.

func checkHeads(name string, heads, cols int) int {
	if heads < 1 || cols%heads != 0 {
		shapePanic("%s: %d columns in %d heads", name, cols, heads)
	}
	return cols / heads
}

func checkHeadDot(name string, s Buffer[float32], y Mat, att Buffer[float32], heads int) {
	y.check(name, "y")
	checkHeads(name, heads, y.cols)
	checkLen2(name, "s", s.Len(), y.rows*heads)
	checkLen2(name, "att", att.Len(), y.cols)
}

func checkGAT(name string, a *CSR, g *GAT) int {
	if g.Heads < 1 {
		shapePanic("%s: %d heads", name, g.Heads)
	}
	if !(g.P >= 0 && g.P < 1) {
		shapePanic("%s: attention dropout p = %g outside [0, 1)", name, g.P)
	}
	if g.P > 0 {
		checkLen2(name, "RowVerts", g.RowVerts.Len(), a.Rows())
		checkLen2(name, "ColVerts", g.ColVerts.Len(), a.Cols())
	}
	return a.NNZ() * g.Heads
}

func checkGATScores(e, mx Buffer[float32], a *CSR, s, t Buffer[float32], g *GAT) {
	n := checkGAT("GATScores", a, g)
	checkLen("GATScores e", e.Len(), n)
	checkLen("GATScores mx", mx.Len(), a.Rows()*g.Heads)
	checkLen("GATScores s", s.Len(), a.Rows()*g.Heads)
	checkLen("GATScores t", t.Len(), a.Cols()*g.Heads)
}

func checkGATExpSum(e, sums Buffer[float32], a *CSR, mx Buffer[float32], g *GAT) {
	n := checkGAT("GATExpSum", a, g)
	checkLen("GATExpSum e", e.Len(), n)
	checkLen("GATExpSum sums", sums.Len(), a.Rows()*g.Heads)
	checkLen("GATExpSum mx", mx.Len(), a.Rows()*g.Heads)
}

func checkGATNormalize(alpha, drop Buffer[float32], a *CSR, e, sums Buffer[float32], g *GAT) {
	n := checkGAT("GATNormalize", a, g)
	checkLen("GATNormalize alpha", alpha.Len(), n)
	checkLen("GATNormalize e", e.Len(), n)
	checkLen("GATNormalize sums", sums.Len(), a.Rows()*g.Heads)
	if g.P > 0 {
		checkLen("GATNormalize drop", drop.Len(), n)
	}
}

func checkSpMMHeads(dst Mat, a *CSR, alpha Buffer[float32], perm Buffer[int32], b Mat, heads int) {
	checkSpMM(dst, a, b)
	checkHeads("SpMMHeads", heads, b.cols)
	checkLen("SpMMHeads alpha", alpha.Len(), a.NNZ()*heads)
	if perm.Len() != 0 {
		checkLen("SpMMHeads perm", perm.Len(), a.NNZ())
	}
}

func checkSDDMMHeads(d Buffer[float32], a *CSR, x, y Mat, heads int) {
	x.check("SDDMMHeads", "x")
	y.check("SDDMMHeads", "y")
	if x.rows != a.Rows() || y.rows != a.Cols() || x.cols != y.cols {
		shapePanic("SDDMMHeads: x %v, y %v for a %d×%d", x, y, a.Rows(), a.Cols())
	}
	checkHeads("SDDMMHeads", heads, x.cols)
	checkLen("SDDMMHeads d", d.Len(), a.NNZ()*heads)
}

func checkGATRowDot(r, dalpha Buffer[float32], a *CSR, alpha Buffer[float32], g *GAT) {
	n := checkGAT("GATRowDot", a, g)
	checkLen("GATRowDot r", r.Len(), a.Rows()*g.Heads)
	checkLen("GATRowDot dalpha", dalpha.Len(), n)
	checkLen("GATRowDot alpha", alpha.Len(), n)
}

func checkGATLogitGrad(dz, ds Buffer[float32], a *CSR, alpha, dalpha, r, s, t Buffer[float32], g *GAT) {
	n := checkGAT("GATLogitGrad", a, g)
	checkLen("GATLogitGrad dz", dz.Len(), n)
	checkLen("GATLogitGrad alpha", alpha.Len(), n)
	checkLen("GATLogitGrad dalpha", dalpha.Len(), n)
	checkLen("GATLogitGrad ds", ds.Len(), a.Rows()*g.Heads)
	checkLen("GATLogitGrad r", r.Len(), a.Rows()*g.Heads)
	checkLen("GATLogitGrad s", s.Len(), a.Rows()*g.Heads)
	checkLen("GATLogitGrad t", t.Len(), a.Cols()*g.Heads)
}

func checkEdgeSums(dst Buffer[float32], a *CSR, vals Buffer[float32], perm Buffer[int32], heads int) {
	if heads < 1 {
		shapePanic("EdgeSums: %d heads", heads)
	}
	checkLen("EdgeSums dst", dst.Len(), a.Rows()*heads)
	checkLen("EdgeSums vals", vals.Len(), a.NNZ()*heads)
	if perm.Len() != 0 {
		checkLen("EdgeSums perm", perm.Len(), a.NNZ())
	}
}

func checkHeadMean(name string, dst, src Mat, heads int) {
	dst.check(name, "dst")
	src.check(name, "src")
	if heads < 1 || src.rows != dst.rows || src.cols != dst.cols*heads {
		shapePanic("%s: %v from %v in %d heads", name, dst, src, heads)
	}
}
