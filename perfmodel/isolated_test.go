package perfmodel

import (
	"math"
	"testing"

	"scalegnn/dataset"
	"scalegnn/gcn"
	"scalegnn/grappa"
)

// TestIsolatedSize compares IsolatedSize's expected step subgraph with the
// partitions grappa builds on Cora and CiteSeer (every worker and
// super-epoch of one sweep, chunk seed 1), for 2, 4 and 8 workers, induced
// and halo partitions, 2- and 3-layer models. Tolerances: the induced
// partition's size is exact in expectation (vertices within 2%, nonzeros
// within 10%); the halo's mean field ignores clustering (a neighbour of a
// ball vertex is likelier to be in the ball already), so it overestimates,
// more with depth: within 15% for two hops, 50% for three (measured: at
// most +33% vertices and +49% nonzeros, CiteSeer on 8 workers).
func TestIsolatedSize(t *testing.T) {
	for _, name := range []string{"cora", "citeseer"} {
		g, err := dataset.Builtin(name)
		if err != nil {
			t.Fatal(err)
		}
		ahat := dataset.NormalizeGCN(g.Adj)
		train := dataset.Count(g.Train)
		for _, w := range []int{2, 4, 8} {
			for _, layers := range []int{2, 3} {
				for _, halo := range []bool{false, true} {
					kind := grappa.Induced
					if halo {
						kind = grappa.Halo
					}
					ch, _ := grappa.SplitRandom(g.N, w, 1)
					sc, _ := grappa.NewSchedule(w, w)
					var verts, nnz, parts float64
					for s := range sc.Cover() {
						for wk := range w {
							b, x := sc.Partition(wk, s)
							p := grappa.Build(g.Adj, ch, g.Train, b, x, kind, layers)
							in := make([]bool, g.N)
							for _, v := range p.Verts {
								in[v] = true
							}
							for _, v := range p.Verts {
								for _, u := range ahat.ColIdx[ahat.RowPtr[v]:ahat.RowPtr[v+1]] {
									if in[u] {
										nnz++
									}
								}
							}
							verts += float64(len(p.Verts))
							parts++
						}
					}
					verts, nnz = verts/parts, nnz/parts
					j := Job{N: g.N, NNZ: int64(ahat.NNZ()), Features: g.F, Hidden: 16, Classes: g.Classes, Layers: layers, Mode: gcn.Isolated,
						Neighbor: NeighborJob{Degrees: DegreeHistogram(g.Adj.RowPtr, g.Adj.ColIdx)},
						Isolated: IsolatedJob{Halo: halo, TrainVertices: train}}
					ev, en := j.IsolatedSize(w)
					tv, tn := 0.02, 0.10
					if halo {
						tv, tn = 0.15, 0.15
						if layers == 3 {
							tv, tn = 0.5, 0.5
						}
					}
					t.Logf("%-8s W=%d L=%d halo=%v: vertices %.0f predicted %.0f, nonzeros %.0f predicted %.0f", name, w, layers, halo, verts, ev, nnz, en)
					if math.Abs(ev-verts) > tv*verts || math.Abs(en-nnz) > tn*nnz {
						t.Errorf("%s W=%d L=%d halo=%v: predicted %.0f vertices and %.0f nonzeros, built %.0f and %.0f (tolerance %g, %g)",
							name, w, layers, halo, ev, en, verts, nnz, tv, tn)
					}
				}
			}
		}
	}
}

// TestPredictIsolated: one gradient all-reduce of every parameter per
// step and nothing else in CommBytes (none on one worker), the steps of
// an epoch as jobs counts them, and the misuse errors.
func TestPredictIsolated(t *testing.T) {
	base := Job{N: 1000, NNZ: 9000, Features: 20, Hidden: 16, Classes: 4, Layers: 2, Mode: gcn.Isolated, EvalEvery: 10,
		Isolated: IsolatedJob{TrainVertices: 100}}
	params := int64(20*16 + 16*4)
	for _, tc := range []struct {
		name                       string
		batch, workers, partitions int
		steps                      int
	}{
		{"whole", 0, 4, 0, 1},
		{"one worker", 0, 1, 0, 1},
		{"batches", 7, 4, 0, 8}, // ⌈(2·100/4)/7⌉
		{"batches 5 workers", 7, 5, 0, 6},
		{"phases", 0, 2, 8, 4},          // 4 phases of one step
		{"batched phases", 7, 2, 8, 16}, // 4 phases of ⌈(2·100/8)/7⌉ = 4 steps
		{"one rank", 0, 1, 5, 5},
	} {
		j := base
		j.Isolated.BatchSize, j.Isolated.Partitions = tc.batch, tc.partitions
		p, err := PredictIsolated(j, DefaultMachine(), tc.workers, 0, 0)
		if err != nil {
			t.Fatal(err)
		}
		want := int64(tc.steps) * 4 * params
		if tc.workers == 1 {
			want = 0
		}
		if got := j.IsolatedSteps(tc.workers); got != tc.steps || p.CommBytes != want || !(p.Epoch > 0) || !p.Fits {
			t.Errorf("%s: %d steps, %d bytes, epoch %v; want %d steps and %d bytes", tc.name, got, p.CommBytes, p.Epoch, tc.steps, want)
		}
	}
	for _, bad := range []IsolatedJob{{Chunks: 3}, {Partitions: 6}, {Partitions: 8, Chunks: 7}} {
		j := base
		bad.TrainVertices = 100
		j.Isolated = bad
		if _, err := PredictIsolated(j, DefaultMachine(), 4, 0, 0); err == nil {
			t.Errorf("%d partitions, %d chunks on 4 workers: no error", bad.Partitions, bad.Chunks)
		}
	}
}

