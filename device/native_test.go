package device_test

import (
	"testing"

	"scalegnn/device"
	"scalegnn/device/devicetest"
)

func TestNative(t *testing.T) { devicetest.TestDevice(t, device.NewNative(2)) }
