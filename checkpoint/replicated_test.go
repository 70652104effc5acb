package checkpoint

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"scalegnn/collectives"
)

// TestReplicatedRoundTrip: a replicated model written on 2 ranks (rank 0
// writes) verifies, reads back bit for bit on 3, is pruned to keep, and a
// flipped byte is refused naming the file.
func TestReplicatedRoundTrip(t *testing.T) {
	root := t.TempDir()
	mk := func(name string, rows, cols int, x float32) Replicated {
		r := Replicated{Name: name, Rows: rows, Cols: cols}
		for i := range rows * cols {
			r.W, r.M, r.V = append(r.W, x+float32(i)), append(r.M, -x*float32(i)), append(r.V, x/float32(i+1))
		}
		return r
	}
	want := []Replicated{mk("W0", 5, 3, 0.5), mk("W0_self", 5, 3, 1.5), mk("W1", 3, 2, -2)}
	var dir string
	for step := 1; step <= 3; step++ {
		for r, err := range collectives.RunLocal(2, func(w collectives.Comm) error {
			d, err := SaveReplicated(w, root, 2, want, Manifest{Step: step, Epoch: step, OptimizerStep: 7}, []byte("x = 1\n"))
			dir = d
			return err
		}) {
			if err != nil {
				t.Fatalf("rank %d: %v", r, err)
			}
		}
	}
	if entries, _ := os.ReadDir(root); len(entries) != 2 {
		t.Errorf("%d entries in %s; expected the 2 kept", len(entries), root)
	}
	man, err := Verify(dir)
	if err != nil || man.OptimizerStep != 7 || len(man.Params) != 3 {
		t.Fatalf("verify: %+v, %v", man, err)
	}
	for r, err := range collectives.RunLocal(3, func(w collectives.Comm) error {
		got := []Replicated{mk("W0", 5, 3, 0), mk("W0_self", 5, 3, 0), mk("W1", 3, 2, 0)}
		if err := LoadReplicated(w, dir, man, got); err != nil {
			return err
		}
		for k := range got {
			if !slices.Equal(got[k].W, want[k].W) || !slices.Equal(got[k].M, want[k].M) || !slices.Equal(got[k].V, want[k].V) {
				t.Errorf("rank %d: %s read back differently", w.Rank(), want[k].Name)
			}
		}
		return nil
	}) {
		if err != nil {
			t.Fatalf("rank %d: %v", r, err)
		}
	}
	path := filepath.Join(dir, "W1.m.npy")
	b, _ := os.ReadFile(path)
	b[len(b)-1] ^= 1
	os.WriteFile(path, b, 0o644)
	errs := collectives.RunLocal(2, func(w collectives.Comm) error {
		return LoadReplicated(w, dir, man, want)
	})
	if err := errs[0]; err == nil || !strings.Contains(err.Error(), "W1.m.npy") || strings.Contains(err.Error(), "\n") {
		t.Errorf("flipped byte: %v on rank 0; expected one line naming W1.m.npy", err)
	}
	if errs[1] == nil {
		t.Error("flipped byte: rank 1 went on")
	}
}
