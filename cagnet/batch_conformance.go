package cagnet

import (
	"fmt"
	"math"

	"scalegnn/collectives"
	"scalegnn/device"
	"scalegnn/gcn"
	"scalegnn/grid"
	"scalegnn/permute"
)

// BatchCase is one configuration CheckBatchCase trains: Case's model on D
// data-parallel replicas of P = world size / D ranks.
type BatchCase struct {
	Case
	D int
	// Prefetch builds each next batch in a goroutine.
	Prefetch bool
}

func (c BatchCase) String() string {
	return fmt.Sprintf("d=%d %v prefetch %v", c.D, c.Case, c.Prefetch)
}

// conformanceBatch is the vertices per batch of CheckBatchCase (of the
// 41-vertex graph of conformanceModel): prime, about 40% of the vertices,
// so that block rows of a batch are uneven and some replicas' stages
// broadcast blocks of a handful of rows.
const conformanceBatch = 17

// conformanceBatchSeed draws the samples.
const conformanceBatchSeed = 7

// CheckBatchCase trains 3 mini-batch steps of 1.5D with c.D replicas on
// world (collective) and holds them to the serial float64 reference that
// gcn's data-parallel conformance uses: this replica's loss is the serial
// loss of its batch (gcn.SerialBatch of the same seed, replica and step),
// every gradient the mean of the replicas' serial gradients, and the
// weights after each step the serial optimizer step with that mean. With
// BF16, the first step's loss and gradient within the bfloat16
// tolerances (the gradient relative to the largest entry over the
// replicas' batches, as gcn's).
func CheckBatchCase(world collectives.Comm, dev device.Device, c BatchCase) error {
	if world.Size()%c.D != 0 {
		panic(fmt.Sprintf("cagnet: CheckBatchCase with d = %d on %d ranks", c.D, world.Size()))
	}
	cfg, opt, g := conformanceModel(c.Case)
	gr, err := grid.New(world, grid.Shape{D: c.D, X: world.Size() / c.D, Y: 1, Z: 1})
	if err != nil {
		return err
	}
	// The graph in its permutation's order, as a job's Source holds it.
	var order []int32
	if c.Scheme == permute.Single {
		order = permute.New(g.Adj.Rows, permute.Single, 3).P1
	}
	src, err := gcn.NewMemorySource(g, gcn.NewOrders(g.Adj.Rows, order, nil))
	if err != nil {
		return err
	}
	m, err := NewMiniBatch(gr.Cube, dev, Options{Replication: c.C, BF16: c.BF16},
		BatchOptions{Size: conformanceBatch, Seed: conformanceBatchSeed, DP: gr.DP, Prefetch: c.Prefetch}, cfg, opt, src)
	if err != nil {
		return err
	}
	defer m.Close()
	serial := *g
	if c.Layer == gcn.SAGELayer {
		serial.Adj = gcn.MeanAdjacency(g.Adj)
	}
	mean := newSerial(cfg, opt, serial.Adj, serial.Features, serial.Labels, serial.Train)
	name := fmt.Sprintf("cagnet 1.5d mini-batch P=%d %v rank %d", gr.Cube.Size(), c, world.Rank())
	steps := 3
	if c.BF16 {
		steps = 1
	}
	for step := 0; step < steps; step++ {
		got, err := m.LossAndGrad(step)
		if err != nil {
			return err
		}
		for _, p := range mean.Parameters() {
			clear(p.G)
		}
		scale := make([]float64, len(mean.Parameters()))
		var want float64
		for rep := 0; rep < c.D; rep++ {
			verts, sub := gcn.SerialBatch(&serial, conformanceBatchSeed, rep, step, conformanceBatch)
			r := newSerial(cfg, opt, sub.Adj, sub.Features, sub.Labels, sub.Train)
			r.SetVerts(verts)
			for i, p := range r.Parameters() {
				copy(p.W, mean.Parameters()[i].W)
			}
			loss := r.LossAndGrad(step)
			if rep == gr.CD {
				want = loss
			}
			for i, p := range r.Parameters() {
				for j, v := range p.G {
					mean.Parameters()[i].G[j] += v / float64(c.D)
					scale[i] = math.Max(scale[i], math.Abs(v))
				}
			}
		}
		if c.BF16 {
			if d := math.Abs(got - want); !(d <= BF16LossTol) {
				return fmt.Errorf("%s: step %d loss %v, reference %v (tolerance %g)", name, step, got, want, BF16LossTol)
			}
			tol := bf16Scales(mean.Parameters(), scale)
			for i, p := range mean.Parameters() {
				for k, w := range p.G {
					if d := math.Abs(m.Params[i].G[k] - w); !(d <= tol[i]) {
						return fmt.Errorf("%s: gradient of %s entry %d = %v, reference %v (tolerance %g: see BF16GradTol)",
							name, p.Name, k, m.Params[i].G[k], w, tol[i])
					}
				}
			}
			continue
		}
		if err := checkClose(name, fmt.Sprintf("step %d loss", step), []float64{got}, []float64{want}); err != nil {
			return err
		}
		for i, p := range mean.Parameters() {
			if err := checkClose(name, fmt.Sprintf("step %d gradient (mean of the replicas') of %s", step, p.Name), m.Params[i].G, p.G); err != nil {
				return err
			}
		}
		mean.Step()
		m.Step()
		for i, p := range mean.Parameters() {
			if err := checkClose(name, fmt.Sprintf("step %d weight %s", step, p.Name), m.Params[i].W, p.W); err != nil {
				return err
			}
		}
	}
	if c.BF16 {
		return nil
	}
	// Evaluation is the full graph's.
	acc, err := m.Accuracy()
	if err != nil {
		return err
	}
	logits := mean.Forward(false, 0)
	for k, mask := range [][]bool{g.Train, g.Val, g.Test} {
		if want := mean.Accuracy(logits, mask); acc[k] != want {
			return fmt.Errorf("%s: accuracy %d (train, val, test) = %v, reference %v", name, k, acc[k], want)
		}
	}
	return nil
}

// checkClose holds got to want within ConformanceTol·(1+|want|).
func checkClose(name, what string, got, want []float64) error {
	for k := range want {
		if d := math.Abs(got[k] - want[k]); !(d <= ConformanceTol*(1+math.Abs(want[k]))) {
			return fmt.Errorf("%s: %s entry %d = %v, reference %v (tolerance %g)", name, what, k, got[k], want[k], ConformanceTol)
		}
	}
	return nil
}

// BatchCases lists what BatchConformance runs on a world of size ranks:
// every d > 1 dividing it and every c dividing P = size/d, GCN and SAGE,
// none and single permutation, with dropout (prefetching the batches in
// the SAGE cases), and bfloat16 once per (d, c).
func BatchCases(size int) []BatchCase {
	var out []BatchCase
	for d := 2; d <= size; d++ {
		if size%d != 0 {
			continue
		}
		p := size / d
		for c := 1; c <= p; c++ {
			if p%c != 0 {
				continue
			}
			for _, k := range Cases(p) {
				if k.C == c && (k.Dropout > 0 || k.BF16) {
					out = append(out, BatchCase{Case: k, D: d, Prefetch: k.Layer == gcn.SAGELayer})
				}
			}
		}
	}
	return out
}

// BatchConformance runs CheckBatchCase for every case of BatchCases and
// returns this rank's failures (scalegnn selftest runs it over MPI).
func BatchConformance(world collectives.Comm, dev device.Device) []error {
	var errs []error
	for _, c := range BatchCases(world.Size()) {
		if err := CheckBatchCase(world, dev, c); err != nil {
			errs = append(errs, err)
		}
	}
	return errs
}
