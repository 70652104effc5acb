package collectives

import (
	"encoding"

	"scalegnn/internal/enum"
)

// DType is the element type in which the 3D-PMM all-reduces travel. It is
// the one type for the communication dtype: the job file's
// train.comm_dtype and the performance model decode into it ("float32",
// "bf16").
type DType int

const (
	// Float32 sends 4-byte floats.
	Float32 DType = iota
	// BF16 sends the 3D-PMM partial sums as 2-byte bfloat16 (ToBF16); norm,
	// loss, weight-gradient and data-parallel reductions stay float32.
	BF16
)

var (
	_ encoding.TextMarshaler   = Float32
	_ encoding.TextUnmarshaler = (*DType)(nil)
)

var dtypeNames = []string{"float32", "bf16"}

// ParseDType parses "float32" or "bf16".
func ParseDType(s string) (DType, error) {
	return enum.Parse[DType]("communication dtype", s, dtypeNames)
}

// Bytes returns the element size.
func (t DType) Bytes() int {
	if t == BF16 {
		return 2
	}
	return 4
}

func (t DType) String() string { return enum.Name("DType", t, dtypeNames) }

// MarshalText returns the name ParseDType accepts.
func (t DType) MarshalText() ([]byte, error) { return []byte(t.String()), nil }

// UnmarshalText parses a name ParseDType accepts.
func (t *DType) UnmarshalText(b []byte) error {
	v, err := ParseDType(string(b))
	if err == nil {
		*t = v
	}
	return err
}
