package permute

import (
	"fmt"
	"math"
	"math/rand/v2"

	"scalegnn/spmm"
)

// UsageError is the panic value for programmer misuse: a negative size, an
// unknown scheme, or a slice that is not a permutation of the right length.
type UsageError string

func (e UsageError) Error() string { return "permute: " + string(e) }

func usage(format string, args ...any) { panic(UsageError(fmt.Sprintf(format, args...))) }

// PCG streams of the two permutations: Single and Double draw the same
// P1 from a seed, so switching schemes changes only what must change.
const (
	streamP1 = 0x7065_726d_3100_0000 // "perm1"
	streamP2 = 0x7065_726d_3200_0000 // "perm2"
)

// Perms holds the permutations of one scheme. P1[i] is the original vertex
// at position i (row i of A[P1][:, ·] is original row P1[i]); Inv1 is its
// inverse, Inv1[v] the position of original vertex v. For None both are
// the identity and for None and Single P2, Inv2 share P1, Inv1's arrays.
// Treat them as read-only.
type Perms struct {
	Scheme     Scheme
	P1, P2     []int32
	Inv1, Inv2 []int32
}

// New draws the permutations of scheme s for n vertices from seed, by
// Fisher-Yates shuffles with seeded PCG generators: the same (n, s, seed)
// gives the same permutations on every rank and every run.
func New(n int, s Scheme, seed uint64) *Perms {
	if n < 0 || n > math.MaxInt32 {
		usage("New: %d vertices, want [0, 2^31-1]", n)
	}
	if !s.valid() {
		usage("New: unknown %v", s)
	}
	p := &Perms{Scheme: s}
	switch s {
	case None:
		p.P1 = identity(n)
		p.P2 = p.P1
	case Single:
		p.P1 = shuffled(n, seed, streamP1)
		p.P2 = p.P1
	case Double:
		p.P1 = shuffled(n, seed, streamP1)
		p.P2 = shuffled(n, seed, streamP2)
	}
	p.Inv1 = Inverse(p.P1)
	p.Inv2 = p.Inv1
	if s == Double {
		p.Inv2 = Inverse(p.P2)
	}
	return p
}

func identity(n int) []int32 {
	p := make([]int32, n)
	for i := range p {
		p[i] = int32(i)
	}
	return p
}

func shuffled(n int, seed, stream uint64) []int32 {
	p := identity(n)
	rng := rand.New(rand.NewPCG(seed, stream))
	for i := n - 1; i > 0; i-- {
		j := rng.IntN(i + 1)
		p[i], p[j] = p[j], p[i]
	}
	return p
}

// Layer returns the row and column permutations of GCN layer l's
// adjacency shard: (P1, P2) for even l, (P2, P1) for odd l. Layer l's
// output is then in the order of its row permutation, which is the next
// layer's column permutation, so no data moves between layers.
func (p *Perms) Layer(l int) (rowPerm, colPerm []int32) {
	if l < 0 {
		usage("Layer: negative layer %d", l)
	}
	if l%2 == 0 {
		return p.P1, p.P2
	}
	return p.P2, p.P1
}

// Apply returns layer l's permuted adjacency, Permute(a, p.Layer(l)).
func (p *Perms) Apply(a *spmm.CSR, l int) *spmm.CSR {
	r, c := p.Layer(l)
	return Permute(a, r, c)
}

// Inverse returns q with q[p[i]] = i. It panics with a UsageError if p is
// not a permutation of [0, len(p)).
func Inverse(p []int32) []int32 {
	q := make([]int32, len(p))
	for i := range q {
		q[i] = -1
	}
	for i, v := range p {
		if v < 0 || int(v) >= len(p) || q[v] >= 0 {
			usage("not a permutation: entry %d is %d", i, v)
		}
		q[v] = int32(i)
	}
	return q
}

// Gather returns y with y[i] = x[perm[i]]: x reordered into the positions
// of perm (labels or masks in a permuted order). A nil perm copies x.
func Gather[T any](x []T, perm []int32) []T {
	return GatherRows(x, 1, perm)
}

// GatherRows is Gather for a row-major matrix of the given width: row i of
// the result is row perm[i] of x (features in a permuted order).
func GatherRows[T any](x []T, width int, perm []int32) []T {
	if width < 0 || (width > 0 && len(x)%width != 0) {
		usage("GatherRows: %d values are not rows of width %d", len(x), width)
	}
	if perm == nil {
		return append([]T(nil), x...)
	}
	if width > 0 && len(perm) != len(x)/width {
		usage("GatherRows: permutation of %d for %d rows", len(perm), len(x)/width)
	}
	y := make([]T, len(x))
	for i, v := range perm {
		copy(y[i*width:(i+1)*width], x[int(v)*width:(int(v)+1)*width])
	}
	return y
}
