package cpu

// Compiler flags for the C files of this package. The baseline is
// x86-64-v2 (SSE4.2, every x86-64 CPU since about 2009); spmm.c compiles
// its kernel a second and third time for AVX2 and AVX-512 with function
// target attributes and picks one at run time; a pragma there keeps those
// from fusing a·b + c into an FMA (cgo refuses -ffp-contract=off here),
// which rounds once instead of twice: results must not depend on the CPU.
// arm64 needs no -march flag.

/*
#cgo CFLAGS: -O3 -std=gnu11 -Wall
#cgo amd64 CFLAGS: -march=x86-64-v2
*/
import "C"
