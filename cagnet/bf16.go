package cagnet

import (
	"scalegnn/collectives"
	"scalegnn/device"
)

// ibcastBF16 starts a broadcast of buf over c from root in bfloat16: the
// root packs buf (device.PackBF16, round to nearest even) and every rank
// receives the packed values, which Wait unpacks into buf on the other
// ranks (the root keeps its float32 values). collectives offers float32
// and byte broadcasts only, and only the float32 one is nonblocking, so
// the packed halfwords travel two to a float32 word: a broadcast copies
// bits and does no arithmetic, so any pattern arrives unchanged. The
// counters therefore see ⌈n/2⌉ float32 elements (perfmodel's trace says
// the same). pack is the caller's device staging of at least buf.Len()
// halfwords; it is used only inside this call and inside Wait, so
// overlapping broadcasts (waited in order) and the all-reduce may share it.
// host is the broadcast's host staging, grown here and kept by the caller
// (one per broadcast in flight), and req its request, filled and returned:
// a steady stage allocates nothing.
func ibcastBF16(dev device.Device, c collectives.Comm, buf device.Buffer[float32], pack device.Buffer[uint16], root int, host *[]uint16, req *bf16Bcast) (collectives.Request, error) {
	n := buf.Len()
	if c.Size() == 1 || n == 0 {
		return doneRequest{}, nil
	}
	st := pack.Slice(0, n)
	if c.Rank() == root {
		dev.PackBF16(st, buf)
	}
	r, err := ibcastHalfwords(dev, c, st, root, host, req)
	if err != nil {
		return nil, err
	}
	req.buf, req.unpack = buf, true
	return r, nil
}

// ibcastHalfwords starts a broadcast of the bfloat16 buf over c from
// root, two halfwords to a float32 word as ibcastBF16 sends them (the
// same calls and bytes), without a conversion: the root downloads buf,
// the others upload what they receive into buf on Wait. host and req are
// ibcastBF16's.
func ibcastHalfwords(dev device.Device, c collectives.Comm, buf device.Buffer[uint16], root int, host *[]uint16, req *bf16Bcast) (collectives.Request, error) {
	n := buf.Len()
	if c.Size() == 1 || n == 0 {
		return doneRequest{}, nil
	}
	if cap(*host) < n+n%2 {
		*host = make([]uint16, n+n%2)
	}
	h := (*host)[:n+n%2]
	if c.Rank() == root {
		device.Download(dev, h[:n], buf, 0)
	}
	r, err := c.IBcastF32(collectives.Words(h), root)
	if err != nil {
		return nil, err
	}
	*req = bf16Bcast{r: r, dev: dev, st: buf, host: h[:n], upload: c.Rank() != root}
	return req, nil
}

// BF16BcastWords is the float32 words a bfloat16 broadcast of n values
// moves (two halfwords to a word).
func BF16BcastWords(n int) int { return (n + 1) / 2 }

type doneRequest struct{}

func (doneRequest) Wait() error { return nil }

// bf16Bcast uploads the received halfwords into st on Wait (upload: not
// the root) and unpacks them into buf (unpack: ibcastBF16's, not
// ibcastHalfwords').
type bf16Bcast struct {
	r              collectives.Request
	dev            device.Device
	buf            device.Buffer[float32]
	st             device.Buffer[uint16]
	host           []uint16
	upload, unpack bool
}

func (b *bf16Bcast) Wait() error {
	if err := b.r.Wait(); err != nil {
		return err
	}
	if b.upload {
		device.Upload(b.dev, b.st, 0, b.host)
		if b.unpack {
			b.dev.UnpackBF16(b.buf, b.st)
		}
	}
	return nil
}
