package infer

import (
	"fmt"
	"math"
	"slices"
	"testing"

	"scalegnn/collectives"
	"scalegnn/device"
	"scalegnn/gcn"
)

// TestBF16RoundsTOnce: in mixed precision the engine rounds a layer's T
// once into bfloat16 (Engine.tH, no float32 T: transformBF16, gathered
// as halfwords, rows of odd lengths included) and every block's SpMM
// reads it; its
// logits and embeddings equal, bit for bit, those of the engine that lets
// the device round all of T at each block's product (tF32), in every
// layer type, on 1–3 ranks with several blocks each. And they are not
// float32's: the roundings happen.
func TestBF16RoundsTOnce(t *testing.T) {
	g, o, src := testProblem(t)
	for name, cfg := range configs {
		w, _, _, wantEmb := trained(t, cfg, g, o)
		for _, tc := range []struct{ ranks, blocks int }{{1, 4}, {2, 5}, {3, 7}} {
			t.Run(fmt.Sprintf("%s/%d ranks/%d blocks", name, tc.ranks, tc.blocks), func(t *testing.T) {
				// out[k][rank]: logits, then each hidden layer's embeddings;
				// k = 0 rounds T once, 1 at each product, 2 is float32.
				var out [3][][][]float32
				for k := range out {
					out[k] = make([][][]float32, tc.ranks)
					for r, err := range collectives.RunLocal(tc.ranks, func(c collectives.Comm) error {
						prec := device.BF16
						if k == 2 {
							prec = device.Float32
						}
						e, err := New(c, device.WithPrecision(device.NewNative(1), prec), cfg, src, tc.blocks, "")
						if err != nil {
							return err
						}
						defer e.Close()
						e.tF32 = k == 1
						if k == 0 && cap(e.tH) == 0 && cfg.Layer != gcn.GATLayer {
							return fmt.Errorf("no bfloat16 T reserved")
						}
						if k == 0 && cap(e.tLocal)+cap(e.tFull) > 0 && cfg.Layer != gcn.GATLayer {
							return fmt.Errorf("a float32 T reserved beside the bfloat16 one")
						}
						lg, err := e.Logits(w)
						if err != nil {
							return err
						}
						res := [][]float32{lg}
						for l := range wantEmb {
							x, err := e.Embeddings(w, l)
							if err != nil {
								return err
							}
							res = append(res, x)
						}
						out[k][c.Rank()] = res
						return nil
					}) {
						if err != nil {
							t.Fatalf("rank %d: %v", r, err)
						}
					}
				}
				same := true
				for r := range tc.ranks {
					for i := range out[0][r] {
						a, b, f := out[0][r][i], out[1][r][i], out[2][r][i]
						for j := range a {
							if math.Float32bits(a[j]) != math.Float32bits(b[j]) {
								t.Fatalf("rank %d, output %d, element %d: %v with T rounded once, %v at each product", r, i, j, a[j], b[j])
							}
						}
						same = same && slices.Equal(a, f)
					}
				}
				if same {
					t.Errorf("mixed precision gave float32's results")
				}
			})
		}
	}
}
