package perfmodel

import (
	"fmt"
	"math"
	"sort"

	"scalegnn/gcn"
	"scalegnn/grid"
	"scalegnn/method"
)

// Options are the launch a prediction is for.
type Options struct {
	// Ranks is G, the number of ranks.
	Ranks int
	// RanksPerNode: consecutive world ranks per node; 0 takes the
	// machine's, and if that is 0 too, all ranks share one node.
	RanksPerNode int
	// MemPerRank is the memory each rank may use, in bytes; 0: no limit.
	MemPerRank int64
	// D fixes Gd; 0 lets mini-batch jobs use any divisor of Ranks.
	// Full-graph jobs always use Gd = 1.
	D int
}

// Prediction is the predicted cost of one grid.
type Prediction struct {
	// Algorithm is what trains: method.Plexus ("3d", the 3D/4D grids),
	// method.CAGNET ("1.5d"), method.NeighborSampling or method.IsolatedPartitions.
	Algorithm method.Algorithm `json:"algorithm"`
	Shape     grid.Shape       `json:"-"`
	Grid      string           `json:"grid"` // "XxYxZ" or "DxXxYxZ"... see GridString
	// Epoch is the predicted seconds per epoch: Comm + SpMM + GEMM +
	// Other + Disk.
	Epoch float64 `json:"epoch_s"`
	Comm  float64 `json:"comm_s"`
	SpMM  float64 `json:"spmm_s"`
	GEMM  float64 `json:"gemm_s"`
	// Other is the element-wise work: dropout, ReLU, norm, loss, optimizer.
	Other float64 `json:"other_s"`
	// Disk is the time reads from the dataset add (out-of-core isolated
	// training: what the prefetch does not hide).
	Disk float64 `json:"disk_s,omitempty"`
	// CommBytes is the bytes rank 0 hands to collectives per epoch.
	CommBytes int64  `json:"comm_bytes"`
	Memory    Memory `json:"memory"`
	MemTotal  int64  `json:"memory_bytes"`
	Fits      bool   `json:"fits"`
}

// GridString formats a shape the way the -grid flag takes it: XxYxZ, with
// a "d=D " prefix when Gd > 1.
func GridString(s grid.Shape) string {
	if s.D > 1 {
		return fmt.Sprintf("d=%d %dx%dx%d", s.D, s.X, s.Y, s.Z)
	}
	return fmt.Sprintf("%dx%dx%d", s.X, s.Y, s.Z)
}

// PredictShape predicts one grid.
func PredictShape(j Job, m *Machine, s grid.Shape, ranksPerNode int, memPerRank int64) Prediction {
	at := Coords{}
	links := m.Links(s, ranksPerNode)
	cube := grid.Shape{D: 1, X: s.X, Y: s.Y, Z: s.Z}
	pr := Prediction{Algorithm: method.Plexus, Shape: s, Grid: GridString(s)}
	add := func(tr Trace, weight float64, linksOf map[Group]Link) {
		for _, c := range tr.Comm {
			pr.Comm += weight * CollectiveTime(c, linksOf[c.Group])
			pr.CommBytes += int64(math.Round(weight * float64(c.Bytes())))
		}
		pr.addKernels(m, j.Precision, tr.Kernels, weight)
	}
	steps := float64(j.Steps())
	add(StepTrace(j, s, at, Local{}), steps, links)
	if m.SpMM.Form == SpMMPlexus {
		pr.SpMM += steps * m.plexusSpMM(j, s)
	}
	if j.EvalEvery > 0 {
		// Every replica evaluates the full graph over its own 3D grid.
		pr.addEval(j, m, cube, links, 1/float64(j.EvalEvery))
	}
	pr.finish(j, EstimateMemory(j, s, at), memPerRank)
	return pr
}

// finish completes a prediction of j whose times are summed: the epoch
// is their sum, the memory mem (with its staging, StagingBound), and it
// fits when mem is within memPerRank (or memPerRank is 0: no limit).
func (pr *Prediction) finish(j Job, mem Memory, memPerRank int64) {
	mem = j.StagingBound(mem)
	pr.Epoch = pr.Comm + pr.SpMM + pr.GEMM + pr.Other + pr.Disk
	pr.Memory, pr.MemTotal = mem, mem.Total()
	pr.Fits = memPerRank <= 0 || pr.MemTotal <= memPerRank
}

// addEval adds weight times one full-graph evaluation of j on the 3D grid
// cube (rank 0's trace) with the links of its groups: what PredictShape
// adds for a replica's evaluation and PredictIsolated for the evaluation
// grid's.
func (pr *Prediction) addEval(j Job, m *Machine, cube grid.Shape, links map[Group]Link, weight float64) {
	tr := EvalTrace(j, cube, Coords{}, Local{})
	for _, c := range tr.Comm {
		pr.Comm += weight * CollectiveTime(c, links[c.Group])
		pr.CommBytes += int64(math.Round(weight * float64(c.Bytes())))
	}
	pr.addKernels(m, j.Precision, tr.Kernels, weight)
	if m.SpMM.Form == SpMMPlexus {
		pr.SpMM += weight * m.plexusSpMM(j, cube) / 2
	}
}

