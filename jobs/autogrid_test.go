package jobs

import (
	"strings"
	"testing"

	"go.uber.org/zap"
)

// TestResolveAutoGrid: grid.auto picks a grid of the launch's ranks, turns
// auto off so that config.toml records the grid, and reports a bad profile
// or an impossible memory limit by the key.
func TestResolveAutoGrid(t *testing.T) {
	job := func(extra string) *Config {
		t.Helper()
		cfg, err := ParseConfig("auto.toml", []byte("[dataset]\nsource = \"sbm\"\n[dataset.sbm]\nnodes = 4000\n[grid]\nauto = true\n"+extra))
		if err != nil {
			t.Fatal(err)
		}
		return cfg
	}
	cfg := job(`machine = "perlmutter-plexus"` + "\n")
	if err := cfg.CheckWorld(6); err != nil {
		t.Fatalf("CheckWorld with auto: %v", err)
	}
	if err := ResolveAutoGrid(cfg, 6, 2, zap.NewNop()); err != nil {
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
		err := ResolveAutoGrid(job(c.extra), 6, 0, zap.NewNop())
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%q: error %v, want %q", c.extra, err, c.want)
		}
	}
	for _, c := range []struct{ body, want string }{
		{"[grid]\nauto = true\nx = 2\n", "grid.auto = true chooses grid.x, y, z and d"},
		{"[grid]\nauto = true\nmem_per_rank = \"lots\"\n", `grid.mem_per_rank = "lots": expected a size`},
	} {
		_, err := ParseConfig("auto.toml", []byte(c.body))
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%q: error %v, want %q", c.body, err, c.want)
		}
	}
}
