package memlimit

import (
	"bufio"
	"bytes"
	"fmt"
	"os"
	"path"
	"path/filepath"
	"strconv"
	"strings"
)

// Limit is one bound on the memory of this process.
type Limit struct {
	Bytes int64
	// From names the bound for messages: "cgroup memory.max",
	// "MemAvailable", "ulimit -v less the address space mapped".
	From string
	// PerNode is true for a bound shared by the ranks of the node (the
	// cgroup, the node's available memory), false for one of this process
	// alone (its address space).
	PerNode bool
}

// AddressSpaceReserve is the address space under ulimit -v that a rank
// maps after the memory check outside what perfmodel predicts, and so
// is not given to the prediction: OpenBLAS's buffer on the first GEMM
// (128 MiB for each thread that calls it; where it cannot map one,
// OpenBLAS 0.3.21 retries forever, and the job hangs), glibc's per-thread
// malloc arenas (64 MiB reserved each) and the stacks of threads started
// later, and the Go heap's growth in 64 MiB arenas. Measured (issue 25,
// defect 11: Cora with hidden 20,000 on 4x1x1 under mpirun, 2 cores, one
// BLAS thread per rank, predicted 559 MiB): a rank had mapped 2070 to
// 2206 MiB at the check, as its threads' malloc arenas happened to be
// created before or after it, and 2850 to 2913 MiB at its peak, up to
// 284 MiB beyond the prediction; with 256 MiB reserved a rank was
// admitted and hung in OpenBLAS.
const AddressSpaceReserve = 384 << 20

const reserveText = "384MiB"

// unlimited is the smallest value read as "no limit": cgroup v1 writes
// the page-rounded maximum int64 when unset.
const unlimited = int64(1) << 60

// Detect returns the limits found under root ("/" in production); a bound
// whose files are missing or say "max" is left out. An error means a file
// exists but cannot be read as documented.
func Detect(root string, addressSpace func() (cur uint64, ok bool)) ([]Limit, error) {
	var out []Limit
	cg, err := cgroupLimit(root)
	if err != nil {
		return nil, err
	}
	out = append(out, cg...)
	avail, ok, err := memAvailable(root)
	if err != nil {
		return nil, err
	}
	if ok {
		out = append(out, Limit{Bytes: avail, From: "MemAvailable", PerNode: true})
	}
	if cur, ok := addressSpace(); ok && cur < uint64(unlimited) {
		mapped, err := vmSize(root)
		if err != nil {
			return nil, err
		}
		out = append(out, Limit{Bytes: max(0, int64(cur)-mapped-AddressSpaceReserve), From: "ulimit -v less the address space mapped and " + reserveText + " kept for later mappings:"})
	}
	return out, nil
}

// cgroupLimit returns the smallest memory limit along this process's
// cgroup path, in cgroup v2 and v1 layouts, and at the hierarchy's root
// (a container's cgroup namespace mounts its own cgroup there).
func cgroupLimit(root string) ([]Limit, error) {
	data, err := os.ReadFile(filepath.Join(root, "proc/self/cgroup"))
	if err != nil {
		return nil, nil // not Linux, or no cgroups
	}
	best := Limit{Bytes: unlimited}
	sc := bufio.NewScanner(bytes.NewReader(data))
	for sc.Scan() {
		// hierarchy-ID:controller-list:path
		f := strings.SplitN(sc.Text(), ":", 3)
		if len(f) != 3 {
			continue
		}
		var dir, file, name string
		switch {
		case f[0] == "0" && f[1] == "":
			dir, file, name = "sys/fs/cgroup", "memory.max", "cgroup memory.max"
		case hasController(f[1], "memory"):
			dir, file, name = "sys/fs/cgroup/memory", "memory.limit_in_bytes", "cgroup memory.limit_in_bytes"
		default:
			continue
		}
		for p := path.Clean("/" + f[2]); ; p = path.Dir(p) {
			b, found, err := readLimit(filepath.Join(root, dir, p, file))
			if err != nil {
				return nil, err
			}
			if found && b < best.Bytes {
				best = Limit{Bytes: b, From: name, PerNode: true}
			}
			if p == "/" {
				break
			}
		}
	}
	if best.Bytes >= unlimited {
		return nil, nil
	}
	return []Limit{best}, nil
}

func hasController(list, c string) bool {
	for _, x := range strings.Split(list, ",") {
		if x == c {
			return true
		}
	}
	return false
}

// readLimit reads a cgroup limit file: bytes, or "max" (none).
func readLimit(file string) (int64, bool, error) {
	data, err := os.ReadFile(file)
	if err != nil {
		return 0, false, nil
	}
	s := strings.TrimSpace(string(data))
	if s == "max" {
		return 0, false, nil
	}
	n, err := strconv.ParseInt(s, 10, 64)
	if err != nil || n < 0 {
		return 0, false, fmt.Errorf("memlimit: %s: %q: expected a number of bytes or max", file, s)
	}
	return n, n < unlimited, nil
}

// memAvailable reads MemAvailable from /proc/meminfo.
func memAvailable(root string) (int64, bool, error) {
	return procField(filepath.Join(root, "proc/meminfo"), "MemAvailable:")
}

// vmSize reads this process's mapped address space from /proc/self/status.
func vmSize(root string) (int64, error) {
	n, _, err := procField(filepath.Join(root, "proc/self/status"), "VmSize:")
	return n, err
}

// procField reads a "Key:   123 kB" line of a /proc file, in bytes.
func procField(file, key string) (int64, bool, error) {
	data, err := os.ReadFile(file)
	if err != nil {
		return 0, false, nil
	}
	sc := bufio.NewScanner(bytes.NewReader(data))
	for sc.Scan() {
		rest, ok := strings.CutPrefix(sc.Text(), key)
		if !ok {
			continue
		}
		f := strings.Fields(rest)
		if len(f) != 2 || f[1] != "kB" {
			return 0, false, fmt.Errorf("memlimit: %s: %s%s: expected a number of kB", file, key, rest)
		}
		kb, err := strconv.ParseInt(f[0], 10, 64)
		if err != nil || kb < 0 || kb > unlimited>>10 {
			return 0, false, fmt.Errorf("memlimit: %s: %s%s: expected a number of kB", file, key, rest)
		}
		return kb << 10, true, nil
	}
	return 0, false, nil
}
