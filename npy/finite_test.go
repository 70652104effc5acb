package npy

import (
	"bytes"
	"math"
	"strings"
	"testing"
)

// TestFillFinite: FillFiniteFloat32 reads finite arrays as FillFloat32
// does and names the first NaN or infinity by row and column.
func TestFillFinite(t *testing.T) {
	for _, c := range []struct {
		bad  float32
		at   int
		want string
	}{
		{float32(math.NaN()), 7, "a.npy: row 2, column 1 is NaN: expected a finite number"},
		{float32(math.Inf(-1)), 0, "a.npy: row 0, column 0 is -Inf: expected a finite number"},
		{1e38, -1, ""},
	} {
		x := []float32{0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11}
		if c.at >= 0 {
			x[c.at] = c.bad
		} else {
			x[3] = c.bad
		}
		var b bytes.Buffer
		w, err := NewWriter(&b, Float32, 4, 3)
		if err == nil {
			err = w.WriteFloat32(x)
		}
		if err == nil {
			err = w.Close()
		}
		if err != nil {
			t.Fatal(err)
		}
		r, err := Parse(b.Bytes(), "a.npy")
		if err != nil {
			t.Fatal(err)
		}
		got := make([]float32, 12)
		err = r.FillFiniteFloat32(got)
		if c.want == "" {
			if err != nil || got[3] != c.bad {
				t.Fatalf("finite array: %v", err)
			}
			continue
		}
		if err == nil || err.Error() != c.want || strings.Contains(err.Error(), "\n") {
			t.Errorf("got %v, want %q", err, c.want)
		}
	}
}
