package dataset

import (
	"io"
	"math"
	"strconv"
	"strings"
)

// ReadEdgeList streams a text edge list from r: one edge "u v" or weighted
// edge "u v w" per line, fields separated by spaces or tabs, vertex ids in
// [0, n), weights finite numbers. Blank lines are skipped and '#' starts a
// comment that runs to the end of the line. The first edge decides whether
// the list is weighted; every later edge must have the same number of
// fields. Edges are handed to emit in batches, in file order, with ws nil
// for an unweighted list; the slices are reused after emit returns.
// Direction, duplicates and self loops are the caller's business.
//
// file names r in messages; a malformed line is a *ParseError naming the
// file and the line.
func ReadEdgeList(r io.Reader, file string, n int, emit func(us, vs []int32, ws []float32) error) (weighted bool, err error) {
	lr := newLineReader(r, file)
	us, vs := make([]int32, 0, batchSize), make([]int32, 0, batchSize)
	var ws []float32
	fields := 0 // 2 or 3 once the first edge is read
	flush := func() error {
		if len(us) == 0 {
			return nil
		}
		var w []float32
		if fields == 3 {
			w = ws
		}
		err := emit(us, vs, w)
		us, vs, ws = us[:0], vs[:0], ws[:0]
		return err
	}
	for {
		s, ok := lr.next()
		if !ok {
			break
		}
		if k := strings.IndexByte(s, '#'); k >= 0 {
			s = s[:k]
		}
		f := strings.Fields(s)
		if len(f) == 0 {
			continue
		}
		if fields == 0 && (len(f) == 2 || len(f) == 3) {
			fields = len(f)
			if fields == 3 {
				ws = make([]float32, 0, batchSize)
			}
		}
		want := `"<u> <v>"`
		if fields == 3 {
			want = `"<u> <v> <weight>"`
		}
		if len(f) != fields {
			if fields == 0 {
				want = `"<u> <v>" or "<u> <v> <weight>"`
			}
			return false, lr.errorf("expected %s (as on the first edge line), got %s", want, quote(s))
		}
		u, okU := parseIndex(f[0], n)
		v, okV := parseIndex(f[1], n)
		if !okU || !okV {
			return false, lr.errorf("expected %s with integer vertex ids in [0, %d), got %s", want, n, quote(s))
		}
		us, vs = append(us, u), append(vs, v)
		if fields == 3 {
			w, err := strconv.ParseFloat(f[2], 32)
			if err != nil || math.IsNaN(w) || math.IsInf(w, 0) {
				return false, lr.errorf("expected a finite float32 weight, got %q", f[2])
			}
			ws = append(ws, float32(w))
		}
		if len(us) == batchSize {
			if err := flush(); err != nil {
				return false, err
			}
		}
	}
	if err := lr.err(); err != nil {
		return false, err
	}
	if err := flush(); err != nil {
		return false, err
	}
	return fields == 3, nil
}
