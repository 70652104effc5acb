package cagnet

import (
	"fmt"

	"scalegnn/collectives"
	"scalegnn/device"
	"scalegnn/gcn"
	"scalegnn/permute"
	"scalegnn/spmm"
)

// New builds rank world.Rank()'s share from a graph held whole in memory
// (tests, and callers that have it): it permutes g as Options say and
// reads its block rows through a gcn.MemorySource, exactly as
// NewFromSource reads any other Source.
func New(world collectives.Comm, dev device.Device, o Options, cfg gcn.Config, opt gcn.Optimizer, g *gcn.Graph) (*Model, error) {
	if o.Permutation == permute.Double {
		return nil, fmt.Errorf("cagnet: permutation = \"double\" does not apply to train.algorithm = \"1.5d\" (one vertex order serves every layer): use \"single\" or \"none\"")
	}
	n := g.Adj.Rows
	var order []int32 // position i is vertex order[i]; nil: identity
	if o.Permutation == permute.Single {
		order = permute.New(n, permute.Single, o.PermSeed).P1
	}
	src, err := gcn.NewMemorySource(g, gcn.NewOrders(n, order, nil))
	if err != nil {
		return nil, err
	}
	o.Permutation = permute.None
	return NewFromSource(world, dev, o, cfg, opt, src)
}

// readBlockRow reads what rank (Row, Col) keeps from src (positions of
// order 0) and uploads it: for each stage k of its replica, Â_ik (block
// row i, block column k) and (Âᵀ)_ik, the transpose of Â_ki (block row k,
// block column i: the only block rows besides its own it reads, and only
// their block column i); its block row of the features, labels and
// masks. Â is the layer's aggregation operator as gcn.ReadBlock defines
// it (D^-1 A for SAGE). A read error on any rank is every rank's
// (collective over world), and the training vertices are counted over
// the process column.
func (m *Model) readBlockRow(world collectives.Comm, src gcn.Source) error {
	err := m.readLocal(src)
	if err := collectives.AgreeError(world, err); err != nil {
		return err
	}
	// Each process row holds one block row: the process column sums them.
	count := []int64{0}
	for _, t := range m.train {
		if t {
			count[0]++
		}
	}
	if err := m.col.AllReduceI64(count, collectives.Sum); err != nil {
		return err
	}
	m.nTrain = int(count[0])
	return nil
}

// readStage reads stage k's blocks: Â_ik of this rank's block row i, and
// (Âᵀ)_ik, the transpose of Â_ki.
func (m *Model) readStage(src gcn.Source, k int) (a, at *spmm.CSR, err error) {
	c0, c1 := m.L.Rows(m.n, k)
	if a, _, err = gcn.ReadBlock(src, m.cfg.Layer, 0, m.lo, m.hi, 0, c0, c1, false); err != nil {
		return nil, nil, err
	}
	if m.isGAT() {
		// A GAT layer transposes its merged block instead (gatBlock).
		return a, nil, nil
	}
	_, at, err = gcn.ReadBlock(src, m.cfg.Layer, 0, c0, c1, 0, m.lo, m.hi, true)
	return a, at, err
}

// readLocal reads and uploads what this rank keeps of src: its stages'
// blocks (readStage), its block row of the features, labels and masks.
func (m *Model) readLocal(src gcn.Source) error {
	l, dev, f := m.L, m.dev, m.cfg.Features
	if sz := src.Sizes(); sz.Features != f || sz.Classes != m.cfg.Classes {
		return fmt.Errorf("cagnet: the dataset has %d features and %d classes, the model %d and %d", sz.Features, sz.Classes, f, m.cfg.Classes)
	}
	k0, k1 := l.Stages()
	var gat []*spmm.CSR
	for k := k0; k < k1; k++ {
		a, at, err := m.readStage(src, k)
		if err != nil {
			return err
		}
		m.nnz += int64(a.NNZ())
		if m.isGAT() {
			gat = append(gat, a)
			continue
		}
		m.a = append(m.a, dev.UploadCSR(a))
		m.at = append(m.at, dev.UploadCSR(at))
	}
	if m.isGAT() {
		m.uploadGAT(gat, src.Orders().Order[0])
	}
	lab, tr, va, te, err := src.Labels(0, m.lo, m.hi)
	if err != nil {
		return err
	}
	// The loss and the accuracy index labels and masks by position
	// (a mini-batch binds its own, MiniBatch): N entries, of which this
	// rank reads and fills its block row only (7 bytes per vertex).
	m.labels, m.train, m.val, m.test = make([]int32, m.n), make([]bool, m.n), make([]bool, m.n), make([]bool, m.n)
	copy(m.labels[m.lo:], lab)
	copy(m.train[m.lo:], tr)
	copy(m.val[m.lo:], va)
	copy(m.test[m.lo:], te)
	m.ids = src.Orders().Order[0][m.lo:m.hi]
	m.verts = device.Alloc[int32](dev, m.hi-m.lo)
	device.Upload(dev, m.verts, 0, m.ids)
	m.featB = FeaturesInBF16(m.cfg.LayerSpecs(), m.prec)
	return m.readFeatures(src)
}
