package infer

import (
	"fmt"
	"os"
	"slices"
	"time"

	"scalegnn/collectives"
	"scalegnn/device"
	"scalegnn/gcn"
	"scalegnn/grid"
	"scalegnn/internal/hugepage"
	"scalegnn/spmm"
)

// Weights are a model's parameters, whole, row-major, by gcn.Param name.
type Weights map[string][]float32

// ModelWeights downloads m's parameters. Every one must be whole on this
// rank (an isolated worker's model, on its 1×1×1 grid); a sharded model's
// blocks are misuse.
func ModelWeights(m *gcn.Model) Weights {
	w := Weights{}
	for _, p := range m.Params {
		if p.R0 != 0 || p.C0 != 0 || p.R1 != p.Rows || p.C1 != p.Cols {
			panic(fmt.Sprintf("infer: parameter %s is a block (%d:%d × %d:%d of %d×%d), not whole", p.Name, p.R0, p.R1, p.C0, p.C1, p.Rows, p.Cols))
		}
		v := make([]float32, p.Len())
		p.Download(v)
		w[p.Name] = v
	}
	return w
}

// Engine is one rank's layer-wise inference over a source: the ranks of
// comm split the row blocks into contiguous runs, each rank computing its
// own rows; a layer's transformed input is all-gathered (N × width values
// on every rank), the one collective besides the accuracy's sums.
type Engine struct {
	comm   collectives.Comm
	dev    device.Device
	cfg    gcn.Config
	specs  []gcn.LayerSpec
	src    gcn.Source
	n      int
	blocks [][2]int // this rank's row blocks, contiguous
	lo, hi int      // this rank's rows
	counts []int    // the rows of every rank
	store  *store

	// strips are this rank's blocks' adjacency strips kept from one read
	// to the next (nil: not kept), while their bytes stay within
	// cacheLimit (CacheStrips).
	strips     []*spmm.CSR
	cacheBytes int64
	cacheLimit int64
	// meanStrips: every layer is a SAGE layer, so the strips are turned
	// into SAGE's mean operator (gcn.MeanRows) as they are read, off the
	// compute, and kept in that form; otherwise each SAGE layer computes
	// it from the strip (at R-MAT scale 20, a second of a 10 s evaluation
	// on each of 2 ranks).
	meanStrips bool

	// tFull holds a layer's T, every vertex's, this rank's rows in their
	// place (tLocal on one rank), from layer to layer and pass to pass: T
	// is dead once its layer is done, and a new one every layer left
	// gigabytes of garbage beside it (R-MAT scale 25: 4.3 GB a layer).
	tLocal, tFull []float32
	// tH: in mixed precision, every vertex's T of a GCN or SAGE layer in
	// bfloat16 only (transformBF16, halfT): each block's rows computed
	// through tBlk and rounded once into their place, gathered so (half
	// the bytes), and the device adopts it as the dense operand of every
	// block's SpMM; no float32 T exists. Through the device's own
	// rounding each block's product rounded all of T again: at R-MAT 19
	// with 4 blocks a rank on 2 ranks, rank 0's compute took 1.76-1.87 s
	// so and 1.29-1.40 s with T rounded once. tF32 turns it off (tests
	// compare the two bit for bit).
	tH   []uint16
	tBlk []float32
	tF32 bool
	// x0 holds a block of features read for the first layer; acts are the
	// two generations of the activations between layers, kept in memory,
	// actWidth values a row (reserve.go).
	x0       []float32
	acts     [2][]float32
	actWidth int

	// keep0: the first layer's input is kept in the store from its
	// transform to its aggregation (keepInput0); kept0 marks the blocks
	// whose input the store holds in this forward pass.
	keep0 bool
	kept0 []bool

	// Times is where the last forward pass's time went.
	Times Times
}

// grow returns (*buf)[:n], reallocating *buf when it is shorter, on huge
// pages (T is the SpMM's dense operand, whose rows it gathers at random:
// internal/hugepage) faulted in at once (reserve.go).
func grow(buf *[]float32, n int) []float32 {
	if cap(*buf) < n {
		*buf = nil // the old one may go before the new one is taken
		*buf = hugepage.MakeResident[float32](n)
	}
	return (*buf)[:n]
}

