package ckern

// Contraction into fused multiply-adds, which would change the last bit
// against Go on targets that have them (arm64, x86-64-v3), is turned off
// by pragmas at the top of kern.c: cgo does not allow -ffp-contract.

/*
#cgo CFLAGS: -O3 -std=gnu11 -Wall
#cgo amd64 CFLAGS: -march=x86-64-v2
#cgo LDFLAGS: -lm
*/
import "C"
