package dataset

import "testing"

type chunkPanic int

// TestParallelChunksPanicReachesCaller: a chunk that panics on a worker
// goroutine panics parallelChunks on the caller with its value.
func TestParallelChunksPanicReachesCaller(t *testing.T) {
	for _, at := range []int{0, 7, 63} {
		got := func() (v any) {
			defer func() { v = recover() }()
			parallelChunks(64, func(c int) {
				if c == at {
					panic(chunkPanic(c))
				}
			})
			return nil
		}()
		if got != chunkPanic(at) {
			t.Errorf("chunk %d: parallelChunks panicked with %v (%T), want chunkPanic(%d)", at, got, got, at)
		}
	}
}
