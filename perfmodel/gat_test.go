package perfmodel

import (
	"fmt"
	"sort"
	"testing"

	"scalegnn/collectives"
	"scalegnn/device"
	"scalegnn/gcn"
	"scalegnn/grid"
	"scalegnn/method"
	"scalegnn/permute"
)

// gatJob is a full-graph GAT job: k heads of width hidden in the hidden
// layers, outHeads averaged in the last.
func gatJob(n int, nnz int64, hidden, k, outHeads int) Job {
	return Job{N: n, NNZ: nnz, Features: 64, Hidden: hidden, Classes: 8, Layers: 3, Layer: gcn.GATLayer,
		Heads: k, OutputHeads: outHeads, Dropout: 0.5, EvalEvery: 1}
}

// TestGATStepBytesByHand: one GAT layer (6 features, 3 output heads of 4
// classes: C = 12, K = 3) on 12 vertices, counted by hand on two grids of
// two ranks, per group and kind: the softmax statistics, O, dO and dW
// over P, dt and dY over R, and s's redistribution both ways.
func TestGATStepBytesByHand(t *testing.T) {
	j := Job{N: 12, NNZ: 40, Features: 6, Classes: 4, Layers: 1, Layer: gcn.GATLayer, OutputHeads: 3}
	a2a := func(calls, elems int64) counted { return counted{calls, 4 * elems} }
	for _, tc := range []struct {
		shape grid.Shape
		want  map[[2]int]counted
	}{
		// Gx = 2 (P = X; Q, R of one rank): nP = 6, nR = 12. Over X:
		// max 36, sum 36, O 144, loss.max 12, loss.sums 24, dO 48,
		// rowdot 36, ds 36, dW 6·12 + 24 = 96 elements. s forward: 6
		// rows × 3 to both P ranks (18 kept); ds back: 18 to itself.
		{xyz(2, 1, 1), map[[2]int]counted{
			{int(GroupX), int(collectives.KindAllReduce)}:    {9, 4 * (36 + 36 + 144 + 12 + 24 + 48 + 36 + 36 + 96)},
			{int(GroupCube), int(collectives.KindAlltoallv)}: a2a(2, 36+18),
		}},
		// Gz = 2 (R = Z): nP = 12, nR = 6. Over Z: loss.total (2
		// float64), dt 12·3 with the bias's gradient 12, dY 12·12. s
		// forward: 6 rows × 3 to itself; ds back: 6 rows × 3 to both R
		// ranks.
		{xyz(1, 1, 2), map[[2]int]counted{
			{int(GroupZ), int(collectives.KindAllReduce)}:    {3, 16 + 4*(36+12+144)},
			{int(GroupCube), int(collectives.KindAlltoallv)}: a2a(2, 18+36),
		}},
	} {
		got := tally(StepTrace(j, tc.shape, Coords{}, Local{}).Comm)
		if err := compareTally(GridString(tc.shape), got, tc.want); err != nil {
			t.Error(err)
		}
	}
}

