package gcn

import (
	"fmt"
	"testing"

	"scalegnn/device"
	"scalegnn/grid"
)

// oneRank is the blocks of a single rank holding n vertices: every
// dimension whole, every group of one.
type oneRank struct{ n int }

func (s oneRank) Rows(grid.Axis, int) int     { return s.n }
func (s oneRank) Cols(w int, _ grid.Axis) int { return w }
func (s oneRank) Size(grid.Axis) int          { return 1 }

// TestBackwardReusesDeadBuffers: on one rank the backward pass of a
// 3-layer GCN takes no float32 matrix of its own (reuse.go), with dropout
// or without, with overlap or without. Where the rule withholds a reuse,
// the backward pass takes exactly those matrices: dH for every layer with
// an input gradient in mixed precision over a P group of several ranks
// (H is bfloat16 there) unless the layer is as wide out as in (dZ,
// rounded, is dead), and on one rank only the scratch through which dH
// is rounded into H (one for every layer, at most scratchElems:
// TestBF16ScratchBounded), taken by the forward pass already, where the
// hidden outputs are bfloat16; twice H's rows for
// SAGE (dS stacked under dH), and dS redistributed back; dF̃ after a layer
// with a norm. In mixed precision the rounded dZ takes memory only for
// the last layer. The arena plan is held to the model's arenas by
// TestArenaPlanMatchesArenas, so this is what a step takes.
func TestBackwardReusesDeadBuffers(t *testing.T) {
	const n, w = 1000, 16
	cfg := Config{Features: w, Hidden: w, Classes: 4, Layers: 3, Seed: 1}
	sage, norm, drop := cfg, cfg, cfg
	sage.Layer, norm.Norm, drop.Dropout = SAGELayer, true, 0.5
	mat := int64(n) * w
	for _, c := range []struct {
		name string
		cfg  Config
		run  Options
		want int64 // float32 elements the backward pass takes
	}{
		{"gcn", cfg, Options{}, 0},
		{"gcn overlap", cfg, Options{Overlap: true}, 0},
		{"gcn dropout", drop, Options{}, 0},
		{"gcn bf16", cfg, Options{Precision: device.BF16}, 0}, // the scratch: the forward pass's
		{"gcn bf16 dropout", drop, Options{Precision: device.BF16}, 0},
		// Layers 2 and 1: dS and dS redistributed back (dsOwn); dH goes
		// into H as a GCN layer's. With one vertex order dS adds into
		// dF̃ (dsInDF).
		{"sage", sage, Options{}, 2 * 2 * mat},
		{"sage overlap", sage, Options{Overlap: true}, 2 * 2 * mat},
		{"sage single order", sage, Options{SingleOrder: true}, 0},
		// In mixed precision also the scratch dH is rounded through into
		// H (dhbInH), which a SAGE model's forward pass did not take
		// (here the whole matrix: scratchElems is more). With one vertex
		// order the hidden outputs are bfloat16 (actBF16), the forward
		// pass took the scratch, and the backward pass takes the one
		// float32 dF̃ that dS adds into (dfSelfBF16).
		{"sage bf16", sage, Options{Precision: device.BF16}, 2*2*mat + mat},
		{"sage bf16 single order", sage, Options{Precision: device.BF16, SingleOrder: true}, mat},
		{"gcn norm", norm, Options{}, 2*mat + 2*n}, // dF̃ of layers 2 and 1; the norms' dots
	} {
		step := c.cfg.planStep(oneRank{n}, c.run)
		fwd := arenaPlan{cfg: c.cfg, s: oneRank{n}, run: c.run, training: true}
		fwd.forward()
		fwd.loss()
		if got := step.use.F32 - fwd.use.F32; got != c.want {
			t.Errorf("%s: the backward pass takes %d float32 elements, want %d (%d-element matrices)", c.name, got, c.want, mat)
		}
		// In mixed precision the rounded dZ of layers 1 and 0 goes into
		// the H of layers 2 and 1; only layer 2's (4 wide) is taken.
		wantU16 := int64(0)
		if c.run.Precision == device.BF16 {
			wantU16 = int64(n) * 4
		}
		if got := step.use.U16 - fwd.use.U16; got != wantU16 {
			t.Errorf("%s: the backward pass takes %d bfloat16 elements, want %d", c.name, got, wantU16)
		}
	}
}

