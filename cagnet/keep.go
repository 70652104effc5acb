package cagnet

import (
	"fmt"

	"scalegnn/collectives"
	"scalegnn/device"
	"scalegnn/gcn"
)

// What a run that is kept needs of the model (jobs writes and reads its
// checkpoints in package checkpoint's format, the 3D model's, through
// checkpoint.SaveReplicated and LoadReplicated: every rank holds W whole):
// the parameters (a GAT layer's attention vectors among them, in
// gcn.InitialParams' order) and Adam moments, the step count and the dataset's
// fingerprint; and the predictions and embeddings scalegnn predict
// writes. Dropout masks are keyed by (seed, step, layer, vertex, column)
// and Step keeps weights and moments in float32, so restoring the
// parameters, the moments and the step continues a run exactly.

// Config returns the model's configuration.
func (m *Model) Config() gcn.Config { return m.cfg }

// OptimizerSteps returns the optimizer steps taken, which is also the
// step whose dropout masks the next LossAndGrad draws.
func (m *Model) OptimizerSteps() int { return m.t }

// SetOptimizerSteps restores the optimizer's step count (a checkpoint's).
func (m *Model) SetOptimizerSteps(t int) {
	if t < 0 {
		panic(fmt.Sprintf("cagnet: SetOptimizerSteps(%d)", t))
	}
	m.t = t
}

// ParamCount is the number of parameters (len(Params)).
func (m *Model) ParamCount() int { return len(m.Params) }

// ParamShape returns parameter k's name and shape, as a checkpoint names
// it.
func (m *Model) ParamShape(k int) (name string, rows, cols int) {
	p := m.Params[k]
	return p.Name, p.Rows, p.Cols
}

// DownloadParam copies parameter k's weights and optimizer moments into
// w, mo and v (Rows×Cols each): exact, since Step stores them in float32.
func (m *Model) DownloadParam(k int, w, mo, v []float32) {
	p := m.Params[k]
	for i, dst := range [3][]float32{w, mo, v} {
		src := [3][]float64{p.W, p.m, p.v}[i]
		if len(dst) != len(src) {
			panic(fmt.Sprintf("cagnet: DownloadParam %s into %d entries, it has %d", p.Name, len(dst), len(src)))
		}
		for e, x := range src {
			dst[e] = float32(x)
		}
	}
}

// UploadParam sets parameter k's weights and optimizer moments from w, mo
// and v (Rows×Cols each) and its device copy.
func (m *Model) UploadParam(k int, w, mo, v []float32) {
	p := m.Params[k]
	for i, src := range [3][]float32{w, mo, v} {
		dst := [3][]float64{p.W, p.m, p.v}[i]
		if len(dst) != len(src) {
			panic(fmt.Sprintf("cagnet: UploadParam %s from %d entries, it has %d", p.Name, len(src), len(dst)))
		}
		for e, x := range src {
			dst[e] = float64(x)
		}
	}
	p.upload(m.dev)
}

// Fingerprint is the dataset's gcn.Fingerprint, the one the 3D model
// computes (so a checkpoint moves between 1.5D and 3D): the nonzeros of
// the aggregation operator (each block Â_ik is held by one rank of
// process row i), and the features, labels and masks hashed by the first
// replica of each process row; one all-reduce over world (collective).
func (m *Model) Fingerprint(world collectives.Comm) (gcn.Fingerprint, error) {
	s := []int64{m.nnz, 0, 0}
	if m.L.Col == 0 {
		if m.featB {
			s[1] = m.featHash // of the float32 values, as read
		} else {
			f := m.cfg.Features
			x := make([]float32, (m.hi-m.lo)*f)
			device.DownloadMat(m.dev, x, m.x)
			s[1] = gcn.HashFeatures(m.ids, 0, f, x)
		}
		s[2] = gcn.HashLabels(m.ids, m.labels[m.lo:m.hi], m.train[m.lo:m.hi], m.val[m.lo:m.hi], m.test[m.lo:m.hi])
	}
	if err := world.AllReduceI64(s, collectives.Sum); err != nil {
		return gcn.Fingerprint{}, err
	}
	return gcn.Fingerprint{N: int64(m.n), NNZ: s[0], Features: uint64(s[1]), Labels: uint64(s[2])}, nil
}

// Probabilities runs the model without dropout and returns this block
// row's class probabilities (softmax of the logits, as gcn's
// Probabilities computes it), rows in original vertex ids; the first
// replica of each process row is the block's writer.
func (m *Model) Probabilities() (gcn.Block, error) {
	logits, err := m.Forward(false)
	if err != nil {
		return gcn.Block{}, err
	}
	c := m.cfg.Classes
	out := make([]float32, logits.Rows()*c)
	device.DownloadMat(m.dev, out, logits)
	gcn.SoftmaxRows(out, c)
	return m.block(out, c), nil
}

// Embeddings runs the model without dropout and returns this block row of
// hidden layer l's output (the ReLU's, a GAT layer's ELU's), as gcn's
// Embeddings.
func (m *Model) Embeddings(l int) (gcn.Block, error) {
	if l < 0 || l >= len(m.specs) || !m.specs[l].Hidden {
		return gcn.Block{}, fmt.Errorf("cagnet: embeddings of layer %d: the model's hidden layers are 0 to %d", l, gcn.LastHidden(m.cfg))
	}
	// A pass that ends at layer l: its output stays float32 (mixed.go).
	act, err := m.forwardTo(false, l)
	if err != nil {
		return gcn.Block{}, err
	}
	out := make([]float32, act.Rows()*act.Cols())
	device.DownloadMat(m.dev, out, act)
	return m.block(out, act.Cols()), nil
}

// block is this block row's rows of a width-w output.
func (m *Model) block(data []float32, w int) gcn.Block {
	return gcn.Block{Vertices: m.ids, Cols: w, C0: 0, C1: w, Data: data, Owner: m.L.Col == 0}
}

// Vertices is the number of vertices of the model's graph.
func (m *Model) Vertices() int { return m.n }
