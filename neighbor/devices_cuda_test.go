//go:build cgo

package neighbor

import (
	"os"

	"scalegnn/device"
)

// With SCALEGNN_TEST_CUDA set (the GPU machine's runs), the GAT tests run
// on the CUDA device too.
func init() {
	if os.Getenv("SCALEGNN_TEST_CUDA") == "" {
		return
	}
	testDevices = append(testDevices, func() device.Device {
		dev, err := device.OpenCUDA(device.CUDAOptions{})
		if err != nil {
			panic(err)
		}
		return dev
	})
}
