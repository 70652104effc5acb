package cagnet

import (
	"scalegnn/device"
	"scalegnn/gcn"
)

// Features in bfloat16 (train.precision = "bf16", issue 28). A rank of a
// mixed-precision model holds its block row of the features in bfloat16
// (xb), half the bytes of float32: every product rounds its operands to
// bfloat16 anyway, so the model computes exactly what it computes on
// float32 features rounded first (TestMixedTapeExact compares it with
// such a model). The first layer reads them as they are:
//
//   - its aggregation operand is the features themselves, or in training
//     with dropout a bfloat16 copy dropped a block of rows at a time
//     through the scratch (no float32 copy);
//   - a SAGE layer's self term and its weight gradient read that operand
//     too (in0b).
//
// A mini-batch gathers its rows in bfloat16 (GatherRowsBF16). The
// fingerprint hashes the float32 values as they are read, so that
// checkpoints move between precisions.

// FeaturesInBF16 is the one rule for the precision of a 1.5D model's
// features: bfloat16 in mixed precision, unless the first layer is a GAT
// layer, whose tape is float32 (it would widen them every pass).
// perfmodel's CAGNETMemory counts their bytes by it.
func FeaturesInBF16(specs []gcn.LayerSpec, prec device.Precision) bool {
	return prec == device.BF16 && len(specs) > 0 && specs[0].Heads == 0
}

// readFeatures reads and uploads this rank's block row of the features
// (rows of order 0, m.ids set): float32 into x, or by FeaturesInBF16
// rounded into xb, read a block of rows at a time through a float32
// buffer of at most 4 MiB (gcn.ReadFeaturesBF16), the fingerprint's term
// of the float32 values summed as they pass (featHash).
func (m *Model) readFeatures(src gcn.Source) error {
	f, rows := m.cfg.Features, m.hi-m.lo
	if !m.featB {
		x, err := src.FeatureBlock(0, m.lo, m.hi, 0, f)
		if err != nil {
			return err
		}
		m.x = m.mat(rows, f)
		device.UploadMat(m.dev, m.x, x)
		return nil
	}
	var h int64
	xb, err := gcn.ReadFeaturesBF16(src, 0, m.lo, m.hi, 0, f, func(a int, x []float32) {
		h += gcn.HashFeatures(m.ids[a-m.lo:], 0, f, x)
	})
	if err != nil {
		return err
	}
	m.featHash = h
	m.xb = device.MatrixBF16(device.Alloc[uint16](m.dev, rows*f), rows, f)
	device.UploadMatBF16(m.dev, m.xb, xb)
	return nil
}

// featuresOperand is layer l's (0's) aggregation operand from the
// bfloat16 features: xb itself, or in training with dropout a copy
// dropped a block of rows at a time (dropBlocks). It is also the self
// term's input (in0b).
func (m *Model) featuresOperand(l int, s gcn.LayerSpec, training bool) device.MatBF16 {
	if !training || m.cfg.Dropout == 0 {
		return m.xb
	}
	out := m.bufBF16("x.drop", l, m.hi-m.lo, s.In)
	m.dropBlocks(l, out, operand{b: m.xb, isB: true})
	return out
}
