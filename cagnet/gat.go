package cagnet

import (
	"fmt"

	"scalegnn/collectives"
	"scalegnn/device"
	"scalegnn/gcn"
	"scalegnn/spmm"
)

// GAT layers in 1.5D (the design is in doc.go): the rank's stages' blocks
// merged into one, the staged broadcasts of t and Y, the softmax's row
// statistics all-reduced over the process row, and the column sums of
// the backward pass all-reduced over the process column.

// gatBlock is what a GAT layer multiplies on this rank: its stages' blocks
// of Â side by side (columns [c0, c1) of the bound graph, the stages'
// block rows), their transpose and the transpose's entry positions in a
// (spmm.TransposePerm), and the original vertex ids of the columns, which
// key the attention dropout. Only the pattern is read.
type gatBlock struct {
	a, at    *device.CSR
	perm     device.Buffer[int32]
	colVerts device.Buffer[int32]
	c0, c1   int
	nnz      int
}

// isGAT reports whether the model's layers are GAT layers.
func (m *Model) isGAT() bool { return m.cfg.Layer == gcn.GATLayer }

// stageRange returns the bound graph's rows [c0, c1) of this rank's
// stages' block rows (empty when the replica has no stage).
func (m *Model) stageRange() (c0, c1 int) {
	k0, k1 := m.L.Stages()
	if k0 == k1 {
		return 0, 0
	}
	c0, _ = m.blockRows(k0)
	_, c1 = m.blockRows(k1 - 1)
	return c0, c1
}

// mergeColumns sets dst to the blocks side by side (block s's columns
// shifted by offs[s]; every block has dst's rows), reusing dst's storage.
func mergeColumns(dst *spmm.CSR, blocks []*spmm.CSR, offs []int, rows, cols int) {
	dst.Rows, dst.Cols = rows, cols
	dst.RowPtr = append(dst.RowPtr[:0], 0)
	dst.ColIdx, dst.Val = dst.ColIdx[:0], dst.Val[:0]
	for i := range rows {
		for s, b := range blocks {
			for p := b.RowPtr[i]; p < b.RowPtr[i+1]; p++ {
				dst.ColIdx = append(dst.ColIdx, b.ColIdx[p]+int32(offs[s]))
				dst.Val = append(dst.Val, b.Val[p])
			}
		}
		dst.RowPtr = append(dst.RowPtr, int64(len(dst.ColIdx)))
	}
}

// transposeInto sets t and perm to a's transpose and its entry positions
// (spmm.TransposePermInto), reusing their storage; it returns perm.
func transposeInto(t *spmm.CSR, perm []int32, a *spmm.CSR) []int32 {
	nnz := a.NNZ()
	t.RowPtr = resize(t.RowPtr, a.Cols+1)
	t.ColIdx, t.Val = resize(t.ColIdx, nnz), resize(t.Val, nnz)
	perm = resize(perm, nnz)
	spmm.TransposePermInto(t, perm, a)
	return perm
}

func resize[T any](s []T, n int) []T {
	if cap(s) < n {
		return make([]T, n)
	}
	return s[:n]
}

// ebuf is buf for a per-edge array: nnz entries of cols values, at least
// edgeCap entries (a mini-batch's entries vary; the full graph's bound
// them).
func (m *Model) ebuf(name string, layer, nnz, cols int) device.Buffer[float32] {
	return m.bufCap(name, layer, nnz, cols, m.edgeCap).Flat()
}

// rbuf is buf for the rows of this rank's stages, at least rangeCap rows.
func (m *Model) rbuf(name string, layer, rows, cols int) device.Mat {
	return m.bufCap(name, layer, rows, cols, m.rangeCap)
}

// gatSpec is layer l's device.GAT: K heads, and attention dropout when
// training (keyed by the original ids of rows and columns).
func (m *Model) gatSpec(l, heads int, training bool) device.GAT {
	g := device.GAT{Heads: heads, Slope: gcn.GATSlope, Seed: m.cfg.Seed, Step: m.t, Site: m.cfg.AttentionSite(l),
		RowVerts: m.verts, ColVerts: m.gv.colVerts}
	if training {
		g.P = m.cfg.Dropout
	}
	return g
}

