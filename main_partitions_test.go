package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"scalegnn/jobfile"
)

// TestIsolatedPartitionsFromMemory: an isolated job whose one partition
// per rank does not fit grid.mem_per_rank (138MiB predicted against
// 100MiB: the memory check refused it before) is given the fewest
// partitions that fit by the launcher (8, 94.7MiB; 4 need 109MiB), trains them in phases,
// logs the choice and records it in the effective job file.
func TestIsolatedPartitionsFromMemory(t *testing.T) {
	dir := t.TempDir()
	job := filepath.Join(dir, "job.toml")
	text := `[dataset]
source = "cora"
normalize_features = true
[model]
layers = 3
hidden = 256
[train]
mode = "isolated"
epochs = 1
[grid]
mem_per_rank = "100MiB"
[runtime]
threads = 1
[output]
dir = "` + filepath.Join(dir, "out") + `"
`
	if err := os.WriteFile(job, []byte(text), 0o644); err != nil {
		t.Fatal(err)
	}
	code, stderr := runMain(t, "-config", job)
	if code != 0 {
		t.Fatalf("exit %d:\n%s", code, stderr)
	}
	if !strings.Contains(stderr, `grappa.partitions chosen from memory  {"partitions": 8, "phases": 8`) {
		t.Errorf("no log of 8 partitions chosen:\n%s", stderr)
	}
	eff, err := jobfile.LoadConfig(filepath.Join(dir, "out", "config.toml"))
	if err != nil {
		t.Fatal(err)
	}
	if eff.Grappa.Partitions != 8 {
		t.Errorf("the effective job file has grappa.partitions = %d, want 8", eff.Grappa.Partitions)
	}
}
