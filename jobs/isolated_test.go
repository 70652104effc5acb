package jobs

import (
	"math"
	"path/filepath"
	"strings"
	"testing"

	"scalegnn/jobfile"
)

func isolatedConfig(t *testing.T, extra, dir string) jobfile.Config {
	t.Helper()
	cfg, err := jobfile.ParseConfig("job.toml", []byte(`
[dataset]
source = "cora"
normalize_features = true
[train]
epochs = 6
eval_every = 3
seed = 3
`+extra+`
[output]
dir = "`+dir+`"
`))
	if err != nil {
		t.Fatal(err)
	}
	return *cfg
}

func TestIsolatedConfigErrors(t *testing.T) {
	for _, tc := range []struct{ extra, want string }{
		{"mode = \"isolated\"\nbatch_ratio = 0.1", "train.batch_ratio = 0.1"},
		{"mode = \"isolated\"\nsteps_per_epoch = 3", "train.steps_per_epoch = 3 with train.batch_size = 0"},
		{"mode = \"isolated\"\n[grid]\nx = 2", "grid.x = y = z = 1"},
		{"mode = \"isolated\"\n[grappa]\ncorrection = \"exact\"", `correction "exact"`},
		{"mode = \"isolated\"\n[grappa]\npartition = \"metis\"", `partition "metis"`},
		{"mode = \"isolated\"\n[grid]\nd = 4\n[grappa]\nchunks = 3", "grappa.chunks = 3"},
	} {
		_, err := jobfile.ParseConfig("job.toml", []byte("[dataset]\nsource = \"cora\"\n[train]\n"+tc.extra+"\n"))
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%q: error %v, want one naming %q", tc.extra, err, tc.want)
		}
	}
}

// TestIsolatedJob: one worker's partition is the whole graph, so isolated
// training equals full-graph training step for step; with four workers the
// only training traffic is the gradient all-reduce, the same bytes every
// epoch (the chunk loads are local reads), and no 3D-PMM traffic.
func TestIsolatedJob(t *testing.T) {
	if testing.Short() {
		t.Skip("trains Cora three times")
	}
	tmp := t.TempDir()
	_, full := trainLocal(t, isolatedConfig(t, `mode = "fullgraph"`, filepath.Join(tmp, "full")))
	_, one := trainLocal(t, isolatedConfig(t, "mode = \"isolated\"\n[grappa]\ncorrection = \"shrinkage\"", filepath.Join(tmp, "one")))
	for e := range full {
		if a, b := full[e].Loss, one[e].Loss; math.Abs(a-b) > 1e-5*math.Abs(a) {
			t.Errorf("epoch %d: loss %.9g full-graph, %.9g isolated on one worker", e+1, a, b)
		}
	}
	for _, part := range []string{"induced", "halo"} { // halo partitions differ in size
		cfg := isolatedConfig(t, "mode = \"isolated\"\n[grappa]\ncorrection = \"batch\"\npartition = \""+part+"\"", filepath.Join(tmp, part))
		cfg.Grid.D = 4
		checkIsolatedBytes(t, cfg)
	}
}

func checkIsolatedBytes(t *testing.T, cfg jobfile.Config) {
	res, four := trainLocal(t, cfg)
	if res.Mode != "isolated" {
		t.Errorf("summary mode %q, want isolated", res.Mode)
	}
	for _, m := range four {
		if m.DPBytes == 0 || m.DPBytes != four[0].DPBytes || m.PMMBytes != 0 || m.Comm3DBytes != 0 {
			t.Errorf("epoch %d: dp %d (epoch 1: %d), pmm %d, 3d %d bytes; want only a constant gradient all-reduce",
				m.Epoch, m.DPBytes, four[0].DPBytes, m.PMMBytes, m.Comm3DBytes)
		}
		if math.IsNaN(m.Loss) || m.Loss <= 0 {
			t.Errorf("epoch %d: loss %v", m.Epoch, m.Loss)
		}
	}
}
