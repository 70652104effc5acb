package mpi

import "fmt"

// DeviceMisuseError is the panic value of a device-pointer collective
// (AllReduceF32Device and the others) called on a communicator whose
// DeviceAware is false, or with a nil pointer or a negative count: a
// programmer error, since the caller checks DeviceAware and stages through
// host memory when it is false. It is declared in every build, so that
// code which recovers it builds with -tags nompi too.
type DeviceMisuseError struct {
	Method string // e.g. "AllReduceF32Device"
	Why    string
}

func (e *DeviceMisuseError) Error() string {
	return fmt.Sprintf("mpi: %s: %s", e.Method, e.Why)
}
