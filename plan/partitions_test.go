package plan

import (
	"strings"
	"testing"

	"go.uber.org/zap"
	"go.uber.org/zap/zaptest/observer"

	"scalegnn/internal/memlimit"
	"scalegnn/jobfile"
	"scalegnn/perfmodel"
)

// TestResolvePartitions: an isolated job whose partitions, one per rank,
// do not fit the memory a rank may use gets the fewest that do
// (perfmodel's rule), logged, and then passes the memory check, which
// refused it before; one that fits, one with partitions set, one without
// a limit or with mem_check = false is left as it is.
func TestResolvePartitions(t *testing.T) {
	const job = "[dataset]\nsource = \"cora\"\n[model]\nlayers = 3\nhidden = 4096\n[train]\nmode = \"isolated\"\n[grid]\nd = 2\n"
	base, err := jobfile.ParseConfig("job.toml", []byte(job))
	if err != nil {
		t.Fatal(err)
	}
	gs, err := EstimateGraphSize(base.Dataset)
	if err != nil {
		t.Fatal(err)
	}
	mem := func(p int) int64 {
		j := PerfJob(base, gs)
		j.Isolated.Partitions = p
		return j.IsolatedMemory(2).Total()
	}
	limit := func(b int64) []memlimit.Limit { return []memlimit.Limit{{Bytes: b, From: "MemAvailable"}} }
	for _, tc := range []struct {
		name   string
		extra  string
		limits []memlimit.Limit
		want   int
	}{
		{"needs 8", "", limit(mem(8)), 8},
		{"fits", "", limit(mem(2)), 0},
		{"no limit", "", nil, 0},
		{"set", "[grappa]\npartitions = 4\n", limit(mem(8)), 4},
		{"mem_check off", "[runtime]\nmem_check = false\n", limit(mem(8)), 0},
		{"none fits", "", limit(mem(2*perfmodel.MaxPartitionsPerWorker) - 1), 0},
	} {
		cfg, err := jobfile.ParseConfig("job.toml", []byte(job+tc.extra))
		if err != nil {
			t.Fatal(err)
		}
		core, logs := observer.New(zap.InfoLevel)
		if err := ResolvePartitions(cfg, 1, tc.limits, zap.New(core)); err != nil {
			t.Fatalf("%s: %v", tc.name, err)
		}
		if cfg.Grappa.Partitions != tc.want {
			t.Errorf("%s: grappa.partitions = %d, want %d", tc.name, cfg.Grappa.Partitions, tc.want)
		}
		chosen := logs.FilterMessage("grappa.partitions chosen from memory").Len() == 1
		if chosen != (tc.name == "needs 8") {
			t.Errorf("%s: logged a choice: %v", tc.name, chosen)
		}
		if tc.name == "needs 8" {
			if err := CheckMemory(base, 0, 1, tc.limits); err == nil || !strings.Contains(err.Error(), "predicted peak memory") {
				t.Errorf("one partition per rank: the memory check says %v, want a refusal", err)
			}
			if err := CheckMemory(cfg, 0, 1, tc.limits); err != nil {
				t.Errorf("8 partitions: the memory check refuses: %v", err)
			}
		}
	}
}
