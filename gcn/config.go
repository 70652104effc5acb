package gcn

import "fmt"

// Config describes the model. With InputProjection, OutputHead, Norm and
// Residual all false it is the GCN of Kipf & Welling: Layers graph
// convolutions F → Hidden → ... → Classes, ReLU between them, dropout on the
// input of each layer.
type Config struct {
	Features, Hidden, Classes int
	// Layers is the number of graph convolutions (>= 1).
	Layers int
	// Dropout is the probability of zeroing an input of a GCN layer or of the
	// output head during training.
	Dropout float64
	// InputProjection adds a dense layer Features → Hidden before the first
	// graph convolution, OutputHead a dense layer Hidden → Classes after the
	// last one.
	InputProjection, OutputHead bool
	// Norm applies RMSNorm (learnable scale) before the ReLU of every hidden
	// GCN layer.
	Norm bool
	// Residual adds each hidden GCN layer's input to its output; it needs
	// equal widths, i.e. InputProjection.
	Residual bool
	// Layer is the kind of graph layer (GCNLayer, the zero value,
	// SAGELayer or GATLayer; see Layer).
	Layer Layer
	// Heads and OutputHeads are a GAT layer's attention heads: Heads in
	// every hidden layer (whose width is then Heads·Hidden, the heads
	// concatenated) and OutputHeads in the last layer when it outputs the
	// classes (averaged). Zero means 1; other layers ignore them.
	Heads, OutputHeads int
	// Seed drives initialisation and dropout.
	Seed uint64
}

// Validate reports the first inconsistent field.
func (c Config) Validate() error {
	switch {
	case c.Features < 1 || c.Classes < 1:
		return fmt.Errorf("gcn: %d features and %d classes: both must be at least 1", c.Features, c.Classes)
	case c.Layers < 1:
		return fmt.Errorf("gcn: layers = %d: need at least one graph convolution", c.Layers)
	case c.Hidden < 1 && (c.Layers > 1 || c.InputProjection || c.OutputHead):
		return fmt.Errorf("gcn: hidden = %d: must be at least 1", c.Hidden)
	case c.Dropout < 0 || c.Dropout >= 1:
		return fmt.Errorf("gcn: dropout = %v: expected a number in [0, 1)", c.Dropout)
	case c.Layer != GCNLayer && c.Layer != SAGELayer && c.Layer != GATLayer:
		return fmt.Errorf("gcn: layer %v: expected one of %q", c.Layer, layerNames)
	case c.Heads < 0 || c.OutputHeads < 0:
		return fmt.Errorf("gcn: heads = %d, output_heads = %d: must be at least 1", c.Heads, c.OutputHeads)
	case c.Layer == GATLayer && (c.Norm || c.Residual):
		return fmt.Errorf("gcn: a GAT layer applies ELU between layers: norm and residual are for GCN and SAGE layers; set them false")
	case c.Residual && !c.InputProjection:
		return fmt.Errorf("gcn: residual connections need input_projection so that every GCN layer maps hidden to hidden")
	}
	return nil
}

// layerSpec is what one GCN layer does, derived from Config.
type layerSpec struct {
	in, out  int
	hidden   bool // norm (if enabled), ReLU and residual (if enabled) apply
	residual bool
	norm     bool
	// self: a SAGE layer, whose output adds the input times W_self.
	self bool
	// needInputGrad is false for the first layer when nothing upstream has
	// parameters, which saves the transposed SpMM of the backward pass.
	needInputGrad bool
	// heads > 0 marks a GAT layer: heads attention heads of width out/heads
	// (concatenated, with ELU, when hidden) or of width out (averaged, the
	// last layer).
	heads int
}

// headWidth returns the width F' of each head of a GAT layer (0 for
// other layers).
func (s layerSpec) headWidth() int {
	if s.heads == 0 {
		return 0
	}
	if s.hidden {
		return s.out / s.heads
	}
	return s.out
}

// projWidth is the width of a GAT layer's projection Y = H·W (every head
// side by side), out for a hidden layer, heads·out for the last; 0 for
// other layers.
func (s layerSpec) projWidth() int { return s.heads * s.headWidth() }

func (c Config) heads() int {
	if c.Heads == 0 {
		return 1
	}
	return c.Heads
}

func (c Config) outputHeads() int {
	if c.OutputHeads == 0 {
		return 1
	}
	return c.OutputHeads
}

func (c Config) layers() []layerSpec {
	specs := make([]layerSpec, c.Layers)
	for l := range specs {
		s := &specs[l]
		// A GAT hidden layer's width is its heads concatenated.
		width := c.Hidden
		if c.Layer == GATLayer {
			width = c.heads() * c.Hidden
		}
		s.in, s.out = width, width
		if l == 0 && !c.InputProjection {
			s.in = c.Features
		}
		if l == 0 && c.InputProjection {
			s.in = c.Hidden
		}
		last := l == c.Layers-1
		if last && !c.OutputHead {
			s.out = c.Classes
		}
		s.hidden = !last || c.OutputHead
		if c.Layer == GATLayer {
			s.heads = c.heads()
			if !s.hidden {
				s.heads = c.outputHeads()
			}
		}
		s.norm = s.hidden && c.Norm
		s.residual = s.hidden && c.Residual && s.in == s.out
		s.needInputGrad = l > 0 || c.InputProjection
		s.self = c.Layer == SAGELayer
	}
	return specs
}

// LayerSpec is what GCN layer l does (exported for the performance model,
// which must count the same work): its input and output widths, whether
// norm, ReLU and residual apply, and whether its input needs a gradient
// (the transposed SpMM of the backward pass). Self marks a SAGE layer:
// the input redistributed to the output's rows (and back in the backward
// pass) and the extra W_self products.
type LayerSpec struct {
	In, Out                int
	Hidden, Norm, Residual bool
	NeedInputGrad          bool
	Self                   bool
	// Heads > 0 marks a GAT layer with that many heads; ProjWidth is the
	// width of its projection H·W (all heads side by side): Out for a
	// hidden layer (heads concatenated), Heads·Out for the last (averaged).
	Heads, ProjWidth int
}

// LayerSpecs returns the specification of every GCN layer of c.
func (c Config) LayerSpecs() []LayerSpec {
	var out []LayerSpec
	for _, s := range c.layers() {
		out = append(out, LayerSpec{In: s.in, Out: s.out, Hidden: s.hidden, Norm: s.norm, Residual: s.residual, NeedInputGrad: s.needInputGrad, Self: s.self,
			Heads: s.heads, ProjWidth: s.projWidth()})
	}
	return out
}

// Dropout sites: GCN layer l's input is site l, the head's input is site
// Layers.
func (c Config) headSite() int { return c.Layers }
