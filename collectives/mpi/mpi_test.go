//go:build !nompi

package mpi

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"runtime"
	"slices"
	"strings"
	"testing"
	"time"

	"scalegnn/collectives"
)

// The tests run MPI in child processes (the test binary itself, started
// directly as an MPI singleton or by mpirun), since MPI can be initialized
// once per process only and must not leak into the process that starts
// mpirun.

// childEnv selects the child mode of the test binary: "world" runs the
// checks on the world communicator, "serialized" on a communicator that
// serializes its MPI calls as under MPI_THREAD_SERIALIZED.
const childEnv = "SCALEGNN_MPI_TEST_CHILD"

func TestMain(m *testing.M) {
	if mode := os.Getenv(childEnv); mode != "" {
		os.Exit(child(mode))
	}
	os.Exit(m.Run())
}

// child runs the checks as one rank and returns the exit code.
func child(mode string) int {
	world, err := Init()
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	if mode == "abort" {
		fmt.Fprintln(os.Stderr, "scalegnn: the real error")
		world.Abort(5)
	}
	if mode == "device" {
		return childDevice(world) // gpuaware_test.go
	}
	if mode == "allocs" {
		return childAllocs(world) // alloc_test.go
	}
	if !Initialized() {
		fmt.Fprintln(os.Stderr, "Initialized() = false after Init")
		world.Abort(1)
	}
	c := world
	if mode == "serialized" {
		e, err := newEnv(true)
		if err == nil {
			c, err = newComm(e, world.(*comm).c)
		}
		if err != nil {
			fmt.Fprintln(os.Stderr, err)
			world.Abort(1)
		}
	}
	err = collectives.Conformance(c)
	if err == nil {
		err = checkPinned(c)
	}
	if err != nil {
		fmt.Fprintf(os.Stderr, "rank %d: %v\n", world.Rank(), err)
		if !errors.Is(err, collectives.ErrMismatch) {
			world.Abort(1)
		}
	}
	if ferr := Finalize(); ferr != nil {
		fmt.Fprintln(os.Stderr, ferr)
		return 1
	}
	if Initialized() {
		fmt.Fprintln(os.Stderr, "Initialized() = true after Finalize")
		return 1
	}
	if err != nil {
		return 1
	}
	if world.Rank() == 0 {
		fmt.Printf("%s: ok on %d ranks\n", mode, world.Size())
	}
	return 0
}

// checkPinned runs a large nonblocking all-reduce while the garbage
// collector runs and another communicator is busy, and checks the result.
func checkPinned(c collectives.Comm) error {
	sub, err := c.Split(c.Rank()%2, 0)
	if err != nil {
		return err
	}
	const n = 1 << 18
	buf := make([]float32, n)
	for i := range buf {
		buf[i] = float32(c.Rank() + i%7)
	}
	req, err := c.IAllReduceF32(buf, collectives.Sum)
	if err != nil {
		return err
	}
	var junk [][]float32
	for range 3 {
		junk = append(junk, make([]float32, n/4))
		runtime.GC()
	}
	_ = junk
	if err := sub.AllReduceF32(make([]float32, 10), collectives.Max); err != nil {
		return err
	}
	if err := req.Wait(); err != nil {
		return err
	}
	if err := req.Wait(); err != nil {
		return fmt.Errorf("second Wait: %v", err)
	}
	size := c.Size()
	for i, v := range buf {
		if want := float32(size*(size-1)/2 + size*(i%7)); v != want {
			return fmt.Errorf("pinned IAllReduceF32: index %d: got %v, want %v", i, v, want)
		}
	}
	return nil
}

// runChild runs name args with the child mode set and checks that it
// succeeds and prints want.
func runChild(t *testing.T, mode, want string, name string, args ...string) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	cmd := exec.CommandContext(ctx, name, args...)
	cmd.Env = append(os.Environ(), childEnv+"="+mode)
	out, err := cmd.CombinedOutput()
	if err != nil || !strings.Contains(string(out), want) {
		t.Fatalf("%s %s: %v\n%s", name, strings.Join(args, " "), err, out)
	}
}

func TestSingleton(t *testing.T) {
	for _, mode := range []string{"world", "serialized"} {
		t.Run(mode, func(t *testing.T) {
			runChild(t, mode, mode+": ok on 1 ranks", os.Args[0])
		})
	}
}

func TestMPIRun(t *testing.T) {
	if testing.Short() {
		t.Skip("starts mpirun")
	}
	mpirun, err := exec.LookPath("mpirun")
	if err != nil {
		t.Skip("no mpirun in PATH")
	}
	for _, tc := range []struct {
		mode string
		np   int
	}{{"world", 3}, {"serialized", 2}} {
		t.Run(fmt.Sprintf("%s/np=%d", tc.mode, tc.np), func(t *testing.T) {
			var args []string
			if os.Geteuid() == 0 {
				args = append(args, "--allow-run-as-root")
			}
			args = append(args, "--oversubscribe", "-np", fmt.Sprint(tc.np), "-x", childEnv, os.Args[0])
			runChild(t, tc.mode, fmt.Sprintf("%s: ok on %d ranks", tc.mode, tc.np), mpirun, args...)
		})
	}
}

// TestSingletonAbort aborts a singleton after it printed its error: the
// error must be the only output (no Open MPI banner or ORTE_ERROR_LOG
// line after it) and the exit code the one given.
func TestSingletonAbort(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	cmd := exec.CommandContext(ctx, os.Args[0])
	for _, kv := range os.Environ() {
		if k, _, _ := strings.Cut(kv, "="); !slices.Contains(launchedVars[:], k) {
			cmd.Env = append(cmd.Env, kv)
		}
	}
	cmd.Env = append(cmd.Env, childEnv+"=abort")
	out, err := cmd.CombinedOutput()
	var exit *exec.ExitError
	if !errors.As(err, &exit) || exit.ExitCode() != 5 {
		t.Fatalf("exit %v, want code 5; output:\n%s", err, out)
	}
	if string(out) != "scalegnn: the real error\n" {
		t.Errorf("output %q, want the error line alone", out)
	}
}

func TestSingletonEnv(t *testing.T) {
	for _, c := range []struct {
		env  map[string]string
		want bool
	}{
		{nil, true},
		{map[string]string{"OMPI_COMM_WORLD_SIZE": "1"}, false},
		{map[string]string{"PMI_SIZE": "1"}, false},
		{map[string]string{"PMIX_RANK": "0"}, false},
		{map[string]string{"SLURM_PROCID": "0"}, true}, // a batch script's own process
	} {
		if got := singleton(func(k string) string { return c.env[k] }); got != c.want {
			t.Errorf("singleton(%v) = %v, want %v", c.env, got, c.want)
		}
	}
}
