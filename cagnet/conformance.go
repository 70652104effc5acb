package cagnet

import (
	"fmt"
	"math"
	"strings"

	"scalegnn/collectives"
	"scalegnn/device"
	"scalegnn/gcn"
	"scalegnn/permute"
	"scalegnn/spmm"
)

// ConformanceTol bounds |got − want| ≤ tol·(1+|want|) for gradients and
// weights and |got − want| ≤ tol for losses: float32 storage and a
// different summation order against the float64 reference.
const ConformanceTol = 2e-5

// PrecisionTol replaces ConformanceTol in mixed precision, against the
// reference with the same roundings (gcn.Reference.BF16): the two differ
// only where an operand's float32 and float64 values round to different
// bfloat16 neighbours, one bfloat16 step (2⁻⁸ relative) of that operand,
// which moves the entries downstream of it by a fraction of that (see
// gcn's conformancePrecisionGradTol). A wrong block, term or scale is
// still off by O(1).
const PrecisionTol = 1e-2

// With bfloat16 communication (8 significant bits) only the first step's
// loss and gradients are compared, as gcn's conformance does: Adam's first
// update is nearly sign(gradient), so a gradient entry near zero that the
// rounding flips moves its weight by 2·lr and later steps drift from the
// float64 reference for that reason alone. The loss is held to
// BF16LossTol absolutely, a gradient to BF16GradTol times its largest
// reference entry: the broadcast operands and partial sums carry a
// relative error of 2^-9 each, a few of which add up per entry.
//
// A GAT layer's gradients (W's, a_src's and a_dst's) are held to
// BF16GATGradTol times the largest entry of the three: the attention
// gradients are sums that cancel (Σ_j α_ij (dα_ij − r_i) is zero but for
// the LeakyReLU's slope), so one bfloat16 rounding upstream moves them,
// and through ds·a_src + dt·a_dst into dY also W's, by a fraction of the
// layer's gradient rather than of their own (often small) largest entry.
// The 1.5D result then equals, within 1e-6 relative, the float64
// reference with the same rounding applied (O rounded as the process
// row's all-reduce rounds it; checked by hand on d=3, P=2, c=2, whose
// worst entries are 3.1% (W) and 2.2% (a_src) of the layer's largest).
const (
	BF16LossTol    = 1e-2
	BF16GradTol    = 3e-2
	BF16GATGradTol = 6e-2
)

// bf16Scales returns, per parameter, its bfloat16 tolerance: BF16GradTol
// times the largest entry of its own gradient (own[i]), and for a GAT
// layer's parameters BF16GATGradTol times the largest entry over the
// layer's three (see BF16GATGradTol).
func bf16Scales(params []*gcn.RefParam, own []float64) []float64 {
	out := make([]float64, len(params))
	layer := func(p *gcn.RefParam) string { return strings.SplitN(p.Name, ".", 2)[0] }
	gat := map[string]float64{} // layer → largest entry of its gradients
	for i, p := range params {
		if strings.HasSuffix(p.Name, ".att_src") {
			gat[layer(p)] = 0
		}
		out[i] = BF16GradTol * own[i]
	}
	for i, p := range params {
		if big, ok := gat[layer(p)]; ok {
			gat[layer(p)] = math.Max(big, own[i])
		}
	}
	for i, p := range params {
		if big, ok := gat[layer(p)]; ok {
			out[i] = BF16GATGradTol * big
		}
	}
	return out
}

// Case is one configuration CheckCase trains.
type Case struct {
	// C is the replication; the world size is P.
	C       int
	Scheme  permute.Scheme
	Dropout float64
	Layer   gcn.Layer
	BF16    bool
	// Precision device.BF16 trains in mixed precision
	// (train.precision = "bf16") against the reference with the same
	// roundings, to PrecisionTol.
	Precision device.Precision
	// Heads and OutputHeads are a GAT model's (gcn.Config's; 0 means 1).
	Heads, OutputHeads int
}

func (c Case) String() string {
	s := fmt.Sprintf("c=%d permutation %v dropout %g layer %v", c.C, c.Scheme, c.Dropout, c.Layer)
	if c.Layer == gcn.GATLayer {
		s += fmt.Sprintf(" heads %d output heads %d", max(c.Heads, 1), max(c.OutputHeads, 1))
	}
	if c.BF16 {
		s += " bf16"
	}
	if c.Precision != device.Float32 {
		s += " precision " + c.Precision.String()
	}
	return s
}

