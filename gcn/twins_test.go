package gcn

import (
	"fmt"
	"math"
)

// twins are two models (with their batch builders, nil in full-graph
// training) that must compute the same thing bit for bit, named in errors
// by what differs between them.
type twins struct {
	ms    [2]*Model
	bbs   [2]*BatchBuilder
	names [2]string
}

// train runs steps training steps on both, each on its own batches, and
// requires the same loss at every step; after, when not nil, runs after
// each step.
func (tw twins) train(steps int, after func()) error {
	for step := range steps {
		var loss [2]float64
		for k, m := range tw.ms {
			if tw.bbs[k] != nil {
				b, err := tw.bbs[k].Build(step)
				if err != nil {
					return err
				}
				m.Use(b)
			}
			var err error
			if loss[k], err = m.TrainStep(step); err != nil {
				return err
			}
		}
		if after != nil {
			after()
		}
		if loss[0] != loss[1] || math.IsNaN(loss[0]) {
			return fmt.Errorf("step %d: loss %v %s, %v %s", step, loss[1], tw.names[1], loss[0], tw.names[0])
		}
	}
	return nil
}

// same requires the same parameters bit for bit and the same evaluation.
func (tw twins) same() error {
	for i, pa := range tw.ms[0].Params {
		a, b := make([]float32, pa.Len()), make([]float32, pa.Len())
		pa.Download(a)
		tw.ms[1].Params[i].Download(b)
		for j := range a {
			if math.Float32bits(a[j]) != math.Float32bits(b[j]) {
				return fmt.Errorf("%s[%d] = %v %s, %v %s", pa.Name, j, b[j], tw.names[1], a[j], tw.names[0])
			}
		}
	}
	var acc [2]Accuracy
	for k, m := range tw.ms {
		var err error
		if acc[k], err = m.Evaluate(); err != nil {
			return err
		}
	}
	if acc[0] != acc[1] {
		return fmt.Errorf("evaluation %+v %s, %+v %s", acc[1], tw.names[1], acc[0], tw.names[0])
	}
	return nil
}
