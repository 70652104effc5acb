package checkpoint

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"sort"
	"strings"

	"scalegnn/collectives"
	"scalegnn/gcn"
	"scalegnn/npy"
)

// prefix names complete checkpoints; tmpPrefix the directories being
// written, which Latest never takes.
const (
	prefix    = "ckpt-"
	tmpPrefix = ".tmp-ckpt-"
)

// Name returns the directory name of the checkpoint taken after step
// optimizer steps: sorting names sorts steps.
func Name(step int) string { return fmt.Sprintf("%s%08d", prefix, step) }

// Save writes the model's parameters and optimizer state into the
// checkpoint root/Name(man.Step), collectively over world (every rank of
// the model's grid calls it). man carries the counters, the fingerprint,
// the model shape and the caller's Run; Save fills the rest. config is the
// job file to store. It keeps the newest keep checkpoints in root (0: all)
// and returns the new checkpoint's directory.
func Save(world collectives.Comm, root string, keep int, m *gcn.Model, man Manifest, config []byte) (string, error) {
	final := filepath.Join(root, Name(man.Step))
	tmp := filepath.Join(root, tmpPrefix+Name(man.Step)[len(prefix):])
	man.Format = format
	man.Params = nil
	for _, p := range m.Params {
		man.Params = append(man.Params, Param{Name: p.Name, Rows: p.Rows, Cols: p.Cols})
	}
	// Rank 0 lays out every file at its full size, header first.
	var err error
	if world.Rank() == 0 {
		err = startFiles(tmp, man.Params)
	}
	if err := collectives.AgreeError(world, err); err != nil {
		return "", err
	}
	// Each block's writer fills its rows in place.
	for k, p := range m.Params {
		if !m.Owns(k) {
			continue
		}
		w := make([]float32, p.Len())
		mo, v := make([]float32, p.Len()), make([]float32, p.Len())
		p.Download(w)
		p.DownloadMoments(mo, v)
		for i, data := range [3][]float32{w, mo, v} {
			if err = writeBlock(filepath.Join(tmp, man.Params[k].files()[i]), p, data); err != nil {
				break
			}
		}
		if err != nil {
			break
		}
	}
	if err := collectives.AgreeError(world, err); err != nil {
		return "", err
	}
	// Rank 0 checksums, writes the manifest last and renames.
	if world.Rank() == 0 {
		err = finish(tmp, final, &man, config)
		if err == nil {
			err = prune(root, keep)
		}
	}
	return final, collectives.AgreeError(world, err)
}

// startFiles creates tmp afresh and every parameter file in it: the npy
// header and the data's full length, for the writers to fill.
func startFiles(tmp string, params []Param) error {
	if err := os.RemoveAll(tmp); err != nil {
		return fmt.Errorf("checkpoint: %w", err)
	}
	if err := os.MkdirAll(tmp, 0o755); err != nil {
		return fmt.Errorf("checkpoint: %w", err)
	}
	for _, p := range params {
		h := npy.HeaderBytes(npy.Float32, p.Rows, p.Cols)
		for _, name := range p.files() {
			f, err := os.Create(filepath.Join(tmp, name))
			if err != nil {
				return fmt.Errorf("checkpoint: %w", err)
			}
			_, err = f.Write(h)
			if err == nil {
				err = f.Truncate(int64(len(h)) + 4*int64(p.Rows)*int64(p.Cols))
			}
			if cerr := f.Close(); err == nil {
				err = cerr
			}
			if err != nil {
				return fmt.Errorf("checkpoint: %s: %w", f.Name(), err)
			}
		}
	}
	return nil
}

