package checkpoint

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strings"

	"scalegnn/collectives"
	"scalegnn/gcn"
	"scalegnn/npy"
)

// Verify reads dir's manifest and checks every file it lists against its
// SHA-256 and every parameter file's header against its shape. The error
// is one line naming the file and what is wrong.
func Verify(dir string) (*Manifest, error) {
	man, err := ReadManifest(dir)
	if err != nil {
		return nil, err
	}
	names := make([]string, 0, len(man.SHA256))
	for name := range man.SHA256 {
		names = append(names, name)
	}
	sort.Strings(names)
	for _, p := range man.Params {
		for _, name := range p.files() {
			if _, ok := man.SHA256[name]; !ok {
				return nil, fmt.Errorf("checkpoint %s: lists no checksum for %s", filepath.Join(dir, ManifestFile), name)
			}
		}
	}
	for _, name := range names {
		path := filepath.Join(dir, name)
		sum, err := fileSHA256(path)
		if err != nil {
			if errors.Is(err, fs.ErrNotExist) {
				return nil, fmt.Errorf("checkpoint %s: missing (listed in its manifest)", path)
			}
			return nil, err
		}
		if sum != man.SHA256[name] {
			return nil, fmt.Errorf("checkpoint %s: SHA-256 %s, manifest says %s: corrupt file", path, sum, man.SHA256[name])
		}
	}
	for _, p := range man.Params {
		for _, name := range p.files() {
			if _, err := dataOffset(filepath.Join(dir, name), p); err != nil {
				return nil, err
			}
		}
	}
	return man, nil
}

// dataOffset opens a parameter file's header and checks it is a float32
// Rows × Cols array of the right size, returning the data's offset.
func dataOffset(path string, p Param) (int64, error) {
	f, err := npy.Open(path)
	if err != nil {
		return 0, fmt.Errorf("checkpoint %s: %v", path, err)
	}
	defer f.Close()
	if f.Descr != npy.Float32 || !slices.Equal(f.Shape, []int{p.Rows, p.Cols}) {
		return 0, fmt.Errorf("checkpoint %s: dtype %s shape %v, expected %s [%d %d]", path, f.Descr, f.Shape, npy.Float32, p.Rows, p.Cols)
	}
	return f.DataOffset, nil
}

// Latest returns the newest checkpoint in root that verifies; skipped
// reports each newer one it passed over and why (incomplete or corrupt).
func Latest(root string) (dir string, skipped []error, err error) {
	entries, err := os.ReadDir(root)
	if err != nil {
		return "", nil, fmt.Errorf("checkpoint: -resume latest: %w", err)
	}
	var names []string
	for _, e := range entries {
		if e.IsDir() && strings.HasPrefix(e.Name(), prefix) {
			names = append(names, e.Name())
		}
	}
	sort.Sort(sort.Reverse(sort.StringSlice(names)))
	for _, name := range names {
		d := filepath.Join(root, name)
		if _, err := Verify(d); err != nil {
			skipped = append(skipped, err)
			continue
		}
		return d, skipped, nil
	}
	return "", skipped, fmt.Errorf("checkpoint: -resume latest: no complete checkpoint in %s", root)
}

// Load sets the model's parameters, optimizer moments and step count from
// the checkpoint in dir, collectively: rank 0 verifies the checksums, then
// every rank reads its own blocks (on any grid) straight from the files.
// The caller has checked man (from Verify or ReadManifest) against its job.
func Load(world collectives.Comm, dir string, m *gcn.Model, man *Manifest) error {
	var err error
	if world.Rank() == 0 {
		_, err = Verify(dir)
	}
	if err := collectives.AgreeError(world, err); err != nil {
		return err
	}
	want := make([]Param, len(m.Params))
	for k, p := range m.Params {
		want[k] = Param{Name: p.Name, Rows: p.Rows, Cols: p.Cols}
	}
	if err := matchParams(dir, man, want); err != nil {
		return err
	}
	for k, p := range m.Params {
		mp := man.Params[k]
		var bufs [3][]float32
		for i, name := range mp.files() {
			bufs[i] = make([]float32, p.Len())
			if err := readBlock(filepath.Join(dir, name), mp, p, bufs[i]); err != nil {
				return err
			}
		}
		p.Upload(bufs[0])
		p.UploadMoments(bufs[1], bufs[2])
	}
	m.SetOptimizerSteps(man.OptimizerStep)
	return nil
}

// readBlock reads a block's rows of the Rows×Cols array in path.
func readBlock(path string, mp Param, p *gcn.Param, dst []float32) error {
	off, err := dataOffset(path, mp)
	if err != nil {
		return err
	}
	f, err := os.Open(path)
	if err != nil {
		return fmt.Errorf("checkpoint %s: %w", path, err)
	}
	defer f.Close()
	w := p.C1 - p.C0
	for i := p.R0; i < p.R1; i++ {
		row := dst[(i-p.R0)*w : (i-p.R0+1)*w]
		if _, err := f.ReadAt(f32Bytes(row), off+4*(int64(i)*int64(p.Cols)+int64(p.C0))); err != nil {
			return fmt.Errorf("checkpoint %s: %w", path, err)
		}
	}
	return nil
}
