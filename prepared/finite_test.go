package prepared

import (
	"crypto/sha256"
	"encoding/binary"
	"encoding/hex"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"

	"scalegnn/npy"
)

// pokeFloat32 writes v over element k of the float32 array in dataset
// file rel and rewrites the file's SHA-256 in meta.toml to match, as a
// dataset prepared from bad values would be: only the finiteness check
// can refuse it.
func pokeFloat32(t *testing.T, dir, rel string, k int, v float32) {
	t.Helper()
	pokeElem(t, dir, rel, 4*int64(k), func(b []byte) { binary.LittleEndian.PutUint32(b, math.Float32bits(v)) })
}

// pokeElem lets put overwrite the bytes at offset off of the data of the
// .npy dataset file rel, and rewrites its digest in meta.toml.
func pokeElem(t *testing.T, dir, rel string, off int64, put func([]byte)) {
	t.Helper()
	p := filepath.Join(dir, rel)
	b, err := os.ReadFile(p)
	if err != nil {
		t.Fatal(err)
	}
	old := sha256.Sum256(b)
	f, err := npy.Open(p)
	if err != nil {
		t.Fatal(err)
	}
	off += f.DataOffset
	f.Close()
	put(b[off:])
	if err := os.WriteFile(p, b, 0o644); err != nil {
		t.Fatal(err)
	}
	now := sha256.Sum256(b)
	editMeta(t, dir, hex.EncodeToString(old[:]), hex.EncodeToString(now[:]))
}

func readInts(t *testing.T, p string) []int64 {
	t.Helper()
	f, err := npy.Open(p)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	x, err := f.ReadAllInt64()
	if err != nil {
		t.Fatal(err)
	}
	return x
}

// TestNonFinite: a prepared dataset whose digests match but which holds a
// NaN feature or an infinite adjacency value is refused at load, in one
// line naming the file, the row and the column, rather than loading and
// diverging in training.
func TestNonFinite(t *testing.T) {
	t.Run("NaN feature", func(t *testing.T) {
		dir := prepareFixture(t)
		// features/r1.npy holds positions [6, 12) of order 1, 3 features.
		pokeFloat32(t, dir, "features/r1.npy", 2*3+1, float32(math.NaN()))
		err := loadAll(dir)
		want := filepath.Join(dir, "features/r1.npy") + ": row 2, column 1 (vertex position 8 of order 1, feature 1) is NaN: the features must be finite"
		if err == nil || !strings.HasPrefix(err.Error(), want) || strings.Contains(err.Error(), "\n") {
			t.Fatalf("got %v, want one line starting %q", err, want)
		}
		// Through the normalising path (rows read in chunks) too.
		d, err := Open(dir, LoadOptions{NormalizeFeatures: true})
		if err != nil {
			t.Fatal(err)
		}
		if _, err := d.FeatureBlock(1, 0, 12, 1, 3); err == nil || !strings.HasPrefix(err.Error(), want) {
			t.Fatalf("normalised: got %v, want %q", err, want)
		}
	})
	t.Run("Inf adjacency", func(t *testing.T) {
		dir := prepareFixture(t)
		rel := "adj0/r1c0.data.npy"
		ptr := readInts(t, filepath.Join(dir, "adj0/r1c0.indptr.npy"))
		idx := readInts(t, filepath.Join(dir, "adj0/r1c0.indices.npy"))
		e := len(idx) - 1
		r := sort.Search(len(ptr)-1, func(r int) bool { return ptr[r+1] > int64(e) })
		pokeFloat32(t, dir, rel, e, float32(math.Inf(1)))
		err := loadAll(dir)
		// Block (1, 0) starts at row 6 and column 0.
		want := fmt.Sprintf("%s: row %d, column %d of orientation 0 (entry %d: row %d, column %d of block (1, 0)) is +Inf: the adjacency values must be finite",
			filepath.Join(dir, rel), 6+r, idx[e], e, r, idx[e])
		if err == nil || !strings.HasPrefix(err.Error(), want) || strings.Contains(err.Error(), "\n") {
			t.Fatalf("got %v, want one line starting %q", err, want)
		}
	})
	t.Run("damage is damage", func(t *testing.T) {
		// A NaN made by damage, with the digest left alone, is reported
		// as a corrupt file.
		dir := prepareFixture(t)
		p := filepath.Join(dir, "features/r0.npy")
		b, err := os.ReadFile(p)
		if err != nil {
			t.Fatal(err)
		}
		binary.LittleEndian.PutUint32(b[len(b)-4:], math.Float32bits(float32(math.NaN())))
		if err := os.WriteFile(p, b, 0o644); err != nil {
			t.Fatal(err)
		}
		if err := loadAll(dir); err == nil || !strings.Contains(err.Error(), p+": SHA-256 mismatch") {
			t.Fatalf("got %v, want a SHA-256 mismatch", err)
		}
	})
}
