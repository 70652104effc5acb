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
		if err := device.AllReduceBF16(dev, c, buf, device.Buffer[uint16]{}); err != nil {
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

// packedComm adds AllReduceBF16Packed to a communicator, through its
// AllReduceBF16 (bfloat16 values survive the float32 round trip exactly),
// and counts the calls.
type packedComm struct {
	collectives.Comm
	calls int
}

func (c *packedComm) AllReduceBF16Packed(h []uint16) error {
	f := make([]float32, len(h))
	collectives.DecodeBF16(f, h)
	if err := c.AllReduceBF16(f); err != nil {
		return err
	}
	collectives.EncodeBF16(h, f)
	c.calls++
	return nil
}

func (c *packedComm) IAllReduceBF16Packed(h []uint16) (collectives.Request, error) {
	f := make([]float32, len(h))
	collectives.DecodeBF16(f, h)
	req, err := c.IAllReduceBF16(f)
	if err != nil {
		return nil, err
	}
	c.calls++
	return encodeOnWait{req, h, f}, nil
}

type encodeOnWait struct {
	req collectives.Request
	h   []uint16
	f   []float32
}

func (e encodeOnWait) Wait() error {
	if err := e.req.Wait(); err != nil {
		return err
	}
	collectives.EncodeBF16(e.h, e.f)
	return nil
}

// TestAllReduceBF16Packed checks that packing on the device for a
// communicator that takes packed values gives the bits of the float32 path.
func TestAllReduceBF16Packed(t *testing.T) {
	const n = 1000
	for _, open := range []func() device.Device{
		func() device.Device { return device.NewNative(1) },
		func() device.Device { d, _ := device.Open("cpu", 2); return d },
	} {
		errs := collectives.RunLocal(3, func(c collectives.Comm) error {
			dev := open()
			if dev == nil {
				return nil // no cgo
			}
			vals := make([]float32, n)
			for k := range vals {
				vals[k] = float32(k*(c.Rank()+1)) / 7
			}
			direct := append([]float32(nil), vals...)
			if err := c.AllReduceBF16(direct); err != nil {
				return err
			}
			buf := device.Alloc[float32](dev, n)
			device.Upload(dev, buf, 0, vals)
			pc := &packedComm{Comm: c}
			if err := device.AllReduceBF16(dev, pc, buf, device.Alloc[uint16](dev, n+5)); err != nil {
				return err
			}
			got := make([]float32, n)
			device.Download(dev, got, buf, 0)
			// Nonblocking, on the same values.
			nb := device.Alloc[float32](dev, n)
			device.Upload(dev, nb, 0, vals)
			req, err := device.IAllReduceBF16(dev, pc, nb, device.Alloc[uint16](dev, n))
			if err != nil {
				return err
			}
			if err := req.Wait(); err != nil {
				return err
			}
			gotNB := make([]float32, n)
			device.Download(dev, gotNB, nb, 0)
			if pc.calls != 2 {
				t.Errorf("%s rank %d: %d packed calls, want 2", dev.Name(), c.Rank(), pc.calls)
			}
			for k := range got {
				if got[k] != direct[k] || gotNB[k] != direct[k] {
					t.Errorf("%s rank %d: element %d = %g (blocking), %g (nonblocking), float32 path %g",
						dev.Name(), c.Rank(), k, got[k], gotNB[k], direct[k])
					break
				}
			}
			return nil
		})
		for r, err := range errs {
			if err != nil {
				t.Errorf("rank %d: %v", r, err)
			}
		}
	}
}
