//go:build nompi

package mpi

import (
	"errors"
	"os"
	"os/exec"
	"strings"
	"testing"

	"scalegnn/collectives"
)

func TestCheckLauncher(t *testing.T) {
	for _, tc := range []struct {
		name string
		env  map[string]string
		want string // substring of the error; "" for none
	}{
		{"no launcher", nil, ""},
		{"empty", map[string]string{"PMI_SIZE": ""}, ""},
		{"mpirun -np 1", map[string]string{"OMPI_COMM_WORLD_SIZE": "1"}, ""},
		{"srun -n 1", map[string]string{"SLURM_STEP_NUM_TASKS": "1"}, ""},
		{"batch script", map[string]string{"SLURM_NTASKS": "16"}, ""},
		{"mpirun -np 8", map[string]string{"OMPI_COMM_WORLD_SIZE": "8"},
			"built with -tags nompi and runs one rank, but the launcher started 8 (OMPI_COMM_WORLD_SIZE=8); rebuild without -tags nompi"},
		{"hydra -np 2", map[string]string{"PMI_SIZE": "2", "MPI_LOCALNRANKS": "2"}, "started 2 (PMI_SIZE=2)"},
		{"hydra local", map[string]string{"MPI_LOCALNRANKS": "4"}, "started 4 (MPI_LOCALNRANKS=4)"},
		{"srun -n 3", map[string]string{"SLURM_STEP_NUM_TASKS": "3"}, "started 3 (SLURM_STEP_NUM_TASKS=3)"},
		{"garbage", map[string]string{"PMI_SIZE": "two"}, `PMI_SIZE="two" is not a rank count (want a positive integer)`},
		{"zero", map[string]string{"OMPI_COMM_WORLD_SIZE": "0"}, `OMPI_COMM_WORLD_SIZE="0" is not a rank count`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			l, err := ReadLaunch(func(k string) string { return tc.env[k] })
			if err == nil {
				err = checkLaunch(l, 1, Built)
			}
			switch {
			case tc.want == "" && err != nil:
				t.Errorf("error %v, want none", err)
			case tc.want != "" && (err == nil || !strings.Contains(err.Error(), tc.want)):
				t.Errorf("error %v, want one containing %q", err, tc.want)
			case err != nil && strings.Contains(err.Error(), "\n"):
				t.Errorf("error %q spans several lines", err)
			}
		})
	}
}

// TestInit runs the one-rank world through the conformance suite and
// checks Init's and Finalize's order rules. It is the only test that calls
// Init: the state is per process, as MPI's is.
func TestInit(t *testing.T) {
	for _, k := range rankVars {
		t.Setenv(k, "")
	}
	t.Setenv("PMI_SIZE", "4")
	if _, err := Init(); err == nil || !strings.Contains(err.Error(), "launcher started 4") {
		t.Fatalf("Init under a 4-rank launcher: %v, want an error", err)
	}
	if Initialized() {
		t.Fatal("Initialized() after a failed Init")
	}
	t.Setenv("PMI_SIZE", "1")
	w, err := Init()
	if err != nil {
		t.Fatal(err)
	}
	if !Initialized() || w.Rank() != 0 || w.Size() != 1 {
		t.Fatalf("after Init: Initialized() = %v, rank %d of %d", Initialized(), w.Rank(), w.Size())
	}
	if err := collectives.Conformance(w); err != nil {
		t.Error(err)
	}
	if _, err := Init(); err == nil {
		t.Error("second Init succeeded")
	}
	if err := Finalize(); err != nil {
		t.Fatal(err)
	}
	if Initialized() {
		t.Error("Initialized() after Finalize")
	}
	if err := Finalize(); err == nil {
		t.Error("second Finalize succeeded")
	}
	if _, err := Init(); err == nil {
		t.Error("Init after Finalize succeeded")
	}
}

// TestAbort checks, in a child process, that Abort on a communicator split
// from the world ends the process with the code, as MPI_Abort does.
func TestAbort(t *testing.T) {
	const child = "SCALEGNN_NOMPI_ABORT_CHILD"
	if os.Getenv(child) != "" {
		w, err := Init()
		if err != nil {
			os.Exit(2)
		}
		sub, err := w.Split(0, 0)
		if err != nil {
			os.Exit(2)
		}
		sub.Abort(7)
		os.Exit(0) // not reached when Abort works
	}
	cmd := exec.Command(os.Args[0], "-test.run=^TestAbort$")
	cmd.Env = append(os.Environ(), child+"=1", "OMPI_COMM_WORLD_SIZE=", "PMI_SIZE=", "MPI_LOCALNRANKS=", "SLURM_STEP_NUM_TASKS=")
	err := cmd.Run()
	var ee *exec.ExitError
	if !errors.As(err, &ee) || ee.ExitCode() != 7 {
		t.Fatalf("child that called Abort(7): %v, want exit status 7", err)
	}
}
