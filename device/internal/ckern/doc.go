// Package ckern holds the C element-wise kernels of the CPU device: the
// only cgo in package device's tree. Each function runs one kernel on a
// range of rows (or elements, or columns) of row-major operands given as
// slices and leading dimensions, on the calling goroutine; device.CPU
// splits ranges over its worker goroutines and checks every shape before
// calling, so these functions trust their arguments (a wrong length would
// make C read or write outside the slices). The float operations mirror
// the Go reference (device.Native) in order and rounding, with contraction
// into fused multiply-adds turned off, so the results are bit-identical.
//
// docs/architecture.md shows how this package fits with the others.
package ckern
