package prepared

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// FuzzParseMeta feeds arbitrary text to the meta.toml reader: an error
// naming the file, or metadata whose sizes pass the checks, never a panic.
// Seed corpus: testdata/fuzz/FuzzParseMeta/ (a real meta.toml among them).
func FuzzParseMeta(f *testing.F) {
	real, err := os.ReadFile(filepath.Join("testdata", "fuzz-seed-meta.toml"))
	if err != nil {
		f.Fatal(err)
	}
	for _, s := range []string{string(real), "", `format = "scalegnn-prepared"`, "version = 1\nnodes = -3", "[[file]]\npath = 1"} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		var m *Meta
		var err error
		done := make(chan struct{})
		go func() { m, err = parseMeta("meta.toml", b); close(done) }()
		select {
		case <-done:
		case <-time.After(5 * time.Second):
			t.Fatalf("parseMeta hangs on %q", b)
		}
		if err != nil {
			if !strings.HasPrefix(err.Error(), "meta.toml: ") {
				t.Fatalf("error does not name the file: %v", err)
			}
			return
		}
		if m.Nodes < 1 || m.Blocks < 1 || m.Blocks > m.Nodes || len(m.BlockNNZ) != m.Orientations {
			t.Fatalf("accepted %+v", m)
		}
		_ = m.expectedFiles()
	})
}
