package gcn

import (
	"fmt"

	"scalegnn/collectives"
	"scalegnn/device"
	"scalegnn/grid"
	"scalegnn/internal/hugepage"
)

// Features in bfloat16 (train.precision = "bf16", issue 28): the shards
// hold the rank's feature block rounded to bfloat16 (Shards.XB), half the
// bytes of float32, and so does the device. Every product rounds its
// dense operands to bfloat16 in mixed precision anyway, so a model on
// bfloat16 features computes exactly what it computes on float32
// features that were rounded to bfloat16 first (TestFeaturesBF16Exact):
//
//   - the input projection's GEMM and its weight gradient read XB as
//     their bfloat16 operand (no staging of the features);
//   - a first GCN layer without dropout (or outside training) aggregates
//     XB itself: the SpMM reads it as its bfloat16 operand;
//   - otherwise (dropout, SAGE's self term, a residual, GAT) XB is
//     widened into the pass's arena (exact), and dropout scales that
//     copy in place unless a residual reads it.

// FeaturesInBF16 is the one rule for the precision of a model's
// features: in mixed precision (train.precision = "bf16") the shards
// hold them in bfloat16. jobs builds every gcn model's shards by it, and
// perfmodel counts their bytes by it.
func FeaturesInBF16(p device.Precision) bool { return p == device.BF16 }

// FeaturesToBF16 rounds the shards' feature block to bfloat16
// (collectives.EncodeBF16: spmm.ToBF16) into XB and drops X, so that a mixed-precision model
// holds half the bytes (NewModel takes the precision of its features
// from the shards). The dataset fingerprint keeps the float32 features'
// term (computed here first), so that checkpoints move between
// precisions. g and cfg must be those the shards were built with.
func (sh *Shards) FeaturesToBF16(g *grid.Grid, cfg Config) {
	if sh.XB != nil {
		return
	}
	sh.featHash, _ = sh.featureHash(g, cfg)
	// On huge pages, as X was: the first SpMM gathers its rows at random.
	xb := hugepage.Make[uint16](len(sh.X))
	collectives.EncodeBF16(xb, sh.X)
	sh.X, sh.XB = nil, xb
}

// featureChunkElems bounds the float32 buffer ReadFeaturesBF16 reads
// through: 4 MiB.
var featureChunkElems = 1 << 20 // a variable for the tests

// ReadFeaturesBF16 reads the feature block of src (rows [r0, r1) of
// order, columns [c0, c1)) rounded to bfloat16 (collectives.EncodeBF16),
// a block of rows at a time through one float32 buffer of at most 4 MiB,
// so that the float32 block never exists whole. each, when not nil, sees
// every block of rows' float32 values first (a, the block's first row;
// the fingerprint hashes them).
func ReadFeaturesBF16(src Source, order, r0, r1, c0, c1 int, each func(a int, x []float32)) ([]uint16, error) {
	w := c1 - c0
	// On huge pages: the first SpMM gathers its rows at random.
	xb := hugepage.Make[uint16]((r1 - r0) * w)
	rows := max(1, min(r1-r0, featureChunkElems/max(w, 1)))
	si, into := src.(SourceInto)
	var buf []float32
	if into {
		buf = make([]float32, rows*w)
	}
	for a := r0; a < r1; a += rows {
		b := min(a+rows, r1)
		var x []float32
		var err error
		if into {
			x = buf[:(b-a)*w]
			err = si.FeatureBlockInto(x, order, a, b, c0, c1)
		} else {
			x, err = src.FeatureBlock(order, a, b, c0, c1)
		}
		if err != nil {
			return nil, err
		}
		if len(x) != (b-a)*w {
			return nil, fmt.Errorf("gcn: feature block of %d values for %d rows and %d columns", len(x), b-a, w)
		}
		if each != nil {
			each(a, x)
		}
		collectives.EncodeBF16(xb[(a-r0)*w:], x)
	}
	return xb, nil
}

// readFeaturesBF16 reads the feature block (rows [r0, r1) of order 1,
// columns [c0, c1)) into XB, rounded, with the fingerprint's term of the
// float32 values when this rank writes it.
func (sh *Shards) readFeaturesBF16(g *grid.Grid, src Source, colAxis grid.Axis, r0, r1, c0, c1 int) error {
	var each func(int, []float32)
	if ownsBlock(g, grid.X, colAxis) {
		each = func(a int, x []float32) { sh.featHash += HashFeatures(sh.Orders.Order[1][a:], c0, c1-c0, x) }
	}
	xb, err := ReadFeaturesBF16(src, 1, r0, r1, c0, c1, each)
	sh.XB = xb
	return err
}

