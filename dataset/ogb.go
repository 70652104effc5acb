package dataset

import (
	"io"
	"math"
	"strconv"
	"strings"
)

// The parsers below read the CSV files of the Open Graph Benchmark's raw
// node-property-prediction layout (ogbn-*/raw and ogbn-*/split/<scheme>):
// no header lines, comma-separated fields, usually gzipped (see OpenText).

// ReadOGBNumNodes reads raw/num-node-list.csv: a single line with the
// number of vertices (node-property datasets are one graph).
func ReadOGBNumNodes(r io.Reader, file string) (int, error) {
	lr := newLineReader(r, file)
	n := -1
	for {
		s, ok := lr.next()
		if !ok {
			break
		}
		if n >= 0 {
			return 0, lr.errorf("expected a single line (one graph), got a second one %s", quote(s))
		}
		x, err := strconv.ParseInt(strings.TrimSpace(s), 10, 32)
		if err != nil || x < 1 {
			return 0, lr.errorf("expected the number of vertices, an integer in [1, 2^31), got %s", quote(s))
		}
		n = int(x)
	}
	if err := lr.err(); err != nil {
		return 0, err
	}
	if n < 0 {
		return 0, errAt(file, 0, "empty file: expected the number of vertices")
	}
	return n, nil
}

// ReadOGBEdges streams raw/edge.csv: "u,v" per line with vertex ids in
// [0, n), in batches handed to emit (the slices are reused after it
// returns).
func ReadOGBEdges(r io.Reader, file string, n int, emit func(us, vs []int32) error) error {
	lr := newLineReader(r, file)
	us, vs := make([]int32, 0, batchSize), make([]int32, 0, batchSize)
	for {
		s, ok := lr.next()
		if !ok {
			break
		}
		a, b, found := strings.Cut(s, ",")
		u, okU := parseIndex(strings.TrimSpace(a), n)
		v, okV := parseIndex(strings.TrimSpace(b), n)
		if !found || !okU || !okV {
			return lr.errorf(`expected "<u>,<v>" with integer vertex ids in [0, %d), got %s`, n, quote(s))
		}
		us, vs = append(us, u), append(vs, v)
		if len(us) == batchSize {
			if err := emit(us, vs); err != nil {
				return err
			}
			us, vs = us[:0], vs[:0]
		}
	}
	if err := lr.err(); err != nil {
		return err
	}
	if len(us) > 0 {
		return emit(us, vs)
	}
	return nil
}

// ReadOGBFeatures streams raw/node-feat.csv: exactly n lines of f
// comma-separated finite numbers, row i being vertex i's features. f is
// fixed by the first line. Rows are handed to emit in batches: v0 is the
// first row's vertex and rows holds whole rows, row-major (reused after
// emit returns).
func ReadOGBFeatures(r io.Reader, file string, n int, emit func(v0 int, rows []float32, f int) error) (f int, err error) {
	lr := newLineReader(r, file)
	var rows []float32
	v0, row := 0, 0
	for {
		s, ok := lr.next()
		if !ok {
			break
		}
		if row == n {
			return 0, lr.errorf("more than %d lines: expected one line per vertex", n)
		}
		fields := strings.Split(s, ",")
		if f == 0 {
			f = len(fields)
			rows = make([]float32, 0, max(1, batchSize/f)*f)
		}
		if len(fields) != f {
			return 0, lr.errorf("%d values, but the first line has %d: expected %d comma-separated numbers per line", len(fields), f, f)
		}
		for j, x := range fields {
			v, err := strconv.ParseFloat(strings.TrimSpace(x), 32)
			if err != nil || math.IsNaN(v) || math.IsInf(v, 0) {
				return 0, lr.errorf("value %d is %q: expected a finite float32", j+1, x)
			}
			rows = append(rows, float32(v))
		}
		row++
		if len(rows) == cap(rows) {
			if err := emit(v0, rows, f); err != nil {
				return 0, err
			}
			v0, rows = row, rows[:0]
		}
	}
	if err := lr.err(); err != nil {
		return 0, err
	}
	if row != n {
		return 0, errAt(file, 0, "%d lines: expected one line per vertex, %d", row, n)
	}
	if len(rows) > 0 {
		if err := emit(v0, rows, f); err != nil {
			return 0, err
		}
	}
	return f, nil
}

// ReadOGBLabels reads raw/node-label.csv: exactly n lines, each a class in
// [0, 2^31-1) written as an integer or an integral float ("3", "3.0"), or
// "nan" (or empty) for an unlabeled vertex, returned as -1. A line with
// several values (a multi-label dataset) is an error: scalegnn trains
// single-label classifiers.
func ReadOGBLabels(r io.Reader, file string, n int) ([]int32, error) {
	lr := newLineReader(r, file)
	labels := make([]int32, 0, n)
	for {
		s, ok := lr.next()
		if !ok {
			break
		}
		if len(labels) == n {
			return nil, lr.errorf("more than %d lines: expected one line per vertex", n)
		}
		if strings.Contains(s, ",") {
			return nil, lr.errorf("%d values on a line: multi-label datasets are not supported (expected one class per line)", strings.Count(s, ",")+1)
		}
		t := strings.TrimSpace(s)
		if strings.EqualFold(t, "nan") {
			labels = append(labels, -1)
			continue
		}
		x, err := strconv.ParseFloat(t, 64)
		if err != nil || x != math.Trunc(x) || x < 0 || x >= math.MaxInt32 {
			return nil, lr.errorf("expected a class, a non-negative integer (or nan for none), got %s", quote(s))
		}
		labels = append(labels, int32(x))
	}
	if err := lr.err(); err != nil {
		return nil, err
	}
	if len(labels) != n {
		return nil, errAt(file, 0, "%d lines: expected one line per vertex, %d", len(labels), n)
	}
	return labels, nil
}

// ReadOGBSplit reads split/<scheme>/{train,valid,test}.csv: one vertex id
// in [0, n) per line, each at most once. It returns the ids and the line
// of each (for messages about them).
func ReadOGBSplit(r io.Reader, file string, n int) (ids, lines []int32, err error) {
	lr := newLineReader(r, file)
	seen := map[int32]int32{}
	for {
		s, ok := lr.next()
		if !ok {
			break
		}
		id, ok := parseIndex(strings.TrimSpace(s), n)
		if !ok {
			return nil, nil, lr.errorf("expected a vertex id, an integer in [0, %d), got %s", n, quote(s))
		}
		if l, dup := seen[id]; dup {
			return nil, nil, lr.errorf("vertex %d listed twice (first on line %d)", id, l)
		}
		seen[id] = int32(lr.line)
		ids, lines = append(ids, id), append(lines, int32(lr.line))
	}
	if err := lr.err(); err != nil {
		return nil, nil, err
	}
	return ids, lines, nil
}
