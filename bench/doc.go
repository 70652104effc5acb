// Package bench holds the end-to-end benchmarks that need the fast CPU
// backend (spmm/cpu, a cgo package): training epochs of gcn on in-process
// grids and mini-batch prefetching in jobs. They live here, not beside the
// code they time, so that gcn and jobs import no cgo package and vet and
// test with CGO_ENABLED=0. The folder also holds benchmark job files
// (sbm-200k.toml). Run them with make bench.
//
// docs/architecture.md shows how this package fits with the others.
package bench
