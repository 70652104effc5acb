package device_test

import (
	"testing"

	"scalegnn/device"
	"scalegnn/device/devicetest"
)

func TestNative(t *testing.T) { devicetest.TestDevice(t, device.NewNative(2)) }

func TestNativeAllocs(t *testing.T) { devicetest.TestAllocs(t, device.NewNative(2)) }