// Predict predicts every grid of o.Ranks ranks for job j and returns them
// best first: the grids that fit in memory by predicted epoch time, then
// the others by epoch time. Ties keep the order of Enumerate.
func Predict(j Job, m *Machine, o Options) ([]Prediction, error) {
	if err := j.Validate(); err != nil {
		return nil, err
	}
	if err := j.CheckRanks(o.Ranks); err != nil {
		return nil, err
	}
	if err := m.Validate(); err != nil {
		return nil, fmt.Errorf("machine %s: %w", m.Name, err)
	}
	if o.RanksPerNode < 0 {
		return nil, fmt.Errorf("perfmodel: %d ranks per node: expected an integer >= 0", o.RanksPerNode)
	}
	if o.MemPerRank < 0 {
		return nil, fmt.Errorf("perfmodel: memory per rank %d: expected >= 0 (0: no limit)", o.MemPerRank)
	}
	d := o.D
	if j.Mode == gcn.FullGraph {
		if d > 1 {
			return nil, fmt.Errorf("perfmodel: Gd = %d: full-graph training has no data-parallel replicas (Gd = 1); use mini-batch mode", d)
		}
		d = 1
	}
	shapes, err := Enumerate(o.Ranks, d)
	if err != nil {
		return nil, err
	}
	rpn := o.RanksPerNode
	if rpn == 0 {
		rpn = m.RanksPerNode
	}
	preds := make([]Prediction, len(shapes))
	for i, s := range shapes {
		preds[i] = PredictShape(j, m, s, rpn, o.MemPerRank)
	}
	sort.SliceStable(preds, func(a, b int) bool {
		if preds[a].Fits != preds[b].Fits {
			return preds[a].Fits
		}
		return preds[a].Epoch < preds[b].Epoch
	})
	return preds, nil
}

// Best returns the first prediction that fits in memory, or an error that
// says how far the smallest grid is from fitting.
func Best(preds []Prediction, memPerRank int64) (Prediction, error) {
	if len(preds) == 0 {
		return Prediction{}, fmt.Errorf("perfmodel: no grid to choose from")
	}
	if preds[0].Fits {
		return preds[0], nil
	}
	least := preds[0]
	for _, p := range preds {
		if p.MemTotal < least.MemTotal {
			least = p
		}
	}
	return Prediction{}, fmt.Errorf("perfmodel: no grid fits in %s per rank: the smallest need is %s on grid %s; use more ranks or a larger memory per rank",
		FormatBytes(memPerRank), FormatBytes(least.MemTotal), least.Grid)
}

// FormatBytes formats n bytes with a binary unit, e.g. 1.5GiB.
func FormatBytes(n int64) string {
	units := []string{"B", "KiB", "MiB", "GiB", "TiB"}
	v := float64(n)
	u := 0
	for v >= 1024 && u < len(units)-1 {
		v /= 1024
		u++
	}
	if u == 0 {
		return fmt.Sprintf("%dB", n)
	}
	return fmt.Sprintf("%.3g%s", v, units[u])
}

// ParseBytes reads a size such as 40GiB, 512MiB, 2GB or 1000000 (bytes).
func ParseBytes(s string) (int64, error) {
	units := []struct {
		suffix string
		mult   float64
	}{{"KiB", 1 << 10}, {"MiB", 1 << 20}, {"GiB", 1 << 30}, {"TiB", 1 << 40},
		{"KB", 1e3}, {"MB", 1e6}, {"GB", 1e9}, {"TB", 1e12}, {"K", 1 << 10}, {"M", 1 << 20}, {"G", 1 << 30}, {"T", 1 << 40}, {"B", 1}}
	num, mult := s, 1.0
	for _, u := range units {
		if len(s) > len(u.suffix) && s[len(s)-len(u.suffix):] == u.suffix {
			num, mult = s[:len(s)-len(u.suffix)], u.mult
			break
		}
	}
	var v float64
	if _, err := fmt.Sscanf(num, "%g", &v); err != nil || !(v >= 0) || math.IsInf(v, 0) {
		return 0, fmt.Errorf("%q: expected a size such as 40GiB, 512MiB or 2GB", s)
	}
	var rest string
	if n, _ := fmt.Sscanf(num, "%g%s", &v, &rest); n == 2 {
		return 0, fmt.Errorf("%q: expected a size such as 40GiB, 512MiB or 2GB", s)
	}
	return int64(v * mult), nil
}
