package gcn

import (
	"fmt"
	"math"
	"strings"
	"sync"
	"testing"

	"scalegnn/collectives"
	"scalegnn/device"
	"scalegnn/grid"
	"scalegnn/permute"
)

// exportShapes are the grids of the export tests: every factorisation of
// 8, the odd shapes, and data-parallel replicas (whose blocks are
// replicated once more).
var exportShapes = append(append(append([]grid.Shape{}, factorisations8...), oddShapes...),
	grid.Shape{D: 2, X: 2, Y: 2, Z: 1}, grid.Shape{D: 3, X: 1, Y: 2, Z: 1})

// exportCase has every kind of parameter (projection, weights, norms,
// head), double permutation, so that rows and vertices differ.
var exportCase = ConformanceCase{Name: "scalegnn", Config: testConfigs["scalegnn"], Optimizer: DefaultOptimizer(), Scheme: permute.Double, PermSeed: 11}

var exportGraph = RandomGraph(5, 37, 11, 5, 5)

// onEveryRank builds the export case's model on shape on every rank of an
// in-process world, trains it 2 steps and calls fn, which gathers what
// the ranks return inside locked (never around a collective).
func onEveryRank(t *testing.T, shape grid.Shape, fn func(m *Model, locked func(func())) error) {
	t.Helper()
	var mu sync.Mutex
	s := ConformanceSuite{Graph: exportGraph}
	for r, err := range collectives.RunLocal(shape.Ranks(), func(w collectives.Comm) error {
		_, m, err := s.build(w, device.NewNative(1), shape, exportCase, Options{})
		if err != nil {
			return err
		}
		for step := range 2 {
			if _, err := m.TrainStep(step); err != nil {
				return err
			}
		}
		return fn(m, func(f func()) {
			mu.Lock()
			defer mu.Unlock()
			f()
		})
	}) {
		if err != nil {
			t.Fatalf("%v rank %d: %v", shape, r, err)
		}
	}
}

// TestOwnsTilesEveryParameter: on every grid the blocks of the ranks that
// Owns says write them cover every parameter matrix exactly once, so a
// checkpoint's files are written whole and by one rank per entry.
func TestOwnsTilesEveryParameter(t *testing.T) {
	for _, shape := range exportShapes {
		cover := map[string][]int{}
		onEveryRank(t, shape, func(m *Model, locked func(func())) error {
			locked(func() {
				for k, p := range m.Params {
					if cover[p.Name] == nil {
						cover[p.Name] = make([]int, p.Rows*p.Cols)
					}
					if !m.Owns(k) {
						continue
					}
					for i := p.R0; i < p.R1; i++ {
						for j := p.C0; j < p.C1; j++ {
							cover[p.Name][i*p.Cols+j]++
						}
					}
				}
			})
			return nil
		})
		for name, c := range cover {
			for at, n := range c {
				if n != 1 {
					t.Errorf("%v: %s entry %d is written by %d ranks, want 1", shape, name, at, n)
					break
				}
			}
		}
	}
}

// output is an N × cols matrix assembled from the owners' blocks of an
// output of the model, with each entry's writer count.
type output struct {
	cols   int
	x      []float32
	writes []int
}

func (o *output) add(b Block, n int) error {
	if o.x == nil {
		o.cols, o.x, o.writes = b.Cols, make([]float32, n*b.Cols), make([]int, n*b.Cols)
	}
	w := b.C1 - b.C0
	if len(b.Data) != len(b.Vertices)*w {
		return fmt.Errorf("block of %d vertices × columns [%d, %d) holds %d values", len(b.Vertices), b.C0, b.C1, len(b.Data))
	}
	if !b.Owner {
		return nil
	}
	for i, v := range b.Vertices {
		for j := b.C0; j < b.C1; j++ {
			o.x[int(v)*b.Cols+j] = b.Data[i*w+j-b.C0]
			o.writes[int(v)*b.Cols+j]++
		}
	}
	return nil
}

// outputs returns the class probabilities and every hidden layer's
// embeddings on shape, by original vertex.
func outputs(t *testing.T, shape grid.Shape) []*output {
	t.Helper()
	layers := LastHidden(exportCase.Config) + 2
	outs := make([]*output, layers) // [0, layers-1): embeddings; the last: probabilities
	for i := range outs {
		outs[i] = &output{}
	}
	onEveryRank(t, shape, func(m *Model, locked func(func())) error {
		n := m.Shards().N
		blocks := make([]Block, layers)
		for l := 0; l < layers-1; l++ {
			b, err := m.Embeddings(l)
			if err != nil {
				return err
			}
			blocks[l] = b
		}
		b, err := m.Probabilities()
		if err != nil {
			return err
		}
		blocks[layers-1] = b
		locked(func() {
			for l, b := range blocks {
				if aerr := outs[l].add(b, n); aerr != nil && err == nil {
					err = fmt.Errorf("output %d: %w", l, aerr)
				}
			}
		})
		return err
	})
	return outs
}

