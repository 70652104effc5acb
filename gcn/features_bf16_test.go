package gcn

import (
	"fmt"
	"maps"
	"testing"

	"scalegnn/collectives"
	"scalegnn/device"
	"scalegnn/grid"
	"scalegnn/permute"
	"scalegnn/spmm"
)

// TestFeaturesBF16Exact: in mixed precision, a model whose shards hold
// the features in bfloat16 (FeaturesToBF16) computes exactly what the
// model computes on float32 features rounded to bfloat16 beforehand: the
// same losses, weights and evaluation bit for bit, full graph and
// mini-batch, in every layer type and option (dropout, input projection,
// norm, residual, output head), on grids of one rank and several (P
// groups of one, where the first SpMM writes bfloat16 itself, and of
// several). Its fingerprint is the float32 features', and its shards hold
// half the features' bytes.
func TestFeaturesBF16Exact(t *testing.T) {
	configs := maps.Clone(testConfigs)
	maps.Copy(configs, gatTestConfigs)
	nodrop := configs["deep"]
	nodrop.Dropout = 0
	configs["deep-nodrop"] = nodrop // the first layer aggregates the bfloat16 features themselves
	p := newProblem(12, 37, 11, 5, 5)
	rounded := *p.g
	rounded.Features = make([]float32, len(p.g.Features))
	for k, v := range p.g.Features {
		rounded.Features[k] = spmm.RoundBF16(v)
	}
	for _, name := range []string{"kipf", "deep", "deep-nodrop", "scalegnn", "headonly", "sage", "sagefull", "gat", "gatfull"} {
		cfg := configs[name]
		for _, shape := range []grid.Shape{xyz(1, 1, 1), xyz(2, 1, 1), xyz(1, 2, 3), {D: 2, X: 1, Y: 2, Z: 1}} {
			t.Run(fmt.Sprintf("%s/%v", name, shape), func(t *testing.T) {
				perms := permute.New(p.n, permute.Single, 5)
				orders := NewOrders(p.n, perms.P1, perms.P2)
				errs := collectives.RunLocal(shape.Ranks(), func(w collectives.Comm) error {
					g, err := grid.New(w, shape)
					if err != nil {
						return err
					}
					src, err := NewMemorySource(&rounded, orders)
					if err != nil {
						return err
					}
					var ms [2]*Model
					var bbs [2]*BatchBuilder
					for k := range ms {
						sh, err := NewShards(g, cfg, src)
						if err != nil {
							return err
						}
						if k == 1 {
							f32 := sh.Bytes()
							sh.FeaturesToBF16(g, cfg)
							if sh.X != nil || sh.XB == nil {
								return fmt.Errorf("FeaturesToBF16 left X (%d values) or no XB", len(sh.X))
							}
							if d := f32 - sh.Bytes(); d != 2*int64(len(sh.XB)) {
								return fmt.Errorf("shard bytes %d less with bfloat16 features, want %d", d, 2*len(sh.XB))
							}
						}
						dev := device.BF16Products(device.NewNative(1))
						if ms[k], err = NewModel(g, dev, cfg, DefaultOptimizer(), sh, Options{}); err != nil {
							return err
						}
						if shape.D > 1 {
							if bbs[k], err = NewBatchBuilder(g, cfg, sh, 3, 17); err != nil {
								return err
							}
						}
					}
					if !ms[1].Options.FeaturesBF16 || ms[0].Options.FeaturesBF16 {
						return fmt.Errorf("Options.FeaturesBF16 %v and %v, want false and true", ms[0].Options.FeaturesBF16, ms[1].Options.FeaturesBF16)
					}
					tw := twins{ms, bbs, [2]string{"with rounded float32 features", "with bfloat16 features"}}
					if err := tw.train(3, nil); err != nil {
						return err
					}
					if err := tw.same(); err != nil {
						return err
					}
					var fp [2]Fingerprint
					for k, m := range ms {
						if fp[k], err = m.Fingerprint(); err != nil {
							return err
						}
					}
					if fp[0] != fp[1] {
						return fmt.Errorf("fingerprint %+v with bfloat16 features, %+v with float32 ones", fp[1], fp[0])
					}
					return nil
				})
				for r, err := range errs {
					if err != nil {
						t.Errorf("rank %d: %v", r, err)
					}
				}
			})
		}
	}
}

// sourceOnly hides a source's FeatureBlockInto: the reads go through
// FeatureBlock.
type sourceOnly struct{ Source }

// TestReadFeaturesBF16: NewShardsWith's FeaturesBF16 reads, a block of a
// few rows at a time, exactly what FeaturesToBF16 makes of the float32
// block (the same bits, the same fingerprint term), through
// FeatureBlockInto and through FeatureBlock, on grids whose feature
// blocks are cut over Y (no input projection) and Z (with one).
func TestReadFeaturesBF16(t *testing.T) {
	defer func(n int) { featureChunkElems = n }(featureChunkElems)
	featureChunkElems = 25 // blocks of 2–25 rows: many, and a short last one
	p := newProblem(13, 41, 11, 5, 4)
	for _, name := range []string{"kipf", "scalegnn"} {
		cfg := testConfigs[name]
		for _, shape := range []grid.Shape{xyz(1, 1, 1), xyz(2, 3, 1), xyz(3, 1, 2)} {
			perms := permute.New(p.n, permute.Double, 3)
			orders := NewOrders(p.n, perms.P1, perms.P2)
			errs := collectives.RunLocal(shape.Ranks(), func(w collectives.Comm) error {
				g, err := grid.New(w, shape)
				if err != nil {
					return err
				}
				mem, err := NewMemorySource(p.g, orders)
				if err != nil {
					return err
				}
				want, err := NewShards(g, cfg, mem)
				if err != nil {
					return err
				}
				wantHash, _ := want.featureHash(g, cfg)
				want.FeaturesToBF16(g, cfg)
				for _, src := range []Source{mem, sourceOnly{mem}} {
					got, err := NewShardsWith(g, cfg, src, ShardOptions{FeaturesBF16: true})
					if err != nil {
						return err
					}
					if got.X != nil || len(got.XB) != len(want.XB) {
						return fmt.Errorf("%s on %v: X %d and XB %d values, want none and %d", name, shape, len(got.X), len(got.XB), len(want.XB))
					}
					for k := range want.XB {
						if got.XB[k] != want.XB[k] {
							return fmt.Errorf("%s on %v: XB[%d] = %#x, want %#x", name, shape, k, got.XB[k], want.XB[k])
						}
					}
					if h, _ := got.featureHash(g, cfg); h != wantHash {
						return fmt.Errorf("%s on %v: fingerprint term %d, want %d (the float32 features')", name, shape, h, wantHash)
					}
				}
				return nil
			})
			for r, err := range errs {
				if err != nil {
					t.Errorf("rank %d: %v", r, err)
				}
			}
		}
	}
}
