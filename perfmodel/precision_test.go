package perfmodel

import (
	"math"
	"testing"

	"scalegnn/device"
	"scalegnn/gcn"
	"scalegnn/grid"
)

// scaledProducts is m's float32 product costs times f, as bf16 costs.
func scaledProducts(m *Machine, f float64) Products {
	sp := m.SpMM
	sp.Call, sp.NNZ, sp.FMA, sp.Out, sp.In, sp.Miss = f*sp.Call, f*sp.NNZ, f*sp.FMA, f*sp.Out, f*sp.In, f*sp.Miss
	g := func(c GEMMCost) GEMMCost { return GEMMCost{Call: f * c.Call, FMA: f * c.FMA, Elem: f * c.Elem} }
	return Products{SpMM: sp, GEMM: GEMMCosts{NN: g(m.GEMM.NN), TN: g(m.GEMM.TN), NT: g(m.GEMM.NT)}}
}

// Mixed precision prices the SpMMs and GEMMs with the profile's bf16
// costs, in every method, and nothing else: with bf16 costs half the
// float32 ones, a GCN job's SpMM and GEMM times halve and its
// communication (but neighbor sampling's, whose feature exchange moves
// bfloat16 rows, and 1.5D's, whose broadcasts move bfloat16 operands:
// less), element-wise and disk times stay; a GAT layer's
// per-head kernels stay float32 (with bf16 costs of zero, its SpMM time
// does not move while its GEMMs vanish); a profile without bf16 costs
// prices a bf16 job as float32.
func TestBF16CostsPriceTheProducts(t *testing.T) {
	type predictor struct {
		name string
		f    func(Job, *Machine) Prediction
	}
	// Where bf16 moves fewer bytes: neighbor sampling's bfloat16 feature
	// rows, 1.5D's bfloat16 broadcasts (cagnet/mixed.go).
	lessComm := map[string]bool{"neighbor 5": true, "1.5d 6x2": true, "1.5d mini-batch d=2 3x1": true}
	must := func(p Prediction, err error) Prediction {
		if err != nil {
			t.Fatal(err)
		}
		return p
	}
	predictors := []predictor{
		{"3d 1x1x1", func(j Job, m *Machine) Prediction { return PredictShape(j, m, xyz(1, 1, 1), 0, 0) }},
		{"3d 3x2x1", func(j Job, m *Machine) Prediction { return PredictShape(j, m, xyz(3, 2, 1), 0, 0) }},
		{"1.5d 6x2", func(j Job, m *Machine) Prediction { return PredictCAGNET(j, m, 6, 2, 0, 0) }},
		{"1.5d mini-batch d=2 3x1", func(j Job, m *Machine) Prediction {
			j.Mode, j.BatchSize = gcn.MiniBatch, 4096
			return PredictCAGNETBatch(j, m, 2, 3, 1, 0, 0)
		}},
		{"neighbor 5", func(j Job, m *Machine) Prediction {
			j.Mode = gcn.Neighbor
			j.Neighbor = NeighborJob{Fanouts: []int{10, 10, 5}, Seeds: 256, TrainVertices: 20000}
			return must(PredictNeighbor(j, m, 5, 0, 0))
		}},
		{"isolated 3", func(j Job, m *Machine) Prediction {
			j.Mode = gcn.Isolated
			// The partitions and the evaluation grid set: unset, they are
			// chosen from memory, which bf16's bfloat16 features make less.
			j.Isolated = IsolatedJob{TrainVertices: 20000, Partitions: 3, EvalShape: grid.Shape{D: 1, X: 3, Y: 1, Z: 1}}
			return must(PredictIsolated(j, m, 3, 0, 0))
		}},
	}
	f32 := DefaultMachine()
	half := DefaultMachine()
	half.BF16 = scaledProducts(half, 0.5)
	zero := DefaultMachine()
	zero.BF16 = scaledProducts(zero, 0)
	close := func(got, want float64) bool { return math.Abs(got-want) <= 1e-12*math.Abs(want) }
	const n = 50000
	for _, pr := range predictors {
		t.Run(pr.name, func(t *testing.T) {
			j := Job{N: n, NNZ: 20 * n, Features: 64, Hidden: 64, Classes: 8, Layers: 3, Dropout: 0.5, EvalEvery: 1}
			jb := j
			jb.Precision = device.BF16
			f, b := pr.f(j, half), pr.f(jb, half)
			comm := b.Comm == f.Comm && b.CommBytes == f.CommBytes
			if lessComm[pr.name] {
				comm = b.Comm < f.Comm && b.CommBytes < f.CommBytes
			}
			if !(f.SpMM > 0 && f.GEMM > 0) || !close(b.SpMM, f.SpMM/2) || !close(b.GEMM, f.GEMM/2) ||
				!comm || b.Other != f.Other || b.Disk != f.Disk {
				t.Errorf("GCN, bf16 costs half of float32's: bf16 %+v\nfloat32 %+v", b, f)
			}
			if nob, nof := pr.f(jb, f32), pr.f(j, f32); !close(nob.Epoch-nob.Comm, nof.Epoch-nof.Comm) || (!lessComm[pr.name] && nob.Comm != nof.Comm) {
				t.Errorf("GCN, no bf16 costs: bf16 epoch %g (comm %g), float32 %g (comm %g)", nob.Epoch, nob.Comm, nof.Epoch, nof.Comm)
			}
			g := gatJob(n, 20*n, 8, 4, 1)
			gb := g
			gb.Precision = device.BF16
			gf, gz := pr.f(g, zero), pr.f(gb, zero)
			if !(gf.SpMM > 0 && gf.GEMM > 0) || gz.SpMM != gf.SpMM || gz.GEMM != 0 {
				t.Errorf("GAT, bf16 costs of zero: bf16 SpMM %g GEMM %g, float32 SpMM %g GEMM %g (want the per-head SpMMs float32, the GEMMs free)",
					gz.SpMM, gz.GEMM, gf.SpMM, gf.GEMM)
			}
		})
	}
}
