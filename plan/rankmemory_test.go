package plan

import (
	"strings"
	"testing"

	"scalegnn/grid"
	"scalegnn/internal/memlimit"
	"scalegnn/jobfile"
	"scalegnn/perfmodel"
)

// TestRankMemoryFollowsAlgorithm: the memory checks judge each job by its
// own algorithm's model: a 1.5D job by CAGNETMemory (before, by the 3D
// grid's EstimateMemory, which for the same ranks differs), a 3D job by
// EstimateMemory at the rank's coordinates; and CheckMemory refuses a 1.5D
// job exactly when CAGNETMemory exceeds the limit.
func TestRankMemoryFollowsAlgorithm(t *testing.T) {
	const rmat = "[dataset]\nsource = \"rmat\"\n[dataset.rmat]\nscale = 18\n[model]\nhidden = 128\nlayers = 3\n"
	cagnet, err := jobfile.ParseConfig("job.toml", []byte(rmat+"[train]\nalgorithm = \"1.5d\"\n[grid]\nx = 8\nreplication = 2\n"))
	if err != nil {
		t.Fatal(err)
	}
	plexus, err := jobfile.ParseConfig("job.toml", []byte(rmat+"[grid]\nx = 2\ny = 2\nz = 2\n"))
	if err != nil {
		t.Fatal(err)
	}
	gs, err := EstimateGraphSize(cagnet.Dataset)
	if err != nil {
		t.Fatal(err)
	}
	line := grid.Shape{D: 1, X: 8, Y: 1, Z: 1}
	got := rankMemory(cagnet, gs, line, 0).Total()
	want := perfmodel.CAGNETMemory(PerfJob(cagnet, gs), 8, 2).Total()
	as3D := perfmodel.EstimateMemory(PerfJob(cagnet, gs), line, perfmodel.CoordsOf(line, 0)).Total()
	if got != want || got == as3D {
		t.Errorf("1.5D 4x2: rankMemory %d, want CAGNETMemory %d (the 3D model says %d)", got, want, as3D)
	}
	cube := grid.Shape{D: 1, X: 2, Y: 2, Z: 2}
	for r := range 8 {
		got := rankMemory(plexus, gs, cube, r).Total()
		want := perfmodel.EstimateMemory(PerfJob(plexus, gs), cube, perfmodel.CoordsOf(cube, r)).Total()
		if got != want {
			t.Errorf("3D 2x2x2 rank %d: rankMemory %d, want EstimateMemory %d", r, got, want)
		}
	}
	limit := func(b int64) []memlimit.Limit { return []memlimit.Limit{{Bytes: b, From: "test limit"}} }
	if err := CheckMemory(cagnet, 0, 1, limit(want)); err != nil {
		t.Errorf("1.5D job refused at exactly its prediction %d: %v", want, err)
	}
	err = CheckMemory(cagnet, 0, 1, limit(want-1))
	if err == nil || !strings.Contains(err.Error(), perfmodel.FormatBytes(want)) {
		t.Errorf("1.5D job one byte over its prediction %s: %v", perfmodel.FormatBytes(want), err)
	}
}
