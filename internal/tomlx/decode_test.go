package tomlx

import (
	"fmt"
	"math"
	"strings"
	"testing"

	"scalegnn/internal/enum"
)

// shade is a typed option, decoded from a string.
type shade int

var shadeNames = []string{"light", "dark"}

func (s shade) MarshalText() ([]byte, error) { return []byte(enum.Name("shade", s, shadeNames)), nil }
func (s *shade) UnmarshalText(b []byte) error {
	v, err := enum.Parse[shade]("shade", string(b), shadeNames)
	*s = v
	return err
}

type item struct {
	Path  string `toml:"path"`
	Bytes int64  `toml:"bytes"`
}

type doc struct {
	Name  string `toml:"name"`
	Model struct {
		Layers  int     `toml:"layers"`
		Hidden  int     `toml:"hidden"`
		Dropout float64 `toml:"dropout"`
		Shade   shade   `toml:"shade"`
		Deep    bool    `toml:"deep"`
	} `toml:"model"`
	Optimizer struct {
		LR float64 `toml:"lr"`
	} `toml:"optimizer"`
	Sub struct {
		Inner struct {
			Nodes int `toml:"nodes"`
		} `toml:"inner"`
	} `toml:"sub"`
	Fit   map[string]float64 `toml:"fit,omitempty"`
	Items []item             `toml:"item"`
	Grid  [][]int64          `toml:"grid"`
}

func TestDecodeErrors(t *testing.T) {
	aliases := map[string]string{"learning_rate": "lr"}
	for _, test := range []struct {
		name, data string
		want       string // the whole message
	}{
		{"malformed", "[model]\nlayers = 2\nhidden = = 3\n", "f.toml: line 3, column 10: model.hidden: expected value but found '=' instead"},
		{"duplicate key", "[model]\nlayers = 2\nlayers = 3\n", "f.toml: line 3, column 12: model.layers: Key 'model.layers' has already been defined."},
		{"unknown key", "[model]\nhiden = 32\n", "f.toml: unknown key model.hiden: did you mean model.hidden?"},
		{"transposed", "[model]\ndropuot = 0.1\n", "f.toml: unknown key model.dropuot: did you mean model.dropout?"},
		{"case", "[model]\nHidden = 32\n", "f.toml: unknown key model.Hidden: did you mean model.hidden?"},
		{"wrong table", "[model]\nlr = 0.1\n", "f.toml: unknown key model.lr: did you mean optimizer.lr?"},
		{"alias", "[optimizer]\nlearning_rate = 0.1\n", "f.toml: unknown key optimizer.learning_rate: did you mean optimizer.lr?"},
		{"no suggestion", "[model]\nwibble = 1\n", "f.toml: unknown key model.wibble: valid keys in [model] are layers, hidden, dropout, shade, deep"},
		{"top level", "wibble = 1\n", "f.toml: unknown key wibble: valid tables are name, model, optimizer, sub, fit, item, grid"},
		{"unknown table", "[modle]\nlayers = 2\n", "f.toml: unknown table [modle]: did you mean [model]?"},
		{"unknown dotted", "modle.layers = 2\n", "f.toml: unknown key modle: did you mean model?"},
		{"unknown sub-table", "[sub.innr]\nnodes = 5\n", "f.toml: unknown table [sub.innr]: did you mean [sub.inner]?"},
		{"unknown in sub-table", "[sub.inner]\nnodez = 5\n", "f.toml: unknown key sub.inner.nodez: did you mean sub.inner.nodes?"},
		{"unknown in array of tables", "[[item]]\npath = \"a\"\nbites = 3\n", "f.toml: unknown key item.bites: did you mean item.bytes?"},
		{"string for number", "[model]\ndropout = \"0.5\"\n", `f.toml: model.dropout = "0.5": expected a number, not a string`},
		{"float for integer", "[model]\nhidden = 16.0\n", "f.toml: model.hidden = 16.0: expected an integer, not a float"},
		{"number for string", "name = 3\n", "f.toml: name = 3: expected a string in double quotes, not an integer"},
		{"string for bool", "[model]\ndeep = \"yes\"\n", `f.toml: model.deep = "yes": expected true or false, not a string`},
		{"value for table", "model = 3\n", "f.toml: model = 3: expected a table, not an integer"},
		{"table for value", "[model.layers]\nx = 1\n", "f.toml: model.layers is a table: expected an integer"},
		{"number for typed option", "[model]\nshade = 1\n", "f.toml: model.shade = 1: expected a string in double quotes, not an integer"},
		{"bad typed option", "[model]\nshade = \"grey\"\n", `f.toml: model.shade = "grey": expected one of "light", "dark"`},
		{"string in array", "grid = [[1, \"x\"]]\n", "f.toml: line 1: grid: incompatible types"},
		{"table for array", "[grid]\nx = 1\n", "f.toml: grid is a table: expected an array"},
		{"string in map", "[fit]\nr2 = \"x\"\n", "f.toml: "},
		{"integer overflow", "[model]\nlayers = 99999999999999999999\n", "f.toml: line 2"},
	} {
		var d doc
		_, err := Decode("f.toml", []byte(test.data), &d, Options{Aliases: aliases})
		if err == nil {
			t.Errorf("%s: no error for %q", test.name, test.data)
			continue
		}
		msg := err.Error()
		if strings.Contains(msg, "\n") {
			t.Errorf("%s: message has more than one line: %q", test.name, msg)
		}
		if !strings.HasPrefix(msg, test.want) {
			t.Errorf("%s: error\n\t%q\nwant it to start with\n\t%q", test.name, msg, test.want)
		}
	}
}

