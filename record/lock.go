package record

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"time"
)

// LockFile is the name of the lock a live run holds in its output
// directory.
const LockFile = ".lock"

// Lock is a run's hold on its output directory: an exclusive flock on
// output.dir/.lock, which the kernel releases when the process ends, how
// ever it ends. The file names the holder (pid, host, start time) for the
// job that finds it taken.
type Lock struct {
	f *os.File
	// Stale names the job that held the lock before and ended without
	// releasing it (killed, or its node failed), "" when none did.
	Stale string
}

// TakeLock takes dir's lock for this process, which must already exist.
// A live job holding it is refused with one line naming it; a lock left
// by a job that is gone is taken over (Lock.Stale says whose it was).
func TakeLock(dir string) (*Lock, error) {
	path := filepath.Join(dir, LockFile)
	for {
		f, err := os.OpenFile(path, os.O_RDWR|os.O_CREATE, 0o644)
		if err != nil {
			return nil, fmt.Errorf("locking output.dir: %w", err)
		}
		if err := syscall.Flock(int(f.Fd()), syscall.LOCK_EX|syscall.LOCK_NB); err != nil {
			holder := readHolder(f)
			f.Close()
			if errors.Is(err, syscall.EWOULDBLOCK) {
				return nil, inUse(dir, holder)
			}
			return nil, fmt.Errorf("locking %s: %w", path, err)
		}
		// The holder may have released it (removing the file) between
		// the open and the flock: lock the file now at path instead.
		if same(f, path) {
			return own(f), nil
		}
		f.Close()
	}
}

// same reports whether f is still the file at path.
func same(f *os.File, path string) bool {
	a, err := f.Stat()
	if err != nil {
		return false
	}
	b, err := os.Stat(path)
	return err == nil && os.SameFile(a, b)
}

// own writes this process as the holder of the lock file f, locked.
func own(f *os.File) *Lock {
	l := &Lock{f: f, Stale: readHolder(f)}
	host, _ := os.Hostname()
	me := fmt.Sprintf("pid %d on %s, started %s", os.Getpid(), host, time.Now().Format(time.RFC3339))
	if f.Truncate(0) == nil {
		f.WriteAt([]byte(me+"\n"), 0) // the name only helps the job that finds the lock taken
	}
	return l
}

// Release releases the lock and removes its file: a lock file found
// without a holder was left by a job that did not end normally.
func (l *Lock) Release() {
	if l == nil || l.f == nil {
		return
	}
	os.Remove(l.f.Name())
	l.f.Close() // closing releases the flock
	l.f = nil
}

// LockHolder returns the live job holding dir's lock ("pid 12 on node3,
// started …"), or "" when no live job holds it.
func LockHolder(dir string) string {
	f, err := os.Open(filepath.Join(dir, LockFile))
	if err != nil {
		return ""
	}
	defer f.Close()
	if err := syscall.Flock(int(f.Fd()), syscall.LOCK_SH|syscall.LOCK_NB); err == nil {
		syscall.Flock(int(f.Fd()), syscall.LOCK_UN)
		return ""
	}
	if h := readHolder(f); h != "" {
		return h
	}
	return "a job that has not yet named itself"
}

// CheckNotLocked refuses dir when a live job holds its lock.
func CheckNotLocked(dir string) error {
	if h := LockHolder(dir); h != "" {
		return inUse(dir, h)
	}
	return nil
}

func inUse(dir, holder string) error {
	if holder == "" {
		holder = "a job that has not yet named itself"
	}
	return fmt.Errorf("output.dir = %q is in use by another job (%s): wait for it to end, stop it, or choose another output.dir", dir, holder)
}

// readHolder is the holder line of an open lock file, "" when empty.
func readHolder(f *os.File) string {
	b := make([]byte, 512)
	n, _ := f.ReadAt(b, 0)
	return strings.TrimSpace(string(b[:n]))
}

// EndedAbnormally says in one line why the run in dir, whose summary is
// s (nil: none), ended without recording how, or "" when it did not:
// summary.json still says "running" and no live job holds the directory's
// lock, so the job was killed (SIGKILL, the launcher's kill, a node
// failure) before any rank could write.
func EndedAbnormally(dir string, s *Result) string {
	if s == nil || s.Status != StatusRunning || LockHolder(dir) != "" {
		return ""
	}
	return fmt.Sprintf("the run in %s ended abnormally: summary.json still says \"running\" and no job holds its lock (it was killed before it could record how it ended)", dir)
}
