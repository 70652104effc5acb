package grid

import (
	"fmt"
	"strconv"
	"strings"
)

// ParseShape reads a grid shape in any of the forms scalegnn prints or
// takes on a command line:
//
//	2x2x2          Gx×Gy×Gz with one replica (Gd = 1)
//	2x2x2 (d=2)    Shape.String, as summary.json and the logs write it
//	d=2 2x2x2      perfmodel's grid column
//
// Every extent must be a positive integer. The error names the text and
// the forms expected, for the caller to prefix with the flag or file.
func ParseShape(s string) (Shape, error) {
	bad := func() (Shape, error) {
		return Shape{}, fmt.Errorf("grid %q: expected XxYxZ, \"XxYxZ (d=D)\" or \"d=D XxYxZ\" with positive integers, e.g. 2x2x2 or 2x2x1 (d=2)", s)
	}
	t := strings.TrimSpace(s)
	d := 1
	haveD := false
	if rest, ok := strings.CutPrefix(t, "d="); ok {
		ds, xyz, found := strings.Cut(rest, " ")
		if !found {
			return bad()
		}
		n, err := strconv.Atoi(ds)
		if err != nil {
			return bad()
		}
		d, haveD, t = n, true, strings.TrimSpace(xyz)
	}
	if i := strings.IndexByte(t, '('); i >= 0 {
		if haveD || !strings.HasSuffix(t, ")") {
			return bad()
		}
		ds, ok := strings.CutPrefix(t[i+1:len(t)-1], "d=")
		if !ok {
			return bad()
		}
		n, err := strconv.Atoi(ds)
		if err != nil {
			return bad()
		}
		d, t = n, strings.TrimSpace(t[:i])
	}
	parts := strings.Split(t, "x")
	if len(parts) != 3 {
		return bad()
	}
	var e [3]int
	for i, p := range parts {
		n, err := strconv.Atoi(p)
		if err != nil || n < 1 {
			return bad()
		}
		e[i] = n
	}
	if d < 1 {
		return bad()
	}
	return Shape{D: d, X: e[0], Y: e[1], Z: e[2]}, nil
}

// MarshalText writes the shape as String does, so that a Shape in JSON or
// TOML reads as it does in the logs: "2x2x2 (d=1)".
func (s Shape) MarshalText() ([]byte, error) { return []byte(s.String()), nil }

// UnmarshalText reads any form ParseShape accepts.
func (s *Shape) UnmarshalText(b []byte) error {
	v, err := ParseShape(string(b))
	if err != nil {
		return err
	}
	*s = v
	return nil
}
