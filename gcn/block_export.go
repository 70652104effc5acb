package gcn

import "scalegnn/spmm"

// ReadBlock reads from src the block of a layer's aggregation operator
// (Â for GCN layers, D^-1 A for SAGE layers: readMeanShard) with rows at
// positions [r0, r1) of order ro and columns [c0, c1) of order co, and its
// transpose when withT (nil otherwise), exactly as NewShards reads its
// shards: the one rule for turning a Source's Â into blocks, which
// package cagnet's block rows follow too.
func ReadBlock(src Source, layer Layer, ro, r0, r1, co, c0, c1 int, withT bool) (a, at *spmm.CSR, err error) {
	var s *adjShard
	if layer == SAGELayer {
		s, err = readMeanShard(src, src.Orders(), ro, r0, r1, co, c0, c1, withT)
	} else {
		s, err = readShard(src, ro, r0, r1, co, c0, c1, withT)
	}
	if err != nil {
		return nil, nil, err
	}
	return s.a, s.at, nil
}
