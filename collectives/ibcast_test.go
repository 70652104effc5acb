package collectives

import (
	"fmt"
	"testing"
)

// TestIBcastF32: two broadcasts in flight at once from different roots
// arrive intact, an empty one synchronises, and the counters record the
// payload like BcastF32.
func TestIBcastF32(t *testing.T) {
	for _, n := range []int{1, 3, 4} {
		errs := RunLocal(n, func(c Comm) error {
			a := []float32{float32(c.Rank()), 1, 2}
			b := []float32{float32(10 * c.Rank())}
			ra, err := c.IBcastF32(a, 0)
			if err != nil {
				return err
			}
			rb, err := c.IBcastF32(b, n-1)
			if err != nil {
				return err
			}
			re, err := c.IBcastF32(nil, 0)
			if err != nil {
				return err
			}
			for _, r := range []Request{rb, ra, re} {
				if err := r.Wait(); err != nil {
					return err
				}
			}
			if a[0] != 0 || a[1] != 1 || a[2] != 2 || b[0] != float32(10*(n-1)) {
				return fmt.Errorf("rank %d of %d: got %v and %v, want [0 1 2] and [%d]", c.Rank(), n, a, b, 10*(n-1))
			}
			if got := c.Counters().Bytes(KindBcast); got != 16 {
				return fmt.Errorf("rank %d: %d bcast bytes counted, want 16", c.Rank(), got)
			}
			if _, err := c.IBcastF32(a, n); err == nil {
				return fmt.Errorf("rank %d: root %d of %d accepted", c.Rank(), n, n)
			}
			return nil
		})
		for _, err := range errs {
			if err != nil {
				t.Error(err)
			}
		}
	}
}
