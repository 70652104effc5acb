package gcn

import (
	"testing"

	"scalegnn/collectives"
	"scalegnn/grid"
	"scalegnn/permute"
)

// TestDiagonalShardIsItsOwnTranspose: on one rank a GCN model's block is
// on the diagonal and serves as its own transpose (Â is symmetric bit for
// bit), so no second CSR is kept; under double permutation (rows and
// columns in different orders) and with SAGE layers (D^-1 A is not
// symmetric) the transpose is a matrix of its own. DefaultConformance
// holds the models trained on such shards to the reference.
func TestDiagonalShardIsItsOwnTranspose(t *testing.T) {
	p := newProblem(5, 43, 11, 5, 5)
	for _, c := range []struct {
		name   string
		layer  Layer
		scheme permute.Scheme
		same   bool
	}{
		{"gcn", GCNLayer, permute.Single, true},
		{"gcn double permutation", GCNLayer, permute.Double, false},
		{"sage", SAGELayer, permute.Single, false},
	} {
		cfg := Config{Features: 11, Hidden: 6, Classes: 5, Layers: 2, Layer: c.layer, Seed: 1}
		perms := permute.New(p.n, c.scheme, 7)
		runLocal(t, 1, func(w collectives.Comm) error {
			gr, err := grid.New(w, xyz(1, 1, 1))
			if err != nil {
				return err
			}
			src, err := NewMemorySource(p.g, NewOrders(p.n, perms.P1, perms.P2))
			if err != nil {
				return err
			}
			sh, err := NewShards(gr, cfg, src)
			if err != nil {
				return err
			}
			key := sh.shardKey(1) // the layer that needs Âᵀ
			a, at := sh.Adj(key)
			if at == nil {
				t.Errorf("%s: layer 1 has no transpose", c.name)
			} else if same := a == at; same != c.same {
				t.Errorf("%s: the transpose is the block itself: %v, want %v", c.name, same, c.same)
			}
			return nil
		})
	}
}
