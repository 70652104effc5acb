//go:build !linux || !(amd64 || arm64)

package perfmodel

import "os"

// dropPages does nothing where posix_fadvise is not called: the disk is
// then measured through the page cache, faster than it is.
func dropPages(*os.File) error { return nil }