// conformanceModel is a 3-layer model on a 41-vertex random graph (41 is
// a prime: no block count divides it).
func conformanceModel(c Case) (gcn.Config, gcn.Optimizer, *gcn.Graph) {
	cfg := gcn.Config{Features: 7, Hidden: 5, Classes: 3, Layers: 3, Seed: 11, Dropout: c.Dropout, Layer: c.Layer,
		Heads: c.Heads, OutputHeads: c.OutputHeads}
	return cfg, gcn.DefaultOptimizer(), gcn.RandomGraph(5, 41, cfg.Features, cfg.Classes, 4)
}

// serialModel is what the checks ask of the serial float64 reference,
// gcn.Reference (gcnSerial); gat_reference_test.go's independent GAT
// reference implements it too.
type serialModel interface {
	LossAndGrad(step int) float64
	Step()
	Forward(training bool, step int) []float64
	Accuracy(logits []float64, mask []bool) float64
	Parameters() []*gcn.RefParam
	// SetVerts sets the vertex ids of the rows (a mini-batch's), which
	// key the dropout masks.
	SetVerts(verts []int32)
}

type gcnSerial struct{ *gcn.Reference }

func (r gcnSerial) Parameters() []*gcn.RefParam { return r.Params }
func (r gcnSerial) SetVerts(verts []int32)      { r.Verts = verts }

// newSerial returns the serial reference of cfg over adj (the layers'
// aggregation operator; a GAT layer reads its pattern).
func newSerial(cfg gcn.Config, opt gcn.Optimizer, adj *spmm.CSR, features []float32, labels []int32, train []bool) serialModel {
	return gcnSerial{gcn.NewReference(cfg, opt, adj, features, labels, train)}
}

// CheckCase trains 3 steps of 1.5D on world and holds losses and
// gradients of every step and the weights after them to the serial
// float64 reference (collective over world); with BF16, the first step's
// loss and gradients (see BF16GradTol).
func CheckCase(world collectives.Comm, dev device.Device, c Case) error {
	cfg, opt, g := conformanceModel(c)
	adj := g.Adj
	if c.Layer == gcn.SAGELayer {
		adj = gcn.MeanAdjacency(adj)
	}
	ref := newSerial(cfg, opt, adj, g.Features, g.Labels, g.Train)
	tol := ConformanceTol
	if c.Precision == device.BF16 {
		dev = device.BF16Products(dev)
		ref.(gcnSerial).BF16 = true
		tol = PrecisionTol
	}
	m, err := New(world, dev, Options{Replication: c.C, Permutation: c.Scheme, PermSeed: 3, BF16: c.BF16}, cfg, opt, g)
	if err != nil {
		return err
	}
	name := fmt.Sprintf("cagnet 1.5d P=%d %v rank %d", world.Size(), c, world.Rank())
	check := func(what string, got, want []float64) error {
		for k := range want {
			if d := math.Abs(got[k] - want[k]); !(d <= tol*(1+math.Abs(want[k]))) {
				return fmt.Errorf("%s: %s entry %d = %v, reference %v (tolerance %g)", name, what, k, got[k], want[k], tol)
			}
		}
		return nil
	}
	if c.BF16 {
		return checkBF16(name, m, ref)
	}
	for s := 0; s < 3; s++ {
		want := ref.LossAndGrad(s)
		got, err := m.LossAndGrad()
		if err != nil {
			return err
		}
		if err := check(fmt.Sprintf("step %d loss", s), []float64{got}, []float64{want}); err != nil {
			return err
		}
		for i, p := range ref.Parameters() {
			if err := check(fmt.Sprintf("step %d gradient of %s", s, p.Name), m.Params[i].G, p.G); err != nil {
				return err
			}
		}
		ref.Step()
		m.Step()
	}
	for i, p := range ref.Parameters() {
		if err := check("final "+p.Name, m.Params[i].W, p.W); err != nil {
			return err
		}
	}
	acc, err := m.Accuracy()
	if err != nil {
		return err
	}
	logits := ref.Forward(false, 0)
	for k, mask := range [][]bool{g.Train, g.Val, g.Test} {
		if want := ref.Accuracy(logits, mask); acc[k] != want {
			return fmt.Errorf("%s: accuracy %d (train, val, test) = %v, reference %v", name, k, acc[k], want)
		}
	}
	return nil
}