// TestGATPredictionsGrow: every method's GAT prediction is positive and
// grows with the heads (at a fixed width per head) and with the
// nonzeros; on grids that split a row's columns the extra all-reduces of
// the softmax statistics grow the bytes with the heads too.
func TestGATPredictionsGrow(t *testing.T) {
	m := DefaultMachine()
	type predictor struct {
		name string
		f    func(Job) Prediction
	}
	predictors := []predictor{
		{"3d 1x1x1", func(j Job) Prediction { return PredictShape(j, m, xyz(1, 1, 1), 0, 0) }},
		{"3d 2x2x2", func(j Job) Prediction { return PredictShape(j, m, xyz(2, 2, 2), 0, 0) }},
		{"3d 4x2x1", func(j Job) Prediction { return PredictShape(j, m, xyz(4, 2, 1), 0, 0) }},
		{"1.5d 4x2", func(j Job) Prediction { return PredictCAGNET(j, m, 8, 2, 0, 0) }},
		{"neighbor 4", func(j Job) Prediction {
			j.Mode = gcn.Neighbor
			j.Neighbor = NeighborJob{Fanouts: []int{10, 10, 5}, Seeds: 256, TrainVertices: 20000}
			p, err := PredictNeighbor(j, m, 4, 0, 0)
			if err != nil {
				t.Fatal(err)
			}
			return p
		}},
		{"isolated 4", func(j Job) Prediction {
			j.Mode = gcn.Isolated
			j.Isolated = IsolatedJob{TrainVertices: 20000}
			p, err := PredictIsolated(j, m, 4, 0, 0)
			if err != nil {
				t.Fatal(err)
			}
			return p
		}},
	}
	const n = 50000
	for _, pr := range predictors {
		t.Run(pr.name, func(t *testing.T) {
			var last Prediction
			for i, k := range []int{1, 2, 4, 8} {
				p := pr.f(gatJob(n, 20*n, 8, k, 1))
				if !(p.Epoch > 0 && p.Comm >= 0 && p.SpMM > 0 && p.GEMM > 0 && p.Other > 0 && p.MemTotal > 0) {
					t.Fatalf("%d heads: %+v", k, p)
				}
				if i > 0 && !(p.Epoch > last.Epoch && p.MemTotal > last.MemTotal && p.Memory.Attention > last.Memory.Attention) {
					t.Errorf("%d heads: epoch %.4g s, memory %d, attention %d; with fewer heads %.4g s, %d, %d",
						k, p.Epoch, p.MemTotal, p.Memory.Attention, last.Epoch, last.MemTotal, last.Memory.Attention)
				}
				if i > 0 && pr.name != "3d 1x1x1" && !(p.CommBytes > last.CommBytes) {
					t.Errorf("%d heads: %d bytes, with fewer heads %d", k, p.CommBytes, last.CommBytes)
				}
				last = p
			}
			sparse, dense := pr.f(gatJob(n, 10*n, 8, 4, 1)), pr.f(gatJob(n, 40*n, 8, 4, 1))
			if !(dense.Epoch > sparse.Epoch && dense.Memory.Attention > sparse.Memory.Attention) {
				t.Errorf("4× the nonzeros: epoch %.4g s against %.4g s, attention %d against %d",
					dense.Epoch, sparse.Epoch, dense.Memory.Attention, sparse.Memory.Attention)
			}
		})
	}
}

// TestGATMemoryPerHead: at a fixed hidden width C = 64, eight heads of 8
// against one head of 64 cost each of the two hidden layers 7 more
// columns of every per-edge array — α, α with dropout and dα on the
// shard's nonzeros, 4 bytes each — and, beside them, only the per-vertex
// per-head vectors (s, t, s in rows R, max, sum; row dot, ds, dt, ds in
// rows P: at most 9 per layer, grown by the arena's quarter).
func TestGATMemoryPerHead(t *testing.T) {
	const n, nnz = 3000, 45000
	one := gatJob(n, nnz, 64, 1, 1)
	eight := gatJob(n, nnz, 8, 8, 1)
	for _, dropout := range []float64{0.5, 0} {
		one.Dropout, eight.Dropout = dropout, dropout
		arrays := int64(3)
		if dropout == 0 {
			arrays = 2
		}
		m1, m8 := EstimateMemory(one, xyz(1, 1, 1), Coords{}), EstimateMemory(eight, xyz(1, 1, 1), Coords{})
		if want := 2 * 7 * arrays * 4 * nnz; m8.Attention-m1.Attention != want {
			t.Errorf("dropout %v: per-edge arrays grow by %d bytes, expected 2 layers × 7 heads × %d arrays × 4 × %d nonzeros = %d",
				dropout, m8.Attention-m1.Attention, arrays, nnz, want)
		}
		if m1.Attention != (2*arrays+arrays)*4*nnz {
			t.Errorf("dropout %v: one head: %d bytes of per-edge arrays, expected 3 layers × %d arrays × 4 × %d", dropout, m1.Attention, arrays, nnz)
		}
		rest := (m8.Total() - m8.Attention) - (m1.Total() - m1.Attention)
		if lo, hi := int64(4*2*7*n), int64(4*2*9*7*n*5/4+16); rest < lo || rest > hi || m8.Weights != m1.Weights {
			t.Errorf("dropout %v: the rest grows by %d bytes, expected within [%d, %d]; weights %d and %d", dropout, rest, lo, hi, m8.Weights, m1.Weights)
		}
	}
	// On a grid the per-edge arrays are the shard block's: 2×2×2 splits
	// every layer's block four ways (rows over R, columns over P).
	one.Dropout, eight.Dropout = 0.5, 0.5
	m1, m8 := EstimateMemory(one, xyz(2, 2, 2), Coords{}), EstimateMemory(eight, xyz(2, 2, 2), Coords{})
	if want := int64(2 * 7 * 3 * 4 * nnz / 4); m8.Attention-m1.Attention != want {
		t.Errorf("2x2x2: per-edge arrays grow by %d bytes, expected %d", m8.Attention-m1.Attention, want)
	}
}