// Times splits a layer-wise forward pass's time on one rank: Read, the
// time it waited for the source (adjacency strips, read while the block
// before is computed, so only what compute did not hide; features;
// labels; the bytes of the strips read in StripBytes), Store, keeping the
// activations between layers and reading them back, Gather, the
// all-gathers of T, and Total. The rest of Total is compute.
type Times struct {
	Read, Store, Gather, Total time.Duration
	StripBytes                 int64
}

// timed runs f and adds its time to *t.
func timed[T any](t *time.Duration, f func() (T, error)) (T, error) {
	t0 := time.Now()
	v, err := f()
	*t += time.Since(t0)
	return v, err
}

// CacheStrips lets the engine keep adjacency strips it has read, up to
// bytes of them, for the next layer and the next evaluation: without a
// cache every layer reads the whole adjacency from the source again.
func (e *Engine) CacheStrips(bytes int64) { e.cacheLimit = bytes }

// stripRead is a strip read in the background (stripAsync): the strip,
// or the error, and whether it came from the cache.
type stripRead struct {
	a      *spmm.CSR
	err    error
	cached bool
	bytes  int64 // the strip's bytes as read (StripBytes)
}

// stripAsync starts getting the adjacency rows of this rank's block k,
// every column: from the cache at once, or read from the source in a
// goroutine, so that the read runs while the block before is computed.
// Only the source is touched off the caller's goroutine (a gcn.Source
// serves concurrent reads); takeStrip does the bookkeeping.
func (e *Engine) stripAsync(k int) <-chan stripRead {
	ch := make(chan stripRead, 1)
	if e.strips == nil {
		e.strips = make([]*spmm.CSR, len(e.blocks))
	}
	if a := e.strips[k]; a != nil {
		ch <- stripRead{a: a, cached: true}
		return ch
	}
	b := e.blocks[k]
	go func() {
		a, err := e.src.AdjBlock(0, b[0], b[1], 0, 0, e.n)
		if err != nil {
			ch <- stripRead{err: err}
			return
		}
		bytes := csrBytes(a)
		if e.meanStrips {
			a = gcn.MeanRows(a, func(i int) int32 { return int32(b[0] + i) })
		}
		ch <- stripRead{a: a, bytes: bytes}
	}()
	return ch
}

// takeStrip waits for block k's strip from ch, counts the wait as Read
// time, and keeps a strip read from the source if the cache has room.
func (e *Engine) takeStrip(k int, ch <-chan stripRead) (*spmm.CSR, error) {
	t0 := time.Now()
	r := <-ch
	e.Times.Read += time.Since(t0)
	if r.err != nil || r.cached {
		return r.a, r.err
	}
	e.Times.StripBytes += r.bytes
	if size := csrBytes(r.a); e.cacheBytes+size <= e.cacheLimit {
		e.strips[k], e.cacheBytes = r.a, e.cacheBytes+size
	}
	return r.a, nil
}

// csrBytes is a strip's size in memory: 8 bytes a row pointer, 8 a
// nonzero (its column and value).
func csrBytes(a *spmm.CSR) int64 { return 8*int64(a.Rows+1) + 8*int64(a.NNZ()) }

// RankRows is the rows [lo, hi) that rank r of workers evaluates when n
// vertices are cut into blocks row blocks: its whole blocks, contiguous
// (perfmodel counts its memory by it).
func RankRows(n, blocks, workers, r int) (lo, hi int) {
	b0, b1 := grid.Block(blocks, workers, r)
	lo, _ = grid.Block(n, blocks, b0)
	_, hi = grid.Block(n, blocks, b1-1)
	return lo, hi
}

