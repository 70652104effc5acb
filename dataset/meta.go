package dataset

import (
	"io"
	"math"
	"strconv"
	"strings"
)

// planetoidMeta is the optional meta.toml of a Planetoid directory: the
// counts the text files do not fix (the feature width, since trailing
// all-zero columns leave no trace) and counts to check them against. A
// field is -1 when the file does not give it.
type planetoidMeta struct {
	Nodes, Features, Classes int
	// Edges is the number of unique undirected edges without self loops.
	Edges int64
}

// metaKeys lists the keys of meta.toml with their valid ranges.
var metaKeys = []struct {
	name     string
	min, max int64
}{
	{"nodes", 1, math.MaxInt32},
	{"features", 1, math.MaxInt32},
	{"classes", 1, math.MaxInt32},
	{"edges", 0, math.MaxInt64},
}

// parseMeta reads meta.toml: a small TOML subset of "key = integer" lines
// with # comments, keys from metaKeys, each at most once. The format is
// TOML so that a full TOML reader accepts it too, but the package needs
// no TOML dependency for four integers.
func parseMeta(r io.Reader, file string) (planetoidMeta, error) {
	m := planetoidMeta{Nodes: -1, Features: -1, Classes: -1, Edges: -1}
	lr := newLineReader(r, file)
	seen := map[string]int{}
	for {
		s, ok := lr.next()
		if !ok {
			break
		}
		if i := strings.IndexByte(s, '#'); i >= 0 {
			s = s[:i]
		}
		s = strings.TrimSpace(s)
		if s == "" {
			continue
		}
		key, val, ok := strings.Cut(s, "=")
		key, val = strings.TrimSpace(key), strings.TrimSpace(val)
		if !ok || key == "" {
			return m, lr.errorf(`expected "<key> = <integer>", got %s`, quote(s))
		}
		k := -1
		for i, mk := range metaKeys {
			if mk.name == key {
				k = i
			}
		}
		if k < 0 {
			return m, lr.errorf("unknown key %q; valid keys are nodes, features, classes, edges", key)
		}
		if l, dup := seen[key]; dup {
			return m, lr.errorf("key %q given twice (first on line %d)", key, l)
		}
		seen[key] = lr.line
		mk := metaKeys[k]
		x, err := strconv.ParseInt(strings.ReplaceAll(val, "_", ""), 10, 64)
		if err != nil || x < mk.min || x > mk.max || strings.HasPrefix(val, "_") || strings.HasSuffix(val, "_") {
			return m, lr.errorf("%s: expected an integer in [%d, %d], got %s", key, mk.min, mk.max, quote(val))
		}
		switch key {
		case "nodes":
			m.Nodes = int(x)
		case "features":
			m.Features = int(x)
		case "classes":
			m.Classes = int(x)
		case "edges":
			m.Edges = x
		}
	}
	return m, lr.err()
}
