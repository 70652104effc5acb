//go:build !cblas_generic && !cblas_custom && !noblas

package cpu

// By default the package links OpenBLAS. See the package documentation for
// the cblas_generic and cblas_custom build tags.

// #cgo LDFLAGS: -lopenblas
import "C"
