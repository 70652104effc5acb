//go:build mpich && !craympi && !nompi

package mpi

// MPICH (build with -tags mpich): compiler and linker flags from
// pkg-config.

// #cgo pkg-config: mpich
import "C"

// Built is the library this build links.
var Built = mpich
