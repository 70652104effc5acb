package tomlx

import (
	"fmt"
	"math"
	"strconv"
	"strings"
)

// Value formats v as it would be written in a TOML file.
func Value(v any) string {
	switch v := v.(type) {
	case string:
		return strconv.Quote(v)
	case float64:
		return strconv.FormatFloat(v, 'g', -1, 64)
	case []any:
		parts := make([]string, len(v))
		for i, e := range v {
			parts[i] = Value(e)
		}
		return "[" + strings.Join(parts, ", ") + "]"
	case []map[string]any:
		return "[[...]]"
	case map[string]any:
		return "{...}"
	}
	return fmt.Sprint(v)
}

// Checker records the first invalid value of a decoded file, in the words
// of Decode: "file: key = value: expected ...". Later checks after a
// failure do nothing, so a validation reads as a list of rules.
type Checker struct {
	// File labels the messages; empty leaves them unlabelled.
	File string
	// Err is the first failure.
	Err error
}

// Fail records key = value: expected expected.
func (ck *Checker) Fail(key string, value any, expected string) {
	ck.Failf("%s = %s: expected %s", key, Value(value), expected)
}

// Failf records a message of its own, prefixed with the file unless File
// is empty (a table checked on its own, whose caller adds the prefix).
func (ck *Checker) Failf(format string, args ...any) {
	if ck.Err != nil {
		return
	}
	if ck.File == "" {
		ck.Err = fmt.Errorf(format, args...)
		return
	}
	ck.Err = fmt.Errorf("%s: %s", ck.File, fmt.Sprintf(format, args...))
}

// Wrap records err, prefixed with the file and the table prefix (e.g.
// "dataset.sbm."), when err is not nil: for rules owned by another package
// that name keys relative to their table.
func (ck *Checker) Wrap(prefix string, err error) {
	if ck.Err == nil && err != nil {
		ck.Err = fmt.Errorf("%s: %s%v", ck.File, prefix, err)
	}
}

// AtLeast checks v >= lo.
func (ck *Checker) AtLeast(key string, v, lo int) {
	if v < lo {
		ck.Fail(key, int64(v), fmt.Sprintf("an integer >= %d", lo))
	}
}

// IntIn checks lo <= v <= hi.
func (ck *Checker) IntIn(key string, v, lo, hi int) {
	if v < lo || v > hi {
		ck.Fail(key, int64(v), fmt.Sprintf("an integer in [%d, %d]", lo, hi))
	}
}

// Number checks lo <= v < hi or lo < v <= hi and so on, as the bracket
// characters of interval ("[]", "[)", "(]" or "()") say; hi may be +Inf for
// no upper bound. NaN and ±Inf never pass, since TOML can spell them.
func (ck *Checker) Number(key string, v float64, interval string, lo, hi float64) {
	if NumberIn(v, interval, lo, hi) {
		return
	}
	ck.Fail(key, v, ExpectedNumber(interval, lo, hi))
}

// NumberIn reports whether v is finite and in the interval (see Number).
func NumberIn(v float64, interval string, lo, hi float64) bool {
	if math.IsNaN(v) || math.IsInf(v, 0) {
		return false
	}
	switch interval {
	case "[]":
		return v >= lo && v <= hi
	case "[)":
		return v >= lo && v < hi
	case "(]":
		return v > lo && v <= hi
	case "()":
		return v > lo && v < hi
	}
	panic(fmt.Sprintf("tomlx: interval %q: need [], [), (] or ()", interval))
}

// ExpectedNumber describes the interval of Number in words.
func ExpectedNumber(interval string, lo, hi float64) string {
	g := func(x float64) string { return strconv.FormatFloat(x, 'g', -1, 64) }
	switch {
	case math.IsInf(hi, 1) && interval[0] == '[':
		return "a number >= " + g(lo)
	case math.IsInf(hi, 1):
		return "a number > " + g(lo)
	}
	return fmt.Sprintf("a number in %c%s, %s%c", interval[0], g(lo), g(hi), interval[1])
}

// OneOf checks that v is one of allowed.
func (ck *Checker) OneOf(key, v string, allowed ...string) {
	for _, a := range allowed {
		if v == a {
			return
		}
	}
	q := make([]string, len(allowed))
	for i, a := range allowed {
		q[i] = strconv.Quote(a)
	}
	ck.Fail(key, v, "one of "+strings.Join(q, ", "))
}
