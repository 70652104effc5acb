//go:build craympi && !nompi

package mpi

// Cray MPICH (build with -tags craympi and CC=cc): the compiler wrapper
// supplies the flags.

// Built is the library this build links.
var Built = crayMPICH
