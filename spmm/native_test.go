package spmm_test

import (
	"fmt"
	"testing"

	"scalegnn/spmm"
	"scalegnn/spmm/spmmtest"
)

func TestNative(t *testing.T) {
	for _, threads := range []int{1, 3} {
		t.Run(fmt.Sprintf("threads=%d", threads), func(t *testing.T) {
			spmmtest.TestBackend(t, spmm.NewNative(threads))
		})
	}
	// The zero value works, with GOMAXPROCS threads.
	t.Run("zero", func(t *testing.T) { spmmtest.TestBackend(t, &spmm.Native{}) })
}

func BenchmarkSpMM(b *testing.B) {
	nt := spmm.NewNative(0)
	b.Run("200k/3.2M/w16", func(b *testing.B) { spmmtest.BenchSpMM(b, nt, 200_000, 3_200_000, 16) })
	b.Run("200k/3.2M/w128", func(b *testing.B) { spmmtest.BenchSpMM(b, nt, 200_000, 3_200_000, 128) })
}

func BenchmarkGemm(b *testing.B) {
	nt := spmm.NewNative(0)
	b.Run("NN/200kx128x128", func(b *testing.B) { spmmtest.BenchGemm(b, nt, spmm.NoTrans, spmm.NoTrans, 200_000, 128, 128) })
	b.Run("TN/128x128x200k", func(b *testing.B) { spmmtest.BenchGemm(b, nt, spmm.Trans, spmm.NoTrans, 128, 128, 200_000) })
	b.Run("NT/200kx128x128", func(b *testing.B) { spmmtest.BenchGemm(b, nt, spmm.NoTrans, spmm.Trans, 200_000, 128, 128) })
}
