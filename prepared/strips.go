package prepared

import (
	"bufio"
	"encoding/binary"
	"fmt"
	"io"
	"math"
	"os"
	"path/filepath"
)

// strips are temporary files, one per row block, that Prepare buckets the
// edges into: record (row position, column vertex[, weight]) as
// little-endian int32, int32[, float32].
type strips struct {
	files    []*os.File
	bufs     []*bufio.Writer
	counts   []int64
	weighted bool
	rec      int // bytes per record
}

func newStrips(dir, prefix string, s int, weighted bool) (*strips, error) {
	st := &strips{weighted: weighted, rec: 8, counts: make([]int64, s)}
	if weighted {
		st.rec = 12
	}
	for i := range s {
		f, err := os.Create(filepath.Join(dir, fmt.Sprintf("%s%d.bin", prefix, i)))
		if err != nil {
			st.close()
			return nil, err
		}
		st.files = append(st.files, f)
		st.bufs = append(st.bufs, bufio.NewWriterSize(f, 1<<18))
	}
	return st, nil
}

func (st *strips) add(i int, row, col int32, w float32) error {
	var b [12]byte
	binary.LittleEndian.PutUint32(b[0:], uint32(row))
	binary.LittleEndian.PutUint32(b[4:], uint32(col))
	binary.LittleEndian.PutUint32(b[8:], math.Float32bits(w))
	st.counts[i]++
	_, err := st.bufs[i].Write(b[:st.rec])
	return err
}

// finish flushes every strip.
func (st *strips) finish() error {
	for i, b := range st.bufs {
		if err := b.Flush(); err != nil {
			return fmt.Errorf("writing %s: %w", st.files[i].Name(), err)
		}
	}
	return nil
}

func (st *strips) close() {
	for _, f := range st.files {
		f.Close()
	}
}

// read returns strip i's records as keys row<<32 | col and, when weighted,
// the weights.
func (st *strips) read(i int) (keys []uint64, ws []float32, err error) {
	f := st.files[i]
	if _, err := f.Seek(0, io.SeekStart); err != nil {
		return nil, nil, err
	}
	n := st.counts[i]
	keys = make([]uint64, n)
	if st.weighted {
		ws = make([]float32, n)
	}
	buf := make([]byte, st.rec<<16)
	for k0 := int64(0); k0 < n; k0 += 1 << 16 {
		cnt := min(n-k0, 1<<16)
		b := buf[:cnt*int64(st.rec)]
		if _, err := io.ReadFull(f, b); err != nil {
			return nil, nil, fmt.Errorf("reading back %s: %w", f.Name(), err)
		}
		for k := range cnt {
			r := b[k*int64(st.rec):]
			keys[k0+k] = uint64(binary.LittleEndian.Uint32(r[0:]))<<32 | uint64(binary.LittleEndian.Uint32(r[4:]))
			if ws != nil {
				ws[k0+k] = math.Float32frombits(binary.LittleEndian.Uint32(r[8:]))
			}
		}
	}
	return keys, ws, nil
}
