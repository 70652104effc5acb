package checkpoint

import (
	"errors"
	"fmt"
	"math"
	"sync"

	"scalegnn/collectives"
	"scalegnn/device"
	"scalegnn/gcn"
	"scalegnn/grid"
	"scalegnn/permute"
)

// The grids every test writes and reads checkpoints on: one rank, the
// 8-rank cube, a non-power-of-two grid and two data-parallel replicas of
// 2×2×1 (the mini-batch example's grid).
var (
	one   = grid.Shape{D: 1, X: 1, Y: 1, Z: 1}
	cube  = grid.Shape{D: 1, X: 2, Y: 2, Z: 2}
	odd   = grid.Shape{D: 1, X: 1, Y: 2, Z: 3}
	dp    = grid.Shape{D: 2, X: 2, Y: 2, Z: 1}
	grids = []grid.Shape{one, cube, odd, dp}
)

// testConfig has every kind of parameter block (input projection, layer
// weights, RMSNorm scales, output head), so that every branch of Owns and
// every block layout is written and read.
var testConfig = gcn.Config{Features: 11, Hidden: 7, Classes: 5, Layers: 3, Dropout: 0.3,
	InputProjection: true, OutputHead: true, Norm: true, Residual: true, Seed: 5}

// testGraph is the problem of every test: 37 vertices (prime, so no axis
// splits it evenly), permuted twice with seed 11.
var testGraph = gcn.RandomGraph(5, 37, 11, 5, 5)

const permSeed = 11

// build makes this rank's model of cfg on graph g on shape.
func build(world collectives.Comm, shape grid.Shape, cfg gcn.Config, g *gcn.Graph, run gcn.Options) (*gcn.Model, error) {
	gr, err := grid.New(world, shape)
	if err != nil {
		return nil, err
	}
	n := g.Adj.Rows
	perms := permute.New(n, permute.Double, permSeed)
	return gcn.Build(gr, device.NewNative(1), cfg, gcn.DefaultOptimizer(), g, gcn.NewOrders(n, perms.P1, perms.P2), run)
}

// runOn runs fn on every rank of an in-process world of shape's ranks and
// joins the ranks' errors.
func runOn(shape grid.Shape, fn func(world collectives.Comm) error) error {
	var errs []error
	for r, err := range collectives.RunLocal(shape.Ranks(), fn) {
		if err != nil {
			errs = append(errs, fmt.Errorf("%v rank %d: %w", shape, r, err))
		}
	}
	return errors.Join(errs...)
}

// tensors are a model's parameters and moments in global coordinates,
// keyed by file name (NAME.npy, NAME.m.npy, NAME.v.npy), assembled from
// every rank's blocks, and its optimizer step count.
type tensors struct {
	mu    sync.Mutex
	data  map[string][]float32
	steps int
	err   error
}

// add places every block of m at its global offsets. Replicas hold the
// same block; a replica that disagrees with one added before is an error
// (the tensors would depend on which rank came last).
func (ts *tensors) add(m *gcn.Model) {
	ts.mu.Lock()
	defer ts.mu.Unlock()
	if ts.data == nil {
		ts.data = map[string][]float32{}
	}
	ts.steps = m.OptimizerSteps()
	for _, p := range m.Params {
		w, mo, v := make([]float32, p.Len()), make([]float32, p.Len()), make([]float32, p.Len())
		p.Download(w)
		p.DownloadMoments(mo, v)
		names := Param{Name: p.Name, Rows: p.Rows, Cols: p.Cols}.files()
		for f, block := range [3][]float32{w, mo, v} {
			g, seen := ts.data[names[f]]
			if !seen {
				g = make([]float32, p.Rows*p.Cols)
				for i := range g {
					g[i] = -1e30 // an entry no block covers shows up
				}
				ts.data[names[f]] = g
			}
			bw := p.C1 - p.C0
			for i := p.R0; i < p.R1; i++ {
				for j := p.C0; j < p.C1; j++ {
					x := block[(i-p.R0)*bw+j-p.C0]
					at := &g[i*p.Cols+j]
					if *at != -1e30 && *at != x && ts.err == nil {
						ts.err = fmt.Errorf("%s[%d,%d]: replicas hold %v and %v", names[f], i, j, *at, x)
					}
					*at = x
				}
			}
		}
	}
}

// equal compares two sets of tensors bit for bit.
func (ts *tensors) equal(o *tensors) error {
	if ts.err != nil || o.err != nil {
		return errors.Join(ts.err, o.err)
	}
	if ts.steps != o.steps {
		return fmt.Errorf("optimizer steps %d, want %d", o.steps, ts.steps)
	}
	if len(ts.data) != len(o.data) {
		return fmt.Errorf("%d tensors, want %d", len(o.data), len(ts.data))
	}
	for name, want := range ts.data {
		got, ok := o.data[name]
		if !ok || len(got) != len(want) {
			return fmt.Errorf("%s: missing or %d entries, want %d", name, len(got), len(want))
		}
		for i := range want {
			if math.Float32bits(got[i]) != math.Float32bits(want[i]) {
				return fmt.Errorf("%s[%d] = %v, want %v", name, i, got[i], want[i])
			}
		}
	}
	return nil
}
