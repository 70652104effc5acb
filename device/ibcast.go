package device

import "scalegnn/collectives"

// IBcast starts a nonblocking Bcast of buf over c from root; buf must not
// be used until Wait returns. Host devices hand their slice to the
// communicator; a GPU device downloads root's buf now and uploads the
// received values on Wait. A group of one returns a request that is
// already complete.
func IBcast(dev Device, c collectives.Comm, buf Buffer[float32], root int) (collectives.Request, error) {
	if c.Size() == 1 {
		return doneRequest{}, nil
	}
	if dev.memory() == nil {
		return c.IBcastF32(buf.host, root)
	}
	host := make([]float32, buf.Len())
	if c.Rank() == root {
		Download(dev, host, buf, 0)
	}
	r, err := c.IBcastF32(host, root)
	if err != nil {
		return nil, err
	}
	return stagedBcast{r: r, dev: dev, buf: buf, host: host, upload: c.Rank() != root}, nil
}

type doneRequest struct{}

func (doneRequest) Wait() error { return nil }

// stagedBcast uploads the host staging copy once the broadcast is done.
type stagedBcast struct {
	r      collectives.Request
	dev    Device
	buf    Buffer[float32]
	host   []float32
	upload bool
}

func (s stagedBcast) Wait() error {
	if err := s.r.Wait(); err != nil {
		return err
	}
	if s.upload {
		Upload(s.dev, s.buf, 0, s.host)
	}
	return nil
}
