package gcn

import (
	"fmt"
	"math"
	"math/rand/v2"
	"strings"
	"sync"
	"testing"

	"scalegnn/collectives"
	"scalegnn/dataset"
	"scalegnn/grid"
	"scalegnn/permute"
	"scalegnn/spmm"
)

// TestMeanAdjacencyIsRowNormalisedA: D^-1 A, derived from Â, has A's
// pattern (no diagonal) and 1/deg(v) in every entry of row v, so each
// non-empty row sums to 1 and an isolated vertex's row is empty.
func TestMeanAdjacencyIsRowNormalisedA(t *testing.T) {
	// Vertex 4 is isolated; 0 has degree 3.
	us := []int32{0, 1, 0, 2, 0, 3, 1, 2}
	vs := []int32{1, 0, 2, 0, 3, 0, 2, 1}
	a := spmm.FromCOO(5, 5, us, vs, nil)
	got := MeanAdjacency(dataset.NormalizeGCN(a))
	if err := sameCSRPattern(got, a); err != nil {
		t.Fatal(err)
	}
	for i := 0; i < got.Rows; i++ {
		d := a.RowPtr[i+1] - a.RowPtr[i]
		for k := got.RowPtr[i]; k < got.RowPtr[i+1]; k++ {
			if want := float32(1 / float64(d)); got.Val[k] != want {
				t.Errorf("row %d: value %g, want 1/%d", i, got.Val[k], d)
			}
		}
	}
}

func sameCSRPattern(a, b *spmm.CSR) error {
	if a.Rows != b.Rows || a.Cols != b.Cols || a.NNZ() != b.NNZ() {
		return fmt.Errorf("%d×%d with %d nonzeros, want %d×%d with %d", a.Rows, a.Cols, a.NNZ(), b.Rows, b.Cols, b.NNZ())
	}
	for i := range a.RowPtr {
		if a.RowPtr[i] != b.RowPtr[i] {
			return fmt.Errorf("row pointer %d: %d, want %d", i, a.RowPtr[i], b.RowPtr[i])
		}
	}
	for k := range a.ColIdx {
		if a.ColIdx[k] != b.ColIdx[k] {
			return fmt.Errorf("entry %d: column %d, want %d", k, a.ColIdx[k], b.ColIdx[k])
		}
	}
	return nil
}

// TestSAGEShardsAreMeanAdjacencyBlocks: on every grid, with and without
// double permutation, the union of the ranks' SAGE adjacency shards
// (each derived from Â's blocks and their diagonal block) is
// MeanAdjacency(Â) bit for bit, and each transpose is its block's.
func TestSAGEShardsAreMeanAdjacencyBlocks(t *testing.T) {
	p := newProblem(31, 47, 11, 5, 5)
	want := map[[2]int32]float32{}
	mean := MeanAdjacency(p.g.Adj)
	for i := 0; i < mean.Rows; i++ {
		for k := mean.RowPtr[i]; k < mean.RowPtr[i+1]; k++ {
			want[[2]int32{int32(i), mean.ColIdx[k]}] = mean.Val[k]
		}
	}
	cfg := testConfigs["sagefull"]
	for _, scheme := range []permute.Scheme{permute.None, permute.Double} {
		for _, shape := range []grid.Shape{xyz(1, 1, 1), xyz(2, 2, 2), xyz(1, 2, 3), xyz(3, 1, 2)} {
			t.Run(fmt.Sprintf("%v/%v", scheme, shape), func(t *testing.T) {
				perms := permute.New(p.n, scheme, 3)
				orders := NewOrders(p.n, perms.P1, perms.P2)
				var mu sync.Mutex
				got := map[grid.Shard]map[[2]int32]float32{}
				runLocal(t, shape.Ranks(), func(w collectives.Comm) error {
					g, err := grid.New(w, shape)
					if err != nil {
						return err
					}
					src, err := NewMemorySource(p.g, orders)
					if err != nil {
						return err
					}
					sh, err := NewShards(g, cfg, src)
					if err != nil {
						return err
					}
					mu.Lock()
					defer mu.Unlock()
					for key, s := range sh.adj {
						if s.at != nil {
							if err := sameCSR(s.at, spmm.Transpose(s.a)); err != nil {
								return fmt.Errorf("shard %v transpose: %v", key, err)
							}
						}
						r, c := key.Axes()
						r0, _ := g.Range(p.n, r)
						c0, _ := g.Range(p.n, c)
						if got[key] == nil {
							got[key] = map[[2]int32]float32{}
						}
						for i := 0; i < s.a.Rows; i++ {
							u := orders.Order[key.RowOrder()][r0+i]
							for k := s.a.RowPtr[i]; k < s.a.RowPtr[i+1]; k++ {
								v := orders.Order[key.ColOrder()][c0+int(s.a.ColIdx[k])]
								got[key][[2]int32{u, v}] = s.a.Val[k]
							}
						}
					}
					return nil
				})
				for key, m := range got {
					if len(m) != len(want) {
						t.Errorf("shard %v: %d entries over the ranks, want %d", key, len(m), len(want))
					}
					for e, v := range want {
						if m[e] != v {
							t.Errorf("shard %v: entry %v is %g, want %g", key, e, m[e], v)
							break
						}
					}
				}
			})
		}
	}
}