// featureHash is Fingerprint's features term for this rank's block (0
// unless the rank is its one writer, owns).
func (sh *Shards) featureHash(g *grid.Grid, cfg Config) (h int64, owns bool) {
	colAxis := featureColAxis(cfg)
	if !ownsBlock(g, grid.X, colAxis) {
		return 0, false
	}
	if sh.XB != nil {
		return sh.featHash, true
	}
	r0, _ := g.Range(sh.N, grid.X)
	c0, c1 := g.Range(cfg.Features, colAxis)
	return HashFeatures(sh.Orders.Order[1][r0:], c0, c1-c0, sh.X), true
}

// featureColAxis is the axis the feature block's columns are split over:
// Z with an input projection (its GEMM's inner dimension), Y without.
func featureColAxis(cfg Config) grid.Axis {
	if cfg.InputProjection {
		return grid.Z
	}
	return grid.Y
}

// featureLen is the elements of the feature block, in either precision.
func (sh *Shards) featureLen() int { return len(sh.X) + len(sh.XB) }

// input0Direct reports whether layer 0 (d) aggregates the bfloat16
// features themselves: a GCN layer (no residual or attention, which read
// its input as float32 too) without dropout in this pass, or a SAGE
// layer where its self term reads the input where it is (selfIn,
// reuse.go's selfInInput): the self term's GEMM and weight gradient then
// read the bfloat16 features as their operand, which they rounded into a
// copy of their own before (the same bits).
func (m *Model) input0Direct(d *layerDims, training bool) bool {
	return input0Direct(d.spec, training && m.Cfg.Dropout > 0, m.selfInInput())
}

func input0Direct(sp layerSpec, dropout, selfIn bool) bool {
	return !dropout && (!sp.self || selfIn) && !sp.residual && sp.heads == 0
}

// widenInput0 is layer 0's (d's) input in float32 from the bfloat16
// features xb, widened into the arena. Dropout, when it applies, scales
// that copy in place (dropped) unless a residual reads the input before
// dropout; layer 0 keeps no mask, since its input needs no gradient.
func (m *Model) widenInput0(xb device.MatBF16, d *layerDims, verts device.Buffer[int32], training bool, step int) (x device.Mat, dropped bool) {
	if d.spec.needInputGrad {
		panic("gcn: bfloat16 features feed a first layer whose input needs a gradient")
	}
	x = m.cur.ar.mat(xb.Rows(), xb.Cols())
	m.dev.UnpackMatBF16(x, xb)
	if widenDropsInPlace(d.spec, training && m.Cfg.Dropout > 0) {
		m.dev.Dropout(x, x, m.dropSpec(verts, d.in0, step, 0))
		return x, true
	}
	return x, false
}

func widenDropsInPlace(sp layerSpec, dropout bool) bool { return dropout && !sp.residual }

// input0DropBF16 reports whether layer 0 aggregates the bfloat16 features
// after dropout, dropped into a bfloat16 copy a block of rows at a time
// (dropFeaturesBF16) rather than widened whole: a GCN layer, as for
// input0Direct, with dropout in this pass. The aggregation rounded the
// widened, dropped copy into the device's staging before; the same bits
// at the same place, in half the bytes of the float32 copy and none of
// the staging.
func input0DropBF16(sp layerSpec, dropout, selfIn bool) bool {
	return dropout && input0Direct(sp, false, selfIn)
}

// dropFeaturesBF16 is layer 0's (d's) input after dropout, in bfloat16:
// each block of rows of the features xb widened into the pass's scratch,
// dropped there and rounded into a new bfloat16 matrix of the arena. The
// dropout needs no mask: layer 0's input needs no gradient.
func (m *Model) dropFeaturesBF16(xb device.MatBF16, d *layerDims, verts device.Buffer[int32], step int) device.MatBF16 {
	out := m.cur.ar.matBF16(xb.Rows(), xb.Cols())
	scratch := m.scratch(xb.Rows(), xb.Cols())
	n := xb.Cols()
	for r0 := 0; r0 < xb.Rows(); r0 += scratch.Rows() {
		r1 := min(r0+scratch.Rows(), xb.Rows())
		s := scratch.Slice(0, r1-r0, 0, n)
		m.dev.UnpackMatBF16(s, xb.Slice(r0, r1, 0, n))
		m.dev.Dropout(s, s, m.dropSpec(verts.Slice(r0, r1), d.in0, step, 0))
		m.dev.PackMatBF16(out.Slice(r0, r1, 0, n), s)
	}
	return out
}

// checkFeatures panics where shards with bfloat16 features meet a float32
// model: only mixed precision rounds the features where they are read.
// The features of every binding (the full graph's, each batch's) are in
// the precision NewModel found.
func (m *Model) checkFeatures(sh *Shards) {
	if sh.XB != nil && !m.mixed() {
		panic(fmt.Sprintf("gcn: shards with bfloat16 features (FeaturesToBF16) on a %v model; they need train.precision = \"bf16\"", m.Options.Precision))
	}
	if (sh.XB != nil) != m.Options.FeaturesBF16 {
		panic("gcn: a batch's features and the model's shards' differ in precision")
	}
}
