package checkpoint

import (
	"fmt"
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"scalegnn/collectives"
	"scalegnn/gcn"
	"scalegnn/grid"
)

// sageConfig is testConfig with SAGE layers: every W_self block is
// written and read beside the layer weights.
var sageConfig = func() gcn.Config { c := testConfig; c.Layer = gcn.SAGELayer; return c }()

// sageLosses builds the SAGE model on shape, loads dir into it when dir
// is set, and returns the losses of steps [from, to); with saveRoot set it
// saves the checkpoint of step from there first (before training on).
func sageLosses(shape grid.Shape, dir, saveRoot string, from, to int) ([]float64, error) {
	losses := make([]float64, to-from)
	err := runOn(shape, func(world collectives.Comm) error {
		m, err := build(world, shape, sageConfig, testGraph, gcn.Options{})
		if err != nil {
			return err
		}
		if dir != "" {
			man, err := ReadManifest(dir)
			if err != nil {
				return err
			}
			fp, err := m.Fingerprint()
			if err != nil {
				return err
			}
			if err := man.CheckCompatible(dir, DatasetOf(fp, "double", permSeed), ModelOf(sageConfig)); err != nil {
				return err
			}
			if err := Load(world, dir, m, man); err != nil {
				return err
			}
		} else {
			for s := range from {
				if _, err := m.TrainStep(s); err != nil {
					return err
				}
			}
		}
		if saveRoot != "" {
			fp, err := m.Fingerprint()
			if err != nil {
				return err
			}
			man := Manifest{Step: from, Epoch: from, OptimizerStep: m.OptimizerSteps(), Grid: shape.String(),
				Dataset: DatasetOf(fp, "double", permSeed), Model: ModelOf(sageConfig)}
			if _, err := Save(world, saveRoot, 0, m, man, testJob); err != nil {
				return err
			}
		}
		for s := from; s < to; s++ {
			loss, err := m.TrainStep(s)
			if err != nil {
				return err
			}
			if world.Rank() == 0 {
				losses[s-from] = loss
			}
		}
		return nil
	})
	return losses, err
}

// TestSAGEResumeAcrossGrids: a SAGE model checkpointed after 2 full-graph
// steps on 1×2×3 holds its W_self tensors (gcn<l>.self) and says "sage";
// resumed on 1×2×3, 2×2×2 and 1×1×1 it takes the uninterrupted run's next
// steps (losses within 1e-5 relative; bit for bit on the same grid), and a
// GCN job refuses the checkpoint as another model.
func TestSAGEResumeAcrossGrids(t *testing.T) {
	root := t.TempDir()
	const at, to = 2, 5
	want, err := sageLosses(odd, "", root, at, to)
	if err != nil {
		t.Fatal(err)
	}
	dir := filepath.Join(root, Name(at))
	man, err := ReadManifest(dir)
	if err != nil {
		t.Fatal(err)
	}
	if man.Model.Layer != gcn.SAGELayer {
		t.Errorf("manifest's model %+v, want layer sage", man.Model)
	}
	for l := range sageConfig.Layers {
		name := fmt.Sprintf("gcn%d.self", l)
		found := false
		for _, p := range man.Params {
			found = found || p.Name == name
		}
		if !found {
			t.Errorf("checkpoint lists no %s", name)
		}
	}
	raw, err := os.ReadFile(filepath.Join(dir, ManifestFile))
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(raw), `"layer": "sage"`) && !strings.Contains(string(raw), `"layer":"sage"`) {
		t.Errorf("manifest does not say \"layer\": \"sage\":\n%s", raw)
	}
	for _, shape := range []grid.Shape{odd, cube, one} {
		got, err := sageLosses(shape, dir, "", at, to)
		if err != nil {
			t.Fatalf("resumed on %v: %v", shape, err)
		}
		for s := range got {
			d := math.Abs(got[s]-want[s]) / math.Abs(want[s])
			if d > 1e-5 || (shape == odd && d != 0) {
				t.Errorf("resumed on %v: step %d loss %.9g, uninterrupted %.9g", shape, at+s, got[s], want[s])
			}
		}
	}
	gcnModel := ModelOf(testConfig)
	if err := man.CheckCompatible(dir, man.Dataset, gcnModel); err == nil || !strings.Contains(err.Error(), "another model") {
		t.Errorf("a GCN job's check of a SAGE checkpoint: %v", err)
	}
}
