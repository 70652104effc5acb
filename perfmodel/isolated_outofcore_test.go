package perfmodel

import (
	"testing"

	"scalegnn/gcn"
)

// TestOutOfCoreMemory: an out-of-core worker holds no whole graph: on
// several workers its memory is its partitions' and the evaluation
// grid's part, below the in-memory worker's, and falls with the
// partitions; on one worker its own whole-graph evaluation model is
// counted.
func TestOutOfCoreMemory(t *testing.T) {
	j := Job{N: 1 << 20, NNZ: 32 << 20, Features: 128, Hidden: 128, Classes: 16, Layers: 3, Mode: gcn.Isolated, EvalEvery: 1,
		Isolated: IsolatedJob{TrainVertices: 1 << 18}}
	mem := func(p, workers int, ooc bool) Memory {
		k := j
		k.Isolated.Partitions, k.Isolated.OutOfCore = p, ooc
		return k.IsolatedMemory(workers)
	}
	for _, w := range []int{1, 4} {
		in, out := mem(4*w, w, false), mem(4*w, w, true)
		if !(out.Total() < in.Total()) || out.Dataset != 0 {
			t.Errorf("%d workers: out of core %d B (dataset %d), in memory %d B; want less and no dataset", w, out.Total(), out.Dataset, in.Total())
		}
		if a, b := mem(4*w, w, true).Total(), mem(16*w, w, true).Total(); !(b < a) {
			t.Errorf("%d workers: out of core %d B with 4 partitions a worker, %d B with 16; want it to fall", w, a, b)
		}
	}
	one := j.isolatedEvalMemory(j.IsolatedEvalShape(1)).Total()
	if got := mem(64, 1, true).Total(); got < one {
		t.Errorf("one worker: %d B, below its whole-graph evaluation model's %d B", got, one)
	}
}

// TestOutOfCoreDisk: the reads add disk time only where the prefetch
// cannot hide them, more on a slower disk, none on one chunk; and a
// partition read costs its rows, nonzeros and features.
func TestOutOfCoreDisk(t *testing.T) {
	j := Job{N: 1 << 20, NNZ: 32 << 20, Features: 128, Hidden: 16, Classes: 16, Layers: 2, Mode: gcn.Isolated,
		Isolated: IsolatedJob{TrainVertices: 1 << 18, Partitions: 8, OutOfCore: true}}
	fast, slow := DefaultMachine(), DefaultMachine()
	fast.Disk.ReadBandwidth, slow.Disk.ReadBandwidth = 1e15, 1e6
	pf, err := PredictIsolated(j, fast, 2, 0, 0)
	if err != nil {
		t.Fatal(err)
	}
	ps, err := PredictIsolated(j, slow, 2, 0, 0)
	if err != nil {
		t.Fatal(err)
	}
	read := j.OutOfCoreReadBytes(2)
	if pf.Disk != 0 || !(ps.Disk > 0.9*4*read/1e6) || ps.Epoch != ps.Comm+ps.SpMM+ps.GEMM+ps.Other+ps.Disk {
		t.Errorf("disk time %g s on a fast disk (want 0), %g s on 1 MB/s (want about 4 phases × %g B)", pf.Disk, ps.Disk, read)
	}
	// Two chunks: the partition is the graph, read whole.
	k := j
	k.Isolated.Partitions, k.Isolated.Chunks = 1, 2
	want := 16*float64(j.N) + 8*float64(j.NNZ) + float64(4*j.Features+5)*float64(j.N)
	if got := k.OutOfCoreReadBytes(1); got < 0.999*want || got > 1.001*want {
		t.Errorf("reading the whole graph as one partition: %g B, want %g", got, want)
	}
}

// TestLayerwiseMemory: layer-wise evaluation holds a layer's transformed
// input for every vertex and a strip, not the graph: far below the
// whole-graph evaluation model on one worker, lower still with its
// activations in files; an out-of-core job on one worker then fits where
// the evaluation model did not.
func TestLayerwiseMemory(t *testing.T) {
	j := Job{N: 1 << 25, NNZ: 1 << 30, Features: 128, Hidden: 32, Classes: 16, Layers: 3, Mode: gcn.Isolated, EvalEvery: 1,
		Isolated: IsolatedJob{TrainVertices: 1 << 22, Partitions: 32, Chunks: 64, OutOfCore: true}}
	one := j.isolatedEvalMemory(j.IsolatedEvalShape(1)).Total()
	mem := j.layerwiseEvalMemory(1, 64, false).Total()
	files := j.layerwiseEvalMemory(1, 64, true).Total()
	if !(2*files < mem && 4*mem < one) {
		t.Errorf("layer-wise %d B (%d B with files), the evaluation model's %d B: want far below", mem, files, one)
	}
	k := j
	k.Isolated.Layerwise, k.Isolated.EvalFiles = true, true
	if a, b := k.IsolatedMemory(1).Total(), j.IsolatedMemory(1).Total(); !(2*a < b) {
		t.Errorf("out of core on one worker: %d B with layer-wise evaluation, %d B with its own model", a, b)
	}
	p, err := PredictIsolated(k, DefaultMachine(), 1, 0, 0)
	if err != nil {
		t.Fatal(err)
	}
	if !(p.Disk > 0) {
		t.Errorf("out of core with layer-wise evaluation: no disk time predicted (%+v)", p)
	}
	// Partitions chosen from memory: in 12 GiB one rank holding the graph
	// fits with none; out of core, whose partitions are two of the 64
	// chunks however many there are, with one.
	const limit = 12 << 30
	k.Isolated.Partitions = 0
	in := k
	in.Isolated.OutOfCore, in.Isolated.Layerwise, in.Isolated.EvalFiles = false, false, false
	if _, fits := in.IsolatedPartitionsFor(1, limit); fits {
		t.Errorf("in memory: the 26 GB graph fits in 12 GiB")
	}
	if p, fits := k.IsolatedPartitionsFor(1, limit); !fits || p != 1 {
		t.Errorf("out of core: %d partitions, fits %v; want 1 that fits in 12 GiB", p, fits)
	}
}
