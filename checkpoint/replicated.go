package checkpoint

import (
	"fmt"
	"os"
	"path/filepath"

	"scalegnn/collectives"
	"scalegnn/gcn"
)

// Replicated is one parameter matrix of a model that every rank holds
// whole (pure data parallelism: package neighbor's model): its weights
// and optimizer moments, Rows×Cols row-major in host memory.
type Replicated struct {
	Name       string
	Rows, Cols int
	W, M, V    []float32
}

// SaveReplicated writes params as the checkpoint root/Name(man.Step) in
// Save's layout (so Verify, Latest and a sharded model's Load read it
// too), collectively over world: the ranks hold the same values, so rank
// 0 alone writes, and every rank returns its outcome. It keeps the newest
// keep checkpoints in root (0: all).
func SaveReplicated(world collectives.Comm, root string, keep int, params []Replicated, man Manifest, config []byte) (string, error) {
	final := filepath.Join(root, Name(man.Step))
	var err error
	if world.Rank() == 0 {
		err = saveReplicated(root, final, keep, params, man, config)
	}
	return final, collectives.AgreeError(world, err)
}

func saveReplicated(root, final string, keep int, params []Replicated, man Manifest, config []byte) error {
	tmp := filepath.Join(root, tmpPrefix+Name(man.Step)[len(prefix):])
	man.Format = format
	man.Params = nil
	for _, p := range params {
		if len(p.W) != p.Rows*p.Cols || len(p.M) != len(p.W) || len(p.V) != len(p.W) {
			panic(fmt.Sprintf("checkpoint: %s is %dx%d with %d weights and %d, %d moments", p.Name, p.Rows, p.Cols, len(p.W), len(p.M), len(p.V)))
		}
		man.Params = append(man.Params, Param{Name: p.Name, Rows: p.Rows, Cols: p.Cols})
	}
	if err := startFiles(tmp, man.Params); err != nil {
		return err
	}
	for k, p := range params {
		for i, data := range [3][]float32{p.W, p.M, p.V} {
			// The whole parameter is the block of all its rows and columns.
			pk := man.Params[k]
			whole := &gcn.Param{Rows: pk.Rows, Cols: pk.Cols, R1: pk.Rows, C1: pk.Cols}
			if err := writeBlock(filepath.Join(tmp, pk.files()[i]), whole, data); err != nil {
				return err
			}
		}
	}
	if err := finish(tmp, final, &man, config); err != nil {
		return err
	}
	return prune(root, keep)
}

// LoadReplicated reads the checkpoint in dir into params, whose names and
// shapes must be the manifest's, collectively: rank 0 verifies the
// checksums, then every rank reads the whole arrays. The caller has
// checked man (from Verify or ReadManifest) against its job and restores
// the optimizer's step count, man.OptimizerStep.
func LoadReplicated(world collectives.Comm, dir string, man *Manifest, params []Replicated) error {
	var err error
	if world.Rank() == 0 {
		_, err = Verify(dir)
	}
	if err := collectives.AgreeError(world, err); err != nil {
		return err
	}
	want := make([]Param, len(params))
	for k, p := range params {
		want[k] = Param{Name: p.Name, Rows: p.Rows, Cols: p.Cols}
	}
	if err := matchParams(dir, man, want); err != nil {
		return err
	}
	for k, p := range params {
		mp := man.Params[k]
		for i, dst := range [3][]float32{p.W, p.M, p.V} {
			path := filepath.Join(dir, mp.files()[i])
			off, err := dataOffset(path, mp)
			if err != nil {
				return err
			}
			f, err := os.Open(path)
			if err != nil {
				return fmt.Errorf("checkpoint %s: %w", path, err)
			}
			_, err = f.ReadAt(f32Bytes(dst), off)
			f.Close()
			if err != nil {
				return fmt.Errorf("checkpoint %s: %w", path, err)
			}
		}
	}
	return nil
}
