package tomlx

import (
	"fmt"
	"math"
	"strings"
)

// suggest returns "did you mean ...?" for an unknown key leaf in table, a
// known table, or the table's valid keys when nothing is close.
func (s schema) suggest(table, leaf string, isTable bool, aliases map[string]string) string {
	mean := func(t, k string) string {
		if t != "" {
			k = t + "." + k
		}
		if isTable {
			return "did you mean [" + k + "]?"
		}
		return "did you mean " + k + "?"
	}
	keys := s.tables[table]
	want := strings.ToLower(leaf)
	if a, ok := aliases[want]; ok {
		want = a
	}
	best, bestDist := "", math.MaxInt
	for _, k := range keys {
		if d := editDistance(want, k); d < bestDist {
			best, bestDist = k, d
		}
	}
	if bestDist <= max(1, len(want)/3) {
		return mean(table, best)
	}
	// The key may belong to another table, e.g. lr under [model].
	for _, t := range s.order {
		for _, k := range s.tables[t] {
			if k == want && t != table {
				return mean(t, k)
			}
		}
	}
	if table == "" {
		return "valid tables are " + strings.Join(keys, ", ")
	}
	return fmt.Sprintf("valid keys in [%s] are %s", table, strings.Join(keys, ", "))
}

// editDistance is the optimal string alignment distance between a and b:
// Levenshtein with adjacent transpositions costing 1, the commonest typo.
func editDistance(a, b string) int {
	d := make([][]int, len(a)+1)
	for i := range d {
		d[i] = make([]int, len(b)+1)
		d[i][0] = i
	}
	for j := range d[0] {
		d[0][j] = j
	}
	for i := 1; i <= len(a); i++ {
		for j := 1; j <= len(b); j++ {
			cost := 1
			if a[i-1] == b[j-1] {
				cost = 0
			}
			d[i][j] = min(d[i-1][j]+1, d[i][j-1]+1, d[i-1][j-1]+cost)
			if i > 1 && j > 1 && a[i-1] == b[j-2] && a[i-2] == b[j-1] {
				d[i][j] = min(d[i][j], d[i-2][j-2]+1)
			}
		}
	}
	return d[len(a)][len(b)]
}
