package perfmodel

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// Every built-in profile loads, and a profile written by WriteFile reads
// back equal.
func TestProfilesLoadAndRoundTrip(t *testing.T) {
	for _, name := range Profiles() {
		m, err := LoadMachine(name)
		if err != nil {
			t.Errorf("profile %s: %v", name, err)
			continue
		}
		path := filepath.Join(t.TempDir(), name+".toml")
		if err := m.WriteFile(path, "round trip"); err != nil {
			t.Fatal(err)
		}
		back, err := LoadMachine(path)
		if err != nil {
			t.Errorf("profile %s written back: %v", name, err)
			continue
		}
		if back.SpMM != m.SpMM || back.GEMM != m.GEMM || back.Comm != m.Comm || back.Elementwise != m.Elementwise || back.Device != m.Device ||
			back.BF16 != m.BF16 {
			t.Errorf("profile %s: read back %+v, want %+v", name, back, m)
		}
	}
}

func TestParseMachineErrors(t *testing.T) {
	var good bytes.Buffer
	path := filepath.Join(t.TempDir(), "m.toml")
	if err := DefaultMachine().WriteFile(path, "x"); err != nil {
		t.Fatal(err)
	}
	if _, err := LoadMachine(path); err != nil {
		t.Fatalf("the default machine written out does not load: %v", err)
	}
	good.WriteString("name = \"m\"\n[spmm]\nform = \"linear\"\ncall_s = 1e-6\nnnz_s = 1e-9\nfma_s = 1e-10\nout_s = 0\nin_s = 0\n")
	good.WriteString("[gemm.nn]\ncall_s = 0\nfma_s = 0\nelem_s = 0\n[gemm.tn]\ncall_s = 0\nfma_s = 0\nelem_s = 0\n[gemm.nt]\ncall_s = 0\nfma_s = 0\nelem_s = 0\n")
	good.WriteString("[elementwise]\nelem_s = 1e-9\n[comm.intra]\nlatency_s = 1e-6\nbandwidth_gbs = 5\n[comm.inter]\nlatency_s = 1e-6\nbandwidth_gbs = 5\n")
	if _, err := ParseMachine("m.toml", good.Bytes()); err != nil {
		t.Fatalf("good profile: %v", err)
	}
	for _, c := range []struct{ name, edit, want string }{
		{"unknown key", "[gemm.nn]\ncall_s = 0\nflop_s = 0\n", "m.toml: unknown key gemm.nn.flop_s: valid keys in [gemm.nn] are call_s, fma_s, elem_s"},
		{"string for number", "[elementwise]\nelem_s = \"1\"\n", `m.toml: elementwise.elem_s = "1": expected a number, not a string`},
		{"nan", "[elementwise]\nelem_s = nan\n", "m.toml: elementwise.elem_s = NaN: expected a finite number >= 0"},
		{"inf bandwidth", "[comm.inter]\nlatency_s = 1e-6\nbandwidth_gbs = inf\n", "m.toml: comm.inter.bandwidth_gbs = +Inf: expected a finite number > 0"},
		{"negative", "[spmm]\nform = \"linear\"\ncall_s = -1\nnnz_s = 0\nfma_s = 0\nout_s = 0\nin_s = 0\n", "m.toml: spmm.call_s = -1: expected a finite number >= 0"},
		{"form", "[spmm]\nform = \"cubic\"\n", `m.toml: spmm.form = "cubic": expected "linear" or "plexus"`},
		{"syntax", "[spmm\n", "m.toml: line 31, column 6: comm.inter: expected"},
	} {
		// Replace the tables the edit names by the edit.
		data := replaceTables(good.String(), c.edit)
		_, err := ParseMachine("m.toml", []byte(data))
		if err == nil || !strings.HasPrefix(err.Error(), c.want) {
			t.Errorf("%s: error %v, want it to start with %q", c.name, err, c.want)
		}
	}
	for _, c := range []struct{ top, want string }{
		{"", "cpu"}, // written before the key: a CPU profile
		{"device = \"cpu\"\n", "cpu"},
		{"device = \"native\"\n", "native"},
		{"device = \"cuda\"\n", "cuda"},
	} {
		m, err := ParseMachine("m.toml", []byte(c.top+good.String()))
		if err != nil || m.Device != c.want {
			t.Errorf("%q: device %v, %v; want %q", c.top, m, err, c.want)
		}
	}
	for _, c := range []struct{ top, want string }{
		{"device = \"gpu\"\n", `m.toml: device = "gpu": expected one of "cpu", "native", "cuda"`},
		{"device = \"\"\n", `m.toml: device = "": expected one of "cpu", "native", "cuda" (or no device key, which means "cpu")`},
		{"device = 1\n", "m.toml: device = 1: expected a string"},
		{"devise = \"cuda\"\n", "m.toml: unknown key devise: did you mean device?"},
	} {
		if _, err := ParseMachine("m.toml", []byte(c.top+good.String())); err == nil || !strings.HasPrefix(err.Error(), c.want) {
			t.Errorf("%q: error %v, want it to start with %q", c.top, err, c.want)
		}
	}
	if m, _ := LoadMachine("perlmutter-plexus"); m == nil || m.Device != "cuda" {
		t.Errorf("the built-in profile of Perlmutter's A100 nodes does not say device = \"cuda\": %+v", m)
	}
	if _, err := ParseMachine("m.toml", []byte(strings.Replace(good.String(), "[comm.intra]\nlatency_s = 1e-6\n", "[comm.intra]\n", 1))); err == nil ||
		err.Error() != "m.toml: missing key comm.intra.latency_s" {
		t.Errorf("missing key: %v", err)
	}
}

