package plan

import (
	"fmt"
	"path/filepath"
	"strings"
	"testing"

	"go.uber.org/zap"
	"go.uber.org/zap/zapcore"

	"scalegnn/collectives"
	"scalegnn/internal/memlimit"
	"scalegnn/jobfile"
	"scalegnn/method"
	"scalegnn/perfmodel"
)

// TestResolveAutoGrid: grid.auto picks a grid of the launch's ranks, turns
// auto off so that config.toml records the grid, and reports a bad profile
// or an impossible memory limit by the key.
func TestResolveAutoGrid(t *testing.T) {
	job := func(extra string) *jobfile.Config {
		t.Helper()
		cfg, err := jobfile.ParseConfig("auto.toml", []byte("[dataset]\nsource = \"sbm\"\n[dataset.sbm]\nnodes = 4000\n[grid]\nauto = true\n"+extra))
		if err != nil {
			t.Fatal(err)
		}
		return cfg
	}
	cfg := job(`machine = "perlmutter-plexus"` + "\n")
	if err := cfg.CheckWorld(6); err != nil {
		t.Fatalf("CheckWorld with auto: %v", err)
	}
	if err := ResolveAutoGrid(cfg, 6, 2, nil, zap.NewNop()); err != nil {
		t.Fatal(err)
	}
	if g := cfg.Grid; g.Auto || g.X*g.Y*g.Z*g.D != 6 || g.D != 1 {
		t.Errorf("chosen grid %+v: want auto off and x·y·z = 6, d = 1", g)
	}
	if err := cfg.Validate(); err != nil {
		t.Errorf("the resolved job no longer validates: %v", err)
	}
	for _, c := range []struct{ extra, want string }{
		{"machine = \"nosuch.toml\"\n", "auto.toml: grid.machine: machine profile nosuch.toml: no such file"},
		{"mem_per_rank = \"4KiB\"\n", "auto.toml: choosing the grid: perfmodel: no grid fits in 4KiB per rank"},
	} {
		err := ResolveAutoGrid(job(c.extra), 6, 0, nil, zap.NewNop())
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%q: error %v, want %q", c.extra, err, c.want)
		}
	}
	for _, c := range []struct{ body, want string }{
		{"[grid]\nauto = true\nx = 2\n", "grid.auto = true chooses grid.x, y, z and d"},
		{"[grid]\nauto = true\nmem_per_rank = \"lots\"\n", `grid.mem_per_rank = "lots": expected a size`},
	} {
		_, err := jobfile.ParseConfig("auto.toml", []byte(c.body))
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%q: error %v, want %q", c.body, err, c.want)
		}
	}
}

// TestAutoGridOnDetectedLimits: grid.auto fits the grid in the memory
// check's limit (MemoryLimit), not grid.mem_per_rank alone: on the
// profile's 6 ranks the fastest grid, 1x2x3, needs 3.84 MB per rank; a
// cgroup of 7.5 MB for 2 ranks per node leaves 3.75 MB, in which 1x6x1
// (3.69 MB) is the fastest, as with grid.mem_per_rank = 3.75 MB.
func TestAutoGridOnDetectedLimits(t *testing.T) {
	job := func(extra string) *jobfile.Config {
		t.Helper()
		// train.algorithm = "3d": these cases are about memory limits
		// among 3D grids (TestAutoChoosesAlgorithm covers 1.5D).
		cfg, err := jobfile.ParseConfig("auto.toml", []byte("[dataset]\nsource = \"sbm\"\n[dataset.sbm]\nnodes = 4000\n[train]\nalgorithm = \"3d\"\n[grid]\nauto = true\nmachine = \"perlmutter-plexus\"\n"+extra))
		if err != nil {
			t.Fatal(err)
		}
		return cfg
	}
	cgroup := []memlimit.Limit{{Bytes: 7_500_000, From: "cgroup memory.max", PerNode: true}}
	for _, c := range []struct {
		name   string
		extra  string
		limits []memlimit.Limit
		want   string
	}{
		{"no limit", "", nil, "1x2x3"},
		{"grid.mem_per_rank", "mem_per_rank = \"3750000B\"\n", nil, "1x6x1"},
		{"cgroup per rank", "", cgroup, "1x6x1"},
		{"the smaller of both", "mem_per_rank = \"5000000B\"\n", cgroup, "1x6x1"},
	} {
		cfg := job(c.extra)
		if err := ResolveAutoGrid(cfg, 6, 2, c.limits, zap.NewNop()); err != nil {
			t.Fatalf("%s: %v", c.name, err)
		}
		if g := cfg.Grid; fmt.Sprintf("%dx%dx%d", g.X, g.Y, g.Z) != c.want || g.D != 1 {
			t.Errorf("%s: chose %+v, want %s", c.name, g, c.want)
		}
	}
	tiny := []memlimit.Limit{{Bytes: 8192, From: "cgroup memory.max", PerNode: true}}
	err := ResolveAutoGrid(job(""), 6, 2, tiny, zap.NewNop())
	if err == nil || !strings.Contains(err.Error(), "no grid fits in") || !strings.Contains(err.Error(), "(the limit: cgroup memory.max") {
		t.Errorf("a 4 KiB limit per rank: error %v, want no grid fits, naming the cgroup", err)
	}
}

