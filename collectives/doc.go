// Package collectives owns communication between ranks: the Comm interface
// that every distributed algorithm in scalegnn is written against, the byte
// counters that the performance model is checked with, and Local, an
// in-process implementation in which goroutines play the ranks and data
// really moves between them, so that distributed algorithms are tested by
// `go test` without MPI. DType, the element type of the 3D-PMM all-reduces
// (float32 or bf16), is the typed option the job file and the performance
// model decode into.
//
// The MPI implementation lives in the leaf package collectives/mpi, the only
// cgo binding to MPI in the project.
//
// docs/architecture.md shows how this package fits with the others.
package collectives
