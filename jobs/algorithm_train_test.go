package jobs

import (
	"math"
	"path/filepath"
	"testing"
)

// TestCAGNETTrainsLike3D: a 1.5D job on 6 in-process ranks (c = 3, two
// process rows, single permutation, dropout) trains Cora like the 3D job
// on one rank, GCN and SAGE: losses and accuracies of every epoch within
// 1e-5 (float32 sums in another order); its summary records the algorithm
// and the replication that perfmodel score matches predictions by.
func TestCAGNETTrainsLike3D(t *testing.T) {
	if testing.Short() {
		t.Skip("trains Cora four times")
	}
	tmp := t.TempDir()
	for _, layer := range []string{"gcn", "sage"} {
		extra := "[model]\nlayer = \"" + layer + "\"\n[permute]\nscheme = \"single\"\n"
		one := isolatedConfig(t, "mode = \"fullgraph\"\n"+extra, filepath.Join(tmp, layer+"-3d"))
		_, want := trainLocal(t, one)
		six := isolatedConfig(t, "mode = \"fullgraph\"\nalgorithm = \"1.5d\"\n"+extra, filepath.Join(tmp, layer+"-15d"))
		six.Grid.X, six.Grid.Replication = 6, 3
		res, got := trainLocal(t, six)
		if len(got) != len(want) {
			t.Fatalf("%s: %d epochs, want %d", layer, len(got), len(want))
		}
		acc := func(p *float64) float64 {
			if p == nil {
				return -1
			}
			return *p
		}
		for e := range want {
			a, b := want[e], got[e]
			if math.Abs(a.Loss-b.Loss) > 1e-5*math.Abs(a.Loss) || math.Abs(acc(a.ValAcc)-acc(b.ValAcc)) > 1e-5 || math.Abs(acc(a.TrainAcc)-acc(b.TrainAcc)) > 1e-5 {
				t.Errorf("%s epoch %d: 3D on one rank loss %.9g val %.4g train %.4g; 1.5D on 6 ranks loss %.9g val %.4g train %.4g",
					layer, e+1, a.Loss, acc(a.ValAcc), acc(a.TrainAcc), b.Loss, acc(b.ValAcc), acc(b.TrainAcc))
			}
		}
		if res.Algorithm != "1.5d" || res.Replication != 3 {
			t.Errorf("%s: summary algorithm %q replication %d, want 1.5d and 3", layer, res.Algorithm, res.Replication)
		}
	}
}
