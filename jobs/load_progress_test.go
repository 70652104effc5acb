package jobs

import (
	"path/filepath"
	"testing"

	"go.uber.org/zap"

	"scalegnn/collectives"
	"scalegnn/dataset"
	"scalegnn/device"
	"scalegnn/internal/watchdog"
	"scalegnn/jobfile"
	"scalegnn/permute"
	"scalegnn/prepared"
)

// TestLoadProgress: loading reports its pieces to the world's watchdog,
// so the stage names the last one: the orders a prepared dataset's Open
// reads, and the shards at the end of Setup for both kinds of source. A
// world without a watchdog loads as before.
func TestLoadProgress(t *testing.T) {
	g, err := dataset.Builtin("cora")
	if err != nil {
		t.Fatal(err)
	}
	dir := filepath.Join(t.TempDir(), "cora-prepared")
	if _, err := prepared.Prepare(&prepared.GraphInput{G: g}, dir, prepared.Options{Blocks: 2, Scheme: permute.Double, Seed: 5}); err != nil {
		t.Fatal(err)
	}
	mem := jobfile.DefaultConfig()
	mem.Permute = jobfile.PermuteConfig{Scheme: permute.Double, Seed: 5}
	prep := mem
	prep.Dataset = jobfile.DatasetConfig{Source: jobfile.SourcePrepared, Path: dir}

	watched := func() (*watchdog.Watchdog, collectives.Comm) {
		w := watchdog.New(0, watchdog.DefaultPolicy(), func(msg string) { t.Errorf("watchdog fired: %s", msg) })
		return w, w.Wrap(collectives.NewLocalWorld(1)[0], "world")
	}
	w, world := watched()
	if _, err := preparedSource(&prep, world, zap.NewNop()); err != nil {
		t.Fatal(err)
	}
	if got, want := w.Stage(), "loading (after order1.npy)"; got != want {
		t.Errorf("after opening the prepared dataset: stage %q, want %q", got, want)
	}
	for name, cfg := range map[string]jobfile.Config{"in memory": mem, "prepared": prep} {
		w, world := watched()
		if _, err := Setup(&cfg, world, device.NewNative(1), zap.NewNop()); err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		if got, want := w.Stage(), "loading (after the shards)"; got != want {
			t.Errorf("%s: after Setup: stage %q, want %q", name, got, want)
		}
		if _, err := Setup(&cfg, collectives.NewLocalWorld(1)[0], device.NewNative(1), zap.NewNop()); err != nil {
			t.Errorf("%s, no watchdog: %v", name, err)
		}
	}
}
