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
	// Layer is the kind of graph layer (GCNLayer, the zero value, or
	// SAGELayer; see Layer).
	Layer Layer
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
	case c.Layer != GCNLayer && c.Layer != SAGELayer:
		return fmt.Errorf("gcn: layer %v: expected one of %q", c.Layer, layerNames)
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
}

func (c Config) layers() []layerSpec {
	specs := make([]layerSpec, c.Layers)
	for l := range specs {
		s := &specs[l]
		s.in, s.out = c.Hidden, c.Hidden
		if l == 0 && !c.InputProjection {
			s.in = c.Features
		}
		last := l == c.Layers-1
		if last && !c.OutputHead {
			s.out = c.Classes
		}
		s.hidden = !last || c.OutputHead
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
}

// LayerSpecs returns the specification of every GCN layer of c.
func (c Config) LayerSpecs() []LayerSpec {
	var out []LayerSpec
	for _, s := range c.layers() {
		out = append(out, LayerSpec{In: s.in, Out: s.out, Hidden: s.hidden, Norm: s.norm, Residual: s.residual, NeedInputGrad: s.needInputGrad, Self: s.self})
	}
	return out
}

// Dropout sites: GCN layer l's input is site l, the head's input is site
// Layers.
func (c Config) headSite() int { return c.Layers }
