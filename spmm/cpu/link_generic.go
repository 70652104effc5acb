//go:build cblas_generic && !cblas_custom && !noblas

package cpu

// With -tags cblas_generic the package links -lblas: the system's default
// BLAS, which on Debian and Ubuntu (update-alternatives) and with FlexiBLAS
// is whichever implementation is selected there, all of which export the
// cblas_* symbols.

// #cgo LDFLAGS: -lblas
import "C"
