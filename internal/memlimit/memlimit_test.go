package memlimit

import (
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
)

// fake writes files under a temporary root.
func fake(t *testing.T, files map[string]string) string {
	t.Helper()
	root := t.TempDir()
	for name, data := range files {
		p := filepath.Join(root, name)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(data), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return root
}

func noRlimit() (uint64, bool) { return 0, false }

const (
	meminfo = "MemTotal:       32000000 kB\nMemFree:         1000 kB\nMemAvailable:   24000000 kB\n"
	status  = "Name:\tscalegnn\nVmPeak:\t 3000000 kB\nVmSize:\t 1048576 kB\n"
)

func TestDetect(t *testing.T) {
	gib := int64(1) << 30
	avail := Limit{Bytes: 24000000 << 10, From: "MemAvailable", PerNode: true}
	for _, c := range []struct {
		name  string
		files map[string]string
		as    func() (uint64, bool)
		want  []Limit
	}{
		{"nothing", nil, noRlimit, nil},
		{"meminfo only", map[string]string{"proc/meminfo": meminfo}, noRlimit, []Limit{avail}},
		{"cgroup v2 max", map[string]string{"proc/self/cgroup": "0::/job\n", "sys/fs/cgroup/job/memory.max": "max\n", "proc/meminfo": meminfo},
			noRlimit, []Limit{avail}},
		{"cgroup v2, parent smaller", map[string]string{"proc/self/cgroup": "0::/slurm/job/step\n",
			"sys/fs/cgroup/slurm/job/step/memory.max": "17179869184\n", "sys/fs/cgroup/slurm/job/memory.max": "8589934592\n"},
			noRlimit, []Limit{{Bytes: 8 * gib, From: "cgroup memory.max", PerNode: true}}},
		{"cgroup v2 in a container namespace", map[string]string{"proc/self/cgroup": "0::/\n", "sys/fs/cgroup/memory.max": "4294967296\n"},
			noRlimit, []Limit{{Bytes: 4 * gib, From: "cgroup memory.max", PerNode: true}}},
		{"cgroup v1 unset", map[string]string{"proc/self/cgroup": "4:memory:/process_api/x\n1:cpu:/\n",
			"sys/fs/cgroup/memory/memory.limit_in_bytes": "9223372036854771712\n"}, noRlimit, nil},
		{"cgroup v1, path outside the namespace", map[string]string{"proc/self/cgroup": "4:cpu,memory:/docker/abc\n",
			"sys/fs/cgroup/memory/memory.limit_in_bytes": "2147483648\n"},
			noRlimit, []Limit{{Bytes: 2 * gib, From: "cgroup memory.limit_in_bytes", PerNode: true}}},
		{"ulimit -v", map[string]string{"proc/self/status": status}, func() (uint64, bool) { return 5 << 30, true },
			[]Limit{{Bytes: 4*gib - AddressSpaceReserve, From: "ulimit -v less the address space mapped and 384MiB kept for later mappings:"}}},
		{"ulimit -v below the reserve", map[string]string{"proc/self/status": status}, func() (uint64, bool) { return 1<<30 + 300<<20, true },
			[]Limit{{Bytes: 0, From: "ulimit -v less the address space mapped and 384MiB kept for later mappings:"}}},
		{"ulimit -v unlimited", map[string]string{"proc/self/status": status}, func() (uint64, bool) { return ^uint64(0), true }, nil},
	} {
		got, err := Detect(fake(t, c.files), c.as)
		if err != nil || !reflect.DeepEqual(got, c.want) {
			t.Errorf("%s: Detect = %+v, %v; want %+v", c.name, got, err, c.want)
		}
	}
}

func TestDetectBadFiles(t *testing.T) {
	for _, c := range []struct {
		name  string
		files map[string]string
		want  string
	}{
		{"cgroup v2 words", map[string]string{"proc/self/cgroup": "0::/\n", "sys/fs/cgroup/memory.max": "lots\n"},
			`memory.max: "lots": expected a number of bytes or max`},
		{"meminfo unit", map[string]string{"proc/meminfo": "MemAvailable: 12 MB\n"}, "meminfo: MemAvailable: 12 MB: expected a number of kB"},
		{"meminfo huge", map[string]string{"proc/meminfo": "MemAvailable: 99999999999999999999 kB\n"}, "expected a number of kB"},
	} {
		_, err := Detect(fake(t, c.files), noRlimit)
		if err == nil || !strings.Contains(err.Error(), c.want) || strings.Contains(err.Error(), "\n") {
			t.Errorf("%s: error %v, want one line containing %q", c.name, err, c.want)
		}
	}
}

// TestDetectHere reads this machine: it must not fail, and MemAvailable
// is there on Linux.
func TestDetectHere(t *testing.T) {
	got, err := Detect("/", AddressSpace)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat("/proc/meminfo"); err == nil {
		found := false
		for _, l := range got {
			found = found || (l.From == "MemAvailable" && l.Bytes > 0)
		}
		if !found {
			t.Errorf("Detect(/) = %+v: no MemAvailable", got)
		}
	}
}
