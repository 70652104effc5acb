package neighbor

import "scalegnn/device"

func downloadGrad(m *Model, p *Param, dst []float32) { device.Download(m.dev, dst, p.G, 0) }
func downloadW(m *Model, p *Param, dst []float32)    { device.Download(m.dev, dst, p.W, 0) }