// stageBcast starts the broadcasts of the stages' block rows of a
// per-row tensor into dst (the stages' rows, contiguous): stage k's block
// row is sent by process row k, which first copies own (its block row)
// into its slot. With bf16 they travel as bfloat16 (ibcastBF16, host
// staging host and requests breq, one per stage). The requests are
// returned in reqs, to be waited in order.
func (m *Model) stageBcast(dst, own device.Mat, bf16 bool, reqs []collectives.Request, host [][]uint16, breq []bf16Bcast) error {
	k0, _ := m.L.Stages()
	c0, _ := m.stageRange()
	for s := range reqs {
		k := k0 + s
		b0, b1 := m.blockRows(k)
		slot := dst.Slice(b0-c0, b1-c0, 0, dst.Cols())
		if k == m.L.Row {
			m.dev.Copy(slot, own)
		}
		var err error
		if bf16 {
			reqs[s], err = ibcastBF16(m.dev, m.col, slot.Flat(), m.pack, k, &host[s], &breq[s])
		} else {
			reqs[s], err = device.IBcast(m.dev, m.col, slot.Flat(), k)
		}
		if err != nil {
			return err
		}
	}
	return nil
}

func waitAll(reqs []collectives.Request) error {
	for _, r := range reqs {
		if err := r.Wait(); err != nil {
			return err
		}
	}
	return nil
}

// gatStages returns the request slices of the two broadcasts a GAT layer
// has in flight at once (t and Y), sized for the rank's stages.
func (m *Model) gatStages() (tReqs, yReqs []collectives.Request) {
	k0, k1 := m.L.Stages()
	n := k1 - k0
	if len(m.gatReqs) < 2*n {
		m.gatReqs = make([]collectives.Request, 2*n)
		m.gatHost, m.gatBReqs = make([][]uint16, n), make([]bf16Bcast, n)
	}
	return m.gatReqs[:n], m.gatReqs[n : 2*n]
}

// gatForward runs GAT layer l on h (the block row after input dropout):
// it returns Y_i (the projection, for the backward pass), O_i (the heads'
// aggregation, whole rows) and the layer's output (ELU(O_i) when hidden,
// the heads' mean otherwise), the bias added to O_i. s_i, the broadcast t, α and its dropped
// copy stay in the layer's buffers for the backward pass.
func (m *Model) gatForward(l int, s gcn.LayerSpec, h device.Mat, training bool) (y, o, out device.Mat, err error) {
	dev, gv := m.dev, &m.gv
	rows, C, K := m.hi-m.lo, s.ProjWidth, s.Heads
	y = m.buf("y", l, rows, C)
	dev.Gemm(spmm.NoTrans, spmm.NoTrans, 1, h, m.Params[m.w[l]].dw, 0, y)
	sv, tv := m.buf("s", l, rows, K), m.buf("t", K, rows, K)
	dev.HeadDot(sv.Flat(), y, m.Params[m.asrc[l]].dw.Flat(), K)
	dev.HeadDot(tv.Flat(), y, m.Params[m.adst[l]].dw.Flat(), K)
	rr := gv.c1 - gv.c0
	tcat, ycat := m.rbuf("tcat", l, rr, K), m.rbuf("ycat", C, rr, C)
	tReqs, yReqs := m.gatStages()
	// t first (small, float32): the scores wait for it; Y's broadcasts
	// are in flight while the rank scores and normalises.
	if err = m.stageBcast(tcat, tv, false, tReqs, nil, nil); err != nil {
		return
	}
	if err = m.stageBcast(ycat, y, m.bf16, yReqs, m.gatHost, m.gatBReqs); err != nil {
		return
	}
	if err = waitAll(tReqs); err != nil {
		return
	}
	g := m.gatSpec(l, K, training)
	alpha := m.ebuf("alpha", l, gv.nnz, K)
	mx, sums := m.buf("mx", K, rows, K).Flat(), m.buf("sums", K, rows, K).Flat()
	dev.GATScores(alpha, mx, gv.a, sv.Flat(), tcat.Flat(), g)
	// A row's entries are split over the replicas' block columns.
	if err = device.AllReduce(dev, m.row, mx, collectives.Max); err != nil {
		return
	}
	dev.GATExpSum(alpha, sums, gv.a, mx, g)
	if err = device.AllReduce(dev, m.row, sums, collectives.Sum); err != nil {
		return
	}
	drop := alpha
	if g.P > 0 {
		drop = m.ebuf("drop", l, gv.nnz, K)
	}
	dev.GATNormalize(alpha, drop, gv.a, alpha, sums, g)
	if err = waitAll(yReqs); err != nil {
		return
	}
	o = m.buf("o", l, rows, C)
	dev.SpMMHeads(o, gv.a, drop, device.Buffer[int32]{}, ycat, K)
	if m.bf16 {
		err = device.AllReduceBF16(dev, m.row, o.Flat(), m.pack)
	} else {
		err = device.AllReduce(dev, m.row, o.Flat(), collectives.Sum)
	}
	if err != nil {
		return
	}
	dev.HeadDotBackward(o, m.ones(rows), m.Params[m.bias[l]].dw.Flat(), 1)
	if s.Hidden {
		out = m.buf("act", l, rows, C)
		dev.ELU(out, o)
	} else {
		out = m.buf("act", l, rows, s.Out)
		dev.HeadMean(out, o, K)
	}
	return y, o, out, nil
}

