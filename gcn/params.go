package gcn

import (
	"fmt"

	"scalegnn/device"
)

// NormEps keeps RMSNorm finite on all-zero rows (every forward pass of a
// normed layer uses it: the model's, the reference's, package infer's).
const NormEps = 1e-6

// paramShape is one parameter matrix of the model, in the order parameters
// are listed everywhere (initialisation index, gradients, checkpoints).
type paramShape struct {
	name       string
	kind       paramKind
	layer      int // GCN layer of a weight or norm scale
	rows, cols int
	isNorm     bool
	index      int
}

type paramKind int

const (
	kindProj paramKind = iota
	kindWeight
	kindNorm
	kindHead
	// kindSelf is a SAGE layer's W_self, blocked like its W_neigh
	// (kindWeight).
	kindSelf
	// kindAttSrc and kindAttDst are a GAT layer's attention vectors
	// (heads × F'), whole on every rank.
	kindAttSrc
	kindAttDst
	// kindBias is a GAT layer's bias (1 × heads·F'), whole on every rank,
	// added to every head's aggregation before ELU or the heads' mean.
	kindBias
)

// init returns entry (i, j) of the initial value.
func (s paramShape) init(seed uint64, i, j int) float64 {
	if s.isNorm {
		return 1
	}
	if s.kind == kindBias {
		return 0 // as PyG and DGL start it
	}
	return glorot(seed, s.index, s.rows, s.cols, i, j)
}

func paramShapes(cfg Config) []paramShape {
	var out []paramShape
	add := func(name string, kind paramKind, layer, r, c int) {
		out = append(out, paramShape{name: name, kind: kind, layer: layer, rows: r, cols: c, isNorm: kind == kindNorm, index: len(out)})
	}
	if cfg.InputProjection {
		add("proj", kindProj, -1, cfg.Features, cfg.Hidden)
	}
	specs := cfg.layers()
	for l, s := range specs {
		if s.heads > 0 {
			// GAT: W projects to every head side by side; the two
			// attention vectors follow it, so that the three gradients
			// are adjacent and share one all-reduce.
			add(weightName(l), kindWeight, l, s.in, s.projWidth())
			add(attSrcName(l), kindAttSrc, l, s.heads, s.headWidth())
			add(attDstName(l), kindAttDst, l, s.heads, s.headWidth())
			add(biasName(l), kindBias, l, 1, s.projWidth())
			continue
		}
		add(weightName(l), kindWeight, l, s.in, s.out)
		if s.self {
			// Right after W_neigh: their gradients are adjacent in the
			// model's gradient buffer, so one all-reduce sums both.
			add(selfName(l), kindSelf, l, s.in, s.out)
		}
		if s.norm {
			add(normName(l), kindNorm, l, 1, s.out)
		}
	}
	if cfg.OutputHead {
		add("head", kindHead, cfg.Layers, specs[len(specs)-1].out, cfg.Classes)
	}
	return out
}

func weightName(l int) string { return fmt.Sprintf("gcn%d.weight", l) }
func normName(l int) string   { return fmt.Sprintf("gcn%d.norm", l) }
func selfName(l int) string   { return fmt.Sprintf("gcn%d.self", l) }
func attSrcName(l int) string { return fmt.Sprintf("gcn%d.att_src", l) }
func attDstName(l int) string { return fmt.Sprintf("gcn%d.att_dst", l) }
func biasName(l int) string   { return fmt.Sprintf("gcn%d.bias", l) }

// Param is one rank's block of a parameter matrix: global rows [R0, R1) and
// columns [C0, C1) of a Rows×Cols matrix, with its gradient and optimizer
// moments, all in device memory. Blocks are replicated over one grid axis;
// every replica holds the same values after each step because gradients
// are all-reduced first. The values are reached through Download and
// Upload (tests, conformance, checkpoints), never as slices.
type Param struct {
	Name           string
	Rows, Cols     int
	R0, R1, C0, C1 int
	// W and G are the block's weights and gradient, row-major, on the
	// model's device.
	W, G device.Buffer[float32]
	m, v device.Buffer[float32]
	// gOff is G's offset in the model's gradient buffer.
	gOff  int
	decay bool
	dev   device.Device
}

// Len returns the number of entries of the block.
func (p *Param) Len() int { return (p.R1 - p.R0) * (p.C1 - p.C0) }

// mat is the block of b (W, G) as a matrix.
func (p *Param) mat(b device.Buffer[float32]) device.Mat {
	return device.Matrix(b, p.R1-p.R0, p.C1-p.C0)
}

// Download copies the block's weights into dst (len(dst) == Len()).
func (p *Param) Download(dst []float32) { device.Download(p.dev, dst, p.W, 0) }

// Upload sets the block's weights from src (len(src) == Len()).
func (p *Param) Upload(src []float32) { device.Upload(p.dev, p.W, 0, src) }

// DownloadGrad copies the block's gradient into dst.
func (p *Param) DownloadGrad(dst []float32) { device.Download(p.dev, dst, p.G, 0) }

// Weights returns a host copy of the block's weights.
func (p *Param) Weights() []float32 {
	out := make([]float32, p.Len())
	p.Download(out)
	return out
}

// Grad returns a host copy of the block's gradient.
func (p *Param) Grad() []float32 {
	out := make([]float32, p.Len())
	p.DownloadGrad(out)
	return out
}
