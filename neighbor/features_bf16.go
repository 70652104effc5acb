package neighbor

import (
	"unsafe"

	"scalegnn/collectives"
	"scalegnn/gcn"
	"scalegnn/spmm"
)

// Features in bfloat16 (train.precision = "bf16"): a rank's feature block
// is read rounded to bfloat16 (gcn.ReadFeaturesBF16, a block of rows at a
// time), half the bytes of float32, and the feature exchange moves the
// rows as they are stored, 2 bytes a feature (RowWords). A step's input
// and the evaluator's first layer see them widened back to float32,
// exact; every product rounds its operands to bfloat16 in mixed precision
// anyway, so a model on bfloat16 features computes exactly what it
// computes on float32 features rounded to bfloat16 first
// (TestFeaturesBF16Exact).

// loadBF16 is Load's graph with the features of [lo, hi) in bfloat16.
func loadBF16(src gcn.Source, hat *spmm.CSR, labels []int32, train, val, test []bool, rank, ranks, lo, hi int) (*Graph, error) {
	s := src.Sizes()
	ids := src.Orders().Order[0]
	var h int64
	xb, err := gcn.ReadFeaturesBF16(src, 0, lo, hi, 0, s.Features, func(a int, x []float32) {
		h += gcn.HashFeatures(ids[a:], 0, s.Features, x)
	})
	if err != nil {
		return nil, err
	}
	g, err := newGraph(hat, s.Features, s.Classes, nil, xb, labels, train, val, test, rank, ranks)
	if err != nil {
		return nil, err
	}
	g.featHash = h
	return g, nil
}

// ToBF16 rounds the graph's features to bfloat16 (collectives.EncodeBF16)
// and drops the float32 ones, as Load does with bf16; ids are the vertex
// ids FeatureHash hashes the float32 features under.
func (g *Graph) ToBF16(ids []int32) {
	if g.FeaturesB != nil {
		return
	}
	g.featHash = g.FeatureHash(ids)
	g.FeaturesB = make([]uint16, len(g.Features))
	collectives.EncodeBF16(g.FeaturesB, g.Features)
	g.Features = nil
}

// BF16 reports that the graph holds its features in bfloat16.
func (g *Graph) BF16() bool { return g.FeaturesB != nil }

// FeatureHash is the dataset fingerprint's term of this rank's features
// (gcn.HashFeatures) under ids, the source's order-0 ids of [V0, V1), the
// ones Load read them under; in bfloat16, that of the float32 values
// read, so that checkpoints move between precisions.
func (g *Graph) FeatureHash(ids []int32) int64 {
	if g.FeaturesB != nil {
		return g.featHash
	}
	return gcn.HashFeatures(ids, 0, g.F, g.Features)
}

// row writes the features of the rank's v-th vertex into dst (F values).
func (g *Graph) row(dst []float32, v int) {
	F := g.F
	if g.FeaturesB != nil {
		collectives.DecodeBF16(dst[:F], g.FeaturesB[v*F:(v+1)*F])
		return
	}
	copy(dst[:F], g.Features[v*F:(v+1)*F])
}

// RowWords is the float32 words one feature row takes in the exchange:
// features, or in bfloat16 two features a word (the last half-word of an
// odd row unused).
func RowWords(features int, bf16 bool) int {
	if bf16 {
		return (features + 1) / 2
	}
	return features
}

// packRow writes the rank's v-th feature row into dst, words of the
// exchange: the float32 values, or their bfloat16 bits two to a word.
func (g *Graph) packRow(dst []float32, v int) {
	F := g.F
	if g.FeaturesB == nil {
		copy(dst[:F], g.Features[v*F:(v+1)*F])
		return
	}
	copy(halves(dst), g.FeaturesB[v*F:(v+1)*F])
}

// unpackRow widens a row of the exchange, as packRow wrote it, into dst
// (F values).
func (g *Graph) unpackRow(dst, words []float32) {
	F := g.F
	if g.FeaturesB == nil {
		copy(dst[:F], words[:F])
		return
	}
	collectives.DecodeBF16(dst[:F], halves(words)[:F])
}

// halves is w's memory as bfloat16 bit patterns, two a word (in memory
// order, so that a row packed on one rank unpacks the same on another of
// the same byte order; ranks of one job share it).
func halves(w []float32) []uint16 {
	if len(w) == 0 {
		return nil
	}
	return unsafe.Slice((*uint16)(unsafe.Pointer(unsafe.SliceData(w))), 2*len(w))
}
