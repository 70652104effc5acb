package grid

import (
	"slices"
	"testing"
)

// TestShardFor checks the shard rule against tables written out by hand:
// with two vertex orders the shard of layer l is (l mod 3, l mod 2), six in
// all; with one order the parity is dropped and layers 3-5 reuse the shards
// of layers 0-2.
func TestShardFor(t *testing.T) {
	for _, tc := range []struct {
		two  bool
		want []Shard // layers 0..7
	}{
		{false, []Shard{{0, 0}, {1, 0}, {2, 0}, {0, 0}, {1, 0}, {2, 0}, {0, 0}, {1, 0}}},
		{true, []Shard{{0, 0}, {1, 1}, {2, 0}, {0, 1}, {1, 0}, {2, 1}, {0, 0}, {1, 1}}},
	} {
		for l, want := range tc.want {
			if got := ShardFor(l, tc.two); got != want {
				t.Errorf("ShardFor(%d, %v) = %v, want %v", l, tc.two, got, want)
			}
		}
	}
}

func TestShardsOf(t *testing.T) {
	for layers := 1; layers <= 7; layers++ {
		for _, two := range []bool{false, true} {
			got := ShardsOf(layers, two)
			want := min(layers, 3)
			if two {
				want = min(layers, 6)
			}
			if len(got) != want {
				t.Errorf("ShardsOf(%d, %v) = %v: %d shards, want %d", layers, two, got, len(got), want)
			}
			for i, s := range got {
				// In order of first use, and every layer's shard is listed.
				if f := s.FirstUse(two); f != i || ShardFor(f, two) != s {
					t.Errorf("ShardsOf(%d, %v)[%d] = %v first used by layer %d", layers, two, i, s, f)
				}
			}
			for l := range layers {
				if !slices.Contains(got, ShardFor(l, two)) {
					t.Errorf("ShardsOf(%d, %v) misses layer %d's shard", layers, two, l)
				}
			}
		}
	}
}

// TestShardOrientation: a shard's rows are split over R and in the output
// order of its layers, its columns over P and in their input order.
func TestShardOrientation(t *testing.T) {
	for l := range 7 {
		for _, two := range []bool{false, true} {
			s := ShardFor(l, two)
			p, _, r := Rotation(l)
			if rows, cols := s.Axes(); rows != r || cols != p {
				t.Errorf("layer %d: axes %v, %v, want %v, %v", l, rows, cols, r, p)
			}
			if two && (s.RowOrder() != OutputOrder(l) || s.ColOrder() != InputOrder(l)) {
				t.Errorf("layer %d: orders %d, %d, want %d, %d", l, s.RowOrder(), s.ColOrder(), OutputOrder(l), InputOrder(l))
			}
			if OutputOrder(l) != InputOrder(l+1) {
				t.Errorf("layer %d writes order %d but layer %d reads %d", l, OutputOrder(l), l+1, InputOrder(l+1))
			}
		}
	}
}
