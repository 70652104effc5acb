package plan

import (
	"math"
	"testing"

	"scalegnn/dataset"
	"scalegnn/gcn"
	"scalegnn/jobfile"
	"scalegnn/method"
	"scalegnn/perfmodel"
)

// TestExpectedRMATNonzeros compares the closed-form expectation with
// generated graphs: within 1% (the relative standard deviation of the count
// is far below that at these sizes).
func TestExpectedRMATNonzeros(t *testing.T) {
	for _, scale := range []int{10, 13} {
		g, err := dataset.RMAT(dataset.RMATConfig{Scale: scale, EdgeFactor: 16, A: 0.57, B: 0.19, C: 0.19, D: 0.05,
			Classes: 2, Features: 1, TrainFrac: 0.1, Seed: 3})
		if err != nil {
			t.Fatal(err)
		}
		got, want := expectedRMATNonzeros(scale, 16, 0.57, 0.19, 0.19), float64(g.Adj.NNZ())
		if math.Abs(got-want) > 0.01*want {
			t.Errorf("scale %d: expected %.0f nonzeros, generated %.0f", scale, got, want)
		}
	}
}

// TestEstimateGraphSizeSBM checks the SBM shortcut against the generator:
// within 0.5%.
func TestEstimateGraphSizeSBM(t *testing.T) {
	c := jobfile.DefaultConfig().Dataset
	c.Source = jobfile.SourceSBM
	c.NormalizeFeatures = false // as ParseConfig sets it for a generator
	c.SBM.N = 3000
	gs, err := EstimateGraphSize(c)
	if err != nil {
		t.Fatal(err)
	}
	g, err := jobfile.LoadGraph(c)
	if err != nil {
		t.Fatal(err)
	}
	want := float64(dataset.NormalizeGCN(g.Adj).NNZ())
	if gs.N != g.N || math.Abs(float64(gs.NNZ)-want) > 0.005*want || gs.Features != g.F || gs.Classes != g.Classes {
		t.Errorf("estimate %+v, generated N=%d nnz=%.0f F=%d C=%d", gs, g.N, want, g.F, g.Classes)
	}
}

// TestPerfChoices: a full-graph job lists 3D and 1.5D unless
// train.algorithm names one or the model lies outside cagnet's scope;
// mini-batch lists the 3D/4D grids, the other modes and the 1.5D
// arrangements with every Gd, and grid.auto chooses among 4D and 1.5D.
func TestPerfChoices(t *testing.T) {
	for _, tc := range []struct {
		name, body string
		want       perfmodel.Choices
	}{
		{"full graph", "", perfmodel.Choices{method.Plexus: true, method.CAGNET: true}},
		{"explicit 3d", "[train]\nalgorithm = \"3d\"\n", perfmodel.Choices{method.Plexus: true}},
		{"explicit 1.5d", "[train]\nalgorithm = \"1.5d\"\n", perfmodel.Choices{method.CAGNET: true}},
		{"norm: 1.5d cannot train it", "[model]\nnorm = \"rms\"\n", perfmodel.Choices{method.Plexus: true}},
		{"double permutation", "[permute]\nscheme = \"double\"\n", perfmodel.Choices{method.Plexus: true}},
		{"minibatch", "[train]\nmode = \"minibatch\"\nbatch_size = 8\n", perfmodel.Choices{method.Plexus: true, method.NeighborSampling: true, method.IsolatedPartitions: true, method.CAGNET: true}},
		{"minibatch 1.5d", "[train]\nmode = \"minibatch\"\nbatch_size = 8\nalgorithm = \"1.5d\"\n", perfmodel.Choices{method.CAGNET: true}},
		{"minibatch 3d", "[train]\nmode = \"minibatch\"\nbatch_size = 8\nalgorithm = \"3d\"\n", perfmodel.Choices{method.Plexus: true, method.NeighborSampling: true, method.IsolatedPartitions: true}},
		{"minibatch norm", "[train]\nmode = \"minibatch\"\nbatch_size = 8\n[model]\nnorm = \"rms\"\n", perfmodel.Choices{method.Plexus: true, method.NeighborSampling: true, method.IsolatedPartitions: true}},
		{"neighbor", "[train]\nmode = \"neighbor\"\nbatch_size = 8\nfanouts = [5, 5]\n[grid]\nd = 1\n", perfmodel.Choices{method.Plexus: true, method.NeighborSampling: true, method.IsolatedPartitions: true}},
	} {
		cfg, err := jobfile.ParseConfig("job.toml", []byte(tc.body))
		if err != nil {
			t.Fatalf("%s: %v", tc.name, err)
		}
		if got := PerfChoices(cfg); !got.Equal(tc.want) {
			t.Errorf("%s: PerfChoices %+v, want %+v", tc.name, got, tc.want)
		}
		// grid.auto and the recommendation never leave the job's mode.
		own := tc.want
		switch cfg.Train.Mode {
		case gcn.MiniBatch:
			own = perfmodel.Choices{method.Plexus: tc.want[method.Plexus], method.CAGNET: tc.want[method.CAGNET]}
		case gcn.Neighbor:
			own = perfmodel.Choices{method.NeighborSampling: true}
		}
		if got := OwnChoices(cfg); !got.Equal(own) {
			t.Errorf("%s: OwnChoices %+v, want %+v", tc.name, got, own)
		}
	}
}
