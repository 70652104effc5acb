package prepared

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"time"
)

// A Prepare writes into a hidden sibling directory .NAME.partial-* of its
// output, and records its owner there first: ownerFile holds "HOST PID".
// A prepare that is killed leaves the directory behind; the next Prepare
// of the same output removes it when its owner is gone (same host, no
// such process), so killed runs do not pile up temporary files the size
// of a dataset.
const ownerFile = ".owner"

// ownerlessGrace is how old a partial directory without an owner file
// must be before it counts as stale: a Prepare writes the file right
// after creating the directory, so only one killed in between, or one
// from a version without owner files, lacks it.
const ownerlessGrace = time.Minute

// partialPrefix is the name prefix of out's partial directories.
func partialPrefix(out string) string { return "." + filepath.Base(out) + ".partial-" }

// makePartial creates out's partial directory and records this process
// as its owner.
func makePartial(out string) (string, error) {
	tmp, err := os.MkdirTemp(filepath.Dir(out), partialPrefix(out))
	if err != nil {
		return "", err
	}
	if err := os.WriteFile(filepath.Join(tmp, ownerFile), []byte(owner()), 0o644); err != nil {
		os.RemoveAll(tmp)
		return "", err
	}
	return tmp, nil
}

// owner is this process's "HOST PID".
func owner() string {
	host, _ := os.Hostname()
	return fmt.Sprintf("%s %d", host, os.Getpid())
}

// removeStalePartials removes the partial directories of out left by
// prepares that are gone: their owner ran on this host and its process no
// longer exists (or, without an owner file, the directory is older than
// ownerlessGrace). With all set (prepare -force), every partial directory
// of out goes, whoever owns it. It returns the directories removed.
// Directories of other hosts (a shared file system) are left alone unless
// all is set: their owner may still be writing.
func removeStalePartials(out string, all bool) ([]string, error) {
	dir, prefix := filepath.Dir(out), partialPrefix(out)
	entries, err := os.ReadDir(dir)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	var removed []string
	for _, e := range entries {
		if !e.IsDir() || !strings.HasPrefix(e.Name(), prefix) {
			continue
		}
		p := filepath.Join(dir, e.Name())
		if !all && !stalePartial(p) {
			continue
		}
		if err := os.RemoveAll(p); err != nil {
			return removed, fmt.Errorf("removing the stale partial directory %s: %w", p, err)
		}
		removed = append(removed, p)
	}
	return removed, nil
}

// stalePartial reports whether the partial directory p was left by a
// prepare that no longer runs.
func stalePartial(p string) bool {
	data, err := os.ReadFile(filepath.Join(p, ownerFile))
	if err != nil {
		// A replaced dataset moved aside (.partial-*.old) has no owner
		// file either; the grace period covers its rename too.
		info, serr := os.Stat(p)
		return serr == nil && time.Since(info.ModTime()) > ownerlessGrace
	}
	host, pidText, ok := strings.Cut(strings.TrimSpace(string(data)), " ")
	pid, perr := strconv.Atoi(pidText)
	if !ok || perr != nil || pid < 1 {
		return true // not written by a Prepare
	}
	if me, _ := os.Hostname(); host != me {
		return false
	}
	return !processAlive(pid)
}

// processAlive reports whether a process pid exists on this host: signal
// 0 checks without sending (EPERM: it exists, owned by someone else).
func processAlive(pid int) bool {
	p, err := os.FindProcess(pid)
	if err != nil {
		return false
	}
	err = p.Signal(syscall.Signal(0))
	return err == nil || errors.Is(err, syscall.EPERM)
}
