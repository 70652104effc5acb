package neighbor

import (
	"time"

	"scalegnn/collectives"
)

// Times is where one rank's training steps went.
type Times struct {
	// Exchange is the feature exchange (host gathers and the alltoallv
	// calls), Compute the forward and backward pass on the device, Grad
	// the gradient all-reduce and the optimizer.
	Exchange, Compute, Grad time.Duration
}

// Trainer runs training steps: the feature exchange, the model's forward
// and backward pass, the gradient all-reduce and the optimizer step, all
// on the training communicator comm.
type Trainer struct {
	Model *Model
	Exch  *Exchanger
	comm  collectives.Comm
	Times Times
}

// NewTrainer returns the trainer of one rank.
func NewTrainer(comm collectives.Comm, g *Graph, m *Model) *Trainer {
	return &Trainer{Model: m, Exch: NewExchanger(comm, g), comm: comm}
}

// Comm returns the training communicator, whose counters count exactly
// the training bytes (StepBytes per step).
func (t *Trainer) Comm() collectives.Comm { return t.comm }

// TrainStep trains on batch b and returns the mean loss over this rank's
// seeds (the mean over ranks is the global batch's, every rank having as
// many seeds).
func (t *Trainer) TrainStep(b *Batch) (float64, error) {
	t0 := time.Now()
	x, err := t.Exch.Gather(&b.Plan, len(b.MFGs.Input()))
	if err != nil {
		return 0, err
	}
	t1 := time.Now()
	loss, err := t.Model.ForwardBackward(b, x)
	if err != nil {
		return 0, err
	}
	t2 := time.Now()
	if err := t.Model.AllReduceGrads(t.comm); err != nil {
		return 0, err
	}
	t.Model.Step()
	t3 := time.Now()
	t.Times.Exchange += t1.Sub(t0)
	t.Times.Compute += t2.Sub(t1)
	t.Times.Grad += t3.Sub(t2)
	return loss, nil
}
