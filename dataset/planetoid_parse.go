package dataset

import (
	"io"
	"math"
	"strconv"
	"strings"
)

// The parsers below read one file each of the Planetoid text format (see
// planetoid/README.md). They take the file's name for messages and the
// sizes known so far, and check every value against them, so that the
// assembled Graph needs no further range checks.

// parseIndex parses a decimal vertex, column or class index in [0, n).
func parseIndex(s string, n int) (int32, bool) {
	x, err := strconv.ParseInt(s, 10, 32)
	if err != nil || x < 0 || x >= int64(n) {
		return 0, false
	}
	return int32(x), true
}

// parseEdges reads "<u>\t<v>" lines with ids in [0, n). The list is
// returned as read: direction, duplicates and self loops are the
// caller's business (symmetricAdj).
func parseEdges(r io.Reader, file string, n int) (us, vs []int32, err error) {
	lr := newLineReader(r, file)
	for {
		s, ok := lr.next()
		if !ok {
			break
		}
		f := strings.Fields(s)
		okU, okV := false, false
		var u, v int32
		if len(f) == 2 {
			u, okU = parseIndex(f[0], n)
			v, okV = parseIndex(f[1], n)
		}
		if !okU || !okV {
			return nil, nil, lr.errorf(`expected "<u>\t<v>" with integer vertex ids in [0, %d), got %s`, n, quote(s))
		}
		us = append(us, u)
		vs = append(vs, v)
	}
	if err := lr.err(); err != nil {
		return nil, nil, err
	}
	return us, vs, nil
}

// parseLabels reads "<node>\t<class>" lines, one for every node, class -1
// for an unlabeled node. n < 0 means the node count is not known yet: it
// is then the number of lines. classes < 0 means any class >= 0 is
// accepted (the caller derives the count).
func parseLabels(r io.Reader, file string, n, classes int) ([]int32, error) {
	lr := newLineReader(r, file)
	type entry struct{ node, label, line int32 }
	var es []entry
	maxNode := n
	if n < 0 {
		maxNode = math.MaxInt32
	}
	maxClass := classes
	if classes < 0 {
		maxClass = math.MaxInt32
	}
	for {
		s, ok := lr.next()
		if !ok {
			break
		}
		f := strings.Fields(s)
		okN, okL := false, false
		var node, label int32
		if len(f) == 2 {
			node, okN = parseIndex(f[0], maxNode)
			if f[1] == "-1" {
				label, okL = -1, true
			} else {
				label, okL = parseIndex(f[1], maxClass)
			}
		}
		if !okN || !okL {
			nodes, cls := "a non-negative integer", "-1 or a non-negative integer"
			if n >= 0 {
				nodes = "an integer in [0, " + strconv.Itoa(n) + ")"
			}
			if classes >= 0 {
				cls = "-1 or an integer in [0, " + strconv.Itoa(classes) + ")"
			}
			return nil, lr.errorf(`expected "<node>\t<class>" with node %s and class %s, got %s`, nodes, cls, quote(s))
		}
		if len(es) == math.MaxInt32 {
			return nil, lr.errorf("more than %d lines", math.MaxInt32)
		}
		es = append(es, entry{node, label, int32(lr.line)})
	}
	if err := lr.err(); err != nil {
		return nil, err
	}
	if n < 0 {
		n = len(es)
	}
	labels := make([]int32, n)
	first := make([]int32, n) // line of each node's label; 0 = none yet
	for _, e := range es {
		if int(e.node) >= n {
			return nil, errAt(file, int(e.line), "node %d out of range: the file has one line per node, so ids must be in [0, %d)", e.node, n)
		}
		if l := first[e.node]; l != 0 {
			return nil, errAt(file, int(e.line), "node %d listed twice (first on line %d)", e.node, l)
		}
		first[e.node] = e.line
		labels[e.node] = e.label
	}
	for i, l := range first {
		if l == 0 {
			return nil, errAt(file, 0, "no line for node %d; expected one line per node 0..%d (class -1 for an unlabeled node)", i, n-1)
		}
	}
	return labels, nil
}

// maxDenseFeatures bounds N·F so that a corrupt count cannot ask for an
// absurd allocation; 2^32 float32 values are 16 GiB.
const maxDenseFeatures = 1 << 32

// maxInferredWidth bounds the feature width taken from the largest column
// when meta.toml does not give it, so that one stray huge column index is
// an error rather than a dense matrix of that width.
const maxInferredWidth = 1 << 22

