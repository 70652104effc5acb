package device

// PLACEHOLDER: the CUDA GAT kernels are being written (issue 26); until
// then every GAT operation on the CUDA device panics.

func cudaGATMissing(op string) { panic("device: cuda " + op + ": GAT kernels not yet built") }

func (d *CUDA) HeadDot(s Buffer[float32], y Mat, att Buffer[float32], heads int) {
	cudaGATMissing("HeadDot")
}
func (d *CUDA) HeadDotBackward(dy Mat, ds, att Buffer[float32], heads int) {
	cudaGATMissing("HeadDotBackward")
}
func (d *CUDA) HeadDotGrad(datt, ds Buffer[float32], y Mat, heads int) {
	cudaGATMissing("HeadDotGrad")
}
func (d *CUDA) GATScores(e, mx Buffer[float32], a *CSR, s, t Buffer[float32], g GAT) {
	cudaGATMissing("GATScores")
}
func (d *CUDA) GATExpSum(e, sums Buffer[float32], a *CSR, mx Buffer[float32], g GAT) {
	cudaGATMissing("GATExpSum")
}
func (d *CUDA) GATNormalize(alpha, drop Buffer[float32], a *CSR, e, sums Buffer[float32], g GAT) {
	cudaGATMissing("GATNormalize")
}
func (d *CUDA) SpMMHeads(dst Mat, a *CSR, alpha Buffer[float32], perm Buffer[int32], b Mat, heads int) {
	cudaGATMissing("SpMMHeads")
}
func (d *CUDA) SDDMMHeads(dd Buffer[float32], a *CSR, x, y Mat, heads int) {
	cudaGATMissing("SDDMMHeads")
}
func (d *CUDA) GATRowDot(r, dalpha Buffer[float32], a *CSR, alpha Buffer[float32], g GAT) {
	cudaGATMissing("GATRowDot")
}
func (d *CUDA) GATLogitGrad(dz, ds Buffer[float32], a *CSR, alpha, dalpha, r, s, t Buffer[float32], g GAT) {
	cudaGATMissing("GATLogitGrad")
}
func (d *CUDA) EdgeSums(dst Buffer[float32], a *CSR, vals Buffer[float32], perm Buffer[int32], heads int) {
	cudaGATMissing("EdgeSums")
}
func (d *CUDA) ELU(dst, a Mat)                            { cudaGATMissing("ELU") }
func (d *CUDA) ELUBackward(dst, grad, out Mat)            { cudaGATMissing("ELUBackward") }
func (d *CUDA) HeadMean(dst, src Mat, heads int)          { cudaGATMissing("HeadMean") }
func (d *CUDA) HeadMeanBackward(dst, grad Mat, heads int) { cudaGATMissing("HeadMeanBackward") }
