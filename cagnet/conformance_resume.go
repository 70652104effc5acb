package cagnet

import (
	"fmt"
	"math"

	"scalegnn/collectives"
	"scalegnn/device"
	"scalegnn/gcn"
	"scalegnn/permute"
)

// ResumeSteps is how many steps CheckResume trains before and after the
// state moves to a new model.
const ResumeSteps = 3

// CheckResume checks that a model's kept state — the parameters and
// moments as float32 (DownloadParam, what a checkpoint stores) and the
// step count — continues training exactly: a model with replication to,
// given the state of one with replication from after ResumeSteps steps,
// trains ResumeSteps more like the model that went on (dropout and Adam
// on, single permutation, GCN, SAGE and GAT with 4 heads and 2 output
// heads). With to = from the losses and
// weights must agree bit for bit; otherwise within ConformanceTol (the
// sums run in another order). Collective over world.
func CheckResume(world collectives.Comm, dev device.Device, from, to int) []error {
	var errs []error
	for _, layer := range []gcn.Layer{gcn.GCNLayer, gcn.SAGELayer, gcn.GATLayer} {
		if err := checkResume(world, dev, from, to, layer); err != nil {
			errs = append(errs, err)
		}
	}
	return errs
}

func checkResume(world collectives.Comm, dev device.Device, from, to int, layer gcn.Layer) error {
	k := Case{Dropout: 0.5, Layer: layer}
	if layer == gcn.GATLayer {
		k.Heads, k.OutputHeads = 4, 2
	}
	cfg, opt, g := conformanceModel(k)
	o := Options{Replication: from, Permutation: permute.Single, PermSeed: 3}
	a, err := New(world, dev, o, cfg, opt, g)
	if err != nil {
		return err
	}
	var want []float64
	for s := 0; s < 2*ResumeSteps; s++ {
		loss, err := a.LossAndGrad()
		if err != nil {
			return err
		}
		a.Step()
		want = append(want, loss)
	}
	// The run that stops after ResumeSteps: the same model, retrained.
	b, err := New(world, dev, o, cfg, opt, g)
	if err != nil {
		return err
	}
	for range ResumeSteps {
		if _, err := b.LossAndGrad(); err != nil {
			return err
		}
		b.Step()
	}
	o.Replication = to
	c, err := New(world, dev, o, cfg, opt, g)
	if err != nil {
		return err
	}
	for k, p := range b.Params {
		n := p.Rows * p.Cols
		w, m, v := make([]float32, n), make([]float32, n), make([]float32, n)
		b.DownloadParam(k, w, m, v)
		c.UploadParam(k, w, m, v)
	}
	c.SetOptimizerSteps(b.OptimizerSteps())
	name := fmt.Sprintf("cagnet 1.5d resume P=%d c=%d -> c=%d %v rank %d", world.Size(), from, to, layer, world.Rank())
	tol := 0.0
	if to != from {
		tol = ConformanceTol
	}
	near := func(got, want float64) bool {
		if tol == 0 {
			return got == want
		}
		return math.Abs(got-want) <= tol*(1+math.Abs(want))
	}
	for s := ResumeSteps; s < 2*ResumeSteps; s++ {
		loss, err := c.LossAndGrad()
		if err != nil {
			return err
		}
		c.Step()
		if !near(loss, want[s]) {
			return fmt.Errorf("%s: step %d loss %.17g after resuming, %.17g without stopping (tolerance %g)", name, s, loss, want[s], tol)
		}
	}
	for k, p := range a.Params {
		for e, w := range p.W {
			if got := c.Params[k].W[e]; !near(got, w) {
				return fmt.Errorf("%s: final %s entry %d = %.17g after resuming, %.17g without stopping (tolerance %g)", name, p.Name, e, got, w, tol)
			}
		}
	}
	return nil
}

// ResumeCases are the (from, to) replications ResumeConformance checks on
// P ranks: the smallest c > 1 dividing P (1 when P is prime or 1) onto
// itself, exactly, and onto c = 1 and from c = 1 onto c = P, within the
// tolerance.
func ResumeCases(p int) [][2]int {
	c := p
	for d := 2; d <= p; d++ {
		if p%d == 0 {
			c = d
			break
		}
	}
	if p == 1 {
		c = 1
	}
	var out [][2]int
	for _, k := range [][2]int{{c, c}, {c, 1}, {1, p}} {
		if len(out) == 0 || k != out[len(out)-1] && k != out[0] {
			out = append(out, k)
		}
	}
	return out
}

// ResumeConformance runs CheckResume for every case of ResumeCases and
// returns this rank's failures (scalegnn selftest runs it over MPI).
func ResumeConformance(world collectives.Comm, dev device.Device) []error {
	var errs []error
	for _, c := range ResumeCases(world.Size()) {
		errs = append(errs, CheckResume(world, dev, c[0], c[1])...)
	}
	return errs
}