// New returns this rank's engine over src for the model cfg, with the N
// vertices cut into blocks row blocks (at least one per rank); dir, when
// not empty, holds the layers' outputs between layers instead of memory,
// in a directory of the engine's own inside it (removed by Close).
func New(comm collectives.Comm, dev device.Device, cfg gcn.Config, src gcn.Source, blocks int, dir string) (*Engine, error) {
	o := src.Orders()
	if !slices.Equal(o.Order[0], o.Order[1]) {
		return nil, fmt.Errorf("infer: layer-wise inference reads a block's rows and columns in one vertex order, and the graph has two (double permutation): use a single permutation")
	}
	n, m := src.Sizes().N, comm.Size()
	if blocks < m || blocks > n {
		return nil, fmt.Errorf("infer: %d row blocks for %d ranks and %d vertices: want at least one per rank and at most one per vertex", blocks, m, n)
	}
	e := &Engine{comm: comm, dev: dev, cfg: cfg, specs: cfg.LayerSpecs(), src: src, n: n, counts: make([]int, m)}
	e.meanStrips = len(e.specs) > 0
	for _, s := range e.specs {
		e.meanStrips = e.meanStrips && s.Self && s.Heads == 0
	}
	for r := range m {
		lo, hi := RankRows(n, blocks, m, r)
		e.counts[r] = hi - lo
		if r == comm.Rank() {
			e.lo, e.hi = lo, hi
			b0, b1 := grid.Block(blocks, m, r)
			for k := b0; k < b1; k++ {
				r0, r1 := grid.Block(n, blocks, k)
				e.blocks = append(e.blocks, [2]int{r0, r1})
			}
		}
	}
	e.store = &store{rank: comm.Rank(), mem: map[[2]int][]float32{}}
	if dir != "" {
		// A directory of this engine's own: two jobs, or two ranks, that
		// share dir never read each other's files.
		d, err := os.MkdirTemp(dir, fmt.Sprintf(".infer-r%d-*", comm.Rank()))
		if err != nil {
			return nil, fmt.Errorf("infer: a directory for the activations in %s: %w", dir, err)
		}
		e.store.dir = d
	}
	e.keep0 = e.keepInput0()
	e.reserve()
	return e, nil
}

// Close removes the engine's directory of activations, if it has one.
func (e *Engine) Close() error {
	if e.store.dir == "" {
		return nil
	}
	return os.RemoveAll(e.store.dir)
}

// rowsOut is what forward hands its visitor for one block of the last
// layer it computes: the block's first row, the rows computed (indices
// into the block, ascending), their outputs (len(rows) × width,
// row-major), and the block's labels and split.
type rowsOut struct {
	r0      int
	rows    []int32
	out     []float32
	width   int
	labels  []int32
	masks   [3][]bool
	allRows bool
}

// forward runs the layers up to last and calls visit with each of this
// rank's blocks of its output: with emb, layer last's activation
// (Embeddings'); else the logits (last is the final layer; after the
// output head), of every row when all, else only of the rows in a split.
func (e *Engine) forward(w Weights, last int, all, emb bool, visit func(rowsOut) error) error {
	if err := e.check(w); err != nil {
		return err
	}
	e.Times = Times{}
	t0 := time.Now()
	defer func() { e.Times.Total = time.Since(t0) }()
	defer e.store.clear()
	e.kept0 = make([]bool, len(e.blocks))
	for l := 0; l <= last; l++ {
		s := e.specs[l]
		final := l == last
		width := tWidth(s)
		// Phase A: this rank's rows of T = H·W, gathered into every
		// vertex's (transform.go).
		var lay *layerRun
		var err error
		if e.halfT(s) {
			lay, err = e.transformBF16(w, l, s, width)
		} else {
			lay, err = e.transform(w, l, s, width)
		}
		if err != nil {
			return err
		}
		if err := lay.start(); err != nil {
			return err
		}
		// Phase B: each block's rows aggregated from its strip, the next
		// strip read meanwhile (an error returns with at most that read
		// in flight; it ends on its own).
		next := e.stripAsync(0)
		for k, b := range e.blocks {
			strip, err := e.takeStrip(k, next)
			if err != nil {
				return err
			}
			if k+1 < len(e.blocks) {
				next = e.stripAsync(k + 1)
			}
			var ro rowsOut
			ro.r0, ro.allRows = b[0], all || !final || emb
			if final {
				var err error
				t0 := time.Now()
				ro.labels, ro.masks[0], ro.masks[1], ro.masks[2], err = e.src.Labels(0, b[0], b[1])
				e.Times.Read += time.Since(t0)
				if err != nil {
					return err
				}
			}
			ro.rows = neededRows(b[1]-b[0], ro)
			out, act, err := lay.block(k, b, ro.rows, strip, e.act((l+1)%2, k, len(ro.rows), s.Out))
			if err != nil {
				return err
			}
			ro.out, ro.width = out, s.Out
			if final && emb {
				ro.out = act
			} else if final && e.cfg.OutputHead {
				head := w["head"]
				logits := make([]float32, len(ro.rows)*e.cfg.Classes)
				e.gemm(logits, out, len(ro.rows), s.Out, head, e.cfg.Classes, false)
				ro.out, ro.width = logits, e.cfg.Classes
			}
			if final {
				if err := visit(ro); err != nil {
					return err
				}
				continue
			}
			t0 := time.Now()
			err = e.store.put(k, l+1, out)
			e.Times.Store += time.Since(t0)
			if err != nil {
				return err
			}
		}
		e.store.drop(l)
	}
	return nil
}

