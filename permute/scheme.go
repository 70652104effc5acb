package permute

import (
	"encoding"

	"scalegnn/internal/enum"
)

// Scheme selects how vertices are relabelled before sharding. It is the one
// type for the permutation scheme: the job file's permute.scheme, a prepared
// dataset's meta.toml and the performance model all decode into it (it is a
// TextMarshaler), so no other package compares scheme names.
type Scheme int

const (
	// None keeps the original order.
	None Scheme = iota
	// Single applies one permutation p to rows and columns: A[p][:, p].
	Single
	// Double applies p1 to rows and p2 to columns in even layers and the
	// reverse in odd layers: A[p1][:, p2], A[p2][:, p1].
	Double
)

var (
	_ encoding.TextMarshaler   = None
	_ encoding.TextUnmarshaler = (*Scheme)(nil)
)

var schemeNames = []string{"none", "single", "double"}

// ParseScheme parses "none", "single" or "double".
func ParseScheme(s string) (Scheme, error) {
	return enum.Parse[Scheme]("permute scheme", s, schemeNames)
}

// String returns the name ParseScheme accepts.
func (s Scheme) String() string { return enum.Name("Scheme", s, schemeNames) }

// MarshalText returns the scheme's name.
func (s Scheme) MarshalText() ([]byte, error) { return []byte(s.String()), nil }

// UnmarshalText parses a name ParseScheme accepts.
func (s *Scheme) UnmarshalText(b []byte) error {
	v, err := ParseScheme(string(b))
	if err == nil {
		*s = v
	}
	return err
}

func (s Scheme) valid() bool { return s >= None && s <= Double }
