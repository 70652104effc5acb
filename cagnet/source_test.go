package cagnet

import (
	"fmt"
	"sync"
	"testing"

	"scalegnn/collectives"
	"scalegnn/device"
	"scalegnn/gcn"
	"scalegnn/permute"
	"scalegnn/spmm"
)

// countingSource is a gcn.Source that records every block a rank reads.
type countingSource struct {
	gcn.Source
	mu        sync.Mutex
	adj       [][4]int // r0, r1, c0, c1 (order 0 checked on the way)
	feat, lab [][2]int // rows
	badOrder  bool
}

func (s *countingSource) AdjBlock(ro, r0, r1, co, c0, c1 int) (*spmm.CSR, error) {
	s.mu.Lock()
	s.adj = append(s.adj, [4]int{r0, r1, c0, c1})
	s.badOrder = s.badOrder || ro != 0 || co != 0
	s.mu.Unlock()
	return s.Source.AdjBlock(ro, r0, r1, co, c0, c1)
}

func (s *countingSource) FeatureBlock(order, r0, r1, c0, c1 int) ([]float32, error) {
	s.mu.Lock()
	s.feat = append(s.feat, [2]int{r0, r1})
	s.badOrder = s.badOrder || order != 0
	s.mu.Unlock()
	return s.Source.FeatureBlock(order, r0, r1, c0, c1)
}

func (s *countingSource) Labels(order, r0, r1 int) ([]int32, []bool, []bool, []bool, error) {
	s.mu.Lock()
	s.lab = append(s.lab, [2]int{r0, r1})
	s.badOrder = s.badOrder || order != 0
	s.mu.Unlock()
	return s.Source.Labels(order, r0, r1)
}

// TestReadsOnlyItsBlockRows: NewFromSource on rank (i, j) reads from its
// Source only what it keeps: Â_ik (its block row, the block column of a
// stage k of its replica) and, for Âᵀ, Â_ki (block row k, its own block
// column i); for SAGE also the square diagonal blocks Â_ii and Â_kk,
// whose diagonal gives the degrees (gcn.ReadBlock); and its block row of
// the features, labels and masks, once each. No read covers the whole
// graph or another block row's features. The model still trains like
// the reference (CheckCase reads the same way).
func TestReadsOnlyItsBlockRows(t *testing.T) {
	for _, pc := range [][2]int{{4, 2}, {6, 3}, {8, 4}, {3, 1}} {
		for _, layer := range []gcn.Layer{gcn.GCNLayer, gcn.SAGELayer} {
			p, c := pc[0], pc[1]
			cfg, opt, g := conformanceModel(Case{C: c, Layer: layer})
			n := g.Adj.Rows
			mem, err := gcn.NewMemorySource(g, gcn.NewOrders(n, permute.New(n, permute.Single, 3).P1, nil))
			if err != nil {
				t.Fatal(err)
			}
			srcs := make([]*countingSource, p)
			for r := range srcs {
				srcs[r] = &countingSource{Source: mem}
			}
			errs := collectives.RunLocal(p, func(w collectives.Comm) error {
				_, err := NewFromSource(w, device.Host(1), Options{Replication: c}, cfg, opt, srcs[w.Rank()])
				return err
			})
			for r, err := range errs {
				if err != nil {
					t.Fatalf("P=%d c=%d %v rank %d: %v", p, c, layer, r, err)
				}
			}
			for r, s := range srcs {
				if err := checkReads(s, n, p, c, r, layer); err != nil {
					t.Errorf("P=%d c=%d %v rank %d: %v", p, c, layer, r, err)
				}
			}
		}
	}
}

// checkReads holds rank r's reads to what it keeps.
func checkReads(s *countingSource, n, p, c, r int, layer gcn.Layer) error {
	l, err := NewLayout(p, c, r)
	if err != nil {
		return err
	}
	lo, hi := l.Rows(n, l.Row)
	own := [2]int{lo, hi}
	if s.badOrder {
		return fmt.Errorf("read in vertex order 1; the 1.5D layout is order 0 only")
	}
	if len(s.feat) != 1 || s.feat[0] != own || len(s.lab) != 1 || s.lab[0] != own {
		return fmt.Errorf("features read at rows %v and labels at %v; want rows %v once each", s.feat, s.lab, own)
	}
	// The reads it should make, as a multiset: per stage k, Â_ik and
	// Â_ki, and for SAGE the diagonal blocks of their rows.
	want := map[[4]int]int{}
	k0, k1 := l.Stages()
	for k := k0; k < k1; k++ {
		b0, b1 := l.Rows(n, k)
		want[[4]int{lo, hi, b0, b1}]++
		want[[4]int{b0, b1, lo, hi}]++
		if layer == gcn.SAGELayer {
			want[[4]int{lo, hi, lo, hi}]++
			want[[4]int{b0, b1, b0, b1}]++
		}
	}
	got := map[[4]int]int{}
	for _, b := range s.adj {
		got[b]++
	}
	for b, k := range got {
		if want[b] != k {
			return fmt.Errorf("read adjacency rows [%d, %d) × columns [%d, %d) %d times, want %d: it keeps block row [%d, %d) and the block columns of stages %d to %d (reads %v)",
				b[0], b[1], b[2], b[3], k, want[b], lo, hi, k0, k1-1, s.adj)
		}
	}
	if len(got) != len(want) {
		return fmt.Errorf("read adjacency blocks %v, want %v", s.adj, want)
	}
	return nil
}
