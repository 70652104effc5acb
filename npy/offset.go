package npy

import "fmt"

// HeaderBytes returns the complete header NewWriter writes for an array of
// dtype descr and the given shape (its length is the data's offset), for
// writers that fill the data at offsets of their own: the ranks of a
// parallel job each write their block of rows straight into one file.
// An unknown dtype or a negative dimension is a programmer error and
// panics.
func HeaderBytes(descr string, shape ...int) []byte {
	if _, err := parseDescr(descr); err != nil {
		panic(fmt.Sprintf("npy: HeaderBytes: %v", err))
	}
	for _, d := range shape {
		if d < 0 {
			panic(fmt.Sprintf("npy: HeaderBytes: negative dimension in shape %v", shape))
		}
	}
	return formatHeader(descr, shape)
}