// neededRows is every row of a block of n rows, or in the final layer of
// an evaluation only those in a split.
func neededRows(n int, ro rowsOut) []int32 {
	rows := make([]int32, 0, n)
	for i := range n {
		if ro.allRows || ro.masks[0][i] || ro.masks[1][i] || ro.masks[2][i] {
			rows = append(rows, int32(i))
		}
	}
	return rows
}

// input is layer l's input on this rank's block k: the features (through
// the input projection) for the first layer, else the previous layer's
// output from the store.
func (e *Engine) input(w Weights, k, l int) ([]float32, error) {
	if l > 0 || e.kept0[k] {
		return timed(&e.Times.Store, func() ([]float32, error) { return e.store.get(k, l) })
	}
	h, err := e.input0(w, k)
	if err == nil && e.keep0 {
		e.store.put(k, 0, h) // in memory: no error
		e.kept0[k] = true
	}
	return h, err
}

// keepInput0 reports that the first layer's input is kept in memory from its
// transform (phase A) to its aggregation, which reads it again (SAGE's
// self term, a residual), rather than read from the source, and
// projected, twice: where the activations between layers are in memory
// and the input is no wider than they are, so that it takes the place of
// the layer input those hold later and the memory bound stays.
func (e *Engine) keepInput0() bool {
	s := e.specs[0]
	if e.store.dir != "" || (!s.Self && !s.Residual) || s.Heads > 0 {
		return false
	}
	wH := 0
	for _, t := range e.specs {
		if t.Hidden {
			wH = max(wH, t.Out)
		}
	}
	return s.In <= wH
}

// input0 is the first layer's input on block k: the features, through the
// input projection if the model has one; where it is kept (keep0), in
// generation 0 of the activations, else in the engine's block of
// features or a new slice.
func (e *Engine) input0(w Weights, k int) ([]float32, error) {
	rows := e.blocks[k][1] - e.blocks[k][0]
	var keep []float32
	if e.keep0 {
		keep = e.act(0, k, rows, e.specs[0].In)
	}
	if !e.cfg.InputProjection {
		return timed(&e.Times.Read, func() ([]float32, error) { return e.readFeatures(k, keep) })
	}
	x, err := timed(&e.Times.Read, func() ([]float32, error) { return e.readFeatures(k, nil) })
	if err != nil {
		return nil, err
	}
	h := keep
	if h == nil {
		h = make([]float32, rows*e.cfg.Hidden)
	}
	e.gemm(h, x, rows, e.src.Sizes().Features, w["proj"], e.cfg.Hidden, false)
	return h, nil
}

// gemm is dst = a·b (or dst += a·b when add) for a of rows × k and b of
// k × c, host slices, on the device.
func (e *Engine) gemm(dst, a []float32, rows, k int, b []float32, c int, add bool) {
	if rows == 0 {
		return
	}
	dev := e.dev
	am, bm, dm := e.share(a, rows, k), e.share(b, k, c), e.share(dst, rows, c)
	beta := float32(0)
	if add {
		beta = 1
	}
	dev.Gemm(spmm.NoTrans, spmm.NoTrans, 1, am, bm, beta, dm)
	device.DownloadMat(dev, dst, dm)
}

// share hands a host matrix to the device: host devices adopt it (an
// output written there is the host slice), others copy it.
func (e *Engine) share(x []float32, rows, cols int) device.Mat {
	return device.Matrix(device.Share(e.dev, x), rows, cols)
}

// check refuses weights that do not fit the model: the names and sizes
// of gcn.InitialParams, the one rule of a model's parameters.
func (e *Engine) check(w Weights) error {
	params := gcn.InitialParams(e.cfg)
	for _, p := range params {
		if len(w[p.Name]) != p.Rows*p.Cols {
			return fmt.Errorf("infer: parameter %s has %d values, the model needs %d", p.Name, len(w[p.Name]), p.Rows*p.Cols)
		}
	}
	if len(w) != len(params) {
		return fmt.Errorf("infer: %d parameters for a model of %d", len(w), len(params))
	}
	return nil
}

func weightName(l int) string { return fmt.Sprintf("gcn%d.weight", l) }
