package neighbor

import (
	"fmt"
	"math"
	"slices"
	"testing"

	"scalegnn/collectives"
	"scalegnn/dataset"
	"scalegnn/device"
	"scalegnn/gcn"
	"scalegnn/sampler"
)

// bf16Run is what one mixed-precision run on ranks in-process ranks
// gives: rank 0's losses, weights and evaluation, and every rank's
// counted and formula bytes of every step.
type bf16Run struct {
	losses           []float64
	weights          [][]float32
	acc              gcn.Accuracy
	counted, formula []int64
}

// runBF16 trains steps steps in mixed precision and evaluates, on the
// features of dg as they are, or stored in bfloat16 (Graph.ToBF16).
func runBF16(t *testing.T, dg *dataset.Graph, cfg gcn.Config, ranks, batch, steps int, stored bool) bf16Run {
	var out bf16Run
	errs := collectives.RunLocal(ranks, func(c collectives.Comm) error {
		dev := device.WithPrecision(device.NewNative(1), device.BF16)
		rs := setupRankOn(t, c, dev, dg, cfg, []int{4, 3}, batch)
		if stored {
			ids := make([]int32, rs.g.V1-rs.g.V0)
			for i := range ids {
				ids[i] = int32(rs.g.V0 + i)
			}
			rs.g.ToBF16(ids)
		}
		pf := sampler.NewPrefetcher(rs.builder.NewBatch, rs.builder.BuildInto, 0, true)
		defer pf.Close()
		ctr := c.Counters()
		for range steps {
			b, _, _, err := pf.Next()
			if err != nil {
				return err
			}
			before := ctr.TotalBytes()
			loss, err := rs.trainer.TrainStep(b)
			if err != nil {
				return err
			}
			pf.Release(b)
			e := rs.trainer.Exch
			counted := ctr.TotalBytes() - before
			formula := StepBytes(e.Requested, e.Served, RowWords(rs.g.F, rs.g.BF16()), rs.model.NumParams(), ranks)
			if counted != formula {
				return fmt.Errorf("rank %d: counted %d bytes in a step, StepBytes %d", c.Rank(), counted, formula)
			}
			if c.Rank() == 0 {
				out.losses = append(out.losses, loss)
				out.counted = append(out.counted, counted)
			}
		}
		acc, err := NewEvaluator(c, rs.g, rs.model).Evaluate()
		if err != nil || c.Rank() != 0 {
			return err
		}
		out.acc = acc
		for k := range rs.model.ParamCount() {
			_, r, cols := rs.model.ParamShape(k)
			w, m, v := make([]float32, r*cols), make([]float32, r*cols), make([]float32, r*cols)
			rs.model.DownloadParam(k, w, m, v)
			out.weights = append(out.weights, w)
		}
		return nil
	})
	for _, err := range errs {
		if err != nil {
			t.Fatal(err)
		}
	}
	return out
}

// roundedFeatures is dg with its features rounded to bfloat16 and widened
// back (exact float32 values).
func roundedFeatures(dg *dataset.Graph) *dataset.Graph {
	r := *dg
	b := make([]uint16, len(dg.Features))
	collectives.EncodeBF16(b, dg.Features)
	r.Features = make([]float32, len(b))
	collectives.DecodeBF16(r.Features, b)
	return &r
}

// TestFeaturesBF16Exact: in mixed precision, features stored in bfloat16
// (the exchange moving them so, 2 bytes a feature) train and evaluate
// bit for bit as float32 features rounded to bfloat16 beforehand: losses,
// weights, accuracies and validation loss; every step's bytes are
// StepBytes with RowWords, and the exchange's rows take half of them.
// GCN, SAGE and GAT, with dropout on the features, on 1, 2 and 3 ranks;
// 7 features, so that a row's last word is half used.
func TestFeaturesBF16Exact(t *testing.T) {
	dg := testGraph(t, 300)
	dg.F = 7
	dg.Features = dg.Features[:300*7]
	for i := range dg.Features {
		dg.Features[i] = float32(math.Sin(float64(i)*0.37)) * 3.3 // not bfloat16 values
	}
	rounded := roundedFeatures(dg)
	for _, layer := range []gcn.Layer{gcn.GCNLayer, gcn.SAGELayer, gcn.GATLayer} {
		cfg := modelConfig(dg, layer, 2, 0.5)
		if layer == gcn.GATLayer {
			cfg.Heads, cfg.OutputHeads = 2, 1
		}
		for _, ranks := range []int{1, 2, 3} {
			t.Run(fmt.Sprintf("%v/ranks=%d", layer, ranks), func(t *testing.T) {
				const steps = 4
				want := runBF16(t, rounded, cfg, ranks, 24/ranks, steps, false)
				got := runBF16(t, dg, cfg, ranks, 24/ranks, steps, true)
				if !slices.Equal(got.losses, want.losses) {
					t.Errorf("losses %v, want %v (float32 features rounded first)", got.losses, want.losses)
				}
				for k := range want.weights {
					if !slices.Equal(got.weights[k], want.weights[k]) {
						t.Errorf("parameter %d differs after %d steps", k, steps)
					}
				}
				if got.acc != want.acc {
					t.Errorf("evaluation %+v, want %+v", got.acc, want.acc)
				}
				if ranks > 1 && slices.Equal(got.counted, want.counted) {
					t.Errorf("bfloat16 features moved %v bytes, as many as float32's", got.counted)
				}
			})
		}
	}
}

// TestLoadBF16: Load with bf16 reads what Load reads, rounded, with the
// fingerprint's term of the float32 features, from a permuted source on
// each of 3 ranks (a block this small is read in one piece: the chunking
// is gcn.ReadFeaturesBF16's, which gcn's TestReadFeaturesBF16 covers).
func TestLoadBF16(t *testing.T) {
	dg := testGraph(t, 200)
	for i := range dg.Features {
		dg.Features[i] = float32(i%97) * 0.0123
	}
	hat := dataset.NormalizeGCN(dg.Adj)
	perm := make([]int32, dg.Adj.Rows)
	for i := range perm {
		perm[i] = int32((i * 7) % len(perm))
	}
	o := gcn.NewOrders(len(perm), perm, perm)
	src, err := gcn.NewMemorySource(&gcn.Graph{Adj: hat, Features: dg.Features, Labels: dg.Labels, Train: dg.Train, Val: dg.Val, Test: dg.Test, Classes: dg.Classes}, o)
	if err != nil {
		t.Fatal(err)
	}
	for rank := range 3 {
		f32, err := Load(src, dg.Classes, rank, 3, false)
		if err != nil {
			t.Fatal(err)
		}
		b16, err := Load(src, dg.Classes, rank, 3, true)
		if err != nil {
			t.Fatal(err)
		}
		if !b16.BF16() || b16.Features != nil || f32.BF16() {
			t.Fatalf("rank %d: BF16() = %v with float32 features %v; float32 Load BF16() = %v", rank, b16.BF16(), b16.Features != nil, f32.BF16())
		}
		want := make([]uint16, len(f32.Features))
		collectives.EncodeBF16(want, f32.Features)
		if !slices.Equal(b16.FeaturesB, want) {
			t.Errorf("rank %d: bfloat16 features are not the float32 ones rounded", rank)
		}
		ids := o.Order[0][f32.V0:f32.V1]
		if h, w := b16.FeatureHash(ids), f32.FeatureHash(ids); h != w || w == 0 {
			t.Errorf("rank %d: feature hash %d in bfloat16, %d in float32", rank, h, w)
		}
	}
}
