package plan

import (
	"testing"

	"scalegnn/jobfile"
	"scalegnn/perfmodel"
)

// TestNeighborPerfJob: the neighbor fields of PerfJob come from a
// neighbor job's own keys, defaults for a mini-batch job and nothing for
// a full-graph one; Cora's training set and degrees are the loaded
// graph's, an R-MAT job's from its generator; and the job predicts.
func TestNeighborPerfJob(t *testing.T) {
	for _, tc := range []struct {
		name, data string
		fanouts    []int
		seeds      int
		train      int
	}{
		{"neighbor", "[train]\nmode = \"neighbor\"\nfanouts = [7, 3]\nbatch_size = 17\n", []int{7, 3}, 17, 140},
		{"minibatch", "[train]\nmode = \"minibatch\"\nbatch_size = 512\n", []int{25, 10}, 0, 140},
		{"minibatch rmat", "[dataset]\nsource = \"rmat\"\n[dataset.rmat]\nscale = 12\ntrain_fraction = 0.25\n[model]\nlayers = 3\n[train]\nmode = \"minibatch\"\nbatch_size = 512\n",
			[]int{15, 10, 5}, 0, 1024},
		{"fullgraph", "", nil, 0, 0},
	} {
		t.Run(tc.name, func(t *testing.T) {
			cfg, err := jobfile.ParseConfig("job.toml", []byte(tc.data))
			if err != nil {
				t.Fatal(err)
			}
			gs, err := EstimateGraphSize(cfg.Dataset)
			if err != nil {
				t.Fatal(err)
			}
			nb := PerfJob(cfg, gs).Neighbor
			if len(nb.Fanouts) != len(tc.fanouts) || nb.Seeds != tc.seeds || nb.TrainVertices != tc.train {
				t.Fatalf("fanouts %v, seeds %d, train %d; expected %v, %d, %d", nb.Fanouts, nb.Seeds, nb.TrainVertices, tc.fanouts, tc.seeds, tc.train)
			}
			for l := range tc.fanouts {
				if nb.Fanouts[l] != tc.fanouts[l] {
					t.Errorf("fanouts %v; expected %v", nb.Fanouts, tc.fanouts)
				}
			}
			if tc.fanouts == nil {
				return
			}
			var n float64
			for _, c := range nb.Degrees {
				n += c
			}
			if d := n - float64(gs.N); d > 1e-6*float64(gs.N)+20 || d < -1e-6*float64(gs.N)-20 {
				t.Errorf("degree histogram holds %.1f vertices; the graph has %d", n, gs.N)
			}
			p, err := perfmodel.PredictNeighbor(PerfJob(cfg, gs), perfmodel.DefaultMachine(), 4, 0, 0)
			if err != nil || p.Epoch <= 0 || p.CommBytes <= 0 {
				t.Errorf("prediction %+v, %v", p, err)
			}
		})
	}
}
