package perfmodel

import (
	"slices"
	"testing"

	"scalegnn/grid"
	"scalegnn/permute"
)

// TestShardKeysFollowTheGridRule: the model counts the memory of exactly
// the shards package gcn keeps (grid.ShardsOf), for 1 to 7 layers and every
// permutation, and keeps a transpose of a shard iff some layer using it
// needs its input gradient.
func TestShardKeysFollowTheGridRule(t *testing.T) {
	for layers := 1; layers <= 7; layers++ {
		for _, perm := range []permute.Scheme{permute.None, permute.Single, permute.Double} {
			j := Job{N: 100, NNZ: 1000, Features: 8, Hidden: 4, Classes: 3, Layers: layers, Permutation: perm}
			two := perm == permute.Double
			keys, transposed := j.shardKeys()
			if want := grid.ShardsOf(layers, two); !slices.Equal(keys, want) {
				t.Errorf("%d layers, %v: shards %v, want %v", layers, perm, keys, want)
			}
			for _, k := range keys {
				// Without an input projection, only layer 0 skips the
				// transposed product.
				want := false
				for l := 1; l < layers; l++ {
					want = want || grid.ShardFor(l, two) == k
				}
				if transposed[k] != want {
					t.Errorf("%d layers, %v: shard %v transposed %v, want %v", layers, perm, k, transposed[k], want)
				}
			}
		}
	}
}
