package grid

import (
	"fmt"
	"math/rand/v2"
	"testing"

	"scalegnn/collectives"
)

func TestBlockOwner(t *testing.T) {
	for _, n := range []int{0, 1, 2, 7, 10, 13, 64} {
		for parts := 1; parts <= 9; parts++ {
			next := 0
			for i := 0; i < parts; i++ {
				lo, hi := Block(n, parts, i)
				if lo != next || hi < lo || hi-lo > (n+parts-1)/parts || hi-lo < n/parts {
					t.Fatalf("Block(%d, %d, %d) = [%d, %d), want start %d and length %d or %d", n, parts, i, lo, hi, next, n/parts, (n+parts-1)/parts)
				}
				for k := lo; k < hi; k++ {
					if o := Owner(n, parts, k); o != i {
						t.Fatalf("Owner(%d, %d, %d) = %d, want %d", n, parts, k, o, i)
					}
				}
				next = hi
			}
			if next != n {
				t.Fatalf("blocks of %d over %d end at %d", n, parts, next)
			}
		}
	}
}

func TestRotationChainsLayouts(t *testing.T) {
	// The output layout (rows R, cols P) of layer l must be the input layout
	// (rows P, cols Q) of layer l+1.
	for l := 0; l < 7; l++ {
		p, q, r := Rotation(l)
		if p == q || q == r || p == r {
			t.Fatalf("layer %d: axes %v %v %v not distinct", l, p, q, r)
		}
		p1, q1, _ := Rotation(l + 1)
		if p1 != r || q1 != p {
			t.Fatalf("layer %d output (rows %v, cols %v) is not layer %d input (rows %v, cols %v)", l, r, p, l+1, p1, q1)
		}
	}
}

var shapes = []Shape{
	{1, 1, 1, 1}, {1, 2, 2, 2}, {1, 1, 2, 3}, {1, 3, 1, 2}, {2, 2, 1, 2}, {2, 1, 3, 1}, {1, 8, 1, 1}, {1, 1, 1, 8}, {3, 1, 1, 1},
}

func TestShapeCoordsRoundTrip(t *testing.T) {
	for _, s := range shapes {
		seen := map[[4]int]bool{}
		for r := 0; r < s.Ranks(); r++ {
			d, x, y, z := s.Coords(r)
			if s.Rank(d, x, y, z) != r {
				t.Fatalf("%v: rank %d -> (%d,%d,%d,%d) -> %d", s, r, d, x, y, z, s.Rank(d, x, y, z))
			}
			seen[[4]int{d, x, y, z}] = true
		}
		if len(seen) != s.Ranks() {
			t.Fatalf("%v: %d distinct coordinates for %d ranks", s, len(seen), s.Ranks())
		}
	}
	// Y is fastest, then X.
	s := Shape{1, 2, 3, 2}
	if _, x, y, _ := s.Coords(1); x != 0 || y != 1 {
		t.Fatalf("rank 1 of %v at x=%d y=%d, want x=0 y=1", s, x, y)
	}
	if _, x, y, _ := s.Coords(3); x != 1 || y != 0 {
		t.Fatalf("rank 3 of %v at x=%d y=%d, want x=1 y=0", s, x, y)
	}
}

func TestValidateMismatch(t *testing.T) {
	err := Shape{1, 2, 2, 1}.Validate(8)
	if err == nil || err.Error() != "grid 2x2x1 (d=1) has 4 ranks but the job was started with 8" {
		t.Fatalf("got %v", err)
	}
	if err := (Shape{1, 0, 2, 4}).Validate(0); err == nil {
		t.Fatal("zero extent accepted")
	}
}

