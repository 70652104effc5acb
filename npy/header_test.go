package npy

import (
	"strings"
	"testing"
)

// TestHeaderShapeErrors checks that each kind of bad shape is named as
// what it is: a number too large is not reported as a negative one, and
// a product that would overflow int64 is refused, not wrapped.
func TestHeaderShapeErrors(t *testing.T) {
	for _, tc := range []struct {
		shape string
		want  string // "" means valid
	}{
		{"(4611686018427387904,)", "shape entry 4611686018427387904 is too large (at most 2^40)"}, // 2^62
		{"(18446744073709551616,)", "shape entry 18446744073709551616 is too large"},              // 2^64: beyond int64
		{"(1099511627777,)", "shape entry 1099511627777 is too large"},                            // 2^40+1
		{"(-1,)", `shape entry "-1" is not a non-negative integer`},
		{"(x,)", `shape entry "x" is not a non-negative integer`},
		{"(1099511627776, 1099511627776)", "more than 2^40 elements"}, // 2^80 wraps int64 to 0
		{"(1048576, 1048577)", "more than 2^40 elements"},
		{"(1099511627776,)", ""},
		{"(1048576, 1048576)", ""},
		{"(0, 1099511627776)", ""},
		{"(3L, 2)", ""},
	} {
		text := "{'descr': '<f4', 'fortran_order': False, 'shape': " + tc.shape + ", }"
		h := append([]byte("\x93NUMPY\x01\x00"), byte(len(text)), 0)
		_, err := ReadHeader(strings.NewReader(string(append(h, text...))))
		switch {
		case tc.want == "" && err != nil:
			t.Errorf("shape %s: %v, want no error", tc.shape, err)
		case tc.want != "" && (err == nil || !strings.Contains(err.Error(), tc.want)):
			t.Errorf("shape %s: error %v, want one containing %q", tc.shape, err, tc.want)
		}
	}
}
