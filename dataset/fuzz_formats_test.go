package dataset

import (
	"bytes"
	"errors"
	"math"
	"testing"
)

// Fuzz targets of the edge list and OGB parsers: a *ParseError or values
// within the given ranges, never a panic. Seed corpora are checked in under
// testdata/fuzz/<FuzzName>/.

var errStop = errors.New("stop")

func FuzzReadEdgeList(f *testing.F) {
	for _, s := range []string{"0 1\n1\t2\n", "# c\n0 1 0.5\n2 3 1e-3 # w\n", "0 1\n2 3 4\n", "0 1 nan", "0 1 1e39", "0 9", "-1 2", "0 1\r\n\n  \n3 4"} {
		f.Add([]byte(s), false)
	}
	f.Fuzz(func(t *testing.T, b []byte, stop bool) {
		edges := 0
		w, err := ReadEdgeList(bytes.NewReader(b), "f.txt", fuzzN, func(us, vs []int32, ws []float32) error {
			if len(us) != len(vs) || (ws != nil && len(ws) != len(us)) {
				t.Fatal("batch lengths differ")
			}
			for k := range us {
				if us[k] < 0 || us[k] >= fuzzN || vs[k] < 0 || vs[k] >= fuzzN {
					t.Fatalf("edge (%d, %d) out of range", us[k], vs[k])
				}
				if ws != nil && (math.IsNaN(float64(ws[k])) || math.IsInf(float64(ws[k]), 0)) {
					t.Fatalf("weight %g", ws[k])
				}
			}
			edges += len(us)
			if stop {
				return errStop
			}
			return nil
		})
		if errors.Is(err, errStop) {
			return
		}
		if err != nil {
			checkParseError(t, err)
			return
		}
		_ = w
	})
}

func FuzzOGBNumNodes(f *testing.F) {
	for _, s := range []string{"2708\n", "0", "1\n2\n", "x", "2147483648", ""} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		n, err := ReadOGBNumNodes(bytes.NewReader(b), "f.txt")
		if err != nil {
			checkParseError(t, err)
			return
		}
		if n < 1 {
			t.Fatalf("%d vertices", n)
		}
	})
}

func FuzzOGBEdges(f *testing.F) {
	for _, s := range []string{"0,1\n4,3\n", "0, 1", "0,5", "0;1", "1,2,3", ",", "0,1\r\n"} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		err := ReadOGBEdges(bytes.NewReader(b), "f.txt", fuzzN, func(us, vs []int32) error {
			for k := range us {
				if us[k] < 0 || us[k] >= fuzzN || vs[k] < 0 || vs[k] >= fuzzN {
					t.Fatalf("edge (%d, %d) out of range", us[k], vs[k])
				}
			}
			return nil
		})
		if err != nil {
			checkParseError(t, err)
		}
	})
}

func FuzzOGBFeatures(f *testing.F) {
	for _, s := range []string{"1,2\n3,4\n5,6\n7,8\n9,0\n", "1\n2\n3\n4\n5\n6\n", "1,2\n3\n", "nan,1\n", "1e39\n", "-0.5,1e-3\n1,2\n1,2\n1,2\n1,2\n"} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		rows := 0
		width, err := ReadOGBFeatures(bytes.NewReader(b), "f.txt", fuzzN, func(v0 int, x []float32, w int) error {
			if v0 != rows || w < 1 || len(x)%w != 0 {
				t.Fatalf("batch at %d of %d values, width %d, after %d rows", v0, len(x), w, rows)
			}
			for _, v := range x {
				if math.IsNaN(float64(v)) || math.IsInf(float64(v), 0) {
					t.Fatalf("feature %g", v)
				}
			}
			rows += len(x) / w
			return nil
		})
		if err != nil {
			checkParseError(t, err)
			return
		}
		if rows != fuzzN || width < 1 {
			t.Fatalf("%d rows of width %d", rows, width)
		}
	})
}

func FuzzOGBLabels(f *testing.F) {
	for _, s := range []string{"0\n1\n2\nnan\n1.0\n", "0,1\n", "1.5\n", "-1\n", "0\n0\n0\n0\n0\n0\n", "3e9"} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		labels, err := ReadOGBLabels(bytes.NewReader(b), "f.txt", fuzzN)
		if err != nil {
			checkParseError(t, err)
			return
		}
		if len(labels) != fuzzN {
			t.Fatalf("%d labels", len(labels))
		}
		for _, l := range labels {
			if l < -1 {
				t.Fatalf("label %d", l)
			}
		}
	})
}

func FuzzOGBSplit(f *testing.F) {
	for _, s := range []string{"0\n3\n", "3\n3\n", "5", "x", " 1 \r\n"} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		ids, lines, err := ReadOGBSplit(bytes.NewReader(b), "f.txt", fuzzN)
		if err != nil {
			checkParseError(t, err)
			return
		}
		checkSplitIDs(t, ids, lines)
	})
}
