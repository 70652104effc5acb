package gcn

import "scalegnn/device"

// testDevices make the devices the device-dependent tests run on: Native
// everywhere, CPU in cgo builds (devices_cgo_test.go).
var testDevices = []func() device.Device{
	func() device.Device { return device.NewNative(1) },
}

// testModel is a model with only what the element-wise passes need: a
// config, a device and an arena.
func testModel(cfg Config, dev device.Device) *Model {
	return &Model{Cfg: cfg, dev: dev, cur: &bound{ar: newArena(dev)}}
}

// upload returns a rows×cols device matrix holding src.
func upload(dev device.Device, src []float32, rows, cols int) device.Mat {
	x := device.Matrix(device.Alloc[float32](dev, len(src)), rows, cols)
	device.UploadMat(dev, x, src)
	return x
}

// download returns a host copy of x.
func download(dev device.Device, x device.Mat) []float32 {
	out := make([]float32, x.Rows()*x.Cols())
	device.DownloadMat(dev, out, x)
	return out
}
