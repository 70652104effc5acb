package device_test

import (
	"strings"
	"testing"

	"scalegnn/device"
)

func TestOpen(t *testing.T) {
	dev, err := device.Open("native", 1)
	if err != nil || dev.Name() != "native" {
		t.Fatalf(`Open("native") = %v, %v`, dev, err)
	}
	if _, err := device.Open("gpu", 1); err == nil || !strings.Contains(err.Error(), `"gpu"`) {
		t.Errorf(`Open("gpu"): error %v, want one naming "gpu"`, err)
	}
	t.Log(dev.Describe())
	dev, err = device.Open("cpu", 2)
	if err == nil {
		t.Log(dev.Describe())
	}
	switch {
	case err != nil && !strings.Contains(err.Error(), "cgo"):
		t.Errorf(`Open("cpu"): %v`, err)
	case err == nil && (dev.Name() != "cpu" || !strings.Contains(dev.Describe(), "2 threads")):
		t.Errorf(`Open("cpu", 2): %s, %q`, dev.Name(), dev.Describe())
	}
}
