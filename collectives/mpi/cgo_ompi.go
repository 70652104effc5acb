//go:build !mpich && !craympi && !nompi

package mpi

// Open MPI (the default): compiler and linker flags from pkg-config.

// #cgo pkg-config: ompi
import "C"

// Built is the library this build links.
var Built = openMPI
