package jobs

import (
	"errors"
	"io"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"

	"scalegnn/jobfile"
)

// TestConfigWriteFullDisk fails config.toml's write half-way, as a full
// disk does, and checks that the previous config.toml stays whole, that
// no temporary file is left, and that the error names the file and the
// cause; then that a write that succeeds replaces it.
func TestConfigWriteFullDisk(t *testing.T) {
	dir := t.TempDir()
	c := jobfile.DefaultConfig()
	cfg := &c
	cfg.Output.Dir = dir
	path := filepath.Join(dir, "config.toml")
	if err := os.WriteFile(path, []byte("# the previous run's\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	full := func(w io.Writer) error {
		if _, err := io.WriteString(w, "[dataset]\nsource = "); err != nil {
			return err
		}
		return syscall.ENOSPC
	}
	err := writeConfigWith(cfg, full)
	if err == nil || !errors.Is(err, syscall.ENOSPC) || !strings.Contains(err.Error(), "writing "+path+": no space left on device") {
		t.Fatalf("error %v, want one naming %s and ENOSPC", err, path)
	}
	if data, _ := os.ReadFile(path); string(data) != "# the previous run's\n" {
		t.Errorf("config.toml after a failed write: %q, want the previous one whole", data)
	}
	ents, _ := os.ReadDir(dir)
	if len(ents) != 1 {
		t.Errorf("files left in output.dir: %v, want config.toml alone", ents)
	}
	if err := writeEffectiveConfig(cfg); err != nil {
		t.Fatal(err)
	}
	back, err := jobfile.LoadConfig(path)
	if err != nil {
		t.Fatalf("the written config.toml does not load: %v", err)
	}
	if back.Output.Dir != dir {
		t.Errorf("config.toml holds output.dir %q, want %q", back.Output.Dir, dir)
	}
}