// TestBF16ScratchBounded: in mixed precision on one rank a training step
// of a 3-layer GCN, with dropout or without, takes no float32 matrix of
// the hidden width: no Z, no ReLU output, no F̃, no dH, no dF̃ (reuse.go's
// actBF16, dfInActBF16, dhbInH), only the logits, the loss's gradient and
// vectors, the scratch through which the products are rounded (scratchElems
// however many rows the graph has) and, with dropout on float32 features,
// the features after it. Its bfloat16 matrices are H for each layer, two
// hidden outputs in one memory, the last layer's dZ and, with dropout on
// bfloat16 features (features_bf16.go's input0DropBF16), the features
// after it; its masks the ReLU's positions of the two hidden layers and,
// with dropout, the dropout masks of the inputs of layers 1 and 2 (layer
// 0's input needs no gradient).
func TestBF16ScratchBounded(t *testing.T) {
	const classes = 32
	for _, p := range []float64{0, 0.5} {
		for _, fb := range []bool{false, true} {
			cfg := Config{Features: 128, Hidden: 128, Classes: classes, Layers: 3, Dropout: p, Seed: 1}
			for _, n := range []int{1 << 16, 1 << 22} {
				name := fmt.Sprintf("dropout %g, bfloat16 features %v, %d rows", p, fb, n)
				run := Options{Precision: device.BF16, FeaturesBF16: fb}
				step := cfg.planStep(oneRank{n}, run)
				logits, mat := int64(n)*classes, int64(n)*128
				f32 := int64(scratchElems) + logits + 3*int64(n) + logits
				u16 := 3*mat + mat + logits + 2*128*128 + 128*classes
				switch {
				case p > 0 && fb:
					u16 += mat // the features after dropout
				case p > 0:
					f32 += mat
				}
				if got := step.use.F32; got != f32 {
					t.Errorf("%s: the step takes %d float32 elements, want %d", name, got, f32)
				}
				if got := step.use.U16; got != u16 {
					t.Errorf("%s: the step takes %d bfloat16 elements, want %d", name, got, u16)
				}
				masks := 2 * int64(n) * 2 // the two hidden layers' positions, 2 words a row
				if p > 0 {
					masks += 2 * int64(n) * 2 // the inputs of layers 1 and 2
				}
				if step.use.U64 != masks {
					t.Errorf("%s: the step takes %d mask words, want %d", name, step.use.U64, masks)
				}
				for l, want := range []bool{true, true, false} {
					if step.actB[l] != want {
						t.Errorf("%s: layer %d's output in bfloat16 only: %v, want %v", name, l, step.actB[l], want)
					}
				}
			}
		}
	}
}

// TestSAGEBF16Bounded: in mixed precision on one rank of one vertex
// order a training step of a 3-layer SAGE model, with dropout or
// without, takes one float32 matrix of the hidden width, the dF̃ that dS
// adds into before it is masked and rounded (dfSelfBF16), beside the
// scratch, the logits, the loss's gradient and vectors. Its bfloat16
// matrices are H for each layer, the two hidden outputs (each the next
// layer's self-term operand, so not in one memory: actbInPrev), the last
// layer's dZ, W and W_self of each layer and, with dropout, the features
// after it; its masks as a GCN model's (TestBF16ScratchBounded).
func TestSAGEBF16Bounded(t *testing.T) {
	const classes, w = 32, 128
	for _, p := range []float64{0, 0.5} {
		cfg := Config{Features: w, Hidden: w, Classes: classes, Layers: 3, Dropout: p, Seed: 1, Layer: SAGELayer}
		for _, n := range []int{1 << 16, 1 << 22} {
			run := Options{Precision: device.BF16, FeaturesBF16: true, SingleOrder: true}
			step := cfg.planStep(oneRank{n}, run)
			logits, mat := int64(n)*classes, int64(n)*w
			f32 := int64(scratchElems) + mat + logits + 3*int64(n) + logits
			u16 := 3*mat + 2*mat + logits + 2*(2*w*w+w*classes) // H, outputs, dZ, W and W_self
			masks := 2 * int64(n) * 2
			if p > 0 {
				u16 += mat
				masks += 2 * int64(n) * 2
			}
			name := fmt.Sprintf("dropout %g, %d rows", p, n)
			if step.use.F32 != f32 || step.use.U16 != u16 || step.use.U64 != masks {
				t.Errorf("%s: the step takes %d float32, %d bfloat16 and %d mask elements, want %d, %d and %d",
					name, step.use.F32, step.use.U16, step.use.U64, f32, u16, masks)
			}
			if !step.actB[0] || !step.actB[1] || step.actB[2] {
				t.Errorf("%s: outputs in bfloat16 only %v, want [true true false]", name, step.actB)
			}
		}
	}
}

// TestForwardZInInput: on one rank the forward pass of a 3-layer GCN
// writes layer 1's Z into layer 0's (its input, dead once aggregated), in
// both precisions, so it takes Z of layers 0 and 2 only, beside H (float32
// or, in mixed precision, bfloat16); a norm, a residual or SAGE keeps
// every Z (reuse.go's zInInput).
func TestForwardZInInput(t *testing.T) {
	const n, w, classes = 1000, 16, 4
	cfg := Config{Features: w, Hidden: w, Classes: classes, Layers: 3, Seed: 1}
	norm, res, sage := cfg, cfg, cfg
	norm.Norm, res.Residual, sage.Layer = true, true, SAGELayer
	mat := int64(n) * w
	for _, c := range []struct {
		name string
		cfg  Config
		run  Options
		want int64 // float32 elements the forward pass takes
	}{
		{"gcn", cfg, Options{}, 3*mat + mat + n*classes},
		{"gcn bf16", cfg, Options{Precision: device.BF16}, mat + n*classes},
		{"gcn norm", norm, Options{}, 3*mat + 2*mat + n*classes + 2*(2*n+mat)},
	} {
		fwd := arenaPlan{cfg: c.cfg, s: oneRank{n}, run: c.run, training: true}
		fwd.forward()
		if fwd.use.F32 != c.want {
			t.Errorf("%s: the forward pass takes %d float32 elements, want %d (%d-element matrices)", c.name, fwd.use.F32, c.want, mat)
		}
	}
	for _, c := range []Config{res, sage} {
		for l := range c.Layers {
			if zInInput(c.layers(), l, device.Float32, false, 1, w, w, n, n*w) {
				t.Errorf("%v layers: layer %d's Z written into its input", c.Layer, l)
			}
		}
	}
}
