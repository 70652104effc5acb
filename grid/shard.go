package grid

import "fmt"

// Shard names one of the adjacency shards a rank keeps: the layout of the
// layers that multiply by it (l mod 3, which fixes the rotation) and, when
// the two vertex orders of double permutation differ, the parity that picks
// Â[p1][:, p2] (0) or Â[p2][:, p1] (1). It is the one rule for "which
// adjacency shard layer l uses"; the model, the balance log, `scalegnn
// dataset info` and the performance model all call ShardFor or ShardsOf.
type Shard struct {
	Layout, Parity int
}

// ShardFor returns the shard GCN layer l multiplies by. twoOrders is true
// when the rows and columns of the layers alternate between two different
// vertex orders (double permutation); otherwise every layer with the same
// layout shares one shard, whatever its parity.
func ShardFor(l int, twoOrders bool) Shard {
	if l < 0 {
		panic(fmt.Sprintf("grid: negative layer %d", l))
	}
	if !twoOrders {
		return Shard{Layout: l % 3}
	}
	return Shard{Layout: l % 3, Parity: l % 2}
}

// ShardsOf returns the distinct shards of a model with the given number of
// GCN layers, in order of first use: at most three, six with two orders.
func ShardsOf(layers int, twoOrders bool) []Shard {
	var out []Shard
	seen := map[Shard]bool{}
	for l := range layers {
		s := ShardFor(l, twoOrders)
		if !seen[s] {
			seen[s] = true
			out = append(out, s)
		}
	}
	return out
}

// Layer returns the lowest layer with the shard's layout and parity. With
// one vertex order every layer of the layout reads the same shard, and its
// rows and columns are in the same order whatever the parity.
func (s Shard) Layer() int {
	for l := 0; ; l++ {
		if l%3 == s.Layout && l%2 == s.Parity {
			return l
		}
	}
}

// FirstUse returns the first layer that reads the shard: Layer() with two
// vertex orders, the layout's first layer with one.
func (s Shard) FirstUse(twoOrders bool) int {
	if !twoOrders {
		return s.Layout
	}
	return s.Layer()
}

// Axes returns the axes that split the shard's rows (R of its layers'
// rotation) and columns (P).
func (s Shard) Axes() (rows, cols Axis) {
	p, _, r := Rotation(s.Layout)
	return r, p
}

// RowOrder and ColOrder are the vertex orders (0 = p1, 1 = p2) of the
// shard's rows and columns: Â[p1][:, p2] for parity 0, Â[p2][:, p1] for
// parity 1. They equal the output and input orders of its layers.
func (s Shard) RowOrder() int { return s.Parity }
func (s Shard) ColOrder() int { return 1 - s.Parity }

// String names the shard as the logs and dataset info print it.
func (s Shard) String() string {
	if s.Parity == 0 {
		return fmt.Sprintf("layout %d, Â[p1][:, p2]", s.Layout)
	}
	return fmt.Sprintf("layout %d, Â[p2][:, p1]", s.Layout)
}

// Vertex orders of the layers: features are stored in order 1 (p2), layer l
// reads its input in order InputOrder(l) and writes its output in order
// OutputOrder(l), so layer 0 maps p2 to p1, layer 1 p1 to p2, and so on.
// Layer l's shard has rows in OutputOrder(l) and columns in InputOrder(l).
func InputOrder(l int) int  { return (l + 1) % 2 }
func OutputOrder(l int) int { return l % 2 }

// SameBlock reports whether shards a and b hold the same block of the
// adjacency on every rank of a grid of shape s: the same vertex orders,
// and for the rows and for the columns either the same axis or two axes
// of size 1 (both the whole range). The rule looks at the shape only, not
// at a rank's coordinates, so every rank keeps the same shards and rank 0
// stays the one the memory model describes. On a 1×1×1 grid (a one-rank
// job, an isolated worker, a 4D replica of one rank) every shard of one
// vertex order is the whole Â, kept once instead of up to three times.
func (s Shape) SameBlock(a, b Shard) bool {
	if a.RowOrder() != b.RowOrder() || a.ColOrder() != b.ColOrder() {
		return false
	}
	ar, ap := a.Axes()
	br, bp := b.Axes()
	same := func(x, y Axis) bool { return x == y || (s.Size(x) == 1 && s.Size(y) == 1) }
	return same(ar, br) && same(ap, bp)
}