// checkBF16 compares the first step's loss and gradients within the
// bfloat16 tolerances.
func checkBF16(name string, m *Model, ref serialModel) error {
	want := ref.LossAndGrad(0)
	got, err := m.LossAndGrad()
	if err != nil {
		return err
	}
	if d := math.Abs(got - want); !(d <= BF16LossTol) {
		return fmt.Errorf("%s: loss %v, reference %v (tolerance %g)", name, got, want, BF16LossTol)
	}
	params := ref.Parameters()
	own := make([]float64, len(params))
	for i, p := range params {
		for _, v := range p.G {
			own[i] = math.Max(own[i], math.Abs(v))
		}
	}
	tol := bf16Scales(params, own)
	for i, p := range params {
		for k, w := range p.G {
			if d := math.Abs(m.Params[i].G[k] - w); !(d <= tol[i]) {
				return fmt.Errorf("%s: gradient of %s entry %d = %v, reference %v (tolerance %g: see BF16GradTol)",
					name, p.Name, k, m.Params[i].G[k], w, tol[i])
			}
		}
	}
	return nil
}

// Cases lists what Conformance runs on P ranks: every replication c
// dividing P, without and with single permutation and dropout, with GCN
// and SAGE layers, and each c once more with bfloat16 communication and
// in mixed precision (GCN; SAGE with bfloat16 communication too where
// there is some).
func Cases(p int) []Case {
	var out []Case
	for c := 1; c <= p; c++ {
		if p%c != 0 {
			continue
		}
		for _, layer := range []gcn.Layer{gcn.GCNLayer, gcn.SAGELayer} {
			for _, s := range []permute.Scheme{permute.None, permute.Single} {
				for _, d := range []float64{0, 0.5} {
					out = append(out, Case{C: c, Scheme: s, Dropout: d, Layer: layer})
				}
			}
		}
		out = append(out, Case{C: c, Scheme: permute.Single, Dropout: 0.5, Layer: gcn.SAGELayer, BF16: true},
			Case{C: c, Scheme: permute.None, Layer: gcn.GCNLayer, BF16: true},
			Case{C: c, Scheme: permute.Single, Dropout: 0.5, Layer: gcn.GCNLayer, Precision: device.BF16},
			Case{C: c, Scheme: permute.None, Dropout: 0.5, Layer: gcn.SAGELayer, Precision: device.BF16, BF16: c > 1})
		out = append(out, gatCases(c)...)
	}
	return out
}

// gatCases are the GAT cases of replication c: one and four heads, one
// and two output heads (averaged), both permutations, with and without
// dropout (of the inputs and of α), and bfloat16 once.
func gatCases(c int) []Case {
	gat := gcn.GATLayer
	return []Case{
		{C: c, Scheme: permute.None, Layer: gat, Heads: 1, OutputHeads: 1},
		{C: c, Scheme: permute.Single, Dropout: 0.5, Layer: gat, Heads: 4, OutputHeads: 2},
		{C: c, Scheme: permute.None, Dropout: 0.5, Layer: gat, Heads: 1, OutputHeads: 2},
		{C: c, Scheme: permute.Single, Layer: gat, Heads: 4, OutputHeads: 1},
		{C: c, Scheme: permute.Single, Dropout: 0.5, Layer: gat, Heads: 4, OutputHeads: 2, BF16: true},
		{C: c, Scheme: permute.Single, Dropout: 0.5, Layer: gat, Heads: 4, OutputHeads: 2, Precision: device.BF16},
	}
}

// Conformance runs CheckCase for every case of Cases and returns this
// rank's failures (scalegnn selftest runs it over MPI).
func Conformance(world collectives.Comm, dev device.Device) []error {
	var errs []error
	for _, c := range Cases(world.Size()) {
		if err := CheckCase(world, dev, c); err != nil {
			errs = append(errs, err)
		}
	}
	return errs
}
