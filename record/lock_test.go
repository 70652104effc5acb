package record

import (
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"
)

// TestLock: a live holder refuses a second taker with one line naming it
// (pid, host, start); a released lock is taken again without a word.
func TestLock(t *testing.T) {
	dir := t.TempDir()
	a, err := TakeLock(dir)
	if err != nil {
		t.Fatal(err)
	}
	if a.Stale != "" {
		t.Errorf("a fresh lock says stale: %q", a.Stale)
	}
	_, err = TakeLock(dir)
	if err == nil || !strings.Contains(err.Error(), "in use by another job (pid "+itoa(os.Getpid())+" on ") {
		t.Fatalf("second TakeLock: %v, want it refused naming pid %d", err, os.Getpid())
	}
	if h := LockHolder(dir); !strings.Contains(h, "started ") {
		t.Errorf("LockHolder = %q, want the holder with its start time", h)
	}
	if err := CheckNotLocked(dir); err == nil {
		t.Error("CheckNotLocked passes a locked directory")
	}
	a.Release()
	if h := LockHolder(dir); h != "" {
		t.Errorf("LockHolder after Release = %q", h)
	}
	b, err := TakeLock(dir)
	if err != nil {
		t.Fatal(err)
	}
	if b.Stale != "" {
		t.Errorf("a released lock taken again says stale: %q", b.Stale)
	}
	b.Release()
}

// TestLockKilledHolder: a holder killed with SIGKILL releases the lock
// (the kernel does); the next taker takes it over and names the dead job,
// and a summary left "running" is said to have ended abnormally.
func TestLockKilledHolder(t *testing.T) {
	if os.Getenv("RECORD_LOCK_HOLD") != "" {
		if _, err := TakeLock(os.Getenv("RECORD_LOCK_HOLD")); err != nil {
			os.Exit(3)
		}
		os.Stdout.WriteString("locked\n")
		time.Sleep(time.Minute)
		os.Exit(0)
	}
	dir := t.TempDir()
	cmd := exec.Command(os.Args[0], "-test.run=^TestLockKilledHolder$")
	cmd.Env = append(os.Environ(), "RECORD_LOCK_HOLD="+dir)
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	buf := make([]byte, 7)
	if _, err := out.Read(buf); err != nil || string(buf) != "locked\n" {
		cmd.Process.Kill()
		t.Fatalf("holder: %q, %v", buf, err)
	}
	res := &Result{Status: StatusRunning, EpochsRun: 7}
	if err := WriteSummary(dir, res); err != nil {
		t.Fatal(err)
	}
	if h := LockHolder(dir); !strings.Contains(h, "pid "+itoa(cmd.Process.Pid)) {
		t.Errorf("LockHolder = %q while pid %d holds it", h, cmd.Process.Pid)
	}
	if msg := EndedAbnormally(dir, res); msg != "" {
		t.Errorf("a live run ended abnormally: %q", msg)
	}
	cmd.Process.Kill() // SIGKILL
	cmd.Wait()
	msg := EndedAbnormally(dir, res)
	if !strings.Contains(msg, "ended abnormally: summary.json still says \"running\"") {
		t.Errorf("EndedAbnormally = %q", msg)
	}
	l, err := TakeLock(dir)
	if err != nil {
		t.Fatalf("the dead job's lock: %v", err)
	}
	defer l.Release()
	if !strings.Contains(l.Stale, "pid "+itoa(cmd.Process.Pid)) {
		t.Errorf("Stale = %q, want the killed job (pid %d)", l.Stale, cmd.Process.Pid)
	}
	for _, s := range []Status{StatusCompleted, StatusInterrupted, StatusFailed, StatusStalled, StatusDiverged} {
		if msg := EndedAbnormally(filepath.Join(dir, "x"), &Result{Status: s}); msg != "" {
			t.Errorf("status %s: %q", s, msg)
		}
	}
}

func itoa(n int) string { return strconv.Itoa(n) }

// TestWriteSummaryDiskFull (defect 8): when the disk is full the summary
// is rewritten in place, so that a run failing for want of space is not
// left saying "running".
func TestWriteSummaryDiskFull(t *testing.T) {
	dir := t.TempDir()
	if err := WriteSummary(dir, &Result{Status: StatusRunning}); err != nil {
		t.Fatal(err)
	}
	createTemp = func(string, string) (*os.File, error) {
		return nil, &os.PathError{Op: "open", Path: dir, Err: syscall.ENOSPC}
	}
	defer func() { createTemp = os.CreateTemp }()
	if err := WriteSummary(dir, &Result{Status: StatusFailed, Message: "writing metrics: no space left on device", Grid: "1x1x1"}); err != nil {
		t.Fatal(err)
	}
	s, err := ReadSummary(dir)
	if err != nil || s.Status != StatusFailed {
		t.Fatalf("summary after a full disk: %+v, %v", s, err)
	}
}