// TestPredictIsolatedPhases: more partitions on the same workers are
// smaller, so a step's compute and memory shrink; an epoch has more
// steps, and its gradient bytes grow with them.
func TestPredictIsolatedPhases(t *testing.T) {
	j := Job{N: 20000, NNZ: 300000, Features: 64, Hidden: 64, Classes: 8, Layers: 2, Mode: gcn.Isolated,
		Isolated: IsolatedJob{TrainVertices: 2000}}
	var prev Prediction
	for k, parts := range []int{2, 4, 8, 16} {
		j.Isolated.Partitions = parts
		p, err := PredictIsolated(j, DefaultMachine(), 2, 0, 0)
		if err != nil {
			t.Fatal(err)
		}
		if want := IsolatedGrid(2, parts); p.Grid != want {
			t.Errorf("%d partitions: grid %q, want %q", parts, p.Grid, want)
		}
		if k > 0 {
			step, prevStep := p.SpMM/float64(parts/2), prev.SpMM/float64(parts/4)
			if !(step < prevStep) || !(p.Memory.Activations < prev.Memory.Activations) || p.CommBytes != 2*prev.CommBytes {
				t.Errorf("%d partitions: SpMM %.3g s a step, activations %d B, %d bytes; %d partitions: %.3g s, %d B, %d bytes",
					parts, step, p.Memory.Activations, p.CommBytes, parts/2, prevStep, prev.Memory.Activations, prev.CommBytes)
			}
		}
		prev = p
	}
}

// TestIsolatedPartitionsFor: unset partitions stay one per worker when
// that fits or no limit is known, else become the fewest doubling that
// fit (or none fits, up to MaxPartitionsPerWorker a worker); set ones
// and the chunks are respected; PredictIsolated lists the choice.
func TestIsolatedPartitionsFor(t *testing.T) {
	j := Job{N: 2708, NNZ: 13264, Features: 1433, Hidden: 4096, Classes: 7, Layers: 3, Mode: gcn.Isolated, EvalEvery: 1,
		Isolated: IsolatedJob{TrainVertices: 140}}
	mem := func(p int) int64 {
		k := j
		k.Isolated.Partitions = p
		return k.IsolatedMemory(2).Total()
	}
	if !(mem(2) > mem(4) && mem(4) > mem(8) && mem(8) > mem(16)) {
		t.Fatalf("memory does not fall with the partitions: %d, %d, %d, %d", mem(2), mem(4), mem(8), mem(16))
	}
	for _, tc := range []struct {
		name               string
		partitions, chunks int
		limit              int64
		want               int
		fits               bool
	}{
		{"no limit", 0, 0, 0, 2, true},
		{"fits as it is", 0, 0, mem(2), 2, true},
		{"needs 8", 0, 0, mem(8), 8, true},
		{"needs 8, a byte more", 0, 0, mem(8) + 1, 8, true},
		{"needs 16", 0, 0, mem(8) - 1, 16, true},
		{"chunks stop at 8", 0, 8, mem(8) - 1, 2, false},
		{"none fits", 0, 0, mem(2*MaxPartitionsPerWorker) - 1, 2, false},
		{"set", 4, 0, mem(8), 4, false},
	} {
		k := j
		k.Isolated.Partitions, k.Isolated.Chunks = tc.partitions, tc.chunks
		p, fits := k.IsolatedPartitionsFor(2, tc.limit)
		if p != tc.want || fits != tc.fits {
			t.Errorf("%s: %d partitions, fits %v; want %d, %v", tc.name, p, fits, tc.want, tc.fits)
		}
	}
	pr, err := PredictIsolated(j, DefaultMachine(), 2, 0, mem(8))
	if err != nil {
		t.Fatal(err)
	}
	if want := IsolatedGrid(2, 8); pr.Grid != want || !pr.Fits || pr.MemTotal != mem(8) {
		t.Errorf("prediction within %d bytes: grid %q, fits %v, %d bytes; want %q, fits, %d", mem(8), pr.Grid, pr.Fits, pr.MemTotal, want, mem(8))
	}
}