// TestGATAdjacencyKeepsTransposes: a GAT job keeps every layer's
// transpose (the first layer's too: dW needs dY = αᵀ·dO) and its int32
// positions.
func TestGATAdjacencyKeepsTransposes(t *testing.T) {
	const n, nnz = 1000, 9000
	j := gatJob(n, nnz, 8, 4, 1)
	j.Layers = 1
	g := j
	g.Layer, g.Heads, g.OutputHeads = gcn.GCNLayer, 0, 0
	mg, mj := EstimateMemory(g, xyz(1, 1, 1), Coords{}), EstimateMemory(j, xyz(1, 1, 1), Coords{})
	if want := csrBytes(n, nnz) + 4*nnz; mj.Adjacency-mg.Adjacency != want {
		t.Errorf("one layer: GAT adjacency %d, GCN %d: difference %d, expected a transpose and its positions, %d", mj.Adjacency, mg.Adjacency, mj.Adjacency-mg.Adjacency, want)
	}
}

// TestPredictAllRanksGAT: `perfmodel predict`'s ranking (PredictAll) of a
// GAT job on 8 ranks lists the ten 3D grids and the four 1.5D
// arrangements, best first, each positive; the GAT job's ranking is its
// own (its times differ from the GCN job's of the same width).
func TestPredictAllRanksGAT(t *testing.T) {
	m := DefaultMachine()
	j := gatJob(100000, 2000000, 16, 8, 1)
	preds, err := PredictAll(j, m, Options{Ranks: 8}, Choices{method.Plexus: true, method.CAGNET: true})
	if err != nil {
		t.Fatal(err)
	}
	count := map[method.Algorithm]int{}
	for _, p := range preds {
		count[p.Algorithm]++
		if !(p.Epoch > 0 && p.MemTotal > 0 && p.Memory.Attention > 0) {
			t.Errorf("%s: %+v", p.Grid, p)
		}
	}
	if count[method.Plexus] != 10 || count[method.CAGNET] != 4 {
		t.Errorf("%v: expected 10 3D grids and 4 1.5D arrangements", count)
	}
	if !sort.SliceIsSorted(preds, func(a, b int) bool { return preds[a].Epoch < preds[b].Epoch }) {
		t.Error("predictions are not ranked by epoch time")
	}
	gcnJob := j
	gcnJob.Layer, gcnJob.Heads, gcnJob.Hidden = gcn.GCNLayer, 0, 16*8
	gp, err := PredictAll(gcnJob, m, Options{Ranks: 8}, Choices{method.Plexus: true, method.CAGNET: true})
	if err != nil {
		t.Fatal(err)
	}
	times := map[string]float64{}
	for _, p := range gp {
		times[p.Grid] = p.Epoch
	}
	for _, p := range preds {
		if !(p.Epoch > times[p.Grid]) {
			t.Errorf("%s: GAT epoch %.4g s, GCN of the same width %.4g s: expected GAT's per-edge work to cost more", p.Grid, p.Epoch, times[p.Grid])
		}
	}
	best, err := Best(preds, 0)
	if err != nil || best.Grid != preds[0].Grid {
		t.Errorf("best %q (%v), first %q", best.Grid, err, preds[0].Grid)
	}
	t.Logf("GAT 8 heads × 16 on 8 ranks: best %s %.3g s of %d", best.Grid, best.Epoch, len(preds))
}

