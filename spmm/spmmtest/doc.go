// Package spmmtest holds the conformance tests and benchmarks that every
// spmm.Backend shares, in the style of gonum's testblas: a backend's own
// test file calls TestBackend and the Bench helpers with an instance, so all
// backends are checked against the same float64 reference on the same cases.
//
// docs/architecture.md shows how this package fits with the others.
package spmmtest