// TestOutputsAcrossGrids: the owners' blocks of the probabilities and of
// every hidden layer's embeddings cover the N × width matrix exactly once
// on every grid, and row v holds vertex v: each entry equals the 1-rank
// model's within float32 summation order (1e-5 of the matrix's largest
// entry). On one rank, the probabilities are the serial model's softmax
// of vertex v's logits in row v (1e-5).
func TestOutputsAcrossGrids(t *testing.T) {
	want := outputs(t, xyz(1, 1, 1))
	probs := want[len(want)-1]
	if probs.cols != exportCase.Config.Classes {
		t.Fatalf("probabilities have %d columns, want %d classes", probs.cols, exportCase.Config.Classes)
	}
	for v := range len(probs.x) / probs.cols {
		sum := 0.0
		for _, p := range probs.x[v*probs.cols : (v+1)*probs.cols] {
			sum += float64(p)
		}
		if math.Abs(sum-1) > 1e-6 {
			t.Errorf("vertex %d: probabilities sum to %v", v, sum)
		}
	}
	// The serial model, in the dataset's vertex order, trained the same 2
	// steps: row v of the probabilities is vertex v's softmax.
	ref := (&ConformanceSuite{}).reference(exportCase, exportGraph)
	for step := range 2 {
		ref.LossAndGrad(step)
		ref.Step()
	}
	logits := ref.Forward(false, 0)
	c := probs.cols
	for v := range len(probs.x) / c {
		row := logits[v*c : (v+1)*c]
		mx, sum := math.Inf(-1), 0.0
		for _, x := range row {
			mx = max(mx, x)
		}
		for _, x := range row {
			sum += math.Exp(x - mx)
		}
		for j, x := range row {
			if p := math.Exp(x-mx) / sum; math.Abs(p-float64(probs.x[v*c+j])) > 1e-5 {
				t.Fatalf("vertex %d class %d: probability %v, the serial model's %v", v, j, probs.x[v*c+j], p)
			}
		}
	}
	if c := want[0].cols; c != exportCase.Config.Hidden {
		t.Errorf("embeddings of layer 0 have %d columns, want hidden = %d", c, exportCase.Config.Hidden)
	}
	for _, shape := range exportShapes[1:] {
		got := outputs(t, shape)
		for k := range got {
			what := fmt.Sprintf("%v: embeddings of layer %d", shape, k)
			if k == len(got)-1 {
				what = fmt.Sprintf("%v: probabilities", shape)
			}
			scale := 0.0
			for _, x := range want[k].x {
				scale = max(scale, math.Abs(float64(x)))
			}
			for at, n := range got[k].writes {
				if n != 1 {
					t.Errorf("%s: entry %d written by %d ranks, want 1", what, at, n)
					break
				}
				if d := math.Abs(float64(got[k].x[at] - want[k].x[at])); d > 1e-5*scale {
					t.Errorf("%s: vertex %d column %d = %v, on 1 rank %v", what, at/got[k].cols, at%got[k].cols, got[k].x[at], want[k].x[at])
					break
				}
			}
		}
	}
}

// TestExportMisuse: a layer without embeddings is an error naming the
// hidden layers; a negative optimizer step count is a programmer's error.
func TestExportMisuse(t *testing.T) {
	onEveryRank(t, xyz(1, 1, 1), func(m *Model, _ func(func())) error {
		if got := LastHidden(m.Cfg); got != m.Cfg.Layers-1 {
			t.Errorf("LastHidden of a model with an output head = %d, want Layers-1 = %d", got, m.Cfg.Layers-1)
		}
		if got := LastHidden(testConfigs["kipf"]); got != 0 {
			t.Errorf("LastHidden of a 2-layer model without a head = %d, want 0", got)
		}
		for _, l := range []int{-1, m.Cfg.Layers, 9} {
			if _, err := m.Embeddings(l); err == nil || !strings.Contains(err.Error(), "hidden layers are 0 to 3") {
				t.Errorf("Embeddings(%d): %v, want the hidden layers named", l, err)
			}
		}
		defer func() {
			if recover() == nil {
				t.Error("SetOptimizerSteps(-1) did not panic")
			}
		}()
		m.SetOptimizerSteps(-1)
		return nil
	})
}

// TestMomentsRoundTrip: UploadMoments then DownloadMoments returns the
// moments given, apart from the weights, and SetOptimizerSteps sets what
// OptimizerSteps reports.
func TestMomentsRoundTrip(t *testing.T) {
	onEveryRank(t, xyz(1, 2, 1), func(m *Model, _ func(func())) error {
		if got := m.OptimizerSteps(); got != 2 {
			t.Errorf("OptimizerSteps after 2 steps = %d", got)
		}
		m.SetOptimizerSteps(17)
		if got := m.OptimizerSteps(); got != 17 {
			t.Errorf("OptimizerSteps after SetOptimizerSteps(17) = %d", got)
		}
		for k, p := range m.Params {
			w := p.Weights()
			mo, v := make([]float32, p.Len()), make([]float32, p.Len())
			for i := range mo {
				mo[i], v[i] = float32(k*1000+i), float32(-i)-0.5
			}
			p.UploadMoments(mo, v)
			gm, gv := make([]float32, p.Len()), make([]float32, p.Len())
			p.DownloadMoments(gm, gv)
			for i := range mo {
				if gm[i] != mo[i] || gv[i] != v[i] {
					return fmt.Errorf("%s[%d]: moments %v %v, uploaded %v %v", p.Name, i, gm[i], gv[i], mo[i], v[i])
				}
			}
			for i, x := range p.Weights() {
				if x != w[i] {
					return fmt.Errorf("%s[%d]: UploadMoments changed the weight from %v to %v", p.Name, i, w[i], x)
				}
			}
		}
		return nil
	})
}
