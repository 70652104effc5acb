package prepared

import (
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"hash"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"slices"

	"scalegnn/npy"
)

// verified is a dataset file read once, front to back: its size was
// checked against meta.toml when it was opened, every byte read passes
// through SHA-256 on its way into the caller's memory, and close compares
// the digest with meta.toml. Nothing read from it may be used before close
// returns nil. A file this Dataset has verified before, unchanged since
// (the same file, size and modification time), is not hashed again (h is
// nil): out-of-core training and layer-wise evaluation read the same
// blocks every epoch.
type verified struct {
	*npy.Reader
	f        *os.File
	h        hash.Hash
	st       os.FileInfo
	d        *Dataset
	want     string
	rel      string
	progress func(what string) // LoadOptions.Progress, or nil
}

// checked reports whether rel was verified before as the file st is.
func (d *Dataset) checked(rel string, st os.FileInfo) bool {
	d.seenMu.Lock()
	defer d.seenMu.Unlock()
	prev, ok := d.seen[rel]
	return ok && os.SameFile(prev, st) && prev.Size() == st.Size() && prev.ModTime().Equal(st.ModTime())
}

// markChecked records that rel, as st, matched its digest.
func (d *Dataset) markChecked(rel string, st os.FileInfo) {
	d.seenMu.Lock()
	defer d.seenMu.Unlock()
	if d.seen == nil {
		d.seen = map[string]os.FileInfo{}
	}
	d.seen[rel] = st
}

// open opens the dataset file rel for a verified read: it must be listed in
// meta.toml with its size, and its .npy header must have dtype descr and
// the given shape.
func (d *Dataset) open(rel, descr string, shape ...int) (*verified, error) {
	path := filepath.Join(d.dir, rel)
	fm, ok := d.files[rel]
	if !ok {
		return nil, fmt.Errorf("%s: not listed in %s", path, filepath.Join(d.dir, MetaFile))
	}
	f, err := os.Open(path)
	if err != nil {
		if errors.Is(err, fs.ErrNotExist) {
			return nil, fmt.Errorf("%s: missing: the file is listed in %s but does not exist (incomplete copy of the dataset?)", path, MetaFile)
		}
		return nil, err
	}
	st, err := f.Stat()
	if err == nil && st.Size() != fm.Bytes {
		err = fmt.Errorf("%s: %d bytes, but %s says %d: the file is truncated or was modified", path, st.Size(), MetaFile, fm.Bytes)
	}
	if err != nil {
		f.Close()
		return nil, err
	}
	var h hash.Hash
	var src io.Reader = f
	if !d.checked(rel, st) {
		h = sha256.New()
		src = io.TeeReader(f, h)
	}
	r, err := npy.NewReader(src, path)
	if err == nil && (r.Descr != descr || !slices.Equal(r.Shape, shape)) {
		err = fmt.Errorf("%s: dtype %s, shape %v: expected dtype %s, shape %v from %s", path, r.Descr, r.Shape, descr, shape, MetaFile)
	}
	if err == nil && r.DataOffset+int64(r.Len())*elemSize(descr) != fm.Bytes {
		err = fmt.Errorf("%s: %d bytes, but its header (dtype %s, shape %v) needs %d: truncated or corrupt file",
			path, fm.Bytes, r.Descr, r.Shape, r.DataOffset+int64(r.Len())*elemSize(descr))
	}
	if err != nil {
		// A damaged file is reported as such, not as the header it now
		// has: hash the rest and prefer the digest's verdict.
		defer f.Close()
		if h == nil {
			h = sha256.New()
			f.Seek(0, io.SeekStart)
		}
		if _, cerr := io.Copy(h, f); cerr == nil && hex.EncodeToString(h.Sum(nil)) != fm.SHA256 {
			return nil, shaMismatch(path)
		}
		return nil, err
	}
	v := &verified{Reader: r, f: f, h: h, st: st, d: d, want: fm.SHA256, rel: rel}
	if !d.loaded.Load() {
		v.progress = d.opt.Progress
	}
	return v, nil
}

// elemSize is the size of an element of the dtypes a dataset stores.
func elemSize(descr string) int64 {
	switch descr {
	case npy.Int64:
		return 8
	case npy.Bool:
		return 1
	case npy.Uint16:
		return 2
	}
	return 4
}

// close checks that every element was read and that the SHA-256 of the
// whole file matches meta.toml, and closes the file; a file read whole is
// a piece of loading done (LoadOptions.Progress).
func (v *verified) close() error {
	defer v.f.Close()
	if v.Remaining() != 0 {
		return fmt.Errorf("%s: %d elements left unread", v.Name(), v.Remaining())
	}
	if v.h != nil {
		if hex.EncodeToString(v.h.Sum(nil)) != v.want {
			return shaMismatch(v.Name())
		}
		v.d.markChecked(v.rel, v.st)
	}
	if v.progress != nil {
		v.progress(v.rel)
	}
	return nil
}

func shaMismatch(path string) error {
	return fmt.Errorf("%s: SHA-256 mismatch with %s: the file is corrupt or was modified after prepare", path, MetaFile)
}

// damaged returns err, an error about the values read from v, unless the
// file does not match its digest: a corrupt file is reported as such, not
// for the values the damage made. It hashes the rest of the file.
func (v *verified) damaged(err error) error {
	if v.h == nil {
		// Verified whole before: rehash it from the start.
		v.h = sha256.New()
		if _, serr := v.f.Seek(0, io.SeekStart); serr != nil {
			return err
		}
	}
	if _, cerr := io.Copy(v.h, v.f); cerr == nil && hex.EncodeToString(v.h.Sum(nil)) != v.want {
		return shaMismatch(v.Name())
	}
	return err
}
