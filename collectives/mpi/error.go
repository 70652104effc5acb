package mpi

import "fmt"

// Error is a failed MPI call: the call's name and its return code, with
// the text MPI_Error_string gives for it.
type Error struct {
	Call string // the MPI function, e.g. "MPI_Allreduce"
	Code int    // the MPI error code
	Text string // MPI_Error_string of Code
}

// Error returns the call, MPI's text and the code.
func (e *Error) Error() string {
	return fmt.Sprintf("%s: %s (MPI error code %d)", e.Call, e.Text, e.Code)
}