// TestGATJobValidate: a GAT job refuses norm, residual and negative heads,
// as gcn.Config does.
func TestGATJobValidate(t *testing.T) {
	for _, mod := range []func(*Job){
		func(j *Job) { j.Norm = true },
		func(j *Job) { j.InputProjection, j.Residual = true, true },
		func(j *Job) { j.Heads = -1 },
		func(j *Job) { j.OutputHeads = -2 },
	} {
		j := gatJob(100, 500, 8, 2, 1)
		if err := j.Validate(); err != nil {
			t.Fatalf("base job: %v", err)
		}
		mod(&j)
		if err := j.Validate(); err == nil {
			t.Errorf("%+v: no error", j)
		}
	}
}

// gcnTrainsGAT is set once package gcn's 3D model trains GAT layers (its
// forward.go and backward.go): until then gcn.Build does not run the
// layout of docs/architecture.md, and TestGATStepVolumeMatchesCounters
// has nothing to hold the byte rule (gat.go) to.
const gcnTrainsGAT = true

// gatVolumeConfigs: hidden GAT layers with several heads and an averaged
// last layer (gat), with the input projection and output head (gatfull),
// and one head everywhere (gat1).
var gatVolumeConfigs = map[string]gcn.Config{
	"gat":     {Features: 11, Hidden: 3, Classes: 5, Layers: 3, Dropout: 0.3, Layer: gcn.GATLayer, Heads: 4, OutputHeads: 2, Seed: 8},
	"gatfull": {Features: 11, Hidden: 3, Classes: 5, Layers: 4, Dropout: 0.3, Layer: gcn.GATLayer, Heads: 2, InputProjection: true, OutputHead: true, Seed: 9},
	"gat1":    {Features: 11, Hidden: 6, Classes: 5, Layers: 2, Layer: gcn.GATLayer, Seed: 10},
}

// TestGATStepVolumeMatchesCounters is TestStepVolumeMatchesCounters for
// GAT models: every rank's collectives of a training step and of an
// evaluation, calls and bytes per communicator and kind, equal what the
// model predicts, on grids that split every axis unevenly, float32 and
// bfloat16.
func TestGATStepVolumeMatchesCounters(t *testing.T) {
	if !gcnTrainsGAT {
		t.Skip("package gcn's 3D model does not train GAT layers yet (set gcnTrainsGAT)")
	}
	g := smallGraph(1, 41, 11, 5, 5)
	shapes := []grid.Shape{xyz(1, 1, 1), xyz(2, 2, 2), xyz(1, 2, 4), xyz(4, 1, 2), xyz(1, 2, 3), xyz(3, 1, 2), xyz(2, 3, 1), xyz(1, 5, 1)}
	for _, name := range []string{"gat", "gatfull", "gat1"} {
		cfg := gatVolumeConfigs[name]
		for _, scheme := range []permute.Scheme{permute.None, permute.Double} {
			for _, bf16 := range []bool{false, true} {
				perms := permute.New(g.Adj.Rows, scheme, 11)
				orders := gcn.NewOrders(g.Adj.Rows, perms.P1, perms.P2)
				job := jobFor(cfg, g, scheme)
				if bf16 {
					job.CommDType = collectives.BF16
				}
				loc := Local{ResidualRows: residualRows(g.Adj.Rows, perms)}
				for _, shape := range shapes {
					t.Run(fmt.Sprintf("%s/%v/bf16=%v/%s", name, scheme, bf16, GridString(shape)), func(t *testing.T) {
						errs := collectives.RunLocal(shape.Ranks(), func(w collectives.Comm) error {
							gr, err := grid.New(w, shape)
							if err != nil {
								return err
							}
							m, err := gcn.Build(gr, device.NewNative(1), cfg, gcn.DefaultOptimizer(), g, orders, gcn.Options{BF16: bf16})
							if err != nil {
								return err
							}
							at := CoordsOf(shape, w.Rank())
							before := snapshot(gr)
							if _, err := m.TrainStep(0); err != nil {
								return err
							}
							afterStep := snapshot(gr)
							if err := compareTally("training step", diff(afterStep, before), tally(StepTrace(job, shape, at, loc).Comm)); err != nil {
								return err
							}
							if _, err := m.Evaluate(); err != nil {
								return err
							}
							return compareTally("evaluation", diff(snapshot(gr), afterStep), tally(EvalTrace(job, shape, at, loc).Comm))
						})
						for r, err := range errs {
							if err != nil {
								t.Fatalf("rank %d: %v", r, err)
							}
						}
					})
				}
			}
		}
	}
}
