package plan

import (
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"scalegnn/internal/memlimit"
	"scalegnn/jobfile"
	"scalegnn/perfmodel"
)

func TestCheckMemory(t *testing.T) {
	gib := int64(1) << 30
	node24 := []memlimit.Limit{{Bytes: 24 * gib, From: "MemAvailable", PerNode: true}}
	node20 := []memlimit.Limit{{Bytes: 20 * gib, From: "MemAvailable", PerNode: true}}
	rmat := func(scale int, extra string) string {
		return "[dataset]\nsource = \"rmat\"\n[dataset.rmat]\nscale = " + strconv.Itoa(scale) + "\n" + extra
	}
	for _, c := range []struct {
		name   string
		job    string
		rank   int
		rpn    int
		limits []memlimit.Limit
		want   []string // nil: accepted
	}{
		{"cora fits", "", 0, 1, node24, nil},
		{"no limit known", rmat(27, "features = 32\n"), 0, 1, nil, nil},
		{"rmat 27 on one rank", rmat(27, "features = 32\n"), 0, 1, node24,
			[]string{"job.toml: rank 0's predicted peak memory on grid 1x1x1 (d=1) is ", "more than the 24GiB it may use (MemAvailable 24GiB / 1 rank on the node)",
				"no grid of up to 4096 ranks fits in 24GiB per rank while every rank loads the whole graph; prepare the dataset (scalegnn prepare) to load it sharded: then the fastest grid that fits in 24GiB per rank is ",
				"or set runtime.mem_check = false to run anyway"}},
		{"rmat 22 on one rank", rmat(22, "features = 128\n[model]\nlayers = 3\nhidden = 128\n"), 0, 1, node20,
			[]string{"rank 0's predicted peak memory on grid 1x1x1 (d=1) is 21.2GiB", "the fastest grid that fits in 20GiB per rank is "}},
		{"rmat 22 off", rmat(22, "features = 128\n[model]\nlayers = 3\nhidden = 128\n[runtime]\nmem_check = false\n"), 0, 1, node24, nil},
		{"node shared by 8 ranks", rmat(20, "[grid]\nx = 2\ny = 2\nz = 2\n"), 5, 8, []memlimit.Limit{{Bytes: 3 * gib, From: "MemAvailable", PerNode: true}},
			[]string{"rank 5's predicted", "grid 2x2x2 (d=1)", "the 384MiB it may use (MemAvailable 3GiB / 8 ranks on the node)",
				// More ranks than the node's 8 keep 512MiB each only on
				// more nodes: the suggestion says so.
				"per rank) over 2 nodes of 8 ranks"}},
		{"grid.mem_per_rank is the smallest", rmat(18, "[grid]\nmem_per_rank = \"100MiB\"\n"), 0, 1, node24,
			[]string{"the 100MiB it may use (grid.mem_per_rank = 100MiB)", "fits in 100MiB per rank is "}},
		{"mem_check = false keeps ulimit -v", rmat(22, "[runtime]\nmem_check = false\n[grid]\nmem_per_rank = \"1MiB\"\n"), 0, 1,
			[]memlimit.Limit{{Bytes: 1 << 20, From: "MemAvailable", PerNode: true}, {Bytes: 2 * gib, From: "ulimit -v less the address space mapped"}},
			[]string{"the 2GiB it may use (ulimit -v less the address space mapped 2GiB)", "; or raise ulimit -v"}},
		{"ulimit -v", rmat(22, ""), 0, 1, []memlimit.Limit{{Bytes: 64 * gib, From: "MemAvailable", PerNode: true}, {Bytes: 2 * gib, From: "ulimit -v less the address space mapped"}},
			[]string{"the 2GiB it may use (ulimit -v less the address space mapped 2GiB)"}},
	} {
		cfg, err := jobfile.ParseConfig("job.toml", []byte(c.job))
		if err != nil {
			t.Fatalf("%s: %v", c.name, err)
		}
		t0 := time.Now()
		err = CheckMemory(cfg, c.rank, c.rpn, c.limits)
		if took := time.Since(t0); took > time.Second {
			t.Errorf("%s: the check took %v, want under a second", c.name, took)
		}
		if c.want == nil {
			if err != nil {
				t.Errorf("%s: refused: %v", c.name, err)
			}
			continue
		}
		if err == nil {
			t.Errorf("%s: accepted, want a refusal", c.name)
			continue
		}
		msg := err.Error()
		if strings.Contains(msg, "\n") {
			t.Errorf("%s: message is not one line: %q", c.name, msg)
		}
		for _, w := range c.want {
			if !strings.Contains(msg, w) {
				t.Errorf("%s: message %q does not contain %q", c.name, msg, w)
			}
		}
		checkSuggestion(t, c.name, cfg, msg)
	}
}

// checkSuggestion checks that the grid a refusal suggests does fit: its
// predicted memory is within the limit, on every rank.
func checkSuggestion(t *testing.T, name string, cfg *jobfile.Config, msg string) {
	t.Helper()
	m := regexp.MustCompile(`fits in (\S+) per rank is (\S+) on (\d+) ranks \((\S+) per rank\)`).FindStringSubmatch(msg)
	if m == nil {
		t.Errorf("%s: no suggested grid in %q", name, msg)
		return
	}
	limit, err1 := perfmodel.ParseBytes(m[1])
	need, err2 := perfmodel.ParseBytes(m[4])
	if err1 != nil || err2 != nil || need > limit {
		t.Errorf("%s: suggested grid %s needs %s, more than %s", name, m[2], m[4], m[1])
	}
}
