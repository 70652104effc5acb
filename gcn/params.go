package gcn

import "fmt"

// normEps keeps RMSNorm finite on all-zero rows.
const normEps = 1e-6

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
)

// init returns entry (i, j) of the initial value.
func (s paramShape) init(seed uint64, i, j int) float64 {
	if s.isNorm {
		return 1
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
	for l, s := range cfg.layers() {
		add(weightName(l), kindWeight, l, s.in, s.out)
		if s.norm {
			add(normName(l), kindNorm, l, 1, s.out)
		}
	}
	if cfg.OutputHead {
		add("head", kindHead, cfg.Layers, cfg.Hidden, cfg.Classes)
	}
	return out
}

func weightName(l int) string { return fmt.Sprintf("gcn%d.weight", l) }
func normName(l int) string   { return fmt.Sprintf("gcn%d.norm", l) }
