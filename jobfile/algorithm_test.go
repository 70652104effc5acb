package jobfile

import (
	"strings"
	"testing"
)

// TestAlgorithmConfigErrors: each misuse of train.algorithm and
// grid.replication is one line naming the key and the fix.
func TestAlgorithmConfigErrors(t *testing.T) {
	a := "[train]\nalgorithm = \"1.5d\"\n"
	for _, test := range []struct{ name, data, want string }{
		{"unknown", "[train]\nalgorithm = \"2d\"\n", `train.algorithm = "2d": expected "3d"`},
		{"replication without 1.5d", "[grid]\nx = 4\nreplication = 2\n", `grid.replication = 2 applies to train.algorithm = "1.5d"`},
		{"not dividing", a + "[grid]\nx = 6\nreplication = 4\n", "grid.replication = 4 with x·y·z = 6 ranks"},
		{"neighbor", a + "mode = \"neighbor\"\nbatch_size = 8\nfanouts = [2, 2]\n", `train.mode = "neighbor": train.algorithm = "1.5d" trains the full graph or uniform mini-batches`},
		{"isolated", a + "mode = \"isolated\"\n", `train.mode = "isolated": train.algorithm = "1.5d"`},
		{"norm", a + "[model]\nnorm = \"rms\"\n", "trains GCN, SAGE and GAT layers without extras"},
		{"double", a + "[permute]\nscheme = \"double\"\n", `permute.scheme = "double" does not apply`},
		{"auto with replication", a + "[grid]\nauto = true\nreplication = 2\n", "grid.auto = true chooses grid.replication too"},
		{"d", a + "[grid]\nx = 4\nd = 2\n", "grid.d = 2: train.algorithm = \"1.5d\" has data-parallel replicas in mini-batch training only"},
	} {
		_, err := ParseConfig("job.toml", []byte(test.data))
		if err == nil {
			t.Errorf("%s: no error", test.name)
			continue
		}
		if msg := err.Error(); !strings.HasPrefix(msg, "job.toml: ") || !strings.Contains(msg, test.want) || strings.Contains(msg, "\n") {
			t.Errorf("%s: error %q; expected one line containing %q", test.name, msg, test.want)
		}
	}
	for _, ok := range []string{a + "[grid]\nx = 8\nreplication = 2\n", a + "[grid]\nauto = true\n",
		a + "comm_dtype = \"bf16\"\n[model]\nlayer = \"sage\"\n[grid]\nx = 6\nreplication = 3\n",
		a + "mode = \"minibatch\"\nbatch_size = 8\n[grid]\nd = 2\nx = 4\nreplication = 2\n[checkpoint]\nevery = 2\n"} {
		if _, err := ParseConfig("job.toml", []byte(ok)); err != nil {
			t.Errorf("a valid 1.5d job %q: %v", ok, err)
		}
	}
}