// parseFeatures reads "<node>\t<col>:<value> <col>:<value> ..." lines into
// a dense n×width matrix. Nodes without a line get a zero row. f < 0 means
// the width is not known: it is then one more than the largest column.
func parseFeatures(r io.Reader, file string, n, f int) (x []float32, width int, err error) {
	lr := newLineReader(r, file)
	maxCol := f
	if f < 0 {
		maxCol = maxInferredWidth
	}
	var rows, cols []int32
	var vals []float32
	rowLine := make([]int32, n) // line of each node's row; 0 = none
	width = f
	for {
		s, ok := lr.next()
		if !ok {
			break
		}
		toks := strings.Fields(s)
		var node int32
		okN := false
		if len(toks) >= 1 {
			node, okN = parseIndex(toks[0], n)
		}
		if !okN {
			return nil, 0, lr.errorf(`expected "<node>\t<col>:<value> ..." with node an integer in [0, %d), got %s`, n, quote(s))
		}
		if l := rowLine[node]; l != 0 {
			return nil, 0, lr.errorf("node %d listed twice (first on line %d)", node, l)
		}
		rowLine[node] = int32(lr.line)
		for _, t := range toks[1:] {
			c, v, ok := strings.Cut(t, ":")
			col, okC := parseIndex(c, maxCol)
			val, errV := strconv.ParseFloat(v, 32)
			if !ok || !okC || errV != nil || math.IsInf(val, 0) || math.IsNaN(val) {
				cr := "an integer in [0, " + strconv.Itoa(maxInferredWidth) + ") (give features in meta.toml for wider rows)"
				if f >= 0 {
					cr = "an integer in [0, " + strconv.Itoa(f) + ")"
				}
				return nil, 0, lr.errorf(`expected entries "<col>:<value>" with col %s and a finite value, got %q in %s`, cr, t, quote(s))
			}
			if f < 0 && int(col) >= width {
				width = int(col) + 1
			}
			rows = append(rows, node)
			cols = append(cols, col)
			vals = append(vals, float32(val))
		}
	}
	if err := lr.err(); err != nil {
		return nil, 0, err
	}
	if width < 0 {
		width = 0
	}
	if width > 0 && n > maxDenseFeatures/width {
		return nil, 0, errAt(file, 0, "a %d×%d dense feature matrix is too large; check the largest column index and the feature count", n, width)
	}
	x = make([]float32, n*width)
	// lastRow[c] is the last node that set column c. Each node has one line,
	// so a column repeated within a line shows as the same node twice.
	lastRow := make([]int32, width)
	for c := range lastRow {
		lastRow[c] = -1
	}
	for k, node := range rows {
		c := cols[k]
		if lastRow[c] == node {
			return nil, 0, errAt(file, int(rowLine[node]), "column %d given twice for node %d", c, node)
		}
		lastRow[c] = node
		x[int(node)*width+int(c)] = vals[k]
	}
	return x, width, nil
}

// parseSplit reads one node index in [0, n) per line, each at most once,
// and returns the indices with their line numbers.
func parseSplit(r io.Reader, file string, n int) (ids, lines []int32, err error) {
	lr := newLineReader(r, file)
	first := make([]int32, n)
	for {
		s, ok := lr.next()
		if !ok {
			break
		}
		f := strings.Fields(s)
		var id int32
		ok = false
		if len(f) == 1 {
			id, ok = parseIndex(f[0], n)
		}
		if !ok {
			return nil, nil, lr.errorf("expected one node index, an integer in [0, %d), got %s", n, quote(s))
		}
		if l := first[id]; l != 0 {
			return nil, nil, lr.errorf("node %d listed twice (first on line %d)", id, l)
		}
		first[id] = int32(lr.line)
		ids = append(ids, id)
		lines = append(lines, int32(lr.line))
	}
	if err := lr.err(); err != nil {
		return nil, nil, err
	}
	return ids, lines, nil
}

// parseClassNames reads "<class>\t<name>" lines, one for each class
// 0..C-1 where C is the number of lines. A name may contain spaces.
func parseClassNames(r io.Reader, file string) ([]string, error) {
	lr := newLineReader(r, file)
	type entry struct {
		class, line int
		name        string
	}
	var es []entry
	for {
		s, ok := lr.next()
		if !ok {
			break
		}
		t := strings.TrimSpace(s)
		i := strings.IndexAny(t, " \t")
		var class int32
		ok = false
		var name string
		if i > 0 {
			class, ok = parseIndex(t[:i], math.MaxInt32)
			name = strings.TrimSpace(t[i:])
		}
		if !ok || name == "" {
			return nil, lr.errorf(`expected "<class>\t<name>" with class a non-negative integer and a non-empty name, got %s`, quote(s))
		}
		es = append(es, entry{int(class), lr.line, name})
	}
	if err := lr.err(); err != nil {
		return nil, err
	}
	names := make([]string, len(es))
	first := make([]int, len(es))
	for _, e := range es {
		if e.class >= len(es) {
			return nil, errAt(file, e.line, "class %d out of range: the file has one line per class, so classes must be in [0, %d)", e.class, len(es))
		}
		if l := first[e.class]; l != 0 {
			return nil, errAt(file, e.line, "class %d listed twice (first on line %d)", e.class, l)
		}
		first[e.class] = e.line
		names[e.class] = e.name
	}
	return names, nil
}