// gatBackward runs GAT layer l's backward pass from dout, the gradient of
// its output: it sets the gradients of W, a_src, a_dst and the bias
// (summed over the process column) and returns the gradient of the layer's input
// (before the input dropout's mask), or an empty Mat when the layer needs
// none.
func (m *Model) gatBackward(l int, s gcn.LayerSpec, dout device.Mat) (device.Mat, error) {
	dev, gv := m.dev, &m.gv
	rows, C, K := m.hi-m.lo, s.ProjWidth, s.Heads
	y := m.ah[l]
	dO := m.buf("do", C, rows, C)
	if s.Hidden {
		dev.ELUBackward(dO, dout, m.act[l])
	} else {
		dev.HeadMeanBackward(dO, dout, K)
	}
	// Y's blocks again, in the forward pass's stages and dtype.
	rr := gv.c1 - gv.c0
	ycat := m.rbuf("ycat", C, rr, C)
	_, yReqs := m.gatStages()
	if err := m.stageBcast(ycat, y, m.bf16, yReqs, m.gatHost, m.gatBReqs); err != nil {
		return device.Mat{}, err
	}
	if err := waitAll(yReqs); err != nil {
		return device.Mat{}, err
	}
	g := m.gatSpec(l, K, true)
	alpha, drop := m.ebuf("alpha", l, gv.nnz, K), m.ebuf("alpha", l, gv.nnz, K)
	if g.P > 0 {
		drop = m.ebuf("drop", l, gv.nnz, K)
	}
	sv, tcat := m.buf("s", l, rows, K).Flat(), m.rbuf("tcat", l, rr, K).Flat()
	da := m.ebuf("dalpha", K, gv.nnz, K)
	dev.SDDMMHeads(da, gv.a, dO, ycat, K)
	r, ds := m.buf("rdot", K, rows, K).Flat(), m.buf("ds", K, rows, K).Flat()
	dev.GATRowDot(r, da, gv.a, alpha, g)
	if err := device.AllReduce(dev, m.row, r, collectives.Sum); err != nil {
		return device.Mat{}, err
	}
	dev.GATLogitGrad(da, ds, gv.a, alpha, da, r, sv, tcat, g)
	if err := device.AllReduce(dev, m.row, ds, collectives.Sum); err != nil {
		return device.Mat{}, err
	}
	// Column sums over this rank's rows for its stages' columns; the
	// process column adds every process row's.
	dyc, dtc := m.rbuf("dycol", C, rr, C), m.rbuf("dtcol", K, rr, K)
	dev.SpMMHeads(dyc, gv.at, drop, gv.perm, dO, K)
	dev.EdgeSums(dtc.Flat(), gv.at, da, gv.perm, K)
	var err error
	if m.bf16 {
		err = device.AllReduceBF16(dev, m.col, dyc.Flat(), m.pack)
	} else {
		err = device.AllReduce(dev, m.col, dyc.Flat(), collectives.Sum)
	}
	if err != nil {
		return device.Mat{}, err
	}
	if err := device.AllReduce(dev, m.col, dtc.Flat(), collectives.Sum); err != nil {
		return device.Mat{}, err
	}
	dy, dt := m.buf("dy", C, rows, C), m.buf("dt", K, rows, K)
	owner := m.stageOwner(m.L.Row)
	if m.L.Col == owner {
		c0, _ := m.stageRange()
		b0, b1 := m.blockRows(m.L.Row)
		dev.Copy(dy, dyc.Slice(b0-c0, b1-c0, 0, C))
		dev.Copy(dt, dtc.Slice(b0-c0, b1-c0, 0, K))
	}
	// float32, not bfloat16: ibcastBF16 leaves the root's values
	// unrounded, and the replicas' gradients must be equal.
	for _, b := range []device.Buffer[float32]{dy.Flat(), dt.Flat()} {
		req, err := device.IBcast(dev, m.row, b, owner)
		if err == nil {
			err = req.Wait()
		}
		if err != nil {
			return device.Mat{}, err
		}
	}
	pS, pD, pW, pB := m.Params[m.asrc[l]], m.Params[m.adst[l]], m.Params[m.w[l]], m.Params[m.bias[l]]
	dev.HeadDotGrad(pS.dg.Flat(), ds, y, K)
	dev.HeadDotGrad(pD.dg.Flat(), dt.Flat(), y, K)
	dev.HeadDotGrad(pB.dg.Flat(), m.ones(rows), dO, 1)
	for _, p := range []*Param{pS, pD, pB} {
		if err := device.AllReduce(dev, m.col, p.dg.Flat(), collectives.Sum); err != nil {
			return device.Mat{}, err
		}
		p.download(dev)
	}
	dev.HeadDotBackward(dy, ds, pS.dw.Flat(), K)
	dev.HeadDotBackward(dy, dt.Flat(), pD.dw.Flat(), K)
	if err := m.weightGrad(pW, m.in[l], dy); err != nil {
		return device.Mat{}, err
	}
	if !s.NeedInputGrad {
		return device.Mat{}, nil
	}
	din := m.buf("dz", l-1, rows, s.In)
	dev.Gemm(spmm.NoTrans, spmm.Trans, 1, dy, pW.dw, 0, din)
	return din, nil
}

