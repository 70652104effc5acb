//go:build !nompi

package mpi

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"strings"
	"testing"
	"time"

	"scalegnn/collectives"
)

// allocCalls are the calls childAllocs measures, each making one call on
// c; want0 marks those held to zero Go allocations: all of them now (the
// communicator reuses its requests, bfloat16 copies and the count arrays
// of the v-collectives). What the MPI library allocates is C memory, which
// Go does not count.
func allocCalls(c collectives.Comm) []struct {
	name  string
	want0 bool
	call  func() error
} {
	const m = 1000
	a, b := make([]float32, m), make([]float32, m)
	counts := make([]int, c.Size())
	for i := range counts {
		counts[i] = m / c.Size()
	}
	wait := func(q collectives.Request, err error) error {
		if err != nil {
			return err
		}
		return q.Wait()
	}
	return []struct {
		name  string
		want0 bool
		call  func() error
	}{
		{"IAllReduceF32+Wait", true, func() error { return wait(c.IAllReduceF32(a, collectives.Sum)) }},
		{"IAllReduceBF16+Wait", true, func() error { return wait(c.IAllReduceBF16(a)) }},
		{"IBcastF32+Wait", true, func() error { return wait(c.IBcastF32(a, 0)) }},
		{"AllReduceF32", true, func() error { return c.AllReduceF32(a, collectives.Sum) }},
		{"AllReduceBF16", true, func() error { return c.AllReduceBF16(a) }},
		{"AllGatherVF32", true, func() error { return c.AllGatherVF32(b, a[:m/c.Size()], counts) }},
		{"AlltoallvF32", true, func() error { return c.AlltoallvF32(a, counts, b, counts) }},
	}
}

// childAllocs prints, per rank, the Go heap allocations of one call of
// each of allocCalls on the world and on a serialized communicator (whose
// Wait polls), and fails if one held to zero makes any. Each rank is a
// process, so testing.AllocsPerRun counts that rank's alone.
func childAllocs(world collectives.Comm) int {
	e, err := newEnv(true)
	var ser collectives.Comm
	if err == nil {
		ser, err = newComm(e, world.(*comm).c)
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		world.Abort(1)
	}
	failed := false
	for _, cc := range []struct {
		name string
		c    collectives.Comm
	}{{"world", world}, {"serialized", ser}} {
		for _, tc := range allocCalls(cc.c) {
			var callErr error
			a := testing.AllocsPerRun(50, func() {
				if err := tc.call(); err != nil && callErr == nil {
					callErr = err
				}
			})
			if callErr != nil {
				fmt.Fprintf(os.Stderr, "rank %d: %s: %v\n", world.Rank(), tc.name, callErr)
				world.Abort(1)
			}
			fmt.Printf("rank %d: %s %s: %v allocations per call\n", world.Rank(), cc.name, tc.name, a)
			if tc.want0 && a != 0 {
				failed = true
			}
		}
	}
	if ferr := Finalize(); ferr != nil {
		fmt.Fprintln(os.Stderr, ferr)
		return 1
	}
	if failed {
		fmt.Fprintf(os.Stderr, "rank %d: a call held to zero allocations allocated\n", world.Rank())
		return 1
	}
	if world.Rank() == 0 {
		fmt.Printf("allocs: ok on %d ranks\n", world.Size())
	}
	return 0
}

// TestMPIRunAllocs runs childAllocs on 2 ranks under mpirun and logs the
// counts.
func TestMPIRunAllocs(t *testing.T) {
	if testing.Short() {
		t.Skip("starts mpirun")
	}
	mpirun, err := exec.LookPath("mpirun")
	if err != nil {
		t.Skip("no mpirun in PATH")
	}
	var args []string
	if os.Geteuid() == 0 {
		args = append(args, "--allow-run-as-root")
	}
	args = append(args, "--oversubscribe", "-np", "2", "-x", childEnv, os.Args[0])
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	cmd := exec.CommandContext(ctx, mpirun, args...)
	cmd.Env = append(os.Environ(), childEnv+"=allocs")
	out, err := cmd.CombinedOutput()
	if err != nil || !strings.Contains(string(out), "allocs: ok on 2 ranks") {
		t.Fatalf("%s %s: %v\n%s", mpirun, strings.Join(args, " "), err, out)
	}
	t.Logf("\n%s", out)
}
