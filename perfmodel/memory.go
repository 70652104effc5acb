package perfmodel

import (
	"scalegnn/collectives"
	"scalegnn/gcn"
	"scalegnn/grid"
)

// Memory is the predicted peak memory of one rank, in bytes, by what holds
// it.
type Memory struct {
	// Adjacency: the rank's CSR shards of the normalised adjacency, one per
	// distinct layer layout (l mod 3, l mod 2) — three, up to six with four
	// or more layers — and their transposes where backward needs them; in
	// mini-batch training also the sampled shards of the current and the
	// prefetched step.
	Adjacency int64 `json:"adjacency"`
	// Features: the rank's block of the input features, labels and masks.
	Features int64 `json:"features"`
	// Activations: what the forward pass keeps for backward (dropout
	// copies, H, the norm's intermediates, pre-ReLU values, layer outputs)
	// and the largest backward temporaries.
	Activations int64 `json:"activations"`
	// Weights: parameter blocks with gradients and two optimizer moments.
	Weights int64 `json:"weights"`
	// CommBuffers: scratch for the largest all-reduce (and its bfloat16
	// copy) and the residual's alltoallv send and receive buffers.
	CommBuffers int64 `json:"comm_buffers"`
	// Dataset: the whole graph, which every rank reads before extracting
	// its shards unless the job loads sharded data (Job.ShardedLoad).
	Dataset int64 `json:"dataset"`
}

// Total returns the sum of the parts.
func (m Memory) Total() int64 {
	return m.Adjacency + m.Features + m.Activations + m.Weights + m.CommBuffers + m.Dataset
}

func csrBytes(rows int, nnz float64) int64 { return int64(8*(rows+1)) + int64(8*nnz) }

// EstimateMemory returns the peak memory of the rank at coordinates at
// (rank 0 holds the largest blocks).
func EstimateMemory(j Job, s grid.Shape, at Coords) Memory {
	var mem Memory
	full := newTracer(j, s, at, Local{}, false)
	keys, transposed := j.shardKeys()
	for _, k := range keys {
		r, p := k.Axes()
		nnz := full.localNNZ(k.Layer(), r, p)
		mem.Adjacency += csrBytes(full.rowsOf(r, k.RowOrder()), nnz)
		if transposed[k] {
			mem.Adjacency += csrBytes(full.rowsOf(p, k.ColOrder()), nnz)
		}
	}
	step := newTracer(j, s, at, Local{}, true)
	if j.Mode == gcn.MiniBatch {
		for _, k := range keys {
			r, p := k.Axes()
			nnz := step.localNNZ(k.Layer(), r, p)
			per := csrBytes(step.rowsOf(r, k.RowOrder()), nnz)
			if transposed[k] {
				per += csrBytes(step.rowsOf(p, k.ColOrder()), nnz)
			}
			mem.Adjacency += 2 * per
		}
	}

	fcol := grid.Y
	if j.InputProjection {
		fcol = grid.Z
	}
	ra, _ := full.logitsAxes()
	mem.Features = 4*int64(full.rowsOf(grid.X, 1))*int64(full.width(j.Features, fcol)) + 7*int64(full.rowsOf(ra, grid.OutputOrder(j.Layers-1)))

	// Activations of a training step (the larger of step and evaluation).
	mem.Activations = max(activations(step, j, true), activations(full, j, false))

	var params int64
	for _, pb := range step.params() {
		params += int64(pb.elems)
	}
	mem.Weights = 4 * 4 * params

	var largest, a2a int64
	for _, c := range append(StepTrace(j, s, at, Local{}).Comm, EvalTrace(j, s, at, Local{}).Comm...) {
		if c.Kind == collectives.KindAlltoallv { // send and receive buffers
			a2a = max(a2a, 2*4*c.Elems)
			continue
		}
		largest = max(largest, 4*c.Elems)
	}
	mem.CommBuffers = largest + a2a
	if j.CommDType == collectives.BF16 {
		mem.CommBuffers += largest / 2
	}

	if !j.ShardedLoad {
		n := int64(j.N)
		raw := max(0, j.NNZ-n)
		// Raw adjacency (int32 columns), normalised CSR, features,
		// labels and masks, permutations.
		mem.Dataset = 8*(n+1) + 4*raw + csrBytes(j.N, float64(j.NNZ)) + 4*n*int64(j.Features) + 7*n + 16*n
	}
	return mem
}

// activations estimates the bytes a forward pass keeps and the backward
// pass adds on top of it.
func activations(t *tracer, j Job, training bool) int64 {
	var keep, peakTmp int64
	dropout := training && j.Dropout > 0
	if j.InputProjection {
		keep += int64(t.rowsOf(grid.X, 1) * t.width(j.Hidden, grid.Y))
	}
	for l, sp := range j.layers() {
		p, q, r := grid.Rotation(l)
		nP, nR := int64(t.rowsOf(p, grid.InputOrder(l))), int64(t.rowsOf(r, grid.OutputOrder(l)))
		dIn, dOut := int64(t.width(sp.in, q)), int64(t.width(sp.out, p))
		if dropout {
			keep += nP * dIn
		}
		keep += nR*dIn + nR*dOut // H and Z
		if sp.hidden {
			keep += nR * dOut // ReLU output
			if sp.norm {
				keep += nR*dOut + 2*nR
			}
			if sp.residual {
				keep += nR * dOut
			}
		}
		peakTmp = max(peakTmp, 3*nR*max(dIn, dOut)+2*nP*dIn)
	}
	if j.OutputHead {
		pa, qa, ra := grid.Rotation(j.Layers)
		rows := int64(t.rowsOf(pa, grid.OutputOrder(j.Layers-1)))
		keep += rows * int64(t.width(j.Hidden, qa)+2*t.width(j.Classes, ra))
	}
	if !training {
		peakTmp = 0
	}
	return 4 * (keep + peakTmp)
}