// TestSAGENeedsGCNNormalisedAdjacency: an adjacency whose diagonal is not
// 1/(degree+1) cannot be turned into D^-1 A, and NewShards says so.
func TestSAGENeedsGCNNormalisedAdjacency(t *testing.T) {
	p := newProblem(32, 13, 11, 5, 3)
	g := *p.g
	adj := *p.g.Adj
	adj.Val = make([]float32, len(p.g.Adj.Val))
	for k := range adj.Val {
		adj.Val[k] = 0.3
	}
	g.Adj = &adj
	runLocal(t, 1, func(w collectives.Comm) error {
		gr, err := grid.New(w, xyz(1, 1, 1))
		if err != nil {
			return err
		}
		src, err := NewMemorySource(&g, NewOrders(p.n, nil, nil))
		if err != nil {
			return err
		}
		_, err = NewShards(gr, testConfigs["sage"], src)
		if err == nil || !strings.Contains(err.Error(), "sage") || !strings.Contains(err.Error(), "diagonal 0.3") {
			t.Errorf("NewShards of a SAGE model on a non-GCN adjacency: %v", err)
		}
		return nil
	})
}

// TestSAGEBatchAggregationIsUnbiased is the Monte Carlo check of the
// mini-batch rescaling (batchMeanRescale): over many batches built by
// BatchBuilder, the batch aggregation D_S^-1 A_S·h of a sampled vertex v
// — full-graph degrees, every entry divided by p — averages to the
// full-graph mean of v's neighbours' h, within 4.5 standard errors for
// every vertex. The same estimates without the 1/p (the sampled
// entries of D^-1 A as they are) are rejected, so the test can fail.
func TestSAGEBatchAggregationIsUnbiased(t *testing.T) {
	p := newProblem(33, 29, 11, 5, 6)
	const b, trials = 9, 20000
	rng := rand.New(rand.NewPCG(1, 2))
	h := make([]float64, p.n)
	for i := range h {
		h[i] = rng.NormFloat64()
	}
	mean := MeanAdjacency(p.g.Adj)
	exact := spMul(mean, h, 1)
	sum, sumSq, count := make([]float64, p.n), make([]float64, p.n), make([]float64, p.n)
	cfg := testConfigs["sage"]
	var pIncl float64
	runLocal(t, 1, func(w collectives.Comm) error {
		_, _, bb, err := batchModel(w, xyz(1, 1, 1), cfg, DefaultOptimizer(), p, NewOrders(p.n, nil, nil), 5, b)
		if err != nil {
			return err
		}
		pIncl = bb.p
		sh := bb.NewBatch()
		key := sh.shardKey(0)
		for step := range trials {
			if err := bb.BuildInto(step, sh); err != nil {
				return err
			}
			a, verts := sh.adj[key].a, sh.Orders.Order[0]
			for i := 0; i < a.Rows; i++ {
				y := 0.0
				for k := a.RowPtr[i]; k < a.RowPtr[i+1]; k++ {
					y += float64(a.Val[k]) * h[verts[a.ColIdx[k]]]
				}
				v := verts[i]
				sum[v] += y
				sumSq[v] += y * y
				count[v]++
			}
		}
		return nil
	})
	// biased reports the vertices whose average, scaled by s, is more than
	// 4.5 standard errors from the exact mean.
	biased := func(s float64) []string {
		var bad []string
		for v := range h {
			avg := sum[v] / count[v]
			se := math.Sqrt(math.Max(sumSq[v]/count[v]-avg*avg, 0) / count[v])
			if math.Abs(s*avg-exact[v]) > 4.5*s*se+1e-6 {
				bad = append(bad, fmt.Sprintf("vertex %d: %.4f ± %.4f, exact %.4f", v, s*avg, s*se, exact[v]))
			}
		}
		return bad
	}
	if bad := biased(1); len(bad) > 0 {
		t.Errorf("batch aggregation biased at %d vertices: %v", len(bad), bad)
	}
	if bad := biased(pIncl); len(bad) == 0 {
		t.Errorf("without the 1/p rescale (p = %.3f) no vertex was found biased: the test cannot fail", pIncl)
	}
}
