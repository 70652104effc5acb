package prepared

import (
	"bufio"
	"encoding/binary"
	"fmt"
	"io"
	"math"
	"os"
	"time"
)

// progress prints "prepare: <phase> <p>%" lines every 10 percent, and
// counts of streamed items every 2^24.
type progress struct {
	w     io.Writer
	start time.Time
	phase string
	last  int64
}

func newProgress(w io.Writer) *progress { return &progress{w: w, start: time.Now()} }

func (p *progress) printf(format string, args ...any) {
	if p.w != nil {
		fmt.Fprintf(p.w, "prepare: %s [%.1fs]\n", fmt.Sprintf(format, args...), time.Since(p.start).Seconds())
	}
}

func (p *progress) percent(phase string, done, total int) {
	if p.w == nil || total <= 0 {
		return
	}
	pc := int64(done * 100 / total)
	if phase != p.phase {
		p.phase, p.last = phase, -1
	}
	if pc/10 > p.last/10 || (pc == 100 && p.last != 100) {
		p.last = pc
		p.printf("%s %d%%", phase, pc)
	}
}

func (p *progress) count(phase string, n int64) {
	if p.w == nil {
		return
	}
	if phase != p.phase {
		p.phase, p.last = phase, 0
	}
	if n>>24 > p.last>>24 {
		p.last = n
		p.printf("%s: %d", phase, n)
	}
}

// outBuf writes feature rows to a temporary strip: position (int32) and
// the row (float32s), little-endian.
type outBuf struct {
	bw  *bufio.Writer
	tmp []byte
}

func newOutBuf(f *os.File) *outBuf { return &outBuf{bw: bufio.NewWriterSize(f, 1<<18)} }

func (o *outBuf) row(pos int32, x []float32) error {
	o.tmp = binary.LittleEndian.AppendUint32(o.tmp[:0], uint32(pos))
	for _, v := range x {
		o.tmp = binary.LittleEndian.AppendUint32(o.tmp, math.Float32bits(v))
	}
	_, err := o.bw.Write(o.tmp)
	return err
}

func (o *outBuf) flush() error { return o.bw.Flush() }

// readFeatureStrip reads back a strip of rows [r0, r1) into x, checking
// that every row came exactly once.
func readFeatureStrip(f *os.File, r0, r1, width int, x []float32) error {
	if _, err := f.Seek(0, io.SeekStart); err != nil {
		return err
	}
	br := bufio.NewReaderSize(f, 1<<20)
	seen := make([]bool, r1-r0)
	rec := make([]byte, 4+4*width)
	for range r1 - r0 {
		if _, err := io.ReadFull(br, rec); err != nil {
			return fmt.Errorf("reading back %s: %w", f.Name(), err)
		}
		pos := int(int32(binary.LittleEndian.Uint32(rec))) - r0
		if pos < 0 || pos >= len(seen) || seen[pos] {
			return fmt.Errorf("%s: %w", f.Name(), errFeatureStrip)
		}
		seen[pos] = true
		row := x[pos*width : (pos+1)*width]
		for j := range row {
			row[j] = math.Float32frombits(binary.LittleEndian.Uint32(rec[4+4*j:]))
		}
	}
	if _, err := br.ReadByte(); err != io.EOF {
		return fmt.Errorf("%s: %w", f.Name(), errFeatureStrip)
	}
	return nil
}
