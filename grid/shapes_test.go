package grid

import (
	"encoding/json"
	"slices"
	"testing"
)

// bruteShapes lists the shapes of ranks ranks by trying every extent, in
// the order Shapes promises.
func bruteShapes(ranks, d int) []Shape {
	var out []Shape
	for gd := 1; gd <= ranks; gd++ {
		for x := 1; x <= ranks; x++ {
			for y := 1; y <= ranks; y++ {
				for z := 1; z <= ranks; z++ {
					if gd*x*y*z == ranks && (d == 0 || gd == d) {
						out = append(out, Shape{D: gd, X: x, Y: y, Z: z})
					}
				}
			}
		}
	}
	return out
}

func TestShapesAreEveryFactorisation(t *testing.T) {
	for ranks := 1; ranks <= 36; ranks++ {
		for d := 0; d <= ranks+1; d++ {
			got, want := Shapes(ranks, d), bruteShapes(ranks, d)
			if !slices.Equal(got, want) {
				t.Fatalf("Shapes(%d, %d) = %v, want %v", ranks, d, got, want)
			}
		}
	}
	// Counts a reader can check by hand: ten ordered factorisations of 8,
	// twenty with replicas (10 + 6 + 3 + 1).
	if n := len(Shapes(8, 1)); n != 10 {
		t.Errorf("Shapes(8, 1): %d shapes, want 10", n)
	}
	if n := len(Shapes(8, 0)); n != 20 {
		t.Errorf("Shapes(8, 0): %d shapes, want 20", n)
	}
	if s := Shapes(6, 4); s != nil {
		t.Errorf("Shapes(6, 4) = %v, want none", s)
	}
}

func TestShapesPanicsOnMisuse(t *testing.T) {
	for _, c := range [][2]int{{0, 0}, {-1, 1}, {8, -1}} {
		func() {
			defer func() {
				if recover() == nil {
					t.Errorf("Shapes(%d, %d) did not panic", c[0], c[1])
				}
			}()
			Shapes(c[0], c[1])
		}()
	}
}

func TestDivisors(t *testing.T) {
	for _, c := range []struct {
		n    int
		want []int
	}{{1, []int{1}}, {12, []int{1, 2, 3, 4, 6, 12}}, {16, []int{1, 2, 4, 8, 16}}, {13, []int{1, 13}}, {0, nil}} {
		if got := Divisors(c.n); !slices.Equal(got, c.want) {
			t.Errorf("Divisors(%d) = %v, want %v", c.n, got, c.want)
		}
	}
}

func TestParseShape(t *testing.T) {
	for _, c := range []struct {
		in   string
		want Shape
	}{
		{"2x2x2", Shape{1, 2, 2, 2}},
		{" 1x5x1 ", Shape{1, 1, 5, 1}},
		{"2x2x1 (d=2)", Shape{2, 2, 2, 1}},
		{"3x1x2 (d=1)", Shape{1, 3, 1, 2}},
		{"2x2x1(d=4)", Shape{4, 2, 2, 1}},
		{"d=2 1x3x1", Shape{2, 1, 3, 1}},
		{"d=1 8x1x1", Shape{1, 8, 1, 1}},
	} {
		got, err := ParseShape(c.in)
		if err != nil || got != c.want {
			t.Errorf("ParseShape(%q) = %v, %v; want %v", c.in, got, err, c.want)
		}
	}
	for _, in := range []string{"", "2x2", "2x2x2x2", "0x2x2", "2x-1x2", "axbxc", "2x2x2 (d=0)", "2x2x2 (d=)", "2x2x2 (e=2)",
		"2x2x2 (d=2", "d=2", "d=0 2x2x2", "d=2 2x2x2 (d=2)", "2.0x2x2", "2x2x2 d=2", "2X2X2"} {
		if s, err := ParseShape(in); err == nil {
			t.Errorf("ParseShape(%q) = %v, want an error", in, s)
		}
	}
}

// TestShapeTextRoundTrips: every shape reads back from String, from
// perfmodel's "d=D XxYxZ" and from JSON, where it is written as String.
func TestShapeTextRoundTrips(t *testing.T) {
	for _, s := range Shapes(12, 0) {
		if got, err := ParseShape(s.String()); err != nil || got != s {
			t.Fatalf("ParseShape(%q) = %v, %v", s.String(), got, err)
		}
		b, err := json.Marshal(map[string]Shape{"grid": s})
		if err != nil {
			t.Fatal(err)
		}
		if want := `{"grid":"` + s.String() + `"}`; string(b) != want {
			t.Fatalf("JSON %s, want %s", b, want)
		}
		var back map[string]Shape
		if err := json.Unmarshal(b, &back); err != nil || back["grid"] != s {
			t.Fatalf("JSON %s read back as %v, %v", b, back, err)
		}
	}
	var s Shape
	if err := json.Unmarshal([]byte(`"2x2"`), &s); err == nil {
		t.Fatal("a malformed grid in JSON read without an error")
	}
}
