//go:build nompi

package mpi

import (
	"errors"
	"os"
	"sync"

	"scalegnn/collectives"
)

// Under -tags nompi the package links no MPI: Init returns a one-rank world
// (a collectives.Local world of one rank whose Abort ends the process, as
// MPI_Abort does), and refuses to start when a launcher started more ranks.
// The MPI library's initialized/finalized state is kept here instead.
var state struct {
	sync.Mutex
	initialized, finalized bool
}

// Built is the library this build links: none.
var Built = noMPI

// Init returns a one-rank world communicator. It fails, with one line
// that says to rebuild with MPI, when the environment shows that mpirun,
// hydra or srun started more than one rank; and, as MPI_Init does, when
// called a second time.
func Init() (collectives.Comm, error) {
	state.Lock()
	defer state.Unlock()
	switch {
	case state.finalized:
		return nil, errors.New("mpi: Init: MPI was already finalized and cannot be initialized again")
	case state.initialized:
		return nil, errors.New("mpi: Init: MPI is already initialized")
	}
	l, err := ReadLaunch(os.Getenv)
	if err == nil {
		err = checkLaunch(l, 1, Built)
	}
	if err != nil {
		return nil, err
	}
	state.initialized = true
	return world{collectives.NewLocalWorld(1)[0]}, nil
}

// Finalize ends the one-rank job; Init cannot be called again.
func Finalize() error {
	state.Lock()
	defer state.Unlock()
	if !state.initialized || state.finalized {
		return errors.New("mpi: Finalize: MPI is not initialized")
	}
	state.finalized = true
	return nil
}

// Initialized reports whether Init has succeeded and Finalize has not been
// called.
func Initialized() bool {
	state.Lock()
	defer state.Unlock()
	return state.initialized && !state.finalized
}

// world is a communicator of the one-rank job: Local's, except that Abort
// ends the process with the code, as Comm promises and MPI_Abort does.
type world struct{ collectives.Comm }

var _ collectives.Comm = world{}

// Abort aborts the local world and exits the process with code.
func (w world) Abort(code int) {
	w.Comm.Abort(code)
	os.Exit(code)
}

// Split returns a communicator of the one-rank job whose Abort also ends
// the process.
func (w world) Split(color, key int) (collectives.Comm, error) {
	c, err := w.Comm.Split(color, key)
	if err != nil {
		return nil, err
	}
	return world{c}, nil
}

var _ collectives.NodeSplitter = world{}

// SplitNode implements collectives.NodeSplitter: the one rank is alone on
// its node.
func (w world) SplitNode() (collectives.Comm, error) {
	c, err := w.Comm.(collectives.NodeSplitter).SplitNode()
	if err != nil {
		return nil, err
	}
	return world{c}, nil
}
