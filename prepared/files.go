package prepared

import (
	"bufio"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"hash"
	"os"
	"path/filepath"

	"scalegnn/npy"
)

// outFile is a file of the dataset being written: its SHA-256 and size are
// recorded in the metadata when it is closed.
type outFile struct {
	f   *os.File
	bw  *bufio.Writer
	h   hash.Hash
	n   int64
	rel string
}

func (o *outFile) Write(p []byte) (int, error) {
	o.h.Write(p)
	o.n += int64(len(p))
	return o.bw.Write(p)
}

// create opens dir/rel for writing, creating its directory.
func create(dir, rel string) (*outFile, error) {
	path := filepath.Join(dir, rel)
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		return nil, err
	}
	f, err := os.Create(path)
	if err != nil {
		return nil, err
	}
	return &outFile{f: f, bw: bufio.NewWriterSize(f, 1<<20), h: sha256.New(), rel: rel}, nil
}

// close flushes and closes the file and returns its metadata.
func (o *outFile) close() (FileMeta, error) {
	err := o.bw.Flush()
	if cerr := o.f.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		return FileMeta{}, fmt.Errorf("writing %s: %w", o.f.Name(), err)
	}
	return FileMeta{Path: o.rel, Bytes: o.n, SHA256: hex.EncodeToString(o.h.Sum(nil))}, nil
}

// writeNPY writes one array file: fill writes the elements.
func (w *writer) writeNPY(rel, descr string, shape []int, fill func(*npy.Writer) error) error {
	o, err := create(w.tmp, rel)
	if err != nil {
		return err
	}
	nw, err := npy.NewWriter(o, descr, shape...)
	if err == nil {
		err = fill(nw)
	}
	if err == nil {
		err = nw.Close()
	}
	if err != nil {
		o.f.Close()
		return fmt.Errorf("writing %s: %w", o.f.Name(), err)
	}
	fm, err := o.close()
	if err != nil {
		return err
	}
	w.meta.Files = append(w.meta.Files, fm)
	return nil
}
