package enum

import (
	"fmt"
	"strconv"
	"strings"
)

// Error reports a name that is not one of the allowed ones.
type Error struct {
	// What names the option, e.g. "permute scheme".
	What    string
	Got     string
	Allowed []string
}

func (e *Error) Error() string {
	return fmt.Sprintf("%s %q: expected %s", e.What, e.Got, e.Expected())
}

// Expected returns `one of "a", "b"`.
func (e *Error) Expected() string {
	q := make([]string, len(e.Allowed))
	for i, a := range e.Allowed {
		q[i] = strconv.Quote(a)
	}
	return "one of " + strings.Join(q, ", ")
}

// Parse returns the value whose name is s; names[i] is the name of value i.
func Parse[T ~int](what, s string, names []string) (T, error) {
	for i, n := range names {
		if n == s {
			return T(i), nil
		}
	}
	return 0, &Error{What: what, Got: s, Allowed: names}
}

// Name returns names[v], or What(v) for a value out of range.
func Name[T ~int](what string, v T, names []string) string {
	if v >= 0 && int(v) < len(names) {
		return names[v]
	}
	return fmt.Sprintf("%s(%d)", what, int(v))
}
