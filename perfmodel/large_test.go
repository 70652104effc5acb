package perfmodel

import (
	"math"
	"strings"
	"testing"

	"scalegnn/collectives"
	"scalegnn/gcn"
	"scalegnn/grid"
	"scalegnn/method"
	"scalegnn/permute"
)

// CollectiveTime adds Link.Large·M to an all-reduce of M ≥ Link.LargeFrom
// bytes, and to nothing else; the reference is the formula written out.
func TestCollectiveTimeLarge(t *testing.T) {
	const from = 32 << 20
	l := Link{Latency: 1e-4, Bandwidth: 0.8, LargeFrom: from, Large: 2e-8}
	base := func(p int, m float64) float64 { // Rabenseifner / ring, as documented
		return 2*math.Ceil(math.Log2(float64(p)))*l.Latency + 2*float64(p-1)/float64(p)*m/(l.Bandwidth*1e9)
	}
	for _, c := range []struct {
		name  string
		kind  collectives.Kind
		size  int
		bytes int64
		want  float64
	}{
		{"below", collectives.KindAllReduce, 4, from - 4, base(4, from-4)},
		{"at", collectives.KindAllReduce, 4, from, base(4, from) + 2e-8*from},
		{"above, 2 ranks", collectives.KindAllReduce, 2, 2 * from, base(2, 2*from) + 2e-8*2*from},
		{"above, 8 ranks", collectives.KindAllReduce, 8, 2 * from, base(8, 2*from) + 2e-8*2*from},
		{"one rank", collectives.KindAllReduce, 1, 2 * from, 0},
		{"broadcast", collectives.KindBcast, 4, 2 * from, 2 * (l.Latency + 2*from/(l.Bandwidth*1e9))},
		{"all-gather", collectives.KindAllGather, 4, 2 * from, 2*l.Latency + 3*2*from/(l.Bandwidth*1e9)},
	} {
		got := CollectiveTime(Collective{Kind: c.kind, Size: c.size, Elems: c.bytes / 4, ElemBytes: 4}, l)
		if math.Abs(got-c.want) > 1e-12*math.Max(1, c.want) {
			t.Errorf("%s: CollectiveTime = %.12g, want %.12g", c.name, got, c.want)
		}
	}
}

// largeJob is the R-MAT job of scripts/validate-algorithms.sh (scale 17,
// edge factor 16, 3 layers of 128): several of its all-reduces reach
// 32 MiB on some grids and none on others.
func largeJob() Job {
	return Job{N: 1 << 17, NNZ: 2_200_000, Features: 64, Hidden: 128, Classes: 8, Layers: 3, Dropout: 0.5,
		Mode: gcn.FullGraph, Permutation: permute.Single, EvalEvery: 5}
}

// A profile without the large keys predicts exactly what it did before
// the term existed (so do keys that never apply); with them, every 3D grid
// and every 1.5D arrangement gains exactly Large·M for each all-reduce of
// M ≥ LargeFrom bytes in its step and evaluation traces, weighted as the
// prediction weights them.
func TestLargeTermInPredictions(t *testing.T) {
	j := largeJob()
	o := Options{Ranks: 8, RanksPerNode: 8}
	all := Choices{method.Plexus: true, method.CAGNET: true}
	predict := func(m *Machine) map[string]Prediction {
		t.Helper()
		preds, err := PredictAll(j, m, o, all)
		if err != nil {
			t.Fatal(err)
		}
		out := map[string]Prediction{}
		for _, p := range preds {
			out[p.Grid] = p
		}
		return out
	}
	with := func(from, large float64) *Machine {
		m := DefaultMachine()
		m.Comm.Intra.LargeFrom, m.Comm.Intra.Large = from, large
		m.Comm.Inter.LargeFrom, m.Comm.Inter.Large = from, large
		return m
	}
	old := predict(DefaultMachine())
	for _, m := range []*Machine{with(largeAllReduceFrom, 0), with(1<<40, 2e-8)} {
		for g, p := range predict(m) {
			if p != old[g] {
				t.Errorf("large_from_bytes %g, large_s_per_byte %g: %s predicted %+v, want the prediction without the term %+v",
					m.Comm.Intra.LargeFrom, m.Comm.Intra.Large, g, p, old[g])
			}
		}
	}
	const large = 2e-8
	got := predict(with(largeAllReduceFrom, large))
	sum := func(tr Trace, weight float64) float64 {
		var s float64
		for _, c := range tr.Comm {
			if c.Kind == collectives.KindAllReduce && c.Size > 1 && c.Bytes() >= largeAllReduceFrom {
				s += weight * large * float64(c.Bytes())
			}
		}
		return s
	}
	var over, under int
	for g, p := range got {
		var want float64
		s := p.Shape
		if p.Algorithm == method.CAGNET {
			want = sum(CAGNETStepTrace(j, 8, s.Y, 0), 1) + sum(CAGNETEvalTrace(j, 8, s.Y, 0), 1/float64(j.EvalEvery))
		} else {
			cube := grid.Shape{D: 1, X: s.X, Y: s.Y, Z: s.Z}
			want = sum(StepTrace(j, s, Coords{}, Local{}), float64(j.Steps())) + sum(EvalTrace(j, cube, Coords{}, Local{}), 1/float64(j.EvalEvery))
		}
		if want > 0 {
			over++
		} else {
			under++
		}
		if d := p.Comm - old[g].Comm; math.Abs(d-want) > 1e-9*math.Max(1, want) {
			t.Errorf("%s: the term added %.9g s of communication, want %.9g s", g, d, want)
		}
		if p.SpMM != old[g].SpMM || p.GEMM != old[g].GEMM || p.Other != old[g].Other {
			t.Errorf("%s: the term changed computation", g)
		}
	}
	// The job must exercise both sides of the threshold, or the test
	// checks nothing.
	if over == 0 || under == 0 {
		t.Fatalf("%d configurations with all-reduces of 32 MiB or more, %d without: expected some of each", over, under)
	}
}

