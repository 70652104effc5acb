package prepared

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"scalegnn/permute"
)

// prepareFixture writes the numpy fixture as a prepared dataset with
// double permutation and 2×2 blocks.
func prepareFixture(t *testing.T) string {
	t.Helper()
	return prepareFixtureWith(t, Options{Blocks: 2, Scheme: permute.Double, Seed: 1, Symmetrize: true})
}

// prepareFixtureWith writes the numpy fixture as a prepared dataset with
// opt.
func prepareFixtureWith(t *testing.T, opt Options) string {
	t.Helper()
	in, err := NewEdgeListInput(fixture())
	if err != nil {
		t.Fatal(err)
	}
	dir := filepath.Join(t.TempDir(), "ds")
	if _, err := Prepare(in, dir, opt); err != nil {
		t.Fatal(err)
	}
	return dir
}

// loadAll opens dir and reads every block, feature and vertex file.
func loadAll(dir string) error {
	d, err := Open(dir, LoadOptions{})
	if err != nil {
		return err
	}
	for _, r := range [][4]int{{0, 12, 0, 12}, {0, 6, 6, 12}} {
		if _, err := d.AdjBlock(0, r[0], r[1], 1, r[2], r[3]); err != nil {
			return err
		}
		if _, err := d.AdjBlock(1, r[0], r[1], 0, r[2], r[3]); err != nil {
			return err
		}
	}
	if _, err := d.FeatureBlock(1, 0, 12, 0, 3); err != nil {
		return err
	}
	_, _, _, _, err = d.Labels(0, 0, 12)
	return err
}

// TestIntegrity damages one file of a prepared dataset at a time and
// requires the load to fail with a message naming the file.
func TestIntegrity(t *testing.T) {
	cases := []struct {
		name, file string
		damage     func(path string) error
		want       string
	}{
		{"flipped byte", "adj0/r1c0.data.npy", func(p string) error {
			b, err := os.ReadFile(p)
			if err == nil {
				b[len(b)-3] ^= 0x10
				err = os.WriteFile(p, b, 0o644)
			}
			return err
		}, "SHA-256 mismatch"},
		{"flipped feature byte", "features/r1.npy", func(p string) error {
			b, err := os.ReadFile(p)
			if err == nil {
				b[100] ^= 1
				err = os.WriteFile(p, b, 0o644)
			}
			return err
		}, "SHA-256 mismatch"},
		// The digest is checked as the file streams into its final place;
		// a damaged pointer or index is reported as damage, before the
		// structure it breaks is used.
		{"flipped pointer byte", "adj0/r0c0.indptr.npy", flipAt(-9, 0x01), "SHA-256 mismatch"},
		{"flipped index byte", "adj0/r1c1.indices.npy", flipAt(-4, 0x40), "SHA-256 mismatch"},
		{"flipped order byte", "order0.npy", flipAt(-4, 0x01), "SHA-256 mismatch"},
		{"flipped mask byte", "train.npy", flipAt(-1, 0x01), "SHA-256 mismatch"},
		{"truncated block", "adj0/r0c1.indices.npy", func(p string) error {
			st, err := os.Stat(p)
			if err == nil {
				err = os.Truncate(p, st.Size()-4)
			}
			return err
		}, "truncated"},
		{"missing block", "adj0/r1c1.indptr.npy", os.Remove, "missing"},
		{"missing order", "order1.npy", os.Remove, "missing"},
		{"flipped label", "labels.npy", func(p string) error {
			b, err := os.ReadFile(p)
			if err == nil {
				b[len(b)-1] ^= 0x40
				err = os.WriteFile(p, b, 0o644)
			}
			return err
		}, "SHA-256 mismatch"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			dir := prepareFixture(t)
			if err := loadAll(dir); err != nil {
				t.Fatalf("undamaged: %v", err)
			}
			if err := c.damage(filepath.Join(dir, c.file)); err != nil {
				t.Fatal(err)
			}
			err := loadAll(dir)
			if err == nil || !strings.Contains(err.Error(), filepath.Join(dir, c.file)) || !strings.Contains(err.Error(), c.want) {
				t.Fatalf("got %v, want an error naming %s and saying %q", err, c.file, c.want)
			}
		})
	}
}

// flipAt returns a damage that XORs the byte at offset off (from the end
// when negative) with mask.
func flipAt(off int, mask byte) func(string) error {
	return func(p string) error {
		b, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		if off < 0 {
			off += len(b)
		}
		b[off] ^= mask
		return os.WriteFile(p, b, 0o644)
	}
}

