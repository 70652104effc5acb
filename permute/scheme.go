package permute

import "fmt"

// Scheme selects how vertices are relabelled before sharding.
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

// ParseScheme parses "none", "single" or "double".
func ParseScheme(s string) (Scheme, error) {
	switch s {
	case "none":
		return None, nil
	case "single":
		return Single, nil
	case "double":
		return Double, nil
	}
	return None, fmt.Errorf("permute: unknown scheme %q; expected none, single or double", s)
}

// String returns the name ParseScheme accepts.
func (s Scheme) String() string {
	switch s {
	case None:
		return "none"
	case Single:
		return "single"
	case Double:
		return "double"
	}
	return fmt.Sprintf("Scheme(%d)", int(s))
}

func (s Scheme) valid() bool { return s >= None && s <= Double }
