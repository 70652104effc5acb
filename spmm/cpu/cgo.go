package cpu

// Compiler flags for the C files of this package. The SpMM kernel is bound
// by memory latency, so x86-64-v2 (SSE4.2, every x86-64 CPU since about
// 2009) loses nothing against AVX2/AVX-512 builds; arm64 needs no flags.

/*
#cgo CFLAGS: -O3 -std=gnu11 -Wall
#cgo amd64 CFLAGS: -march=x86-64-v2
*/
import "C"