// TestMetadataMismatch edits meta.toml so that it disagrees with the files
// or with itself; the load names the file at fault.
func TestMetadataMismatch(t *testing.T) {
	cases := []struct {
		name      string
		edit      func(string) string
		wantFile  string
		wantWords string
	}{
		{"features", func(s string) string { return strings.Replace(s, "features = 3", "features = 4", 1) }, "features/r0.npy", "expected dtype <f4, shape [6 4]"},
		{"nodes", func(s string) string { return strings.Replace(s, "nodes = 12", "nodes = 13", 1) }, "order0.npy", "expected dtype <i4, shape [13]"},
		{"format", func(s string) string {
			return strings.Replace(s, `format = "scalegnn-prepared"`, `format = "other"`, 1)
		}, "meta.toml", "format"},
		{"orientations", func(s string) string { return strings.Replace(s, "orientations = 1", "orientations = 2", 1) }, "meta.toml", "orientations = 2"},
		{"unknown key", func(s string) string { return "extra = 1\n" + s }, "meta.toml", "unknown key extra"},
		{"misspelt key", func(s string) string { return strings.Replace(s, "nnz = ", "nzz = ", 1) }, "meta.toml", "unknown key nzz: did you mean nnz?"},
		{"scheme", func(s string) string { return strings.Replace(s, `scheme = "double"`, `scheme = "triple"`, 1) }, "meta.toml",
			`permute.scheme = "triple": expected one of "none", "single", "double"`},
		{"type", func(s string) string { return strings.Replace(s, "blocks = 2", `blocks = "2"`, 1) }, "meta.toml", `blocks = "2": expected an integer, not a string`},
		{"file list", func(s string) string { return strings.Replace(s, `path = "labels.npy"`, `path = "labels2.npy"`, 1) }, "meta.toml", "labels.npy"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			dir := prepareFixture(t)
			p := filepath.Join(dir, MetaFile)
			b, err := os.ReadFile(p)
			if err != nil {
				t.Fatal(err)
			}
			edited := c.edit(string(b))
			if edited == string(b) {
				t.Fatal("edit did not apply")
			}
			if err := os.WriteFile(p, []byte(edited), 0o644); err != nil {
				t.Fatal(err)
			}
			err = loadAll(dir)
			if err == nil || !strings.Contains(err.Error(), filepath.Join(dir, c.wantFile)) || !strings.Contains(err.Error(), c.wantWords) {
				t.Fatalf("got %v, want an error naming %s and saying %q", err, c.wantFile, c.wantWords)
			}
		})
	}
}

// TestNotPrepared: a directory without meta.toml (an unfinished prepare)
// is not a dataset.
func TestNotPrepared(t *testing.T) {
	_, err := Open(t.TempDir(), LoadOptions{})
	if err == nil || !strings.Contains(err.Error(), "meta.toml") || !strings.Contains(err.Error(), "not a prepared dataset") {
		t.Fatal(err)
	}
}

// TestReadAgainAfterDamage: a Dataset hashes a file once; a file damaged
// after it was verified (a new modification time) is hashed again on its
// next read and refused, by the same Dataset.
func TestReadAgainAfterDamage(t *testing.T) {
	dir := prepareFixture(t)
	d, err := Open(dir, LoadOptions{})
	if err != nil {
		t.Fatal(err)
	}
	read := func() error {
		_, err := d.FeatureBlock(1, 0, 12, 0, 3)
		return err
	}
	for range 2 {
		if err := read(); err != nil {
			t.Fatalf("reading the features of an intact dataset: %v", err)
		}
	}
	p := filepath.Join(dir, "features", "r1.npy")
	b, err := os.ReadFile(p)
	if err != nil {
		t.Fatal(err)
	}
	b[len(b)-1] ^= 0x01 // the last byte of a float: still finite
	st, _ := os.Stat(p)
	if err := os.WriteFile(p, b, 0o644); err != nil {
		t.Fatal(err)
	}
	later := st.ModTime().Add(2e9)
	if err := os.Chtimes(p, later, later); err != nil {
		t.Fatal(err)
	}
	if err := read(); err == nil || !strings.Contains(err.Error(), "SHA-256 mismatch") || !strings.Contains(err.Error(), "r1.npy") {
		t.Errorf("reading a feature file damaged after it was verified: error %v, want a SHA-256 mismatch naming it", err)
	}
}