// largeCost recovers the per-byte cost from times that follow the model
// exactly, and counts a time below the link's prediction as 0.
func TestLargeCost(t *testing.T) {
	l := Link{Latency: 1e-4, Bandwidth: 0.8}
	const phi = 2.5e-8
	var samples []largeSample
	for _, p := range []int{2, 4, 8} {
		m := int64(largeAllReduceBytes)
		base := CollectiveTime(Collective{Kind: collectives.KindAllReduce, Size: p, Elems: m, ElemBytes: 1}, l)
		samples = append(samples, largeSample{Size: p, Bytes: m, T: base + phi*float64(m)})
	}
	got, each := largeCost(samples, l)
	if math.Abs(got-phi) > 1e-12*phi || len(each) != 3 {
		t.Errorf("largeCost = %g (%v), want %g for each of 3 samples", got, each, phi)
	}
	// A link that already carries a Large must not be subtracted twice.
	l.LargeFrom, l.Large = largeAllReduceFrom, 1e-6
	if got, _ := largeCost(samples, l); math.Abs(got-phi) > 1e-12*phi {
		t.Errorf("largeCost on a link with Large set = %g, want %g", got, phi)
	}
	samples = append(samples, largeSample{Size: 2, Bytes: largeAllReduceBytes, T: 1e-9})
	if got, each := largeCost(samples, Link{Latency: 1e-4, Bandwidth: 0.8}); each[3] != 0 || math.Abs(got-3*phi/4) > 1e-12*phi {
		t.Errorf("with a sample faster than the link: largeCost = %g (%v), want %g with the last 0", got, each, 3*phi/4)
	}
}

// The shipped dev profile carries the term; a profile that puts it on the
// broadcast, or gives it a negative cost, is refused by its key.
func TestLargeProfileKeys(t *testing.T) {
	m, err := LoadMachine("dev-2core-8ranks")
	if err != nil {
		t.Fatal(err)
	}
	if m.Comm.Intra.LargeFrom != largeAllReduceFrom || !(m.Comm.Intra.Large > 0) {
		t.Errorf("dev-2core-8ranks: comm.intra large_from_bytes = %g, large_s_per_byte = %g: want %d and a calibrated cost > 0",
			m.Comm.Intra.LargeFrom, m.Comm.Intra.Large, largeAllReduceFrom)
	}
	for _, c := range []struct {
		edit func(*Machine)
		want string
	}{
		{func(m *Machine) { m.Comm.Intra.Large = -1 }, "comm.intra.large_s_per_byte = -1: expected a finite number >= 0"},
		{func(m *Machine) { m.Comm.Inter.LargeFrom = math.NaN() }, "comm.inter.large_from_bytes = NaN: expected a finite number >= 0"},
		{func(m *Machine) { m.Comm.Bcast = Link{Latency: 1e-4, Bandwidth: 1, Large: 1e-8} }, "comm.bcast has large_from_bytes or large_s_per_byte"},
	} {
		m := DefaultMachine()
		c.edit(m)
		if err := m.Validate(); err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("Validate = %v, want %q", err, c.want)
		}
	}
}
