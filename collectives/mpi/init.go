//go:build !nompi

package mpi

// #include "shim.h"
import "C"

import (
	"errors"
	"fmt"
	"os"
	"runtime"

	"scalegnn/collectives"
)

// Init initializes MPI with MPI_Init_thread, requesting
// MPI_THREAD_MULTIPLE, and returns the world communicator. It fails if MPI
// provides less than MPI_THREAD_SERIALIZED (goroutines move between OS
// threads, so MPI_THREAD_FUNNELED is not enough). It sets
// MPI_ERRORS_RETURN on MPI_COMM_WORLD, so that failed calls come back as
// errors instead of ending the job, and locks the calling goroutine to its
// OS thread until Finalize.
//
// A process that a launcher started as one of several ranks but that MPI
// put in a world of its own (srun with the wrong --mpi, another MPI's
// launcher) ends MPI and gets a *LaunchError naming the launcher, this
// build's library and the --mpi to use.
//
// Signals: Open MPI (checked with 4.1) installs its SIGSEGV/SIGBUS/SIGFPE
// handlers only where no handler is installed yet, so the Go runtime's stay
// in place and a nil dereference is still a recoverable panic.
func Init() (collectives.Comm, error) {
	if initialized, finalized, err := state(); err != nil {
		return nil, err
	} else if finalized {
		return nil, errors.New("mpi: Init: MPI was already finalized and cannot be initialized again")
	} else if initialized {
		return nil, errors.New("mpi: Init: MPI is already initialized")
	}
	runtime.LockOSThread()
	var provided C.int
	if err := check("MPI_Init_thread", C.sg_init_thread(C.sg_thread_multiple(), &provided)); err != nil {
		runtime.UnlockOSThread()
		return nil, fmt.Errorf("mpi: Init: %w", err)
	}
	if provided < C.sg_thread_serialized() {
		err := fmt.Errorf("mpi: Init: MPI provides thread level %d, below MPI_THREAD_SERIALIZED (%d), which Go needs",
			int(provided), int(C.sg_thread_serialized()))
		if ferr := Finalize(); ferr != nil {
			err = errors.Join(err, ferr)
		}
		return nil, err
	}
	e, err := newEnv(provided < C.sg_thread_multiple())
	if err != nil {
		return nil, fmt.Errorf("mpi: Init: %w", err)
	}
	c, err := newComm(e, e.world)
	if err != nil {
		return nil, fmt.Errorf("mpi: Init: %w", err)
	}
	e.singleton = c.size == 1 && singleton(os.Getenv)
	if l, lerr := ReadLaunch(os.Getenv); lerr == nil {
		// MPI's world is what counts; a launcher variable it cannot
		// read says nothing here.
		if err := checkLaunch(l, c.size, Built); err != nil {
			if ferr := Finalize(); ferr != nil {
				err = errors.Join(err, ferr)
			}
			return nil, err
		}
	}
	return c, nil
}

// Finalize finalizes MPI (MPI_Finalize) and unlocks the goroutine that
// called Init from its OS thread. Call it from that goroutine, after every
// rank has finished communicating.
func Finalize() error {
	err := check("MPI_Finalize", C.MPI_Finalize())
	runtime.UnlockOSThread()
	if err != nil {
		return fmt.Errorf("mpi: Finalize: %w", err)
	}
	return nil
}

// Initialized reports whether MPI has been initialized and not yet
// finalized.
func Initialized() bool {
	initialized, finalized, err := state()
	return err == nil && initialized && !finalized
}

// state asks MPI whether it has been initialized and finalized. Both calls
// are allowed before MPI_Init and after MPI_Finalize.
func state() (initialized, finalized bool, err error) {
	var i, f C.int
	if err := check("MPI_Initialized", C.MPI_Initialized(&i)); err != nil {
		return false, false, fmt.Errorf("mpi: %w", err)
	}
	if err := check("MPI_Finalized", C.MPI_Finalized(&f)); err != nil {
		return false, false, fmt.Errorf("mpi: %w", err)
	}
	return i != 0, f != 0, nil
}
