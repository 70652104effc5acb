package dataset

import (
	"bytes"
	"errors"
	"math"
	"testing"
)

// The fuzz targets feed arbitrary text to each parser: it must return
// either a ParseError or values within the ranges it was given, and never
// panic. Run one with e.g. go test -fuzz FuzzParseEdges ./dataset.

const fuzzN, fuzzF, fuzzC = 5, 4, 3

func checkParseError(t *testing.T, err error) {
	t.Helper()
	var pe *ParseError
	if !errors.As(err, &pe) {
		t.Fatalf("error %v is not a *ParseError", err)
	}
	if pe.File != "f.txt" || pe.Msg == "" || pe.Line < 0 {
		t.Fatalf("bad ParseError %+v", pe)
	}
}

func FuzzParseEdges(f *testing.F) {
	for _, s := range []string{"0\t1\n1\t0\n", "12\tabc\n", "0 4\r\n\n3\t3", "-1\t2", "4294967296\t1", "1\t"} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		us, vs, err := parseEdges(bytes.NewReader(b), "f.txt", fuzzN)
		if err != nil {
			checkParseError(t, err)
			return
		}
		if len(us) != len(vs) {
			t.Fatal("lengths differ")
		}
		for k := range us {
			if us[k] < 0 || us[k] >= fuzzN || vs[k] < 0 || vs[k] >= fuzzN {
				t.Fatalf("edge (%d, %d) out of range", us[k], vs[k])
			}
		}
		a := symmetricAdj(fuzzN, us, vs)
		if err := a.Validate(); err != nil {
			t.Fatal(err)
		}
	})
}

func FuzzParseFeatures(f *testing.F) {
	for _, s := range []string{"0\t0:1 2:1\n1\t1:0.5\n", "0\t1:1 1:1", "4\t3:1e38\n", "0\t2:1e39", "3\t0:NaN", "2", "1\t:", "0\t0:-0"} {
		f.Add([]byte(s), true)
	}
	f.Fuzz(func(t *testing.T, b []byte, knownWidth bool) {
		width := fuzzF
		if !knownWidth {
			width = -1
		}
		x, w, err := parseFeatures(bytes.NewReader(b), "f.txt", fuzzN, width)
		if err != nil {
			checkParseError(t, err)
			return
		}
		if (knownWidth && w != fuzzF) || w < 0 || len(x) != fuzzN*w {
			t.Fatalf("width %d, %d values", w, len(x))
		}
		for _, v := range x {
			if math.IsNaN(float64(v)) || math.IsInf(float64(v), 0) {
				t.Fatalf("non-finite feature %g", v)
			}
		}
	})
}

func FuzzParseLabels(f *testing.F) {
	for _, s := range []string{"0\t0\n1\t2\n2\t-1\n3\t1\n4\t0\n", "0\t0\n0\t1\n", "1\t1\n0\t0\n", "0\t-2", "2\t1\n"} {
		f.Add([]byte(s), true, true)
	}
	f.Fuzz(func(t *testing.T, b []byte, knownN, knownC bool) {
		n, c := fuzzN, fuzzC
		if !knownN {
			n = -1
		}
		if !knownC {
			c = -1
		}
		labels, err := parseLabels(bytes.NewReader(b), "f.txt", n, c)
		if err != nil {
			checkParseError(t, err)
			return
		}
		if knownN && len(labels) != fuzzN {
			t.Fatalf("%d labels", len(labels))
		}
		for _, l := range labels {
			if l < -1 || (knownC && l >= fuzzC) {
				t.Fatalf("label %d", l)
			}
		}
	})
}

func FuzzParseSplit(f *testing.F) {
	for _, s := range []string{"0\n1\n4\n", "5\n", "1\n1\n", "x", " 3 \r\n"} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		ids, lines, err := parseSplit(bytes.NewReader(b), "f.txt", fuzzN)
		if err != nil {
			checkParseError(t, err)
			return
		}
		checkSplitIDs(t, ids, lines)
	})
}

func FuzzParseClassNames(f *testing.F) {
	for _, s := range []string{"0\tTheory\n1\tCase Based\n", "1\tA\n", "0\t\n", "0\tA\n0\tB\n"} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		names, err := parseClassNames(bytes.NewReader(b), "f.txt")
		if err != nil {
			checkParseError(t, err)
			return
		}
		for _, s := range names {
			if s == "" {
				t.Fatal("empty class name")
			}
		}
	})
}

func FuzzParseMeta(f *testing.F) {
	for _, s := range []string{"nodes = 2708\nfeatures = 1433 # width\nclasses = 7\nedges = 5278\n", "nodes=1_000", "edges = -1", "x = 1", "nodes = 1\nnodes = 2", "= 3"} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		m, err := parseMeta(bytes.NewReader(b), "f.txt")
		if err != nil {
			checkParseError(t, err)
			return
		}
		if m.Nodes == 0 || m.Nodes < -1 || m.Features == 0 || m.Features < -1 || m.Classes == 0 || m.Classes < -1 || m.Edges < -1 {
			t.Fatalf("meta %+v", m)
		}
	})
}

// checkSplitIDs fails unless a parsed split holds distinct vertex ids in
// [0, fuzzN), each from a line number >= 1.
func checkSplitIDs(t *testing.T, ids, lines []int32) {
	t.Helper()
	seen := map[int32]bool{}
	for k, id := range ids {
		if id < 0 || id >= fuzzN || seen[id] || lines[k] < 1 {
			t.Fatalf("id %d at line %d", id, lines[k])
		}
		seen[id] = true
	}
}
