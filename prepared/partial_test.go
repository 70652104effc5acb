package prepared

import (
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"testing"
	"time"

	"scalegnn/dataset"
)

// TestStalePartials leaves partial directories as killed, running and
// foreign prepares would, and checks which ones the next Prepare of the
// same output removes, and that -force removes them all.
func TestStalePartials(t *testing.T) {
	root := t.TempDir()
	out := filepath.Join(root, "ds")
	host, err := os.Hostname()
	if err != nil {
		t.Fatal(err)
	}
	dead := exec.Command("true")
	if err := dead.Run(); err != nil {
		t.Skipf("no process to outlive: %v", err)
	}
	old := time.Now().Add(-2 * ownerlessGrace)
	mk := func(name, ownerText string, mtime time.Time) {
		p := filepath.Join(root, name)
		if err := os.Mkdir(p, 0o755); err != nil {
			t.Fatal(err)
		}
		if ownerText != "" {
			if err := os.WriteFile(filepath.Join(p, ownerFile), []byte(ownerText), 0o644); err != nil {
				t.Fatal(err)
			}
		}
		if err := os.Chtimes(p, mtime, mtime); err != nil {
			t.Fatal(err)
		}
	}
	mk(".ds.partial-dead", host+" "+pidText(dead.Process.Pid), time.Now())
	mk(".ds.partial-alive", owner(), time.Now())
	mk(".ds.partial-foreign", "some-other-host.invalid 1", time.Now())
	mk(".ds.partial-garbled", "not an owner", time.Now())
	mk(".ds.partial-ownerless-old", "", old)
	mk(".ds.partial-ownerless-new", "", time.Now())
	mk(".other.partial-dead", host+" "+pidText(dead.Process.Pid), time.Now())

	sc := dataset.DefaultSBMConfig(301)
	sc.Features = 5
	g, err := dataset.SBM(sc)
	if err != nil {
		t.Fatal(err)
	}
	prep := func(force bool) {
		t.Helper()
		if _, err := Prepare(&GraphInput{G: g, Format: "test"}, out, Options{Blocks: 2, Force: force}); err != nil {
			t.Fatal(err)
		}
	}
	left := func() []string {
		t.Helper()
		ents, err := os.ReadDir(root)
		if err != nil {
			t.Fatal(err)
		}
		var names []string
		for _, e := range ents {
			names = append(names, e.Name())
		}
		return names
	}

	prep(false)
	want := []string{".ds.partial-alive", ".ds.partial-foreign", ".ds.partial-ownerless-new", ".other.partial-dead", "ds"}
	if got := left(); !slices.Equal(got, want) {
		t.Fatalf("after prepare: %q, want %q", got, want)
	}
	if _, err := os.Stat(filepath.Join(out, ownerFile)); !os.IsNotExist(err) {
		t.Errorf("the prepared dataset keeps its owner file: %v", err)
	}
	prep(true)
	want = []string{".other.partial-dead", "ds"}
	if got := left(); !slices.Equal(got, want) {
		t.Fatalf("after prepare -force: %q, want %q", got, want)
	}
	if _, err := Open(out, LoadOptions{}); err != nil {
		t.Fatalf("the dataset prepared again does not open: %v", err)
	}
}

func pidText(pid int) string { return strconv.Itoa(pid) }

// TestMakePartialOwner checks that a partial directory names its owner
// from the start, and that a live owner keeps it.
func TestMakePartialOwner(t *testing.T) {
	out := filepath.Join(t.TempDir(), "ds")
	tmp, err := makePartial(out)
	if err != nil {
		t.Fatal(err)
	}
	data, err := os.ReadFile(filepath.Join(tmp, ownerFile))
	if err != nil || string(data) != owner() {
		t.Fatalf("owner file %q, %v; want %q", data, err, owner())
	}
	if stalePartial(tmp) {
		t.Errorf("%s of this running process counts as stale", tmp)
	}
}