// A profile's bf16 costs round-trip, and a bf16 section must be complete
// and in the linear form, or it is refused with its key.
func TestParseMachineBF16(t *testing.T) {
	m := DefaultMachine()
	m.BF16 = scaledProducts(m, 0.5)
	path := filepath.Join(t.TempDir(), "m.toml")
	if err := m.WriteFile(path, "x"); err != nil {
		t.Fatal(err)
	}
	back, err := LoadMachine(path)
	if err != nil || !back.HasBF16() || back.BF16 != m.BF16 {
		t.Fatalf("bf16 costs read back as %+v (%v), want %+v", back, err, m.BF16)
	}
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct{ name, edit, want string }{
		{"missing key", "[bf16.gemm.nt]\ncall_s = 0\nfma_s = 0\n", "m.toml: missing key bf16.gemm.nt.elem_s"},
		{"plexus form", "[bf16.spmm]\nform = \"plexus\"\ncall_s = 0\nnnz_s = 0\nfma_s = 0\nout_s = 0\nin_s = 0\n",
			`m.toml: bf16.spmm.form = "plexus" with spmm.form = "linear": bf16 costs need the "linear" form in both`},
		{"negative", "[bf16.spmm]\nform = \"linear\"\ncall_s = 0\nnnz_s = -1\nfma_s = 0\nout_s = 0\nin_s = 0\n",
			"m.toml: bf16.spmm.nnz_s = -1: expected a finite number >= 0"},
	} {
		_, err := ParseMachine("m.toml", []byte(replaceTables(string(data), c.edit)))
		if err == nil || !strings.HasPrefix(err.Error(), c.want) {
			t.Errorf("%s: error %v, want it to start with %q", c.name, err, c.want)
		}
	}
}

// replaceTables drops from doc every table that edit defines, then appends
// edit.
func replaceTables(doc, edit string) string {
	drop := map[string]bool{}
	for _, l := range strings.Split(edit, "\n") {
		if strings.HasPrefix(l, "[") {
			drop[l] = true
		}
	}
	var out []string
	skip := false
	for _, l := range strings.Split(doc, "\n") {
		if t := strings.TrimSpace(l); strings.HasPrefix(t, "[") {
			skip = drop[t] // WriteFile indents nested tables
		}
		if !skip {
			out = append(out, l)
		}
	}
	return strings.Join(out, "\n") + "\n" + edit
}