func TestDecodeKeepsDefaultsAndDecodesAll(t *testing.T) {
	var d doc
	d.Model.Layers, d.Model.Hidden = 2, 16
	data := `name = "x"
grid = [[1, 2], [3, 4]]
[model]
hidden = 32
shade = "dark"
[fit]
r2 = 0.5
anything = 1
[[item]]
path = "a"
bytes = 1
[[item]]
path = "b"
bytes = 2
`
	md, err := Decode("f.toml", []byte(data), &d, Options{})
	if err != nil {
		t.Fatal(err)
	}
	if d.Model.Layers != 2 || d.Model.Hidden != 32 || d.Model.Shade != 1 || d.Name != "x" {
		t.Errorf("decoded %+v", d.Model)
	}
	if len(d.Items) != 2 || d.Items[1].Bytes != 2 || d.Fit["anything"] != 1 || d.Grid[1][0] != 3 {
		t.Errorf("decoded items %+v fit %v grid %v", d.Items, d.Fit, d.Grid)
	}
	if !md.IsDefined("model", "hidden") || md.IsDefined("model", "layers") {
		t.Error("metadata does not say which keys were present")
	}
}

func TestDecodeMisusePanics(t *testing.T) {
	defer func() {
		if recover() == nil {
			t.Error("Decode into a non-pointer did not panic")
		}
	}()
	Decode("f.toml", nil, doc{}, Options{})
}

func TestChecker(t *testing.T) {
	inf := math.Inf(1)
	for _, test := range []struct {
		check func(*Checker)
		want  string // "" for no error
	}{
		{func(ck *Checker) { ck.Number("k", 0.5, "[)", 0, 1) }, ""},
		{func(ck *Checker) { ck.Number("k", 1, "[)", 0, 1) }, "f: k = 1: expected a number in [0, 1)"},
		{func(ck *Checker) { ck.Number("k", 0, "(]", 0, 1) }, "f: k = 0: expected a number in (0, 1]"},
		{func(ck *Checker) { ck.Number("k", math.NaN(), "[)", 0, 1) }, "f: k = NaN: expected a number in [0, 1)"},
		{func(ck *Checker) { ck.Number("k", inf, "()", 0, inf) }, "f: k = +Inf: expected a number > 0"},
		{func(ck *Checker) { ck.Number("k", math.Inf(-1), "[)", 0, inf) }, "f: k = -Inf: expected a number >= 0"},
		{func(ck *Checker) { ck.Number("k", -1e-4, "[)", 0, inf) }, "f: k = -0.0001: expected a number >= 0"},
		{func(ck *Checker) { ck.AtLeast("k", 0, 1) }, "f: k = 0: expected an integer >= 1"},
		{func(ck *Checker) { ck.IntIn("k", 31, 1, 30) }, "f: k = 31: expected an integer in [1, 30]"},
		{func(ck *Checker) { ck.OneOf("k", "c", "a", "b") }, `f: k = "c": expected one of "a", "b"`},
		{func(ck *Checker) { ck.AtLeast("a", 0, 1); ck.AtLeast("b", 0, 2) }, "f: a = 0: expected an integer >= 1"},
		{func(ck *Checker) { ck.Wrap("t.", fmt.Errorf("x = 1: expected 2")) }, "f: t.x = 1: expected 2"},
		{func(ck *Checker) { ck.Wrap("t.", nil) }, ""},
		{func(ck *Checker) { ck.File = ""; ck.AtLeast("k", 0, 1) }, "k = 0: expected an integer >= 1"},
	} {
		ck := &Checker{File: "f"}
		test.check(ck)
		switch {
		case test.want == "" && ck.Err != nil:
			t.Errorf("unexpected error %v", ck.Err)
		case test.want != "" && (ck.Err == nil || ck.Err.Error() != test.want):
			t.Errorf("error %v, want %q", ck.Err, test.want)
		}
	}
}

func TestEditDistance(t *testing.T) {
	for _, test := range []struct {
		a, b string
		want int
	}{{"", "", 0}, {"abc", "", 3}, {"hiden", "hidden", 1}, {"modle", "model", 1}, {"kitten", "sitting", 3}, {"dropuot", "dropout", 1}} {
		if got := editDistance(test.a, test.b); got != test.want {
			t.Errorf("editDistance(%q, %q) = %d, want %d", test.a, test.b, got, test.want)
		}
	}
}
