package grid

import (
	"fmt"
	"math"
	"math/rand/v2"
	"testing"

	"scalegnn/collectives"
	"scalegnn/internal/alloctest"
)

// redistCase is one redistribution of the serial rows×cols matrix full.
type redistCase struct {
	srcL, dstL Layout
	rowMap     []int32
}

// blocks returns this rank's source block of c (rows in source order:
// position i holds the row that lands at rowMap[i]) and a destination
// buffer.
func (c redistCase) blocks(g *Grid, full []float32) (src, dst []float32) {
	cols := c.srcL.Cols
	r0, r1, c0, c1 := g.Local(c.srcL)
	for i := r0; i < r1; i++ {
		d := i
		if c.rowMap != nil {
			d = int(c.rowMap[i])
		}
		src = append(src, full[d*cols+c0:d*cols+c1]...)
	}
	q0, q1, e0, e1 := g.Local(c.dstL)
	return src, make([]float32, (q1-q0)*(e1-e0))
}

// check compares this rank's destination block with full.
func (c redistCase) check(g *Grid, full, dst []float32) error {
	cols := c.dstL.Cols
	q0, q1, e0, e1 := g.Local(c.dstL)
	for i := q0; i < q1; i++ {
		for j := e0; j < e1; j++ {
			if got, want := dst[(i-q0)*(e1-e0)+j-e0], full[i*cols+j]; got != want {
				return fmt.Errorf("%v -> %v: dst(%d,%d) = %v, want %v", c.srcL, c.dstL, i, j, got, want)
			}
		}
	}
	return nil
}

func randPerm(rng *rand.Rand, n int, into []int32) []int32 {
	if into == nil {
		into = make([]int32, n)
	}
	for i, p := range rng.Perm(n) {
		into[i] = int32(p)
	}
	return into
}

// TestRedistributeReusesPlans runs redistributions on the same grids in
// passes that find cached plans (a few cases twice), evict them (more
// cases than a Grid keeps plans for) and rebuild them in the storage of
// others; before the last pass the row map is rewritten in place, which
// must not find the plans of the old one.
func TestRedistributeReusesPlans(t *testing.T) {
	const rows, cols = 17, 6
	full := make([]float32, rows*cols)
	for i := range full {
		full[i] = float32(i) + 0.25
	}
	rng := rand.New(rand.NewPCG(3, 4))
	perm := randPerm(rng, rows, nil)
	axes := [][2]Axis{{X, Y}, {Y, Z}, {Z, X}, {Y, X}}
	for _, s := range []Shape{{1, 2, 2, 2}, {2, 2, 1, 2}, {1, 1, 2, 3}} {
		var cases []redistCase
		for _, rowMap := range [][]int32{perm, nil} {
			for _, sa := range axes {
				for _, da := range axes[:2] {
					srcL := Layout{Rows: rows, Cols: cols, RowAxis: sa[0], ColAxis: sa[1]}
					dstL := Layout{Rows: rows, Cols: cols, RowAxis: da[0], ColAxis: da[1]}
					if rowMap != nil && sa == da {
						srcL.RowBounds = skewedBounds(rows, s.Size(sa[0]))
					}
					cases = append(cases, redistCase{srcL, dstL, rowMap})
				}
			}
		}
		if len(cases) <= maxPlans {
			t.Fatalf("%d cases do not overflow the %d plans", len(cases), maxPlans)
		}
		// The ranks rewrite the shared row map between passes, so they
		// meet at world barriers first.
		next := randPerm(rand.New(rand.NewPCG(5, 6)), rows, nil)
		errs := collectives.RunLocal(s.Ranks(), func(w collectives.Comm) error {
			g, err := New(w, s)
			if err != nil {
				return err
			}
			few, all := cases[:maxPlans/2], cases
			for pass, cs := range [][]redistCase{few, few, all, few, few} {
				if pass == 4 {
					if err := w.Barrier(); err != nil {
						return err
					}
					if w.Rank() == 0 {
						copy(perm, next)
					}
					if err := w.Barrier(); err != nil {
						return err
					}
				}
				for _, c := range cs {
					src, dst := c.blocks(g, full)
					if err := g.Redistribute(dst, c.dstL, src, c.srcL, c.rowMap); err != nil {
						return err
					}
					if err := c.check(g, full, dst); err != nil {
						return fmt.Errorf("pass %d: %w", pass, err)
					}
				}
			}
			return nil
		})
		for r, err := range errs {
			if err != nil {
				t.Fatalf("%v rank %d: %v", s, r, err)
			}
		}
	}
}

// TestRedistributeAllocatesNothing: repeating the redistributions of a
// step (no more than the plans a Grid keeps) allocates nothing on any
// rank once the plans are built.
func TestRedistributeAllocatesNothing(t *testing.T) {
	const rows, cols, runs = 40, 8, 20
	full := make([]float32, rows*cols)
	for i := range full {
		full[i] = float32(i)
	}
	perm := randPerm(rand.New(rand.NewPCG(7, 8)), rows, nil)
	for _, s := range []Shape{{1, 2, 1, 1}, {1, 1, 2, 2}, {1, 2, 2, 2}, {2, 2, 1, 1}} {
		cases := []redistCase{
			{Layout{Rows: rows, Cols: cols, RowAxis: X, ColAxis: Y}, Layout{Rows: rows, Cols: cols, RowAxis: Y, ColAxis: X}, perm},
			{Layout{Rows: rows, Cols: cols, RowAxis: Z, ColAxis: Y}, Layout{Rows: rows, Cols: cols, RowAxis: X, ColAxis: Y}, nil},
			{Layout{Rows: rows, Cols: cols, RowAxis: Y, ColAxis: Z}, Layout{Rows: rows, Cols: cols, RowAxis: Z, ColAxis: X}, perm},
		}
		least := math.Inf(1)
		for range 3 {
			m := alloctest.NewMeter(s.Ranks())
			errs := collectives.RunLocal(s.Ranks(), func(w collectives.Comm) error {
				g, err := New(w, s)
				if err != nil {
					return err
				}
				srcs, dsts := make([][]float32, len(cases)), make([][]float32, len(cases))
				for i, c := range cases {
					srcs[i], dsts[i] = c.blocks(g, full)
				}
				step := func() error {
					for i, c := range cases {
						if err := g.Redistribute(dsts[i], c.dstL, srcs[i], c.srcL, c.rowMap); err != nil {
							return err
						}
					}
					return nil
				}
				for k := range 2*runs + 1 {
					switch k {
					case runs / 2:
						m.GC()
					case runs:
						m.Start()
					}
					if err := step(); err != nil {
						return err
					}
				}
				m.Stop()
				for i, c := range cases {
					if err := c.check(g, full, dsts[i]); err != nil {
						return err
					}
				}
				return nil
			})
			for r, err := range errs {
				if err != nil {
					t.Fatalf("%v rank %d: %v", s, r, err)
				}
			}
			least = min(least, float64(m.Mallocs())/(runs+1))
		}
		if least != 0 {
			t.Errorf("%v: a step of %d redistributions allocates %v times (all ranks), want 0", s, len(cases), least)
		}
	}
}