// writeBlock writes a block's rows into the Rows×Cols array in path at
// their offsets and syncs the file.
func writeBlock(path string, p *gcn.Param, data []float32) error {
	f, err := os.OpenFile(path, os.O_WRONLY, 0)
	if err != nil {
		return fmt.Errorf("checkpoint: %w", err)
	}
	off := int64(len(npy.HeaderBytes(npy.Float32, p.Rows, p.Cols)))
	w := p.C1 - p.C0
	for i := p.R0; i < p.R1 && err == nil; i++ {
		row := data[(i-p.R0)*w : (i-p.R0+1)*w]
		_, err = f.WriteAt(f32Bytes(row), off+4*(int64(i)*int64(p.Cols)+int64(p.C0)))
	}
	if err == nil {
		err = f.Sync()
	}
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		return fmt.Errorf("checkpoint: %s: %w", path, err)
	}
	return nil
}

// finish checksums tmp's files, writes config.toml and the manifest,
// syncs, and renames tmp to final.
func finish(tmp, final string, man *Manifest, config []byte) error {
	if err := writeSynced(filepath.Join(tmp, ConfigFile), config); err != nil {
		return err
	}
	man.SHA256 = map[string]string{}
	names := []string{ConfigFile}
	for _, p := range man.Params {
		f := p.files()
		names = append(names, f[:]...)
	}
	for _, name := range names {
		sum, err := fileSHA256(filepath.Join(tmp, name))
		if err != nil {
			return err
		}
		man.SHA256[name] = sum
	}
	data, err := json.MarshalIndent(man, "", "  ")
	if err != nil {
		return fmt.Errorf("checkpoint: manifest: %w", err)
	}
	if err := writeSynced(filepath.Join(tmp, ManifestFile), append(data, '\n')); err != nil {
		return err
	}
	if err := syncDir(tmp); err != nil {
		return err
	}
	if err := os.RemoveAll(final); err != nil { // a checkpoint of the same step, from a run that resumed before it
		return fmt.Errorf("checkpoint: %w", err)
	}
	if err := os.Rename(tmp, final); err != nil {
		return fmt.Errorf("checkpoint: %w", err)
	}
	return syncDir(filepath.Dir(final))
}

func writeSynced(path string, data []byte) error {
	f, err := os.Create(path)
	if err != nil {
		return fmt.Errorf("checkpoint: %w", err)
	}
	_, err = f.Write(data)
	if err == nil {
		err = f.Sync()
	}
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		return fmt.Errorf("checkpoint: %s: %w", path, err)
	}
	return nil
}

func syncDir(dir string) error {
	d, err := os.Open(dir)
	if err != nil {
		return fmt.Errorf("checkpoint: %w", err)
	}
	defer d.Close()
	if err := d.Sync(); err != nil {
		return fmt.Errorf("checkpoint: sync %s: %w", dir, err)
	}
	return nil
}

func fileSHA256(path string) (string, error) {
	f, err := os.Open(path)
	if err != nil {
		return "", fmt.Errorf("checkpoint: %w", err)
	}
	defer f.Close()
	h := sha256.New()
	if _, err := io.Copy(h, f); err != nil {
		return "", fmt.Errorf("checkpoint: %s: %w", path, err)
	}
	return hex.EncodeToString(h.Sum(nil)), nil
}

// prune removes all but the newest keep complete checkpoints in root, and
// temporary directories left by writes that were killed.
func prune(root string, keep int) error {
	entries, err := os.ReadDir(root)
	if err != nil {
		return fmt.Errorf("checkpoint: %w", err)
	}
	var done []string
	for _, e := range entries {
		switch {
		case strings.HasPrefix(e.Name(), tmpPrefix):
			os.RemoveAll(filepath.Join(root, e.Name()))
		case e.IsDir() && strings.HasPrefix(e.Name(), prefix):
			done = append(done, e.Name())
		}
	}
	sort.Strings(done)
	if keep <= 0 || len(done) <= keep {
		return nil
	}
	for _, name := range done[:len(done)-keep] {
		if err := os.RemoveAll(filepath.Join(root, name)); err != nil {
			return fmt.Errorf("checkpoint: %w", err)
		}
	}
	return nil
}
