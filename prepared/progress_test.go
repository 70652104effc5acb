package prepared

import (
	"slices"
	"sync"
	"testing"
)

// TestLoadProgress: LoadOptions.Progress hears of every file as it is
// read and verified: the orders at Open, then each adjacency block,
// feature block and vertex file the reads touch, and nothing that is not
// a file of the dataset.
func TestLoadProgress(t *testing.T) {
	dir := prepareFixture(t)
	var mu sync.Mutex
	var got []string
	d, err := Open(dir, LoadOptions{Progress: func(what string) {
		mu.Lock()
		got = append(got, what)
		mu.Unlock()
	}})
	if err != nil {
		t.Fatal(err)
	}
	if want := []string{orderFile(0), orderFile(1)}; !slices.Equal(got, want) {
		t.Fatalf("after Open: progress %q, want %q", got, want)
	}
	got = nil
	if _, err := d.FeatureBlock(1, 0, d.Meta.Nodes, 0, d.Meta.Features); err != nil {
		t.Fatal(err)
	}
	var features []string
	for i := range d.Meta.Blocks {
		features = append(features, featureFile(i))
	}
	if !slices.Equal(got, features) {
		t.Fatalf("after reading all features: progress %q, want %q", got, features)
	}
	got = nil
	if _, err := d.AdjBlock(0, 0, d.Meta.Nodes, 1, 0, d.Meta.Nodes); err != nil {
		t.Fatal(err)
	}
	if _, _, _, _, err := d.Labels(0, 0, d.Meta.Nodes); err != nil {
		t.Fatal(err)
	}
	if len(got) == 0 {
		t.Fatal("reading the adjacency and labels reported no progress")
	}
	all := map[string]bool{}
	for _, f := range d.Meta.Files {
		all[f.Path] = true
	}
	for _, w := range got {
		if !all[w] {
			t.Errorf("progress reported %q, not a file of the dataset (%v)", w, d.Meta.Files)
		}
	}
	for _, w := range []string{labelsFile} {
		if !slices.Contains(got, w) {
			t.Errorf("reading the labels did not report %s: %q", w, got)
		}
	}
}

// TestEndLoad: after EndLoad a read is no longer reported as a piece of
// the load (out-of-core training reads beside the steps, and the watchdog
// must keep the step's stage).
func TestEndLoad(t *testing.T) {
	dir := prepareFixture(t)
	var mu sync.Mutex
	var seen []string
	d, err := Open(dir, LoadOptions{Progress: func(what string) { mu.Lock(); seen = append(seen, what); mu.Unlock() }})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := d.FeatureBlock(1, 0, 12, 0, 3); err != nil {
		t.Fatal(err)
	}
	before := len(seen)
	if before == 0 {
		t.Fatal("reading the features reported no progress while loading")
	}
	d.EndLoad()
	if _, err := d.FeatureBlock(1, 0, 12, 0, 3); err != nil {
		t.Fatal(err)
	}
	if _, err := d.AdjBlock(0, 0, 6, 1, 0, 12); err != nil {
		t.Fatal(err)
	}
	if len(seen) != before {
		t.Errorf("after EndLoad, reads reported %v as load progress", seen[before:])
	}
}
