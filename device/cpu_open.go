//go:build cgo

package device

func init() { newCPU = func(threads int) Device { return NewCPU(threads) } }
