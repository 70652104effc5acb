package gcn

import (
	"math"

	"scalegnn/grid"
	"scalegnn/spmm"
)

// tape keeps the local blocks the backward pass needs.
type tape struct {
	step     int
	training bool
	projIn   []float32
	layers   []layerTape
	headIn   []float32 // after dropout
	headKeep []uint64  // its dropout mask (nil without dropout)
	logits   []float32
}

type layerTape struct {
	inDrop []float32 // F̃: input after dropout (rows P, cols Q)
	keep   []uint64  // its dropout mask, when backward needs it (nil without dropout)
	h      []float32 // H = Â·F̃ (rows R, cols Q)
	u, rms []float32 // RMSNorm: Z/rms and rms per row
	act    []float32 // input of the ReLU (rows R, cols P)
}

// dims of GCN layer l on this rank.
type layerDims struct {
	p, q, r      grid.Axis
	pr0, pr1     int // rows of the input (P-block of N)
	rr0, rr1     int // rows of the output (R-block of N)
	in0, in1     int // input columns (Q-block of the input width)
	out0, out1   int // output columns (P-block of the output width)
	nP, nR, dIn  int
	dOut         int
	shard        *adjShard
	spec         layerSpec
	weight, norm *Param
}

func (m *Model) dims(sh *Shards, l int) layerDims {
	var d layerDims
	d.spec = m.specs[l]
	d.p, d.q, d.r = grid.Rotation(l)
	d.pr0, d.pr1 = sh.rows(m.g, grid.InputOrder(l), d.p)
	d.rr0, d.rr1 = sh.rows(m.g, grid.OutputOrder(l), d.r)
	d.in0, d.in1 = m.g.Range(d.spec.in, d.q)
	d.out0, d.out1 = m.g.Range(d.spec.out, d.p)
	d.nP, d.nR = d.pr1-d.pr0, d.rr1-d.rr0
	d.dIn, d.dOut = d.in1-d.in0, d.out1-d.out0
	d.shard = sh.adj[sh.shardKey(l)]
	for _, p := range m.Params {
		switch p.Name {
		case weightName(l):
			d.weight = p
		case normName(l):
			d.norm = p
		}
	}
	return d
}

func dense(data []float32, rows, cols int) spmm.Dense {
	return spmm.Dense{Rows: rows, Cols: cols, Stride: cols, Data: data}
}

// forward runs the model on this rank's blocks and returns the local block
// of the logits (rows and classes as logitsAxes says) and the tape.
func (m *Model) forward(training bool, step int) (*tape, error) {
	cfg, g, sh := m.Cfg, m.g, m.sh
	tp := &tape{step: step, training: training}
	x := sh.X
	if cfg.InputProjection {
		// Features [rows X, cols Z] · W [rows Z, cols Y] summed over Z lands
		// in layer 0's input layout [rows X, cols Y].
		p := m.Params[0]
		r0, r1 := sh.rows(g, 1, grid.X)
		out := make([]float32, (r1-r0)*(p.C1-p.C0))
		m.gemm(spmm.NoTrans, spmm.NoTrans, dense(x, r1-r0, p.R1-p.R0), p.dense(), dense(out, r1-r0, p.C1-p.C0))
		if err := m.pmmAllReduce(g.ZComm, out); err != nil {
			return nil, err
		}
		tp.projIn = x
		x = out
	}
	for l := range m.specs {
		d := m.layers[l]
		verts := sh.Orders.Order[grid.InputOrder(l)][d.pr0:d.pr1]
		var lt layerTape
		if d.spec.needInputGrad {
			// The backward pass masks this layer's input gradient with the
			// same draws: keep them.
			lt.inDrop, lt.keep = m.dropoutKeep(x, verts, d.in0, d.dIn, training, step, l)
		} else {
			lt.inDrop = m.dropout(x, verts, d.in0, d.dIn, training, step, l)
		}

		lt.h = make([]float32, d.nR*d.dIn)
		m.spmm(dense(lt.h, d.nR, d.dIn), d.shard.a, dense(lt.inDrop, d.nP, d.dIn))
		if err := m.pmmAllReduce(g.Comm(d.p), lt.h); err != nil {
			return nil, err
		}
		z := make([]float32, d.nR*d.dOut)
		m.gemm(spmm.NoTrans, spmm.NoTrans, dense(lt.h, d.nR, d.dIn), d.weight.dense(), dense(z, d.nR, d.dOut))
		if err := m.pmmAllReduce(g.Comm(d.q), z); err != nil {
			return nil, err
		}
		out := z
		if d.spec.hidden {
			if d.spec.norm {
				var err error
				if out, err = m.rmsNormForward(&lt, z, d); err != nil {
					return nil, err
				}
			}
			lt.act = out
			relu := make([]float32, len(out))
			for k, v := range out {
				relu[k] = max(v, 0)
			}
			out = relu
			if d.spec.residual {
				res := make([]float32, len(out))
				src := sh.layout(grid.InputOrder(l), d.p, d.q, d.spec.in)
				dst := sh.layout(grid.OutputOrder(l), d.r, d.p, d.spec.out)
				if err := g.Redistribute(res, dst, x, src, m.rowMaps[grid.InputOrder(l)]); err != nil {
					return nil, err
				}
				for k := range out {
					out[k] += res[k]
				}
			}
		}
		tp.layers = append(tp.layers, lt)
		x = out
	}
	if cfg.OutputHead {
		// Input [rows P_L, cols Q_L] · W [rows Q_L, cols R_L], summed over Q_L.
		p := m.Params[len(m.Params)-1]
		pa, qa, _ := grid.Rotation(cfg.Layers)
		r0, r1 := sh.rows(g, grid.OutputOrder(cfg.Layers-1), pa)
		verts := sh.Orders.Order[grid.OutputOrder(cfg.Layers-1)][r0:r1]
		tp.headIn, tp.headKeep = m.dropoutKeep(x, verts, p.R0, p.R1-p.R0, training, step, cfg.headSite())
		out := make([]float32, (r1-r0)*(p.C1-p.C0))
		m.gemm(spmm.NoTrans, spmm.NoTrans, dense(tp.headIn, r1-r0, p.R1-p.R0), p.dense(), dense(out, r1-r0, p.C1-p.C0))
		if err := m.pmmAllReduce(g.Comm(qa), out); err != nil {
			return nil, err
		}
		x = out
	}
	tp.logits = x
	return tp, nil
}

// rmsNormForward normalises each row of z (rows R, cols P) by its root mean
// square over all columns — a sum of squares all-reduced over P — and
// multiplies by the learnable scale.
func (m *Model) rmsNormForward(lt *layerTape, z []float32, d layerDims) ([]float32, error) {
	ss := make([]float32, d.nR)
	for i := 0; i < d.nR; i++ {
		var s float32
		for _, v := range z[i*d.dOut : (i+1)*d.dOut] {
			s += v * v
		}
		ss[i] = s
	}
	if err := m.allReduce(m.g.Comm(d.p), ss); err != nil {
		return nil, err
	}
	lt.rms = make([]float32, d.nR)
	lt.u = make([]float32, len(z))
	out := make([]float32, len(z))
	for i := 0; i < d.nR; i++ {
		rms := float32(math.Sqrt(float64(ss[i])/float64(d.spec.out) + normEps))
		lt.rms[i] = rms
		for j := 0; j < d.dOut; j++ {
			k := i*d.dOut + j
			lt.u[k] = z[k] / rms
			out[k] = lt.u[k] * d.norm.W[j]
		}
	}
	return out, nil
}
