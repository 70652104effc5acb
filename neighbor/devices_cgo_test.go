//go:build cgo

package neighbor

import "scalegnn/device"

func init() {
	testDevices = append(testDevices, func() device.Device { return device.NewCPU(3) })
}
