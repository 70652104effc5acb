//go:build !cgo

package cuda

import "errors"

// Load reports that a binary built without cgo cannot load CUDA; the rest
// of the package exists only in builds with cgo.
func Load() error {
	return errors.New("this scalegnn was built without cgo, so it cannot load CUDA; build it with CGO_ENABLED=1")
}