// TestCommunicators checks that each group holds exactly the ranks that
// share the other coordinates, ordered by the group's own coordinate.
func TestCommunicators(t *testing.T) {
	for _, s := range shapes {
		t.Run(s.String(), func(t *testing.T) {
			errs := collectives.RunLocal(s.Ranks(), func(w collectives.Comm) error {
				g, err := New(w, s)
				if err != nil {
					return err
				}
				check := func(name string, c collectives.Comm, size, rank int, same func(d, x, y, z int) bool) error {
					if c.Size() != size || c.Rank() != rank {
						return fmt.Errorf("%s comm: rank %d of %d, want %d of %d", name, c.Rank(), c.Size(), rank, size)
					}
					// Gather world ranks of the group and compare with the expected set.
					buf := make([]float32, size)
					if err := c.AllGatherF32(buf, []float32{float32(w.Rank())}); err != nil {
						return err
					}
					k := 0
					for r := 0; r < s.Ranks(); r++ {
						d, x, y, z := s.Coords(r)
						if same(d, x, y, z) {
							if int(buf[k]) != r {
								return fmt.Errorf("%s comm member %d is world rank %v, want %d", name, k, buf[k], r)
							}
							k++
						}
					}
					return nil
				}
				if err := check("X", g.XComm, s.X, g.CX, func(d, x, y, z int) bool { return d == g.CD && y == g.CY && z == g.CZ }); err != nil {
					return err
				}
				if err := check("Y", g.YComm, s.Y, g.CY, func(d, x, y, z int) bool { return d == g.CD && x == g.CX && z == g.CZ }); err != nil {
					return err
				}
				if err := check("Z", g.ZComm, s.Z, g.CZ, func(d, x, y, z int) bool { return d == g.CD && x == g.CX && y == g.CY }); err != nil {
					return err
				}
				if err := check("DP", g.DP, s.D, g.CD, func(d, x, y, z int) bool { return x == g.CX && y == g.CY && z == g.CZ }); err != nil {
					return err
				}
				return check("3D", g.Cube, s.X*s.Y*s.Z, g.CubeRank(g.CX, g.CY, g.CZ), func(d, x, y, z int) bool { return d == g.CD })
			})
			for r, err := range errs {
				if err != nil {
					t.Fatalf("rank %d: %v", r, err)
				}
			}
		})
	}
}

// TestRedistribute moves a known matrix between every pair of layouts, with
// and without a row permutation, and compares each destination block with
// the serial matrix.
func TestRedistribute(t *testing.T) {
	const rows, cols = 13, 7
	rng := rand.New(rand.NewPCG(1, 2))
	full := make([]float32, rows*cols)
	for i := range full {
		full[i] = float32(i) + 0.5
	}
	perm := make([]int32, rows)
	for i, p := range rng.Perm(rows) {
		perm[i] = int32(p)
	}
	axes := [][2]Axis{{X, Y}, {Y, Z}, {Z, X}, {Y, X}, {X, Z}, {Z, Y}}
	for _, s := range []Shape{{1, 1, 1, 1}, {1, 2, 2, 2}, {1, 1, 2, 3}, {1, 3, 1, 2}, {2, 2, 1, 2}, {1, 1, 5, 1}} {
		for variant, rowMap := range [][]int32{nil, perm, perm} {
			for _, sa := range axes {
				for _, da := range axes {
					srcL := Layout{Rows: rows, Cols: cols, RowAxis: sa[0], ColAxis: sa[1]}
					dstL := Layout{Rows: rows, Cols: cols, RowAxis: da[0], ColAxis: da[1]}
					if variant == 2 {
						// Uneven blocks, some empty, as a mini-batch has.
						srcL.RowBounds = skewedBounds(rows, s.Size(sa[0]))
						dstL.RowBounds = skewedBounds(rows, s.Size(da[0]))
					}
					errs := collectives.RunLocal(s.Ranks(), func(w collectives.Comm) error {
						g, err := New(w, s)
						if err != nil {
							return err
						}
						// Source rows are in "source order": position i holds
						// the row that lands at rowMap[i].
						r0, r1, c0, c1 := g.Local(srcL)
						src := make([]float32, 0, (r1-r0)*(c1-c0))
						for i := r0; i < r1; i++ {
							d := i
							if rowMap != nil {
								d = int(rowMap[i])
							}
							src = append(src, full[d*cols+c0:d*cols+c1]...)
						}
						q0, q1, e0, e1 := g.Local(dstL)
						dst := make([]float32, (q1-q0)*(e1-e0))
						if err := g.Redistribute(dst, dstL, src, srcL, rowMap); err != nil {
							return err
						}
						for i := q0; i < q1; i++ {
							for j := e0; j < e1; j++ {
								if got, want := dst[(i-q0)*(e1-e0)+j-e0], full[i*cols+j]; got != want {
									return fmt.Errorf("dst(%d,%d) = %v, want %v", i, j, got, want)
								}
							}
						}
						return nil
					})
					for r, err := range errs {
						if err != nil {
							t.Fatalf("%v %v -> %v perm=%v rank %d: %v", s, srcL, dstL, rowMap != nil, r, err)
						}
					}
				}
			}
		}
	}
}

// skewedBounds splits n rows into parts blocks of quadratically growing
// size; the first blocks are empty when parts is large.
func skewedBounds(n, parts int) []int {
	b := make([]int, parts+1)
	for i := range b {
		b[i] = n * i * i / (parts * parts)
	}
	return b
}
