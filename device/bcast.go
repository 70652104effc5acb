package device

import "scalegnn/collectives"

// Bcast copies root's buf into every rank's buf over c (CAGNET's 1.5D
// stages broadcast a block row of H within a process column). Host devices
// hand their slice to the communicator; a GPU device stages through a host
// copy (Download, BcastF32, Upload), which costs two transfers but needs no
// change to the device memory interface. A group of one is skipped.
func Bcast(dev Device, c collectives.Comm, buf Buffer[float32], root int) error {
	if c.Size() == 1 {
		return nil
	}
	if dev.memory() == nil {
		return c.BcastF32(buf.host, root)
	}
	host := make([]float32, buf.Len())
	if c.Rank() == root {
		Download(dev, host, buf, 0)
	}
	if err := c.BcastF32(host, root); err != nil {
		return err
	}
	if c.Rank() != root {
		Upload(dev, buf, 0, host)
	}
	return nil
}
