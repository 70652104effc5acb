package device_test

import (
	"testing"

	"scalegnn/collectives"
	"scalegnn/device"
)

// TestCollectives runs the buffer collectives on a local world of three
// ranks against the sums and maxima computed on the host.
func TestCollectives(t *testing.T) {
	const ranks, n = 3, 5
	errs := collectives.RunLocal(ranks, func(c collectives.Comm) error {
		dev := device.NewNative(1)
		r := float32(c.Rank())
		vals := []float32{r, 2 * r, -r, 0.5, 1 + r}
		buf := device.Alloc[float32](dev, n)
		device.Upload(dev, buf, 0, vals)
		if err := device.AllReduce(dev, c, buf, collectives.Sum); err != nil {
			return err
		}
		got := make([]float32, n)
		device.Download(dev, got, buf, 0)
		want := []float32{3, 6, -3, 1.5, 6} // ranks 0, 1, 2
		for k := range want {
			if got[k] != want[k] {
				t.Errorf("rank %d: AllReduce Sum = %v, want %v", c.Rank(), got, want)
				break
			}
		}
		device.Upload(dev, buf, 0, vals)
		req, err := device.IAllReduce(dev, c, buf, collectives.Max)
		if err != nil {
			return err
		}
		if err := req.Wait(); err != nil {
			return err
		}
		device.Download(dev, got, buf, 0)
		if got[0] != 2 || got[2] != 0 || got[4] != 3 {
			t.Errorf("rank %d: IAllReduce Max = %v, want [2 4 0 0.5 3]", c.Rank(), got)
		}
		arg := device.Alloc[int64](dev, 2)
		device.Upload(dev, arg, 0, []int64{int64(10 - c.Rank()), 7})
		if err := device.AllReduceI64(dev, c, arg, collectives.Min); err != nil {
			return err
		}
		gi := make([]int64, 2)
		device.Download(dev, gi, arg, 0)
		if gi[0] != 8 || gi[1] != 7 {
			t.Errorf("rank %d: AllReduceI64 Min = %v, want [8 7]", c.Rank(), gi)
		}
		device.Upload(dev, buf, 0, []float32{1, 1.00390625, 3, 0, -1})
		if err := device.AllReduceBF16(dev, c, buf); err != nil {
			return err
		}
		device.Download(dev, got, buf, 0)
		if got[0] != 3 || got[2] != 9 || got[4] != -3 {
			t.Errorf("rank %d: AllReduceBF16 = %v, want [3 3 9 0 -3]", c.Rank(), got)
		}
		return nil
	})
	for r, err := range errs {
		if err != nil {
			t.Errorf("rank %d: %v", r, err)
		}
	}
}
