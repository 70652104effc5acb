package main

import (
	"bytes"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

// TestDatasetInfoShards is the regression test for `dataset info -grid
// -layers` listing layers 3-5 of a singly permuted dataset as shards of
// their own: it must list one line per shard the model keeps (three with
// one vertex order, six with double permutation), named by the first layer
// that uses it.
func TestDatasetInfoShards(t *testing.T) {
	dir := t.TempDir()
	for _, tc := range []struct {
		scheme string
		layers []string
	}{
		{"none", []string{"0", "1", "2"}},
		{"single", []string{"0", "1", "2"}},
		{"double", []string{"0", "1", "2", "3", "4", "5"}},
	} {
		ds := filepath.Join(dir, tc.scheme)
		args := []string{"prepare", "-q", "-in", "cora", "-format", "builtin", "-out", ds, "-blocks", "2", "-permute", tc.scheme}
		if tc.scheme != "none" {
			args = append(args, "-seed", "3")
		}
		if code, stderr := runMain(t, args...); code != 0 {
			t.Fatalf("prepare %s: exit %d\n%s", tc.scheme, code, stderr)
		}
		var stdout, stderr bytes.Buffer
		if code := runDataset([]string{"info", ds, "-grid", "2x2x1", "-layers", "6"}, &stdout, &stderr); code != 0 {
			t.Fatalf("dataset info %s: exit %d\n%s", tc.scheme, code, stderr.String())
		}
		var layers []string
		for _, m := range regexp.MustCompile(`balance +layer (\d+) on 2x2x1`).FindAllStringSubmatch(stdout.String(), -1) {
			layers = append(layers, m[1])
		}
		if strings.Join(layers, ",") != strings.Join(tc.layers, ",") {
			t.Errorf("%s: dataset info lists layers %v, want %v\n%s", tc.scheme, layers, tc.layers, stdout.String())
		}
	}
}
