package launch

import (
	"math"
	"runtime/debug"
	"testing"

	"scalegnn/jobfile"
)

// TestSoftMemoryLimit: the rank's share (here grid.mem_per_rank, below
// any machine's) becomes Go's soft memory limit, and GOMEMLIMIT in the
// environment is left alone.
func TestSoftMemoryLimit(t *testing.T) {
	before := debug.SetMemoryLimit(-1)
	defer debug.SetMemoryLimit(before)
	cfg, err := jobfile.ParseConfig("job.toml", []byte("[dataset]\nsource = \"cora\"\n[grid]\nmem_per_rank = \"1MiB\"\n"))
	if err != nil {
		t.Fatal(err)
	}
	t.Setenv("GOMEMLIMIT", "")
	limit, from := SoftMemoryLimit(cfg, 1)
	if limit != 1<<20 || from != "grid.mem_per_rank = 1MiB" || debug.SetMemoryLimit(-1) != 1<<20 {
		t.Errorf("limit %d from %q, Go's limit %d; want 1MiB from grid.mem_per_rank", limit, from, debug.SetMemoryLimit(-1))
	}
	debug.SetMemoryLimit(math.MaxInt64)
	t.Setenv("GOMEMLIMIT", "5GiB")
	if limit, _ := SoftMemoryLimit(cfg, 1); limit != 0 || debug.SetMemoryLimit(-1) != math.MaxInt64 {
		t.Errorf("with GOMEMLIMIT set: limit %d, Go's limit %d; want it left alone", limit, debug.SetMemoryLimit(-1))
	}
}