// TestAgreeLimits: every rank gets the smallest per-rank limit of all
// ranks, also those that detected none.
func TestAgreeLimits(t *testing.T) {
	mine := [][]memlimit.Limit{
		{{Bytes: 8 << 30, From: "MemAvailable", PerNode: true}}, // 2 GiB per rank
		{{Bytes: 3 << 30, From: "ulimit -v"}},
		nil,
	}
	got := make([][]memlimit.Limit, 3)
	for r, err := range collectives.RunLocal(3, func(c collectives.Comm) error {
		l, err := AgreeLimits(c, 4, mine[c.Rank()])
		got[c.Rank()] = l
		return err
	}) {
		if err != nil {
			t.Fatalf("rank %d: %v", r, err)
		}
	}
	for r, l := range got {
		if len(l) != 1 || l[0].Bytes != 2<<30 || l[0].PerNode {
			t.Errorf("rank %d: agreed %+v, want one limit of 2 GiB per rank", r, l)
		}
	}
	for r, err := range collectives.RunLocal(2, func(c collectives.Comm) error {
		l, err := AgreeLimits(c, 1, nil)
		if err == nil && l != nil {
			t.Errorf("rank %d: no limits anywhere, agreed %+v", c.Rank(), l)
		}
		return err
	}) {
		if err != nil {
			t.Fatalf("rank %d: %v", r, err)
		}
	}
}

// TestAutoChoosesAlgorithm: on the development machine's profile with a
// network a thousand times faster (latency 0, 1 TB/s) and SpMM cache
// misses dear, the model predicts 1.5D on 8x1 faster than every 3D grid
// for a narrow model (its stages multiply blocks of H that stay in cache),
// and grid.auto then runs 1.5D (train.algorithm, grid.x = P,
// grid.replication = c; the job still validates, and the log says why);
// train.algorithm = "3d" keeps it to the 3D grids, and "1.5d" with auto
// chooses c only.
func TestAutoChoosesAlgorithm(t *testing.T) {
	m, err := perfmodel.LoadMachine("dev-2core-8ranks")
	if err != nil {
		t.Fatal(err)
	}
	m.Name = "fast-network"
	m.Comm.Intra.Latency, m.Comm.Intra.Bandwidth = 0, 1000
	m.Comm.Bcast = perfmodel.Link{Latency: 0, Bandwidth: 1000}
	m.SpMM.Miss, m.SpMM.Cache = 1e-7, 1<<20
	path := filepath.Join(t.TempDir(), "fast.toml")
	if err := m.WriteFile(path, "test profile: a fast network, dear cache misses"); err != nil {
		t.Fatal(err)
	}
	job := func(extra string) *jobfile.Config {
		t.Helper()
		cfg, err := jobfile.ParseConfig("auto.toml", []byte("[dataset]\nsource = \"sbm\"\n[dataset.sbm]\nnodes = 100000\n[model]\nhidden = 16\n"+extra+
			"[grid]\nauto = true\nmachine = \""+path+"\"\n"))
		if err != nil {
			t.Fatal(err)
		}
		return cfg
	}
	for _, tc := range []struct {
		name, extra string
		want        method.Algorithm // the chosen algorithm
		wantX, c    int
	}{
		{"both listed", "", method.CAGNET, 8, 1},
		{"3d fixed", "[train]\nalgorithm = \"3d\"\n", method.Plexus, 0, 0},
		{"1.5d fixed", "[train]\nalgorithm = \"1.5d\"\n", method.CAGNET, 8, 1},
	} {
		cfg := job(tc.extra)
		gs, err := EstimateGraphSize(cfg.Dataset)
		if err != nil {
			t.Fatal(err)
		}
		preds, _, err := ChooseGrid(cfg, gs, m, 8, 8, 0)
		if err != nil {
			t.Fatal(err)
		}
		if preds[0].Algorithm != tc.want {
			t.Fatalf("%s: the model ranks %s %s first, want %s", tc.name, preds[0].Algorithm, preds[0].Grid, tc.want)
		}
		var log strings.Builder
		if err := ResolveAutoGrid(cfg, 8, 8, nil, zap.New(zapcore.NewCore(zapcore.NewJSONEncoder(zap.NewProductionEncoderConfig()), zapcore.AddSync(&log), zap.InfoLevel))); err != nil {
			t.Fatalf("%s: %v", tc.name, err)
		}
		g := cfg.Grid
		if got := cfg.Method().Algorithm(); got != tc.want || g.Auto || g.X*g.Y*g.Z != 8 {
			t.Errorf("%s: chose %s %+v, want %s on 8 ranks with auto off", tc.name, got, g, tc.want)
		}
		if tc.c > 0 && (g.X != tc.wantX || g.Replication != tc.c) {
			t.Errorf("%s: chose grid.x = %d, replication %d; want %d and %d", tc.name, g.X, g.Replication, tc.wantX, tc.c)
		}
		if err := cfg.Validate(); err != nil {
			t.Errorf("%s: the resolved job no longer validates: %v", tc.name, err)
		}
		if !strings.Contains(log.String(), `"algorithm":"`+string(tc.want)+`"`) || !strings.Contains(log.String(), `"why":"fastest predicted `+string(tc.want)) {
			t.Errorf("%s: the start-up log does not say which algorithm and why: %s", tc.name, log.String())
		}
		if tc.name == "both listed" && !strings.Contains(log.String(), "3d's best") {
			t.Errorf("%s: the log does not compare with 3D's best: %s", tc.name, log.String())
		}
	}
}
