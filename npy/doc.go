// Package npy reads and writes NumPy .npy arrays (format versions 1.0, 2.0
// and 3.0 on read, 1.0 or 2.0 on write), the interchange format of scalegnn's
// prepared datasets: a user can produce its inputs, or inspect its outputs,
// with numpy.load and numpy.save.
//
// Only C-order (row-major) arrays of fixed-size numeric and boolean dtypes
// are supported. Readers stream: Open reads the header, and the data is read
// in chunks of the caller's choosing, converted to the caller's element type
// (int32, int64, float32, bool) with range checks, or, for a dtype that
// is the caller's element type in host byte order, read straight into the
// caller's slice with no buffer or conversion; a file whose header does
// not match its size, or whose values do not fit, is an error naming the
// file. Writers take the shape up front and check on Close that exactly that
// many elements were written.
//
// docs/architecture.md shows how this package fits with the others.
package npy
