package device

import "fmt"

// Open returns the device a job's configuration names: "native", "cpu"
// (builds with cgo) or "cuda" (GPU 0; OpenCUDA binds another), using up
// to threads threads (<= 0: GOMAXPROCS) on the host. An unknown name is
// bad input, not a programmer error: it returns an error.
func Open(name string, threads int) (Device, error) {
	switch name {
	case "native":
		return NewNative(threads), nil
	case "cpu":
		if newCPU == nil {
			return nil, fmt.Errorf("device: %q needs a build with cgo; this one has only \"native\"", name)
		}
		return newCPU(threads), nil
	case "cuda":
		return OpenCUDA(CUDAOptions{})
	}
	return nil, fmt.Errorf("device: unknown device %q: expected native, cpu or cuda", name)
}

// newCPU is NewCPU in builds with cgo (cpu_open.go) and nil without.
var newCPU func(threads int) Device

// Host returns the fastest host device of this build, CPU with cgo and
// Native without, using up to threads threads (<= 0: GOMAXPROCS).
func Host(threads int) Device {
	if newCPU != nil {
		return newCPU(threads)
	}
	return NewNative(threads)
}
