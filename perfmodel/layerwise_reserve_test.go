package perfmodel

import (
	"fmt"
	"testing"

	"scalegnn/collectives"
	"scalegnn/dataset"
	"scalegnn/device"
	"scalegnn/gcn"
	"scalegnn/infer"
)

// TestLayerwiseReservation: in float32 and in mixed precision (T in
// bfloat16 too), what the layer-wise engine reserves when it
// is made (infer/reserve.go) is what layerwiseEvalMemory counts for it:
// every vertex's T and the activations' two generations (none with
// files) exactly, and its block of features within the model's block
// (which also counts a projected block, labels and masks). The vertices
// divide evenly into ranks and blocks, so that the model's averages are
// every rank's sizes.
func TestLayerwiseReservation(t *testing.T) {
	const n, blocks = 120, 6
	base := Job{N: n, Features: 12, Hidden: 16, Classes: 5, Layers: 3, Layer: gcn.GCNLayer}
	jobs := map[string]Job{"gcn": base}
	sage := base
	sage.Layer = gcn.SAGELayer // its first layer's input kept in the activations
	jobs["sage"] = sage
	wide := sage
	wide.Features = 40 // wider than the activations: not kept
	jobs["sage, wide features"] = wide
	gat := base
	gat.Layer, gat.Heads, gat.OutputHeads = gcn.GATLayer, 2, 1
	jobs["gat"] = gat
	proj := base
	proj.InputProjection, proj.OutputHead = true, true
	jobs["projection and head"] = proj
	for name, j := range jobs {
		checkLayerwiseReservation(t, name, j, n, blocks, []int{1, 2, 3})
	}
	// In bf16 a rank's rows of T in an odd number of halfwords: 105
	// vertices in 7 blocks of 15, T 7 wide, on 1 and 7 ranks.
	odd := base
	odd.N, odd.Hidden, odd.Classes = 105, 7, 3
	checkLayerwiseReservation(t, "odd width", odd, 105, 7, []int{1, 7})
}

// checkLayerwiseReservation is TestLayerwiseReservation for job j on n
// vertices in blocks row blocks on each of ranks (every count dividing
// blocks, n a multiple of blocks).
func checkLayerwiseReservation(t *testing.T, name string, j Job, n, blocks int, ranks []int) {
	{
		g := gcn.RandomGraph(3, n, j.Features, j.Classes, 4)
		g.Adj = dataset.NormalizeGCN(g.Adj)
		src, err := gcn.NewMemorySource(g, gcn.NewOrders(n, nil, nil))
		if err != nil {
			t.Fatal(err)
		}
		for _, workers := range ranks {
			for _, files := range []bool{false, true} {
				for _, prec := range []device.Precision{device.Float32, device.BF16} {
					j := j
					j.Precision = prec
					t.Run(fmt.Sprintf("%s/workers=%d/files=%v/%v", name, workers, files, prec), func(t *testing.T) {
						dir := ""
						if files {
							dir = t.TempDir()
						}
						got := make([]int64, workers)
						errs := collectives.RunLocal(workers, func(c collectives.Comm) error {
							e, err := infer.New(c, device.WithPrecision(device.NewNative(1), prec), j.gcnConfig(), src, blocks, dir)
							if err != nil {
								return err
							}
							defer e.Close()
							got[c.Rank()] = e.ReservedBytes()
							return nil
						})
						for _, err := range errs {
							if err != nil {
								t.Fatal(err)
							}
						}
						m := j.layerwiseEvalMemory(workers, blocks, files)
						x0 := int64(4 * j.Features * n / blocks)
						for r, b := range got {
							if b-x0 != m.Activations || x0 > m.Features {
								t.Errorf("rank %d reserved %d B: T and activations %d, the model %d; features %d, the model %d", r, b, b-x0, m.Activations, x0, m.Features)
							}
						}
					})
				}
			}
		}
	}
}