// ones returns a 1 per row of rows: HeadDotBackward with it adds a bias
// to every row, HeadDotGrad with it sums a bias's gradient over them.
func (m *Model) ones(rows int) device.Buffer[float32] {
	o := m.buf("ones", 0, rows, 1)
	m.dev.Fill(o, 1)
	return o.Flat()
}

// stageOwner returns the replica whose stages include block column k.
func (m *Model) stageOwner(k int) int {
	for j := range m.L.C {
		lj := m.L
		lj.Col = j
		if k0, k1 := lj.Stages(); k >= k0 && k < k1 {
			return j
		}
	}
	panic(fmt.Sprintf("cagnet: block column %d of %d has no replica", k, m.L.Q))
}

// uploadGAT makes the full graph's gatBlock from the host blocks of the
// stages (their columns at the stages' block rows) and the original ids
// of every position.
func (m *Model) uploadGAT(blocks []*spmm.CSR, ids []int32) {
	c0, c1 := m.stageRange()
	k0, _ := m.L.Stages()
	offs := make([]int, len(blocks))
	for s := range blocks {
		b0, _ := m.blockRows(k0 + s)
		offs[s] = b0 - c0
	}
	a := new(spmm.CSR)
	mergeColumns(a, blocks, offs, m.hi-m.lo, c1-c0)
	at, perm := spmm.TransposePerm(a)
	dev := m.dev
	m.gv = gatBlock{a: dev.UploadCSR(a), at: dev.UploadCSR(at), c0: c0, c1: c1, nnz: a.NNZ(),
		perm: device.Alloc[int32](dev, len(perm)), colVerts: device.Alloc[int32](dev, c1-c0)}
	device.Upload(dev, m.gv.perm, 0, perm)
	device.Upload(dev, m.gv.colVerts, 0, ids[c0:c1])
	m.edgeCap, m.rangeCap = a.NNZ(), c1-c0
}
