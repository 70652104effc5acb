package jobfile

import (
	"encoding"
	"os"
	"reflect"
	"regexp"
	"sort"
	"strings"
	"testing"
)

// TestJobfileDocListsEveryKey fails for every job-file key that
// docs/jobfile.md does not document.
//
// The keys are the toml tags of Config, walked as package tomlx walks them
// (internal/tomlx/schema.go): a tagged, exported field is a key; a struct
// that is not a text value (encoding.TextUnmarshaler) is a table whose
// fields are keys under it; tag "-" and untagged fields are not keys.
//
// The matching rule: key "a.b.c" is documented when docs/jobfile.md has a
// heading "## [a.b]" (any level), and between that heading and the next
// heading a table row (a line starting with "|") whose first cell names
// `c` in backticks. A row may name several keys ("| `x`, `y`, `z` |").
// So a key is found only in its own table's section and only in the key
// column: prose that mentions it, or the same name in another table, does
// not count. A table itself (dataset.sbm) needs its heading, which the
// rule checks through its keys.
func TestJobfileDocListsEveryKey(t *testing.T) {
	doc, err := os.ReadFile("../docs/jobfile.md")
	if err != nil {
		t.Fatal(err)
	}
	documented := jobfileDocKeys(string(doc))
	keys := jobfileKeys(reflect.TypeOf(Config{}), "")
	if len(keys) < 50 {
		t.Fatalf("found only %d keys in Config; the walk is broken: %v", len(keys), keys)
	}
	var missing []string
	for _, k := range keys {
		if !documented[k] {
			missing = append(missing, k)
		}
	}
	for _, k := range missing {
		table, name := splitKey(k)
		t.Errorf("docs/jobfile.md does not document job-file key %s: add a row naming `%s` in the first column of the table under the heading [%s]", k, name, table)
	}
}

// TestJobfileDocRuleCatchesMissingKey checks the rule itself: a key named
// only in prose, or only in another table's section, is not documented.
func TestJobfileDocRuleCatchesMissingKey(t *testing.T) {
	doc := strings.Join([]string{
		"# Job file",
		"`train.epochs` in prose does not count.",
		"## [train]",
		"| key | type |",
		"| --- | --- |",
		"| `mode` | string |",
		"| `batch_size`, `batch_ratio` | integer, number |",
		"Prose naming `seed` does not count.",
		"### [dataset.sbm]",
		"| `nodes` | integer |",
		"| `epochs` | integer |",
	}, "\n")
	got := jobfileDocKeys(doc)
	for _, k := range []string{"train.mode", "train.batch_size", "train.batch_ratio", "dataset.sbm.nodes", "dataset.sbm.epochs"} {
		if !got[k] {
			t.Errorf("%s: not found, want documented", k)
		}
	}
	for _, k := range []string{"train.epochs", "train.seed", "train.nodes", "dataset.nodes", "key", "train.key"} {
		if got[k] {
			t.Errorf("%s: documented, want missing", k)
		}
	}
}

var textUnmarshalerType = reflect.TypeOf((*encoding.TextUnmarshaler)(nil)).Elem()

// jobfileKeys returns the dotted job-file keys of struct type t, sorted.
func jobfileKeys(t reflect.Type, prefix string) []string {
	var keys []string
	for i := 0; i < t.NumField(); i++ {
		f := t.Field(i)
		name, _, _ := strings.Cut(f.Tag.Get("toml"), ",")
		if name == "" || name == "-" || !f.IsExported() {
			continue
		}
		key := name
		if prefix != "" {
			key = prefix + "." + name
		}
		ft := f.Type
		isTable := func(t reflect.Type) bool {
			return t.Kind() == reflect.Struct && !t.Implements(textUnmarshalerType) && !reflect.PointerTo(t).Implements(textUnmarshalerType)
		}
		switch {
		case isTable(ft):
			keys = append(keys, jobfileKeys(ft, key)...)
		case ft.Kind() == reflect.Slice && isTable(ft.Elem()):
			keys = append(keys, jobfileKeys(ft.Elem(), key)...)
		default:
			keys = append(keys, key)
		}
	}
	sort.Strings(keys)
	return keys
}

// splitKey splits "a.b.c" into its table "a.b" and its name "c".
func splitKey(k string) (table, name string) {
	i := strings.LastIndexByte(k, '.')
	if i < 0 {
		return "", k
	}
	return k[:i], k[i+1:]
}

var (
	docHeading  = regexp.MustCompile(`^#+\s`)
	docTable    = regexp.MustCompile(`^#+\s+\[([a-z0-9_.]+)\]\s*$`)
	docBacktick = regexp.MustCompile("`([a-z0-9_]+)`")
)

// jobfileDocKeys returns the keys a job-file reference documents under
// the rule of TestJobfileDocListsEveryKey.
func jobfileDocKeys(doc string) map[string]bool {
	keys := make(map[string]bool)
	table, inTable := "", false
	for _, line := range strings.Split(doc, "\n") {
		if docHeading.MatchString(line) {
			m := docTable.FindStringSubmatch(line)
			table, inTable = "", m != nil
			if inTable {
				table = m[1]
			}
			continue
		}
		if !inTable || !strings.HasPrefix(line, "|") {
			continue
		}
		cells := strings.Split(line, "|")
		if len(cells) < 3 {
			continue
		}
		for _, m := range docBacktick.FindAllStringSubmatch(cells[1], -1) {
			keys[table+"."+m[1]] = true
		}
	}
	return keys
}
